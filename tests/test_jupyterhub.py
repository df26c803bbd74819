"""The copilot in a classroom JupyterHub: a REAL JupyterHub (DummyAuthenticator, local
process spawner, configurable-http-proxy from npm) with two students, each on their own
single-user server with the extension, the local GNS3 lab and the scripted model server (a
TEST DOUBLE of the OpenAI API).

Given the hub; then each student reaches only their own copilot through the hub's proxy
(another student's token is refused), a chat streams through the proxy as SSE under the
hub user's name, and code in a student's kernel finds its server from JupyterHub's
variables alone and holds a conversation.

`make test` installs configurable-http-proxy (npm) and names it in CONFIGURABLE_HTTP_PROXY;
without it these tests are skipped, saying so.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.hub import proxy_command
from support.server import TITLE_REPLY, parse_sse

from jupyter_gns3_copilot.labkit.ports import free_tcp_port
from jupyter_gns3_copilot.testing.hub_recipe import wait_for
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text

pytestmark = [pytest.mark.lab, pytest.mark.hub, pytest.mark.slow]

STUDENTS = ("alice", "bob")
HUB_TIMEOUT = 60.0
"""Seconds the hub, then each student's server, may take to come up."""


@dataclass
class Hub:
    """A running hub: its public URL, an admin service token and each student's token."""

    url: str
    admin_token: str
    llm: ScriptedLLM
    tokens: dict[str, str] = field(default_factory=dict)

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"token {self.tokens[user]}"}

    def server_url(self, user: str, *parts: str) -> str:
        return "/".join([f"{self.url}user/{user}", *parts])


def local_hub_settings(directory: Path, port: int) -> dict[str, Any]:
    """A hub on 127.0.0.1:`port` with its state in `directory`: DummyAuthenticator, the
    local process spawner running this venv's `jupyterhub-singleuser`, and
    configurable-http-proxy from `proxy_command()`."""
    venv_bin = str(Path(sys.executable).parent)
    return {
        "JupyterHub.ip": "127.0.0.1",
        "JupyterHub.port": port,
        "JupyterHub.hub_ip": "127.0.0.1",
        "JupyterHub.hub_port": free_tcp_port(),
        "JupyterHub.db_url": f"sqlite:///{directory / 'hub.sqlite'}",
        "JupyterHub.cookie_secret_file": str(directory / "cookie_secret"),
        "JupyterHub.pid_file": str(directory / "hub.pid"),
        "JupyterHub.authenticator_class": "dummy",
        "Authenticator.allow_all": True,
        "JupyterHub.spawner_class": "simple",
        "SimpleLocalProcessSpawner.home_dir_template": str(directory / "home" / "{username}"),
        "Spawner.cmd": [str(Path(venv_bin) / "jupyterhub-singleuser")],
        "Spawner.args": ["--allow-root"],
        "Spawner.start_timeout": int(HUB_TIMEOUT),
        "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{free_tcp_port()}",
        "ConfigurableHTTPProxy.command": [proxy_command()],
    }


def write_config(directory: Path, lab: Any, llm: ScriptedLLM, admin_token: str) -> int:
    """The hub's jupyterhub_config.py; returns the public port."""
    port = free_tcp_port()
    venv_bin = str(Path(sys.executable).parent)
    student_env = {
        "PATH": f"{venv_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "GNS3_URL": lab.url,
        "GNS3_USER": lab.username,
        "GNS3_PASSWORD": lab.password,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "sk-test-classroom",
        "GNS3_COPILOT_MODEL": "scripted-model",
    }
    settings = {
        **local_hub_settings(directory, port),
        "Spawner.environment": student_env,
        "JupyterHub.services": [{"name": "classroom-tests", "api_token": admin_token}],
        "JupyterHub.load_roles": [
            {
                "name": "classroom-tests",
                "scopes": ["admin:users", "admin:servers", "tokens"],
                "services": ["classroom-tests"],
            }
        ],
    }
    lines = [f"c.{name} = {value!r}" for name, value in settings.items()]
    (directory / "jupyterhub_config.py").write_text("\n".join(lines) + "\n")
    return port


def start_students(hub: Hub, api: httpx.Client) -> None:
    api.post("/users", json={"usernames": list(STUDENTS)}).raise_for_status()
    for user in STUDENTS:
        assert api.post(f"/users/{user}/server").status_code in (201, 202)
    for user in STUDENTS:
        wait_for(
            lambda user=user: api.get(f"/users/{user}").json()["servers"].get("", {}).get("ready"),
            f"{user}'s server starting",
        )
        reply = api.post(f"/users/{user}/tokens", json={"note": "classroom tests"})
        reply.raise_for_status()
        hub.tokens[user] = reply.json()["token"]


@pytest.fixture(scope="module")
def hub(gns3_lab: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    directory = tmp_path_factory.mktemp("jupyterhub")
    admin_token = uuid.uuid4().hex
    with ScriptedLLM() as llm:
        port = write_config(directory, gns3_lab, llm, admin_token)
        log = (directory / "hub.log").open("w")
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "jupyterhub"), "-f", "jupyterhub_config.py"],
            cwd=directory,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        hub = Hub(f"http://127.0.0.1:{port}/", admin_token, llm)
        api = httpx.Client(
            base_url=f"{hub.url}hub/api",
            headers={"Authorization": f"token {admin_token}"},
            timeout=30,
            trust_env=False,
        )
        try:
            wait_for(lambda: api.get("/").status_code == 200, "the hub answering")
            start_students(hub, api)
            yield hub
        finally:
            servers = _server_pids(api)
            for user in STUDENTS:
                with contextlib.suppress(httpx.HTTPError):
                    api.delete(f"/users/{user}/server")
            api.close()
            _stop(process, servers)
            log.close()


def _server_pids(api: httpx.Client) -> list[int]:
    pids = []
    for user in STUDENTS:
        with contextlib.suppress(httpx.HTTPError, KeyError, TypeError):
            pids.append(int(api.get(f"/users/{user}").json()["servers"][""]["state"]["pid"]))
    return pids


def _stop(process: subprocess.Popen[bytes], servers: list[int]) -> None:
    """Stop the hub (it stops the proxy it started), then make sure that the students'
    servers, which the hub started in sessions of their own, are gone too."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    deadline = time.monotonic() + 15
    for pid in servers:
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_each_student_reaches_only_their_own_copilot(hub: Hub) -> None:
    status_url = hub.server_url("alice", "copilot", "status")
    with httpx.Client(timeout=30, trust_env=False) as client:
        mine = client.get(status_url, headers=hub.headers("alice"))
        assert mine.status_code == 200, mine.text
        status = mine.json()
        assert status["gns3"]["reachable"] and status["model"]["configured"]
        assert "sk-test-classroom" not in mine.text

        theirs = client.get(status_url, headers=hub.headers("bob"))
        assert theirs.status_code == 403
        assert theirs.json()["error"]["message"]


async def test_a_chat_streams_through_the_hub_under_the_students_name(
    hub: Hub, gns3_project: Any
) -> None:
    hub.llm.add(text(["Hello ", "from ", "the lab."]), text("Greeting", when=TITLE_REPLY))
    project = ("copilot", "projects", gns3_project.project_id)
    async with httpx.AsyncClient(timeout=60, trust_env=False, headers=hub.headers("bob")) as client:
        opened = await client.post(hub.server_url("bob", *project, "open"))
        assert opened.status_code == 200, opened.text
        events: list[dict[str, Any]] = []
        rest = ""
        async with client.stream(
            "POST", hub.server_url("bob", *project, "chat", "stream"), json={"message": "hi"}
        ) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            async for chunk in response.aiter_text():
                more, rest = parse_sse(rest + chunk)
                events += more
        kinds = [event["type"] for event in events]
        assert kinds[0] == "heartbeat" and kinds[-1] == "done", kinds
        assert "".join(e["content"] for e in events if e["type"] == "content") == (
            "Hello from the lab."
        )
        sessions = await client.get(hub.server_url("bob", *project, "chat", "sessions"))
        [session] = sessions.json()
        assert session["user_id"] == "bob" and session["thread_id"] == events[0]["session_id"]


KERNEL_CODE = """
import json
from jupyter_gns3_copilot import Copilot
copilot = Copilot()
copilot.use({project!r})
turn = copilot.ask("Which PCs are there?")
print(json.dumps({{"source": copilot.server.source, "url": copilot.server.url,
                   "status": turn.status, "text": turn.text}}))
"""


async def test_a_students_kernel_finds_its_server_through_the_hub(
    hub: Hub, gns3_project: Any
) -> None:
    hub.llm.add(text("There are none yet."), text("PCs", when=TITLE_REPLY))
    async with httpx.AsyncClient(
        timeout=60, trust_env=False, headers=hub.headers("alice")
    ) as client:
        started = await client.post(hub.server_url("alice", "api", "kernels"), json={})
        assert started.status_code == 201, started.text
        kernel_id = started.json()["id"]
        try:
            output = await run_in_kernel(
                hub, "alice", kernel_id, KERNEL_CODE.format(project=gns3_project.name)
            )
        finally:
            await client.delete(hub.server_url("alice", "api", "kernels", kernel_id))
    result = json.loads(output.strip().splitlines()[-1])
    assert result["source"] == "jupyterhub"
    assert result["url"].endswith("/user/alice/")
    assert (result["status"], result["text"]) == ("done", "There are none yet.")


async def run_in_kernel(hub: Hub, user: str, kernel_id: str, code: str) -> str:
    """Run `code` in the kernel over its websocket; its stdout (errors raise)."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    url = hub.server_url(user, "api", "kernels", kernel_id, "channels").replace("http", "ws", 1)
    socket = await websocket_connect(HTTPRequest(url, headers=hub.headers(user)))
    msg_id = uuid.uuid4().hex
    socket.write_message(
        json.dumps(
            {
                "header": {
                    "msg_id": msg_id,
                    "msg_type": "execute_request",
                    "session": uuid.uuid4().hex,
                    "username": user,
                    "version": "5.3",
                },
                "parent_header": {},
                "metadata": {},
                "content": {
                    "code": code,
                    "silent": False,
                    "store_history": False,
                    "user_expressions": {},
                    "allow_stdin": False,
                },
                "channel": "shell",
            }
        )
    )
    stdout: list[str] = []
    replied = idle = False
    try:
        # Done when the shell channel has replied and the iopub channel went idle (its
        # output can arrive after the reply).
        while not (replied and idle):
            raw = await socket.read_message()
            assert raw is not None, "the kernel's websocket closed"
            message = json.loads(raw)
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream" and content["name"] == "stdout":
                stdout.append(content["text"])
            elif kind == "error":
                raise AssertionError("\n".join(content["traceback"]))
            elif kind == "execute_reply":
                replied = True
            elif kind == "status":
                idle = content["execution_state"] == "idle"
        return "".join(stdout)
    finally:
        socket.close()
