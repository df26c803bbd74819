"""The steps of starting a lab's controller, for `LabServer.start` (``server.py``).

A previous run of the same instance directory cleared away, the admin credentials
settled, the gns3-server processes launched (`ChildProcesses`, which also ends them), the
controller awaited until a login works, the Linux router template installed and the
extra computes registered.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from .computes import launch_compute, register_computes, release_compute, wait_compute_answers
from .errors import LabError
from .executables import HelperPaths
from .frr import FRR_TEMPLATE, install_frr_router
from .instance import (
    CONFIG_FILE,
    CONSOLE_LOG,
    DATABASE_FILE,
    ENV_FILE,
    SERVER_LOG,
    STATE_FILE,
    ComputeState,
    log_tail,
    read_env_file,
    read_state,
)
from .ports import release_port_block
from .processes import LAB_ID_ENV, has_marker, lab_processes, terminate
from .router import ROUTER_TEMPLATE, RouterUnavailable, install_router

log = logging.getLogger(__name__)

Credentials = tuple[str, str]
"""The lab's admin (username, password)."""


def clear_previous(instance: Path) -> None:
    """Refuse a running lab in ``instance``; clean up after one that died."""
    previous = read_state(instance)
    if previous is None:
        return
    if has_marker(previous.pid, previous.lab_id):
        raise LabError(
            f"a lab is already running from {instance} at {previous.url} "
            f"(pid {previous.pid}); stop it first: gns3-copilot-lab stop "
            f"--instance-dir {shlex.quote(str(instance))}"
        )
    terminate(lab_processes(previous.lab_id), previous.lab_id, 3.0)
    release_port_block(previous.ports, previous.lab_id)
    for compute in previous.computes:
        release_compute(compute, previous.lab_id)
    (instance / STATE_FILE).unlink(missing_ok=True)


def settle_password(instance: Path, username: str, password: str | None) -> str:
    """The admin password to start with: ``password``, else the one recorded in
    ``instance``'s env file for the same user and database, else a new random one. The
    controller database is deleted when it was made with other credentials."""
    recorded = read_env_file(instance / ENV_FILE)
    database = instance / DATABASE_FILE
    if password is None:
        same_user = recorded.get("GNS3_USER") == username
        if database.exists() and same_user and recorded.get("GNS3_PASSWORD"):
            password = recorded["GNS3_PASSWORD"]
        else:
            password = secrets.token_urlsafe(12)
    if database.exists() and (recorded.get("GNS3_USER"), recorded.get("GNS3_PASSWORD")) != (
        username,
        password,
    ):
        log.warning("new lab credentials: recreating the controller database %s", database)
        database.unlink()
    return password


def end_child(process: subprocess.Popen[bytes], timeout: float) -> None:
    """End a process this one started: SIGTERM, SIGKILL after ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5.0)


class ChildProcesses:
    """The gns3-server processes this object started: the controller and its computes."""

    def __init__(self) -> None:
        self.server: subprocess.Popen[bytes] | None = None
        self.computes: list[subprocess.Popen[bytes]] = []

    def launch_server(self, gns3server: Path, instance: Path, port: int, lab_id: str) -> int:
        """Start the controller on 127.0.0.1:``port``; its PID."""
        (instance / SERVER_LOG).unlink(missing_ok=True)
        env = {**os.environ, LAB_ID_ENV: lab_id}
        command = [
            str(gns3server),
            "--config",
            str(instance / CONFIG_FILE),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--logfile",
            str(instance / SERVER_LOG),
        ]
        with (instance / CONSOLE_LOG).open("wb") as console:
            self.server = subprocess.Popen(
                command,
                cwd=instance,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        log.info("gns3-server starting on http://127.0.0.1:%d (pid %d)", port, self.server.pid)
        return self.server.pid

    def launch_computes(
        self,
        count: int,
        gns3server: Path,
        instance: Path,
        lab_id: str,
        helpers: HelperPaths,
        password: str,
        started: list[ComputeState],
    ) -> None:
        """Start ``count`` extra computes, appending each to ``started`` as it is launched
        (so a failure part way still stops the ones that run)."""
        for number in range(1, count + 1):
            state, process = launch_compute(gns3server, instance, number, lab_id, helpers, password)
            started.append(state)
            self.computes.append(process)

    def end_server(self, timeout: float) -> None:
        """End the controller (see `end_child`) and forget it; nothing when none was started."""
        if self.server is not None:
            end_child(self.server, timeout)
        self.server = None

    def reap_computes(self) -> None:
        """Collect the exit status of the compute processes started here (ended)."""
        for process in self.computes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(1.0)
        self.computes.clear()

    def wait_ready(
        self, url: str, credentials: Credentials, instance: Path, timeout: float
    ) -> None:
        """Wait until the controller answers and accepts the credentials; `LabError` when it
        exits, refuses them or is not ready within ``timeout`` s (with its log's tail)."""
        assert self.server is not None
        deadline = time.monotonic() + timeout
        username, password = credentials
        body = {"username": username, "password": password}
        with httpx.Client(base_url=url, timeout=5, trust_env=False) as client:
            while True:
                code = self.server.poll()
                if code is not None:
                    raise LabError(
                        f"gns3-server exited with code {code} while starting\n{log_tail(instance)}"
                    )
                with contextlib.suppress(httpx.TransportError):
                    if client.get("/v3/version").status_code == 200:
                        login = client.post("/v3/access/users/authenticate", json=body)
                        if login.status_code == 200:
                            return
                        if login.status_code == 401:
                            raise LabError(
                                f"gns3-server at {url} refused the lab credentials "
                                f"for {username!r}; delete {instance / DATABASE_FILE}"
                                " and start again"
                            )
                if time.monotonic() > deadline:
                    raise LabError(
                        f"gns3-server did not become ready (version + login) within {timeout:.0f}"
                        f" s\n{log_tail(instance)}"
                    )
                time.sleep(0.25)


@contextlib.contextmanager
def admin_client(url: str, credentials: Credentials) -> Iterator[httpx.Client]:
    """An HTTP client of the controller at ``url``, logged in as the lab's admin."""
    username, password = credentials
    with httpx.Client(base_url=url, timeout=30, trust_env=False) as client:
        login = client.post(
            "/v3/access/users/authenticate", json={"username": username, "password": password}
        )
        login.raise_for_status()
        client.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
        yield client


def install_router_templates(url: str, credentials: Credentials, cache_dir: Path) -> dict[str, str]:
    """Add the Linux router and FRR router templates (Debian's FRR packages cached in
    `cache_dir`); what is missing, by template name, for each that cannot be built (the
    lab runs without it: only labs with that router need it)."""
    installers: dict[str, Callable[[httpx.Client], object]] = {
        ROUTER_TEMPLATE: install_router,
        FRR_TEMPLATE: lambda client: install_frr_router(client, cache_dir),
    }
    problems = {}
    with admin_client(url, credentials) as client:
        for template, install in installers.items():
            try:
                install(client)
            except RouterUnavailable as exc:
                log.warning("The lab has no %s: %s", template, exc)
                problems[template] = str(exc)
    return problems


def register_lab_computes(
    url: str,
    credentials: Credentials,
    lab_id: str,
    computes: list[ComputeState],
    password: str,
    deadline: float,
) -> None:
    """Wait for each compute, then register them all with the controller (which also
    forgets computes of an earlier start of this lab that no longer run)."""
    for state in computes:
        wait_compute_answers(state, lab_id, deadline)
    with admin_client(url, credentials) as client:
        register_computes(client, computes, password, deadline)
