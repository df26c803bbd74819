"""Helpers for the server tests: server config, JSON and SSE requests through
pytest-jupyter's `jp_fetch`, a test identity provider naming users by token, a Jupyter
server process, magics shells on a server, lab set-up, and waiting until a device's console
is busy."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from jupyter_server.auth.identity import IdentityProvider, User

from jupyter_gns3_copilot.events import LabEvent, parse_event

USER_TOKENS = {"alice-token": "alice", "bob-token": "bob"}
"""Tokens `TokenUsersIdentityProvider` accepts, and the user each names."""
TITLE_REPLY = {"tools": False}
"""Scripted-model `when` for the title request (the only one offering no tools)."""


class TokenUsersIdentityProvider(IdentityProvider):
    """TEST identity provider: `Authorization: token <t>` names the user `USER_TOKENS[t]`;
    the server's own token is the user "instructor"; anything else is unauthenticated."""

    def get_user(self, handler: Any) -> User | None:
        token = self.get_token(handler)
        name = USER_TOKENS.get(token) or ("instructor" if token and token == self.token else None)
        if name is None:
            return None
        handler._token_authenticated = True  # token requests need no XSRF cookie
        return User(username=name)


def as_user(name: str) -> dict[str, str]:
    """Headers authenticating as `name` with `TokenUsersIdentityProvider`."""
    token = next(token for token, user in USER_TOKENS.items() if user == name)
    return {"Authorization": f"token {token}"}


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was just released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def server_config(data_dir: Path, **traits: Any) -> dict[str, Any]:
    """A `jp_server_config` enabling the extension with `traits` (GNS3 at a closed port,
    no model and no approvals (`require_approval` "none") unless given)."""
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_gns3_copilot": True}},
        "GNS3Copilot": {
            "gns3_url": closed_port_url(),
            "gns3_username": "admin",
            "gns3_password": "x",
            "llm_model": "",
            "llm_api_key": "",
            "llm_base_url": "https://api.openai.com/v1",
            "data_dir": str(data_dir),
            "require_approval": "none",
            **traits,
        },
    }


def lab_traits(lab: Any) -> dict[str, Any]:
    """Traits for the local GNS3 lab."""
    return {"gns3_url": lab.url, "gns3_username": lab.username, "gns3_password": lab.password}


def model_traits(llm: Any, **extra: Any) -> dict[str, Any]:
    """Traits for the scripted model server (admin settings, no retries)."""
    from jupyter_gns3_copilot.testing.scripted_llm import DEFAULT_TEST_API_KEY

    return {
        "llm_base_url": llm.base_url,
        "llm_api_key": DEFAULT_TEST_API_KEY,
        "llm_model": "scripted-model",
        "llm_max_retries": 0,
        **extra,
    }


@dataclass
class Reply:
    """A JSON answer."""

    code: int
    body: Any
    headers: Any = None

    @property
    def error(self) -> dict[str, Any]:
        return self.body["error"]


async def call(
    jp_fetch: Any,
    *parts: str,
    method: str = "GET",
    body: Any = None,
    headers: dict[str, str] | None = None,
    params: dict[str, Any] | None = None,
) -> Reply:
    """A request through jp_fetch that never raises for an HTTP status."""
    kwargs: dict[str, Any] = {"method": method, "raise_error": False}
    if body is not None:
        kwargs["body"] = body if isinstance(body, (str, bytes)) else json.dumps(body)
    elif method in ("POST", "PUT", "PATCH"):
        kwargs["body"] = b""
    response = await jp_fetch(*parts, headers=headers, params=params, **kwargs)
    raw = response.body or b""
    content_type = response.headers.get("Content-Type", "")
    parsed: Any = raw.decode() if raw else None
    if raw and content_type.startswith("application/json"):
        parsed = json.loads(raw)
    return Reply(response.code, parsed, response.headers)


def parse_sse(text: str) -> tuple[list[dict[str, Any]], str]:
    """The complete SSE messages in `text` as events, and the incomplete rest."""
    *complete, rest = text.split("\n\n")
    events = []
    for message in complete:
        data = [line[len("data: ") :] for line in message.splitlines() if line.startswith("data: ")]
        if data:
            event = json.loads("\n".join(data))
            # every event matches the shared event models
            if str(event.get("type")).startswith("lab_"):
                LabEvent.model_validate(event)
            else:
                parse_event(event)
            events.append(event)
    return events, rest


@dataclass
class EventStream:
    """An SSE request in progress: events are read as the server flushes them."""

    task: asyncio.Future[Any]
    queue: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    events: list[dict[str, Any]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)
    chunks: int = 0
    _buffer: str = ""

    def on_chunk(self, chunk: bytes) -> None:
        self.chunks += 1
        events, self._buffer = parse_sse(self._buffer + chunk.decode())
        for event in events:
            self.events.append(event)
            self.arrivals.append(time.monotonic())
            self.queue.put_nowait(event)

    async def until(self, kind: str, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Events read from now up to and including the next one of type `kind`."""
        seen = []
        while True:
            event = await asyncio.wait_for(self.queue.get(), timeout)
            seen.append(event)
            if event["type"] == kind:
                return seen

    async def finish(self, timeout: float = 120.0) -> list[dict[str, Any]]:
        """Wait for the response to end; every event."""
        response = await asyncio.wait_for(self.task, timeout)
        assert response.code == 200, response.code
        assert response.headers["Content-Type"].startswith("text/event-stream")
        assert response.headers["Cache-Control"] == "no-cache"
        assert response.headers["X-Accel-Buffering"] == "no"
        return self.events


def open_stream(
    jp_fetch: Any, *parts: str, body: Any, headers: dict[str, str] | None = None
) -> EventStream:
    """Start an SSE POST; read it with `until` / `finish`."""
    stream = EventStream(task=asyncio.Future())
    stream.task = asyncio.ensure_future(
        jp_fetch(
            *parts,
            method="POST",
            body=json.dumps(body),
            headers=headers,
            streaming_callback=stream.on_chunk,
            request_timeout=180,
            raise_error=False,
        )
    )
    return stream


def watch_stream(jp_fetch: Any, *parts: str, headers: dict[str, str] | None = None) -> EventStream:
    """Start an SSE GET that runs until the client leaves (`task.cancel()`)."""
    stream = EventStream(task=asyncio.Future())
    stream.task = asyncio.ensure_future(
        jp_fetch(
            *parts,
            method="GET",
            headers=headers,
            streaming_callback=stream.on_chunk,
            request_timeout=600,
            raise_error=False,
        )
    )
    return stream


async def eventually(
    probe: Callable[[], Awaitable[Any]], what: str, *, timeout: float = 30.0
) -> Any:
    """Poll `probe` until it returns something truthy, and return it; AssertionError naming
    `what` after `timeout` seconds. For state the server changes in the background with no
    event a client can wait on (statistics saved after a turn, a console taken)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := await probe()):
        if loop.time() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:.0f} s")
        await asyncio.sleep(0.05)  # the polling interval, not a wait for the state
    return value


def kinds(events: list[dict[str, Any]], *, progress: bool = False) -> list[str]:
    """The event types, without progress and heartbeat events unless asked."""
    skipped = set() if progress else {"progress", "heartbeat"}
    return [event["type"] for event in events if event["type"] not in skipped]


async def add_pcs(project: Any, *names: str, start: bool = False) -> None:
    """Create VPCS nodes `names` in `project` (started, consoles ready, if `start`)."""
    from jupyter_gns3_copilot.console import ConsolePool, ConsoleTarget
    from jupyter_gns3_copilot.gns3 import GNS3Client

    async with GNS3Client(project.url, token=project.token) as gns3:
        for index, name in enumerate(names):
            await gns3.create_node_from_template(project.project_id, "VPCS", name, x=index * 150)
        if start:
            await gns3.start_all(project.project_id)
            async with ConsolePool() as pool:
                for node in await gns3.list_nodes(project.project_id):
                    await pool.wait_ready(
                        ConsoleTarget.from_node(node, server_host="127.0.0.1"), timeout=30
                    )


def copilot_app(serverapp: Any) -> Any:
    """The running `GNS3Copilot` extension app of `serverapp`."""
    return next(iter(serverapp.extension_manager.extension_apps["jupyter_gns3_copilot"]))


def files_under(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` with its bytes."""
    return {str(path): path.read_bytes() for path in directory.rglob("*") if path.is_file()}


@contextmanager
def jupyter_process(
    work_dir: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60.0
) -> Iterator[tuple[str, dict[str, str], Path]]:
    """`python -m jupyter_server` with the extension and `args` as a subprocess on
    127.0.0.1, its notebook root `work_dir/root` (also its working directory) and its
    Jupyter directories under `work_dir`. Yields (base URL, auth headers, log path) once it
    answers; stopped (by its pid) on exit. For what only a real command line shows."""
    from jupyter_gns3_copilot.testing.local_stack import free_port

    root = work_dir / "root"
    root.mkdir(parents=True, exist_ok=True)
    token = secrets.token_hex(16)
    port = free_port()
    log_path = work_dir / "jupyter.log"
    environment = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(work_dir / "config"),
        "JUPYTER_DATA_DIR": str(work_dir / "data"),
        "JUPYTER_RUNTIME_DIR": str(work_dir / "runtime"),
        "JUPYTER_TOKEN": token,
        **(env or {}),
    }
    command = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.jpserver_extensions=jupyter_gns3_copilot=True",
        "--allow-root",
        *args,
    ]
    url = f"http://127.0.0.1:{port}/"
    headers = {"Authorization": f"token {token}"}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=root, env=environment, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert process.poll() is None, log_path.read_text()
            try:
                if httpx.get(url + "api", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)  # polling a starting process: nothing to wait on
        yield url, headers, log_path
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(20)


@contextmanager
def magics_shell(server: Any, monkeypatch: Any) -> Iterator[Any]:
    """An IPython shell with the `%copilot` magics loaded, whose kernel-side client finds
    `server` (a `local_stack.JupyterServer`) as a kernel of it would; unloaded afterwards."""
    from IPython.core.interactiveshell import InteractiveShell

    for name, value in server.kernel_env().items():
        monkeypatch.setenv(name, value)
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jupyter_gns3_copilot")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "jupyter_gns3_copilot")


@contextmanager
def server_magics_shell(
    gns3_lab: Any, scripted_llm: Any, work_dir: Path, monkeypatch: Any
) -> Iterator[Any]:
    """`magics_shell` on a Jupyter server subprocess (`local_stack.JupyterServer`) of the
    lab and the scripted model, its files under `work_dir`."""
    from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint

    model = ModelEndpoint.scripted_model(scripted_llm)
    with (
        JupyterServer(gns3_lab, model, work_dir) as server,
        magics_shell(server, monkeypatch) as ip,
    ):
        yield ip


@contextmanager
def recipe_project(gns3_lab: Any, recipe: Any) -> Iterator[str]:
    """The project of a `local_stack.ProjectRecipe`, made in the lab; deleted afterwards."""
    from jupyter_gns3_copilot.testing.local_stack import delete_projects, prepare_projects

    project_id = prepare_projects(gns3_lab, [recipe])[recipe.name]
    try:
        yield project_id
    finally:
        delete_projects(gns3_lab, [project_id])


async def wait_until_console_busy(app: Any, project: Any, device: str) -> None:
    """Wait until the copilot holds `device`'s console (a command of a run is on it)."""
    from jupyter_gns3_copilot.console import ConsoleTarget
    from jupyter_gns3_copilot.gns3 import GNS3Client

    async with GNS3Client(project.url, token=project.token) as gns3:
        [node] = [n for n in await gns3.list_nodes(project.project_id) if n.name == device]
    lock = app.lab().consoles.lock(ConsoleTarget.from_node(node, server_host="127.0.0.1"))

    async def busy() -> bool:
        return lock.locked()

    await eventually(busy, f"{device}'s console being used")
