"""The start hook tells kernels where the server is (pytest-jupyter never calls the hook,
so these tests call it as jupyter_server does once it listens)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from support.server import call, copilot_app, server_config

from jupyter_gns3_copilot.server.kernel_env import (
    HUB_TOKEN_ENV,
    SERVER_TOKEN_ENV,
    SERVER_URL_ENV,
    local_server_url,
)


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path / "data")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The variables the hook sets are restored after the test."""
    monkeypatch.delenv(HUB_TOKEN_ENV, raising=False)
    monkeypatch.setenv(SERVER_URL_ENV, "unset")
    monkeypatch.setenv(SERVER_TOKEN_ENV, "unset")
    return monkeypatch


async def test_the_start_hook_publishes_a_url_and_token_the_server_accepts(
    jp_fetch, jp_serverapp, jp_base_url, jp_http_port, clean_env
) -> None:
    # Given a listening server (whose base_url is odd on purpose)
    assert (await call(jp_fetch, "copilot", "status")).code == 200
    # When jupyter_server calls the start hook
    await copilot_app(jp_serverapp)._start_jupyter_server_extension(jp_serverapp)
    # Then a client on this machine reaches the server with what was published
    import os

    url, token = os.environ[SERVER_URL_ENV], os.environ[SERVER_TOKEN_ENV]
    assert url == f"http://127.0.0.1:{jp_http_port}{jp_base_url}"
    assert token == jp_serverapp.identity_provider.token
    async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
        reply = await client.get(
            f"{url}copilot/status", headers={"Authorization": f"token {token}"}
        )
    assert reply.status_code == 200
    assert reply.json()["version"]


@pytest.mark.slow
async def test_a_kernel_started_afterwards_sees_the_variables(
    jp_fetch, jp_serverapp, clean_env
) -> None:
    await copilot_app(jp_serverapp)._start_jupyter_server_extension(jp_serverapp)
    manager = jp_serverapp.kernel_manager
    kernel_id = await manager.start_kernel(kernel_name="python3")
    client = manager.get_kernel(kernel_id).client()
    client.start_channels()
    try:
        await asyncio.wait_for(client.wait_for_ready(), 60)
        code = f"import os; print(os.environ['{SERVER_URL_ENV}'], os.environ['{SERVER_TOKEN_ENV}'])"
        reply = await client.execute_interactive(code, timeout=60, output_hook=_collect(out := []))
        assert reply["content"]["status"] == "ok"
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(kernel_id, now=True)
    import os

    assert "".join(out).split() == [os.environ[SERVER_URL_ENV], os.environ[SERVER_TOKEN_ENV]]


def _collect(sink: list[str]) -> Any:
    def hook(message: dict[str, Any]) -> None:
        if message["header"]["msg_type"] == "stream":
            sink.append(message["content"]["text"])

    return hook


async def test_under_jupyterhub_the_hub_token_is_published(
    jp_fetch, jp_serverapp, clean_env
) -> None:
    import os

    clean_env.setenv(HUB_TOKEN_ENV, "hub-api-token")
    await copilot_app(jp_serverapp)._start_jupyter_server_extension(jp_serverapp)
    assert os.environ[SERVER_TOKEN_ENV] == "hub-api-token"


def fake_server(**values: Any) -> Any:
    base = {"ip": "localhost", "port": 8888, "base_url": "/", "sock": "", "certfile": ""}
    return SimpleNamespace(**{**base, **values})


@pytest.mark.parametrize(
    ("values", "url"),
    [
        ({}, "http://127.0.0.1:8888/"),
        ({"ip": "0.0.0.0", "base_url": "/user/ada/"}, "http://127.0.0.1:8888/user/ada/"),
        ({"ip": ""}, "http://127.0.0.1:8888/"),
        ({"ip": "::"}, "http://[::1]:8888/"),
        ({"ip": "10.1.2.3", "port": 9999}, "http://10.1.2.3:9999/"),
        ({"ip": "fd00::5"}, "http://[fd00::5]:8888/"),
        ({"certfile": "/etc/cert.pem"}, "https://127.0.0.1:8888/"),
        ({"sock": "/run/jupyter.sock"}, "http+unix://%2Frun%2Fjupyter.sock/"),
    ],
)
def test_the_published_url_is_reachable_from_this_machine(values: dict[str, Any], url: str) -> None:
    assert local_server_url(fake_server(**values)) == url
