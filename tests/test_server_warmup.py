"""The warm-up thread: the copilot's heavy imports run off the server's event loop.

Through a real Jupyter server (pytest-jupyter). The heavy modules are already imported in
the test process, so a gate module is added to the warm-up's list: its import blocks
until the test releases it, which holds the warm-up "in the middle of its imports" for
as long as the test needs, with no timing involved.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import types
from pathlib import Path
from typing import Any

import pytest
from test_server_support import call, copilot_app, server_config

from jupyter_gns3_copilot.server import warmup

GATE = "_copilot_warm_up_gate"


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A module the warm-up imports first; importing it blocks until `release` is set."""
    state = types.SimpleNamespace(entered=threading.Event(), release=threading.Event())
    monkeypatch.setitem(sys.modules, f"{GATE}_state", state)
    (tmp_path / f"{GATE}.py").write_text(
        "import sys\n"
        f"state = sys.modules['{GATE}_state']\n"
        "state.entered.set()\n"
        "state.release.wait(60)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(warmup, "WARM_MODULES", (GATE, *warmup.WARM_MODULES))
    yield state
    state.release.set()
    sys.modules.pop(GATE, None)


@pytest.fixture
def jp_server_config(gate: Any, tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path / "data")


async def test_the_server_answers_while_the_warm_up_imports_and_copilot_routes_wait(
    jp_fetch: Any, jp_serverapp: Any, gate: types.SimpleNamespace
) -> None:
    app = copilot_app(jp_serverapp)
    copilot = asyncio.ensure_future(call(jp_fetch, "copilot", "llm-config"))
    assert await asyncio.to_thread(gate.entered.wait, 30), "the warm-up never started"

    # the warm-up is stuck in an import, in its own thread: the loop still serves requests
    status = await jp_fetch("api", "status")
    assert status.code == 200
    assert not app.warm_up.done and not copilot.done()
    assert threading.current_thread() is threading.main_thread()

    gate.release.set()
    settings = await asyncio.wait_for(copilot, 60)
    assert settings.code == 200, settings.body
    assert app.warm_up.done


async def test_a_failed_import_is_logged_and_does_not_close_the_copilot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    warm_up = warmup.WarmUp(["jupyter_gns3_copilot.no_such_module"], then=None)
    await warm_up.wait()
    assert warm_up.done
    assert "importing jupyter_gns3_copilot.no_such_module failed" in caplog.text
