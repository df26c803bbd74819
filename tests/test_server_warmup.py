"""The warm-up thread: the copilot's heavy imports run off the server's event loop.

Through a real Jupyter server (pytest-jupyter). The heavy modules are already imported in
the test process, so a gate module is added to the warm-up's list: its import blocks
until the test releases it, which holds the warm-up "in the middle of its imports" for
as long as the test needs, with no timing involved.
"""

from __future__ import annotations

import asyncio
import gc
import json
import ssl
import subprocess
import sys
import threading
import types
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.server import call, copilot_app, server_config

from jupyter_gns3_copilot.classroom.client import HubServiceClient
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.server import warmup

GATE = "_copilot_warm_up_gate"


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """A module the warm-up imports first in its agent stage; importing it blocks until
    `release` is set."""
    state = types.SimpleNamespace(entered=threading.Event(), release=threading.Event())
    monkeypatch.setitem(sys.modules, f"{GATE}_state", state)
    (tmp_path / f"{GATE}.py").write_text(
        "import sys\n"
        f"state = sys.modules['{GATE}_state']\n"
        "state.entered.set()\n"
        "state.release.wait(60)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(warmup, "AGENT_MODULES", (GATE, *warmup.AGENT_MODULES))
    yield state
    state.release.set()
    sys.modules.pop(GATE, None)


@pytest.fixture
def jp_server_config(gate: Any, tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path / "data")


async def test_the_server_answers_while_the_warm_up_imports_and_chat_routes_wait(
    jp_fetch: Any, jp_serverapp: Any, gate: types.SimpleNamespace
) -> None:
    app = copilot_app(jp_serverapp)
    sessions = ("copilot", "projects", str(uuid.uuid4()), "chat", "sessions")
    chat = asyncio.ensure_future(call(jp_fetch, *sessions))
    assert await asyncio.to_thread(gate.entered.wait, 30), "the warm-up never started"

    # the warm-up is stuck in an import, in its own thread: the loop still serves requests,
    # the copilot's routes that need no model too; the chat waits
    status = await jp_fetch("api", "status")
    assert status.code == 200
    settings = await call(jp_fetch, "copilot", "llm-config")
    assert settings.code == 200, settings.body
    assert app.warm_up.done("core") and not app.warm_up.done("agent") and not chat.done()

    gate.release.set()
    answered = await asyncio.wait_for(chat, 60)
    assert answered.code == 200, answered.body
    assert app.warm_up.done("agent")


async def test_a_failed_import_is_logged_and_does_not_close_the_copilot(
    caplog: pytest.LogCaptureFixture,
) -> None:
    warm_up = warmup.WarmUp([], ["jupyter_gns3_copilot.no_such_module"], then=None)
    await warm_up.wait()
    assert warm_up.done("core") and warm_up.done("agent")
    assert "importing jupyter_gns3_copilot.no_such_module failed" in caplog.text


def test_the_warm_up_builds_no_tokenizer_and_leaves_its_objects_to_no_collection() -> None:
    """In a fresh interpreter (the test process has built encodings already): after the
    whole warm-up, the chat's modules are imported, tiktoken has built no encoding, no
    full garbage collection ran meanwhile (each walked every object imported so far,
    holding the interpreter lock), and what it imported sits in the collector's permanent
    generation, with the collector's settings back as they were."""
    script = (
        "import gc, json, sys\n"
        "before = gc.get_threshold()\n"
        "full = []\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and info['generation'] == 2\n"
        "                    and full.append(1))\n"
        "from jupyter_gns3_copilot.server.warmup import WarmUp\n"
        "WarmUp()._run()\n"
        "import tiktoken.registry\n"
        "print(json.dumps({'graph': 'jupyter_gns3_copilot.agent.graph' in sys.modules,\n"
        "                  'encodings': sorted(tiktoken.registry.ENCODINGS),\n"
        "                  'full_collections': len(full), 'enabled': gc.isenabled(),\n"
        "                  'thresholds': gc.get_threshold() == before,\n"
        "                  'frozen_over_100k': gc.get_freeze_count() > 100_000}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "graph": True,
        "encodings": [],
        "full_collections": 0,
        "enabled": True,
        "thresholds": True,
        "frozen_over_100k": True,
    }


async def test_a_warm_up_with_nothing_to_import_freezes_nothing() -> None:
    """Only a process's first warm-up imports; later ones (tests, a second app) must not
    move the process's objects of the moment to the permanent generation."""
    frozen = gc.get_freeze_count()
    await warmup.WarmUp(["json"], ["asyncio"], then=None).wait()
    assert gc.get_freeze_count() == frozen and gc.isenabled()


async def test_clients_made_after_the_warm_up_build_no_tls_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Building a TLS context loads the CA bundle (40-300 ms): GNS3 and hub clients,
    made on the loop, take the one the warm-up built."""
    await warmup.WarmUp([], [], then=None).wait()
    built: list[bool] = []
    create = ssl.create_default_context

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(True)
        return create(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counting)
    clients = [GNS3Client("http://127.0.0.1:9"), HubServiceClient("http://127.0.0.1:9/", "token")]
    for client in clients:
        await client.aclose()
    assert built == []


def test_loading_the_extension_imports_nothing_heavy(tmp_path: Path) -> None:
    """`jupyter lab` starts as fast with the copilot: in a fresh interpreter, adding,
    linking and loading the extension into an initialized server imports none of the
    libraries the warm-up thread is for (a handler module importing the event models
    once brought pydantic into every server's start)."""
    script = (
        "import json, sys\n"
        "from jupyter_server.serverapp import ServerApp\n"
        "app = ServerApp(jpserver_extensions={}, open_browser=False, log_level='ERROR')\n"
        "app.initialize(argv=[], new_httpserver=False)\n"
        "before = set(sys.modules)\n"
        "manager = app.extension_manager\n"
        "manager.add_extension('jupyter_gns3_copilot', enabled=True)\n"
        "manager.link_extension('jupyter_gns3_copilot')\n"
        "manager.load_extension('jupyter_gns3_copilot')\n"
        "new = {name.split('.')[0] for name in set(sys.modules) - before}\n"
        "print(json.dumps({'loaded': 'jupyter_gns3_copilot.server.app' in sys.modules,\n"
        "                  'new': sorted(new)}))\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "JUPYTER_NO_CONFIG": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    heavy = {
        "pydantic",
        "langchain_core",
        "langchain_openai",
        "langgraph",
        "openai",
        "tiktoken",
        "httpx",
        "aiosqlite",
        "cryptography",
        "telnetlib3",
        "websockets",
    }
    assert result["loaded"] is True
    assert heavy.isdisjoint(result["new"]), result["new"]


def test_a_process_exiting_during_the_warm_up_lets_it_finish(tmp_path: Path) -> None:
    """A process that ends while the warm-up runs waits for it instead of ending the
    thread inside compiled code (pydantic-core aborted such processes: "FATAL: exception
    not rethrown"): the warm-up's last step, still running when the main thread
    returns, completes."""
    done_file = tmp_path / "finished"
    script = (
        "import time\n"
        "from jupyter_gns3_copilot.server.warmup import WarmUp\n"
        "def then():\n"
        "    time.sleep(1)\n"
        f"    open({str(done_file)!r}, 'w').write('yes')\n"
        "WarmUp(['json'], ['asyncio'], then=then).start()\n"
    )
    exited = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert exited.returncode == 0, exited.stderr
    assert done_file.read_text() == "yes"
