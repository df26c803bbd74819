"""Extra GNS3 computes for a lab: more gns3-server processes its controller places nodes on.

Each compute is a real gns3-server on a loopback address of its own (compute N on
127.0.0.N+1: GNS3 tunnels a link between two computes only when their addresses differ,
and every address of 127.0.0.0/8 stays on this machine), with its own TCP port, block of
console and UDP ports (``ports.py``), its own directory ``<lab>/computes/<name>``
(``gns3_server.conf`` 0600, projects, images, logs) and the lab's helper executables.
Computes are named ``compute-1``, ``compute-2``...; their ids (UUIDs, as GNS3's database
wants) are derived from the name, so a project's nodes find their compute again after the
lab restarts. The compute password (one per lab, generated at every start) is kept only
where gns3-server reads it (the 0600 configs of the controller and its computes) and in
the controller's database (sent by the registration); nothing else records it.

Every compute process carries the lab's marker (``processes.py``), so stopping the lab
ends them too, whatever happened to the controller.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import subprocess
import time
import uuid
from pathlib import Path

import httpx
from pydantic import BaseModel

from .errors import LabError
from .executables import HelperPaths
from .instance import (
    CONFIG_FILE,
    CONSOLE_LOG,
    SERVER_LOG,
    ComputeState,
    log_tail,
    write_config,
)
from .ports import claim_port_block, free_tcp_port, release_port_block, set_block_owner
from .processes import LAB_ID_ENV, has_marker

log = logging.getLogger(__name__)

COMPUTES_FOLDER = "computes"
COMPUTE_USER = "gns3-copilot-lab"
COMPUTE_NAME_PREFIX = "compute-"
_ID_NAMESPACE = uuid.UUID("6f0e4c4e-8d1b-5b7e-9a43-2f1c0b7a9d21")
MAX_COMPUTES = 8
"""More computes than this on one machine only cost RAM: each is a whole gns3-server."""


class ComputeStatus(BaseModel):
    """One compute in ``LabStatus``: where it is, whether it runs, its port ranges."""

    compute_id: str
    name: str
    url: str
    pid: int
    running: bool
    console_ports: str
    udp_ports: str


def compute_name(number: int) -> str:
    """The name of the lab's ``number``-th compute (1-based)."""
    return f"{COMPUTE_NAME_PREFIX}{number}"


def compute_id(number: int) -> str:
    """The stable id (a UUID) of the lab's ``number``-th compute."""
    return str(uuid.uuid5(_ID_NAMESPACE, compute_name(number)))


def is_lab_compute(identifier: str) -> bool:
    """True for ids ``compute_id()`` makes (the computes a lab may register or remove)."""
    return identifier in {compute_id(number) for number in range(1, MAX_COMPUTES + 1)}


def check_compute_count(count: int) -> None:
    """Raise LabError unless ``0 <= count <= MAX_COMPUTES``."""
    if not 0 <= count <= MAX_COMPUTES:
        raise LabError(
            f"--computes must be between 0 and {MAX_COMPUTES} (got {count}); each compute is "
            "a whole gns3-server"
        )


def compute_status(state: ComputeState, lab_id: str) -> ComputeStatus:
    """The status of one recorded compute (running = its process is alive)."""
    return ComputeStatus(
        compute_id=state.compute_id,
        name=state.name,
        url=state.url,
        pid=state.pid,
        running=has_marker(state.pid, lab_id),
        console_ports=f"{state.ports.console_start}-{state.ports.console_end}",
        udp_ports=f"{state.ports.udp_start}-{state.ports.udp_end}",
    )


def compute_host(number: int) -> str:
    """The loopback address of the lab's ``number``-th compute."""
    return f"127.0.0.{number + 1}"


def block_owner(lab_id: str, name: str) -> str:
    """The owner name of a compute's port block claim."""
    return f"{lab_id}/{name}"


def launch_compute(
    gns3server: Path,
    lab_dir: Path,
    number: int,
    lab_id: str,
    helpers: HelperPaths,
    password: str,
) -> tuple[ComputeState, subprocess.Popen[bytes]]:
    """Start the lab's ``number``-th compute with the lab's compute ``password``; its
    state and process.

    GNS3 3.0.6's controller forwards a console websocket to a compute with its OWN
    compute credentials, not the ones the compute was registered with: every compute of
    a lab therefore uses the controller's compute user and password.

    The compute's port block is claimed for the caller's process until
    ``set_block_owner`` hands it to the compute (``adopt_block``). The caller waits for it
    (``wait_compute_answers``) and, on any failure, ends it and releases its block
    (``release_compute``).
    """
    name = compute_name(number)
    directory = lab_dir / COMPUTES_FOLDER / name
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    host = compute_host(number)
    port = free_tcp_port(host)
    block = claim_port_block(block_owner(lab_id, name))
    try:
        # Its own controller (every gns3-server has one) is never used: its admin gets a
        # password nobody keeps.
        admin = ("admin", secrets.token_urlsafe(16))
        compute = (COMPUTE_USER, password)
        write_config(directory, port, block, helpers, admin, compute, host=host, name=name)
        (directory / SERVER_LOG).unlink(missing_ok=True)
        command = [
            str(gns3server),
            "--config",
            str(directory / CONFIG_FILE),
            "--host",
            host,
            "--port",
            str(port),
            "--logfile",
            str(directory / SERVER_LOG),
        ]
        with (directory / CONSOLE_LOG).open("wb") as console:
            process = subprocess.Popen(
                command,
                cwd=directory,
                env={**os.environ, LAB_ID_ENV: lab_id},
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    except BaseException:
        release_port_block(block, block_owner(lab_id, name))
        raise
    log.info("GNS3 compute %s starting on %s:%d (pid %d)", name, host, port, process.pid)
    state = ComputeState(
        compute_id=compute_id(number),
        name=name,
        host=host,
        pid=process.pid,
        port=port,
        url=f"http://{host}:{port}",
        instance_dir=directory,
        ports=block,
    )
    return state, process


def adopt_block(state: ComputeState, lab_id: str) -> None:
    """Hand the compute's port block claim to its own process."""
    set_block_owner(state.ports, block_owner(lab_id, state.name), state.pid)


def release_compute(state: ComputeState, lab_id: str) -> None:
    """Drop the compute's port block claim (its process is gone or never started)."""
    release_port_block(state.ports, block_owner(lab_id, state.name))


def wait_compute_answers(state: ComputeState, lab_id: str, deadline: float) -> None:
    """Wait until the compute answers ``GET /v3/version``; LabError with its log otherwise."""
    with httpx.Client(base_url=state.url, timeout=5, trust_env=False) as client:
        while True:
            if not has_marker(state.pid, lab_id):
                raise LabError(
                    f"the GNS3 compute {state.name} exited while starting\n"
                    f"{log_tail(state.instance_dir)}"
                )
            with contextlib.suppress(httpx.TransportError):
                if client.get("/v3/version").status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise LabError(
                    f"the GNS3 compute {state.name} did not answer in time\n"
                    f"{log_tail(state.instance_dir)}"
                )
            time.sleep(0.25)


def register_computes(
    controller: httpx.Client, computes: list[ComputeState], password: str, deadline: float
) -> None:
    """Register (or update) each compute with the controller, remove the lab's computes
    that no longer run, and wait until the controller is connected to every one.

    ``controller`` is an authenticated client of the controller.
    """
    wanted = {state.compute_id for state in computes}
    known = controller.get("/v3/computes")
    _check(known, "listing the controller's computes")
    for entry in known.json():
        identifier = str(entry.get("compute_id"))
        if is_lab_compute(identifier) and identifier not in wanted:
            _check(controller.delete(f"/v3/computes/{identifier}"), f"removing {identifier}")
    registered = {str(entry.get("compute_id")) for entry in known.json()}
    for state in computes:
        body = {
            "protocol": "http",
            "host": state.host,
            "port": state.port,
            "user": COMPUTE_USER,
            "password": password,
            "name": state.name,
        }
        if state.compute_id in registered:
            answer = controller.put(f"/v3/computes/{state.compute_id}", json=body)
        else:
            answer = controller.post("/v3/computes", json={**body, "compute_id": state.compute_id})
        _check(answer, f"registering the compute {state.name}")
    for state in computes:
        _wait_connected(controller, state, deadline)


def _wait_connected(controller: httpx.Client, state: ComputeState, deadline: float) -> None:
    """Ask the controller to connect until it answers 204 (it then is connected: GNS3's
    list of computes does not say whether it is)."""
    problem = "no answer"
    while True:
        try:
            answer = controller.post(f"/v3/computes/{state.compute_id}/connect")
        except httpx.TransportError as exc:
            problem = str(exc)
        else:
            if answer.status_code == 204:
                return
            problem = f"HTTP {answer.status_code} {answer.text[:300]}"
        if time.monotonic() > deadline:
            raise LabError(
                f"the GNS3 controller did not connect to the compute {state.name} at "
                f"{state.url}: {problem}\n{log_tail(state.instance_dir)}"
            )
        time.sleep(0.25)


def _check(answer: httpx.Response, what: str) -> None:
    if answer.status_code >= 400:
        raise LabError(f"{what} failed: HTTP {answer.status_code} {answer.text[:300]}")
