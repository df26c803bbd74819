"""Shared test configuration: pytest-jupyter runs `async def` tests on a fresh loop each."""

pytest_plugins = ["pytest_jupyter.jupyter_server"]
