"""The copilot hub service restarts in place on SIGHUP: a real `python -m
jupyter_gns3_copilot.hub` process, started with the variables JupyterHub gives a managed
service (no hub is needed for `api/health`, which takes no login; GNS3 at a closed port).

Given the service answering and a client asking `api/health` without pause; when the
service gets SIGHUP; then it is the same process afterwards (the hub's poll sees nothing),
its configuration file was read again, and no connection was refused: those made during
the restart waited in the listening socket's backlog. A request in progress when the
signal comes is answered before the restart. `tests/test_hub_service.py` does the same
through a real hub, as the instructor's guide says.

The hub's API is a TEST DOUBLE (`support.tiny_server`): the service asks it who owns a
token, and it answers "nobody", when the test lets it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.tiny_server import TinyServer, json_route

from jupyter_gns3_copilot.hub.restart import PID_FILE
from jupyter_gns3_copilot.labkit.ports import free_tcp_port

PREFIX = "/services/gns3-copilot/"
START_LINE = "Copilot hub service on"


@dataclass
class RunningService:
    process: subprocess.Popen[bytes]
    health: str
    log: Path
    data_dir: Path
    config: Path


def wait_until(check: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.05)


@dataclass
class HubApi:
    """The hub's API as the service sees it: `GET /hub/api/user` (who owns a token)
    answers 403 once `answer` is set (10 s at most)."""

    server: TinyServer
    answer: threading.Event

    @property
    def url(self) -> str:
        return f"{self.server.origin}/hub/api"

    def asked(self) -> bool:
        return any(r["path"].startswith("/hub/api/user") for r in self.server.requests)


@pytest.fixture
def hub_api() -> Iterator[HubApi]:
    answer = threading.Event()
    server = TinyServer()
    refuse = json_route(403, {"message": "no such token"})

    def slowly(handler: Any, body: bytes) -> None:
        answer.wait(10)
        refuse(handler, body)

    server.routes[("GET", "/hub/api/user")] = slowly
    server.start()
    try:
        yield HubApi(server, answer)
    finally:
        answer.set()
        server.stop()


@pytest.fixture
def service(tmp_path: Path, hub_api: HubApi) -> Iterator[RunningService]:
    port = free_tcp_port()
    data_dir = tmp_path / "data"
    config = tmp_path / "jupyter_gns3_copilot_hub_config.py"
    config.write_text("# nothing set yet\n")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "JUPYTERHUB_SERVICE_NAME": "gns3-copilot",
        "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}",
        "JUPYTERHUB_SERVICE_PREFIX": PREFIX,
        "JUPYTERHUB_API_URL": hub_api.url,
        "JUPYTERHUB_API_TOKEN": "service-token",
        "JUPYTERHUB_CLIENT_ID": "service-gns3-copilot",
        "GNS3_URL": "http://127.0.0.1:9",
        "GNS3_PASSWORD": "admin-password",
        "GNS3_COPILOT_MODEL": "scripted-model",
        "GNS3_COPILOT_HUB_DATA_DIR": str(data_dir),
    }
    log = tmp_path / "service.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyter_gns3_copilot.hub"],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    running = RunningService(
        process, f"http://127.0.0.1:{port}{PREFIX}api/health", log, data_dir, config
    )
    try:
        wait_until(lambda: _answers(running.health), "the service answering")
        yield running
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5, trust_env=False).status_code == 200
    except httpx.HTTPError:
        return False


def test_sighup_restarts_the_service_in_place_and_refuses_no_connection(
    service: RunningService,
) -> None:
    pid_file = service.data_dir / PID_FILE
    assert pid_file.read_text().strip() == str(service.process.pid)
    service.config.write_text('c.CopilotHubService.llm_model = "the-new-model"\n')
    assert service.log.read_text().count(START_LINE) == 1

    answers: list[int | str] = []
    done = threading.Event()

    def ask_without_pause() -> None:
        # A new connection each time: what is checked is that none is refused. (A request
        # sent on a kept-alive connection at the very moment of the switch can be cut, as
        # when any HTTP server closes idle connections; clients retry those.)
        while not done.is_set():
            try:
                answers.append(httpx.get(service.health, timeout=30, trust_env=False).status_code)
            except httpx.HTTPError as exc:
                answers.append(type(exc).__name__)

    asker = threading.Thread(target=ask_without_pause)
    asker.start()
    try:
        wait_until(lambda: len(answers) >= 5, "the first answers")
        os.kill(int(pid_file.read_text()), signal.SIGHUP)
        wait_until(lambda: service.log.read_text().count(START_LINE) == 2, "the restart")
        seen = len(answers)
        wait_until(lambda: len(answers) >= seen + 5, "answers after the restart")
    finally:
        done.set()
        asker.join(timeout=60)

    assert service.process.poll() is None  # the same process: the hub would see no exit
    assert pid_file.read_text().strip() == str(service.process.pid)
    assert set(answers) == {200}, [a for a in answers if a != 200]
    log = service.log.read_text()
    assert "SIGHUP: restarting in place" in log
    first, second = log.split("SIGHUP: restarting in place")
    assert "model scripted-model at" in first and "model the-new-model at" in second
    assert "Traceback" not in log


def test_a_request_in_progress_at_sighup_is_answered_before_the_restart(
    service: RunningService, hub_api: HubApi
) -> None:
    """Given a request the service is answering (it waits for the hub to say who owns the
    student's token); when SIGHUP comes meanwhile and the hub answers 0.5 s later; then
    the request gets its answer (401: nobody), not a closed connection, and the service
    restarts once it has been answered."""
    url = service.health.replace("api/health", "api/session")
    answers: list[int | str] = []

    def ask() -> None:
        try:
            response = httpx.get(
                url, headers={"Authorization": "token student-token"}, timeout=30, trust_env=False
            )
            answers.append(response.status_code)
        except httpx.HTTPError as exc:
            answers.append(type(exc).__name__)

    asker = threading.Thread(target=ask)
    asker.start()
    try:
        wait_until(hub_api.asked, "the service asking the hub about the token")
        os.kill(service.process.pid, signal.SIGHUP)
        wait_until(lambda: "SIGHUP: restarting in place" in service.log.read_text(), "SIGHUP")
        time.sleep(0.5)
        assert service.log.read_text().count(START_LINE) == 1  # still answering
        hub_api.answer.set()
        asker.join(timeout=30)
    finally:
        hub_api.answer.set()
        asker.join(timeout=30)
    assert answers == [401]
    wait_until(lambda: service.log.read_text().count(START_LINE) == 2, "the restart")
    assert _answers(service.health)
    assert "still in progress are cut" not in service.log.read_text()


def test_sigterm_stops_the_service_and_removes_its_pid_file(service: RunningService) -> None:
    service.process.send_signal(signal.SIGTERM)
    assert service.process.wait(timeout=15) == 0
    assert not (service.data_dir / PID_FILE).exists()
