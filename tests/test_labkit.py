"""The local GNS3 lab end to end: a real gns3-server 3.0.6, real VPCS, our stand-ins."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_gns3_copilot.labkit import LabError, LabServer
from jupyter_gns3_copilot.labkit.instance import read_env_file
from jupyter_gns3_copilot.labkit.ports import (
    _claimed,
    claim_port_block,
    free_tcp_port,
    port_is_free,
    release_port_block,
    set_block_owner,
)
from jupyter_gns3_copilot.labkit.processes import has_marker, lab_processes
from jupyter_gns3_copilot.labkit.provision import resolve_cache_dir
from jupyter_gns3_copilot.labkit.standins.pcap import read_pcap
from jupyter_gns3_copilot.testing.pytest_plugin import GNS3Project

IAC, SB, SE = 255, 250, 240
NEGOTIATION = range(251, 255)  # WILL, WONT, DO, DONT
COMMAND_TIMEOUT = 30.0


@pytest.mark.lab
def test_lab_answers_version_and_login(gns3_lab: Any, gns3_http: httpx.Client) -> None:
    version = httpx.get(f"{gns3_lab.url}/v3/version", timeout=10, trust_env=False)
    assert version.json()["version"] == "3.0.6"
    assert gns3_http.get("/v3/access/users/me").json()["username"] == gns3_lab.username

    wrong = httpx.post(
        f"{gns3_lab.url}/v3/access/users/authenticate",
        json={"username": gns3_lab.username, "password": "not-the-password"},
        timeout=10,
        trust_env=False,
    )
    assert wrong.status_code == 401
    assert gns3_lab.env() == {
        "GNS3_URL": gns3_lab.url,
        "GNS3_USER": gns3_lab.username,
        "GNS3_PASSWORD": gns3_lab.password,
    }


def strip_telnet(data: bytes) -> bytes:
    """Drop telnet IAC sequences (test-only; the product uses a telnet library)."""
    out, index = bytearray(), 0
    while index < len(data):
        byte = data[index]
        if byte != IAC:
            out.append(byte)
            index += 1
        elif index + 1 < len(data) and data[index + 1] == IAC:
            out.append(IAC)
            index += 2
        elif index + 1 < len(data) and data[index + 1] in NEGOTIATION:
            index += 3
        elif index + 1 < len(data) and data[index + 1] == SB:
            end = data.find(bytes([IAC, SE]), index)
            index = len(data) if end < 0 else end + 2
        else:
            index += 2
    return bytes(out)


class RawConsole:
    """A VPCS console over plain TCP: send a line, read until the prompt comes back."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str):
        self.reader, self.writer, self.prompt = reader, writer, f"{name}> "
        self.raw = b""

    @classmethod
    async def open(cls, node: dict[str, Any]) -> RawConsole:
        host = (
            node["console_host"] if node["console_host"] not in ("0.0.0.0", "::") else "127.0.0.1"
        )
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, node["console"]), COMMAND_TIMEOUT
        )
        console = cls(reader, writer, node["name"])
        try:
            await console._read_prompt(5.0)
        except asyncio.TimeoutError:
            await console.run("")
        return console

    async def _read_prompt(self, timeout: float) -> str:
        start = len(strip_telnet(self.raw))

        async def until_prompt() -> str:
            while True:
                text = strip_telnet(self.raw).decode(errors="replace")
                if self.prompt in text[start:]:
                    self.raw = b""
                    return text[start:]
                chunk = await self.reader.read(4096)
                if not chunk:
                    raise ConnectionError(f"console closed; got {text!r}")
                self.raw += chunk

        return await asyncio.wait_for(until_prompt(), timeout)

    async def run(self, command: str, timeout: float = COMMAND_TIMEOUT) -> str:
        self.writer.write(f"{command}\n".encode())
        await self.writer.drain()
        return await self._read_prompt(timeout)

    def close(self) -> None:
        self.writer.close()


def template_id(templates: list[dict[str, Any]], template_type: str) -> str:
    return next(t["template_id"] for t in templates if t["template_type"] == template_type)


async def add_node(
    api: httpx.AsyncClient, project: GNS3Project, template: str, name: str, x: int
) -> dict[str, Any]:
    response = await api.post(
        f"/v3/projects/{project.project_id}/templates/{template}",
        json={"x": x, "y": 0, "compute_id": "local", "name": name},
    )
    assert response.status_code == 201, response.text
    return response.json()


async def add_link(
    api: httpx.AsyncClient, project: GNS3Project, a: dict[str, Any], b: dict[str, Any], b_port: int
) -> dict[str, Any]:
    response = await api.post(
        f"/v3/projects/{project.project_id}/links",
        json={
            "nodes": [
                {"node_id": a["node_id"], "adapter_number": 0, "port_number": 0},
                {"node_id": b["node_id"], "adapter_number": 0, "port_number": b_port},
            ]
        },
    )
    assert response.status_code == 201, response.text
    return response.json()


def icmp_between(frames: list[bytes], source: str, destination: str) -> list[bytes]:
    """IPv4 ICMP frames from ``source`` to ``destination`` (untagged Ethernet)."""
    src, dst = bytes(map(int, source.split("."))), bytes(map(int, destination.split(".")))
    return [
        f
        for f in frames
        if f[12:14] == b"\x08\x00" and f[23] == 1 and f[26:30] == src and f[30:34] == dst
    ]


async def ping_with_capture(
    api: httpx.AsyncClient, project: GNS3Project, pcs: list[dict[str, Any]], link: dict[str, Any]
) -> list[bytes]:
    """Address two started PCs, ping from the first while ``link`` is captured; the frames."""
    consoles = [await RawConsole.open(pc) for pc in pcs]
    try:
        outputs = await asyncio.gather(
            *(console.run(f"ip 10.0.0.{index}/24") for index, console in enumerate(consoles, 1))
        )
        for index, output in enumerate(outputs, start=1):
            assert f"10.0.0.{index} 255.255.255.0" in output, output
        links = f"/v3/projects/{project.project_id}/links/{link['link_id']}"
        started = await api.post(f"{links}/capture/start", json={})
        assert started.status_code == 201, started.text
        output = await consoles[0].run("ping 10.0.0.2 -c 3")
        stopped = await api.post(f"{links}/capture/stop")
        assert stopped.status_code == 204, stopped.text
    finally:
        for console in consoles:
            console.close()
    assert "10.0.0.2 icmp_seq=1 ttl=64" in output, output
    capture_file = Path(started.json()["capture_file_path"])
    link_type, frames = read_pcap(capture_file)
    assert link_type == 1
    return frames


@pytest.mark.lab
async def test_vpcs_ping_through_switch_and_capture(gns3_project: GNS3Project) -> None:
    headers = {"Authorization": f"Bearer {gns3_project.token}"}
    async with httpx.AsyncClient(
        base_url=gns3_project.url, headers=headers, timeout=60, trust_env=False
    ) as api:
        templates = (await api.get("/v3/templates")).json()
        vpcs, switch = template_id(templates, "vpcs"), template_id(templates, "ethernet_switch")
        pc1 = await add_node(api, gns3_project, vpcs, "PC1", -200)
        pc2 = await add_node(api, gns3_project, vpcs, "PC2", 200)
        sw1 = await add_node(api, gns3_project, switch, "SW1", 0)
        link1 = await add_link(api, gns3_project, pc1, sw1, 0)
        await add_link(api, gns3_project, pc2, sw1, 1)
        started = await api.post(f"/v3/projects/{gns3_project.project_id}/nodes/start")
        assert started.status_code == 204, started.text

        frames = await ping_with_capture(api, gns3_project, [pc1, pc2], link1)

    assert len(icmp_between(frames, "10.0.0.1", "10.0.0.2")) >= 3, "echo requests captured"
    assert len(icmp_between(frames, "10.0.0.2", "10.0.0.1")) >= 3, "echo replies captured"


@pytest.mark.lab
async def test_vpcs_direct_link_capture_and_suspend_by_ubridge(gns3_project: GNS3Project) -> None:
    headers = {"Authorization": f"Bearer {gns3_project.token}"}
    async with httpx.AsyncClient(
        base_url=gns3_project.url, headers=headers, timeout=60, trust_env=False
    ) as api:
        vpcs = template_id((await api.get("/v3/templates")).json(), "vpcs")
        pc1 = await add_node(api, gns3_project, vpcs, "PC1", -100)
        pc2 = await add_node(api, gns3_project, vpcs, "PC2", 100)
        link = await add_link(api, gns3_project, pc1, pc2, 0)
        started = await api.post(f"/v3/projects/{gns3_project.project_id}/nodes/start")
        assert started.status_code == 204, started.text

        frames = await ping_with_capture(api, gns3_project, [pc1, pc2], link)
        assert icmp_between(frames, "10.0.0.1", "10.0.0.2")
        assert icmp_between(frames, "10.0.0.2", "10.0.0.1")

        link_path = f"/v3/projects/{gns3_project.project_id}/links/{link['link_id']}"
        console = await RawConsole.open(pc1)
        try:
            assert (await api.put(link_path, json={"suspend": True})).status_code == 200
            assert "timeout" in await console.run("ping 10.0.0.2 -c 1")
            # No resume check: gns3-server 3.0.6 keeps a VPCS NIO's filters when the update
            # carries none, so resuming re-applies the drop filter (real uBridge or not).
        finally:
            console.close()


@pytest.mark.lab
def test_start_refuses_a_busy_port(gns3_lab: Any) -> None:
    busy = int(gns3_lab.url.rsplit(":", 1)[1])
    with pytest.raises(LabError, match=f"port {busy} on 127.0.0.1 is in use"):
        LabServer(port=busy).start()


def _start_nodes_with_helpers(lab: LabServer) -> None:
    """Give the lab one running VPCS (+ uBridge) and a switch (+ Dynamips stand-in)."""
    with httpx.Client(base_url=f"{lab.url}/v3", timeout=60, trust_env=False) as api:
        login = api.post(
            "/access/users/authenticate", json={"username": lab.username, "password": lab.password}
        )
        api.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
        project = api.post("/projects", json={"name": "leftovers"}).json()["project_id"]
        templates = api.get("/templates").json()
        for template_type in ("vpcs", "ethernet_switch"):
            created = api.post(
                f"/projects/{project}/templates/{template_id(templates, template_type)}",
                json={"x": 0, "y": 0, "compute_id": "local"},
            )
            assert created.status_code == 201, created.text
        assert api.post(f"/projects/{project}/nodes/start").status_code == 204


def _command_lines(pids: list[int]) -> str:
    lines = []
    for pid in pids:
        with contextlib.suppress(OSError):
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    return "\n".join(lines)


@pytest.mark.lab
@pytest.mark.slow
def test_labserver_stop_leaves_no_process_behind_even_after_a_crash(tmp_path: Path) -> None:
    lab = LabServer(instance_dir=tmp_path / "lab")
    lab.start()
    lab_id = lab.lab_id
    try:
        _start_nodes_with_helpers(lab)
        pids = lab_processes(lab_id)
        commands = _command_lines(pids)
        assert lab.pid in pids
        for helper in ("gns3server", "vpcs", "standins.ubridge", "standins.dynamips"):
            assert helper in commands, commands
        os.kill(lab.pid, signal.SIGKILL)  # the server cannot stop its nodes any more
    finally:
        lab.stop()

    assert lab_processes(lab_id) == []
    assert not any(has_marker(pid, lab_id) for pid in pids)
    assert not (tmp_path / "lab" / "lab-state.json").exists()
    lab.stop()


def _cli(*args: str, timeout: float = 200.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_gns3_copilot.labkit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.lab
@pytest.mark.slow
def test_cli_start_status_stop_round_trip(tmp_path: Path) -> None:
    instance = tmp_path / "cli-lab"
    where = ("--instance-dir", str(instance))
    started = _cli("start", *where)
    try:
        assert started.returncode == 0, started.stderr
        env_file = instance / "lab.env"
        values = read_env_file(env_file)
        assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
        for key in ("GNS3_URL", "GNS3_USER", "GNS3_PASSWORD"):
            assert values[key] in started.stdout

        status = _cli("status", *where, timeout=30)
        assert status.returncode == 0, status.stderr
        report = json.loads(status.stdout)
        assert report["running"] and report["responding"]
        assert report["url"] == values["GNS3_URL"]

        login = httpx.post(
            f"{values['GNS3_URL']}/v3/access/users/authenticate",
            json={"username": values["GNS3_USER"], "password": values["GNS3_PASSWORD"]},
            timeout=10,
            trust_env=False,
        )
        assert login.status_code == 200

        again = _cli("start", *where, timeout=30)
        assert again.returncode == 0 and "already running" in again.stdout
        _start_nodes_with_helpers(LabServer.from_instance(instance))
        assert len(lab_processes(report["lab_id"])) >= 4
    finally:
        stopped = _cli("stop", *where, timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    assert lab_processes(report["lab_id"]) == []

    after = _cli("status", *where, timeout=30)
    assert after.returncode == 1 and json.loads(after.stdout)["running"] is False
    assert _cli("stop", *where, timeout=30).returncode == 0
    assert os.path.exists(instance / "gns3_server.conf"), "the named lab's directory stays"


def test_port_blocks_are_disjoint_and_reclaimed(tmp_path: Path) -> None:
    first = claim_port_block("lab-a", tmp_path)
    second = claim_port_block("lab-b", tmp_path)
    ranges = [
        set(range(b.console_start, b.console_end + 1)) | set(range(b.udp_start, b.udp_end + 1))
        for b in (first, second)
    ]
    assert not ranges[0] & ranges[1]
    assert first.console_end < first.udp_start and first.udp_end < 32768

    release_port_block(first, "someone-else", tmp_path)
    assert (tmp_path / f"block-{first.index}.json").exists(), "only the owner releases"
    release_port_block(first, "lab-a", tmp_path)
    assert not (tmp_path / f"block-{first.index}.json").exists()

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    )
    set_block_owner(second, "lab-b", int(dead.stdout), tmp_path)
    assert not _claimed(tmp_path / f"block-{second.index}.json"), "dead owner: reclaimable"


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GNS3_COPILOT_LAB_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert resolve_cache_dir() == tmp_path / "xdg" / "jupyter_gns3_copilot"
    monkeypatch.setenv("GNS3_COPILOT_LAB_CACHE", str(tmp_path / "env"))
    assert resolve_cache_dir() == tmp_path / "env"
    assert resolve_cache_dir(tmp_path / "arg") == tmp_path / "arg"


def _time_wait_on(port: int) -> bool:
    """Whether a TCP connection of local port `port` on 127.0.0.1 is in TIME_WAIT."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        if local == f"0100007F:{port:04X}" and state == "06":
            return True
    return False


@pytest.mark.reliability
def test_a_port_left_in_time_wait_is_free_for_a_listener_not_one_listening() -> None:
    """Given a server port whose connection the server closed first (TIME_WAIT); then it
    counts as free for a listener (SO_REUSEADDR) but not for a plain bind, and a port with
    a socket listening on it is never free."""
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        assert not port_is_free(port, listener=True)
        with socket.create_connection(("127.0.0.1", port)) as client:
            accepted, _ = server.accept()
            accepted.close()
            assert client.recv(1) == b""
    assert _time_wait_on(port)
    assert port_is_free(port, listener=True)
    assert not port_is_free(port)


@pytest.mark.reliability
@pytest.mark.lab
@pytest.mark.slow
def test_cli_stop_then_start_on_the_same_port_succeeds_at_once(tmp_path: Path) -> None:
    """Given a lab started on a chosen port with a client connected when it stops (its
    connection is left in TIME_WAIT for a minute); then `start` on the same port works
    at once."""
    where = ("--instance-dir", str(tmp_path / "cli-lab"))
    port = free_tcp_port()
    try:
        started = _cli("start", *where, "--port", str(port))
        assert started.returncode == 0, started.stderr
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False) as client:
            assert client.get("/v3/version", timeout=10).status_code == 200
            stopped = _cli("stop", *where, timeout=60)
            assert stopped.returncode == 0, stopped.stderr
        assert _time_wait_on(port), "the stopped server's connection is in TIME_WAIT"
        again = _cli("start", *where, "--port", str(port))
        assert again.returncode == 0, again.stderr
        version = httpx.get(f"http://127.0.0.1:{port}/v3/version", timeout=10, trust_env=False)
        assert version.json()["version"] == "3.0.6"
    finally:
        assert _cli("stop", *where, timeout=60).returncode == 0
