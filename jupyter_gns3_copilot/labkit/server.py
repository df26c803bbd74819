"""LabServer: one local gns3-server with its own instance directory, ports and credentials."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from types import TracebackType

import httpx
from pydantic import BaseModel

from .computes import (
    COMPUTE_USER,
    ComputeStatus,
    adopt_block,
    check_compute_count,
    compute_status,
    release_compute,
)
from .errors import LabError, LabNotRunning
from .executables import write_helpers
from .instance import (
    ENV_FILE,
    STATE_FILE,
    ComputeState,
    LabState,
    read_env_file,
    read_state,
    write_config,
    write_env_file,
)
from .locks import file_lock
from .ports import (
    PortBlock,
    claim_port_block,
    free_tcp_port,
    port_is_free,
    release_port_block,
    set_block_owner,
)
from .processes import has_marker, lab_processes, terminate
from .provision import ensure_gns3_server, find_vpcs, resolve_cache_dir
from .startup import (
    ChildProcesses,
    clear_previous,
    install_router_templates,
    register_lab_computes,
    settle_password,
)


class LabStatus(BaseModel):
    """``status()``: whether the lab runs and answers, and where to find it."""

    running: bool
    responding: bool
    instance_dir: Path
    lab_id: str | None = None
    pid: int | None = None
    url: str | None = None
    username: str | None = None
    env_file: Path | None = None
    started_at: float | None = None
    console_ports: str | None = None
    udp_ports: str | None = None
    processes: int = 0
    computes: list[ComputeStatus] = []


def _validate_credential(kind: str, value: str) -> None:
    if not value or value != value.strip() or not value.isprintable():
        raise LabError(f"the lab {kind} must be non-empty printable text without edge spaces")


class LabServer:
    """A local gns3-server 3.0.6 on 127.0.0.1, with the project's helper stand-ins.

    ``port``: the server's TCP port (default: a free one). ``cache_dir``: where the
    gns3-server venv lives (see ``provision.resolve_cache_dir``). ``instance_dir``: the
    lab's directory (default: a new temporary one, deleted by ``stop()``).
    ``password``: default: the one recorded in ``instance_dir/lab.env`` when its
    database was created with the same username, else a new random one. The admin
    account lives in the controller database, so new credentials recreate that database.
    ``computes``: how many extra gns3-server processes to start as computes of this
    lab's controller (``computes.py``; named ``compute-1``...), besides its own ``local``.

    The server outlives this object and this process unless ``stop()`` is called; use it
    as a context manager to be sure. ``from_instance()`` finds a lab another process
    started.
    """

    def __init__(
        self,
        port: int | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        instance_dir: str | os.PathLike[str] | None = None,
        username: str = "admin",
        password: str | None = None,
        computes: int = 0,
    ) -> None:
        _validate_credential("username", username)
        check_compute_count(computes)
        if password is not None:
            _validate_credential("password", password)
        if port is not None and not 0 < port < 65536:
            raise LabError(f"port {port} is not a TCP port number (1-65535)")
        self._requested_port = port
        self.cache_dir = resolve_cache_dir(cache_dir)
        self._instance_dir = Path(instance_dir).expanduser().resolve() if instance_dir else None
        self._owns_instance_dir = instance_dir is None
        self._username = username
        self._password = password
        self._compute_count = computes
        self._children = ChildProcesses()
        self._state: LabState | None = None
        self.router_problems: dict[str, str] = {}
        """Why the lab lacks a router template (`router.py`, `frr.py`), by template name;
        empty when it has them all."""

    @classmethod
    def from_instance(
        cls, instance_dir: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None = None
    ) -> LabServer:
        """The lab recorded in ``instance_dir`` (running or not: ``stop()`` cleans up either
        way). Raises LabNotRunning when the directory has no state file."""
        directory = Path(instance_dir).expanduser().resolve()
        state = read_state(directory)
        if state is None:
            raise LabNotRunning(f"no lab has been started in {directory} (no {STATE_FILE})")
        recorded = read_env_file(state.env_file)
        lab = cls(
            port=state.port,
            cache_dir=cache_dir,
            instance_dir=directory,
            username=state.username,
            password=recorded.get("GNS3_PASSWORD") or None,
        )
        lab._state = state
        return lab

    # read-only facts

    def _require_state(self) -> LabState:
        if self._state is None:
            raise LabNotRunning("the lab is not started; call start() first")
        return self._state

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash)."""
        return self._require_state().url

    @property
    def username(self) -> str:
        return self._username

    @property
    def password(self) -> str:
        if self._password is None:
            raise LabNotRunning("the lab password is chosen by start(); call start() first")
        return self._password

    @property
    def pid(self) -> int:
        """PID of the gns3server process."""
        return self._require_state().pid

    @property
    def lab_id(self) -> str:
        """The marker value in the environment of every process of this lab."""
        return self._require_state().lab_id

    @property
    def instance_dir(self) -> Path:
        if self._instance_dir is None:
            raise LabNotRunning("the instance directory is created by start(); call it first")
        return self._instance_dir

    @property
    def env_file(self) -> Path:
        return self.instance_dir / ENV_FILE

    def env(self) -> dict[str, str]:
        """``{"GNS3_URL", "GNS3_USER", "GNS3_PASSWORD"}`` for clients of this lab."""
        return {"GNS3_URL": self.url, "GNS3_USER": self.username, "GNS3_PASSWORD": self.password}

    @property
    def computes(self) -> list[ComputeState]:
        """The lab's extra computes (none unless started with ``computes=N``)."""
        return list(self._require_state().computes)

    def is_running(self) -> bool:
        """True while the gns3server process of this lab is alive."""
        return self._state is not None and has_marker(self._state.pid, self._state.lab_id)

    def status(self) -> LabStatus:
        """Running/responding flags and where the lab is (never raises)."""
        directory = self._instance_dir or Path()
        state = self._state or (read_state(directory) if self._instance_dir else None)
        if state is None:
            return LabStatus(running=False, responding=False, instance_dir=directory)
        running = has_marker(state.pid, state.lab_id)
        responding = False
        if running:
            with contextlib.suppress(httpx.HTTPError):
                answer = httpx.get(f"{state.url}/v3/version", timeout=3, trust_env=False)
                responding = answer.status_code == 200
        return LabStatus(
            running=running,
            responding=responding,
            instance_dir=state.instance_dir,
            lab_id=state.lab_id,
            pid=state.pid,
            url=state.url,
            username=state.username,
            env_file=state.env_file,
            started_at=state.started_at,
            console_ports=f"{state.ports.console_start}-{state.ports.console_end}",
            udp_ports=f"{state.ports.udp_start}-{state.ports.udp_end}",
            processes=len(lab_processes(state.lab_id)),
            computes=[compute_status(compute, state.lab_id) for compute in state.computes],
        )

    # life cycle

    def start(self, timeout: float = 120.0) -> LabServer:
        """Provision what is missing, start gns3-server and wait until a login works.

        Raises LabError when something is missing (with how to install it), when a lab
        already runs from the same instance directory, or when the server does not get
        ready within ``timeout`` seconds (with the tail of its log); nothing is left
        running after a failed start.
        """
        if self.is_running():
            raise LabError(f"this lab is already running at {self.url}")
        gns3server = ensure_gns3_server(self.cache_dir)
        vpcs = find_vpcs()
        port = self._choose_port()
        if self._instance_dir is None:
            self._instance_dir = Path(tempfile.mkdtemp(prefix="gns3-copilot-lab-"))
        instance = self._instance_dir
        if not instance.exists():
            # Private: it will hold the JWT signing key and the admin credentials.
            instance.mkdir(parents=True, mode=0o700)
        with file_lock(instance / ".lab.lock", 30.0, "another process is starting this lab"):
            clear_previous(instance)
            self._password = settle_password(instance, self.username, self._password)
            lab_id = secrets.token_hex(8)
            block = claim_port_block(lab_id)
            computes: list[ComputeState] = []
            compute_password = secrets.token_urlsafe(18)
            try:
                helpers = write_helpers(instance / "bin", vpcs)
                write_config(
                    instance,
                    port,
                    block,
                    helpers,
                    (self.username, self.password),
                    (COMPUTE_USER, compute_password),
                )
                write_env_file(
                    instance / ENV_FILE,
                    {
                        "GNS3_URL": f"http://127.0.0.1:{port}",
                        "GNS3_USER": self.username,
                        "GNS3_PASSWORD": self.password,
                    },
                )
                pid = self._children.launch_server(gns3server, instance, port, lab_id)
                self._children.launch_computes(
                    self._compute_count,
                    gns3server,
                    instance,
                    lab_id,
                    helpers,
                    compute_password,
                    computes,
                )
                self._state = LabState(
                    lab_id=lab_id,
                    pid=pid,
                    port=port,
                    url=f"http://127.0.0.1:{port}",
                    username=self.username,
                    instance_dir=instance,
                    env_file=instance / ENV_FILE,
                    started_at=time.time(),
                    ports=block,
                    computes=list(computes),
                )
                began = time.monotonic()
                credentials = (self.username, self.password)
                self._children.wait_ready(self._state.url, credentials, instance, timeout)
                self.router_problems = install_router_templates(
                    self._state.url, credentials, self.cache_dir
                )
                register_lab_computes(
                    self._state.url,
                    credentials,
                    lab_id,
                    computes,
                    compute_password,
                    began + timeout,
                )
            except BaseException:
                self._abort(lab_id, block, computes)
                raise
            set_block_owner(block, lab_id, self._state.pid)
            for compute in computes:
                adopt_block(compute, lab_id)
            (instance / STATE_FILE).write_text(self._state.model_dump_json(indent=2))
        return self

    def stop(self, timeout: float = 20.0) -> None:
        """Stop the server, its computes and every process of this lab (nodes, stand-ins);
        idempotent.

        SIGTERM first (gns3-server then stops its nodes), SIGKILL after ``timeout``
        seconds, then any process still carrying the lab marker is ended by PID. Raises
        LabError only if some process of the lab could not be ended.
        """
        state = self._state
        if state is None:
            return
        if self._children.server is not None:
            self._children.end_server(timeout)
        else:
            terminate([state.pid], state.lab_id, timeout)
        # After the controller, which closes its projects on the computes as it stops.
        terminate([compute.pid for compute in state.computes], state.lab_id, timeout)
        self._children.reap_computes()
        survivors = terminate(lab_processes(state.lab_id), state.lab_id, 3.0)
        if survivors:
            raise LabError(
                f"could not end processes {survivors} of the lab {state.lab_id}; "
                "end them by hand (kill -9 PID)"
            )
        release_port_block(state.ports, state.lab_id)
        for compute in state.computes:
            release_compute(compute, state.lab_id)
        with contextlib.suppress(OSError):
            (state.instance_dir / STATE_FILE).unlink()
        self._state = None
        if self._owns_instance_dir:
            shutil.rmtree(state.instance_dir, ignore_errors=True)

    def __enter__(self) -> LabServer:
        if not self.is_running():
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # start-up steps (the rest are startup.py's)

    def _choose_port(self) -> int:
        if self._requested_port is None:
            return free_tcp_port()
        if not port_is_free(self._requested_port, listener=True):
            raise LabError(
                f"port {self._requested_port} on 127.0.0.1 is in use; choose another "
                "(--port) or leave it out to get a free one"
            )
        return self._requested_port

    def _abort(self, lab_id: str, block: PortBlock, computes: list[ComputeState]) -> None:
        """Undo a failed start: no process, no port claim, no state left."""
        self._children.end_server(5.0)
        terminate(lab_processes(lab_id), lab_id, 3.0)
        release_port_block(block, lab_id)
        for compute in computes:
            release_compute(compute, lab_id)
        self._children.reap_computes()
        self._state = None
