"""Consoles over GNS3's authenticated console websocket, on the real lab.

The websocket transport (`console/websocket.py`) against the real gns3-server 3.0.6 and
real VPCS consoles: the console answers through the websocket and no TCP connection is
made to the node's telnet port (checked in this process's own sockets, with the telnet
transport as the control that the check sees one); another student's GNS3 token (a real
second GNS3 user from `LabAccounts`) and a token GNS3 cannot validate are refused with
readable messages, and never retried by `wait_ready`; a refused token is renewed once; the
JWT and what is typed appear in no log record at DEBUG level, the JWT in no message. In
hub mode, through a real Jupyter server and the hub service's real routes (as in
tests/test_hub_mode.py), the copilot's tools reach a student's console over the websocket
by default. VPCS commands, pings with progress and interrupted pings run over both
transports in tests/test_console_vpcs.py and tests/test_reliability_console.py.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError
from support.hub_mode import HUB_TOKEN, hub_service, student_server_config
from support.server import call, copilot_app

from jupyter_gns3_copilot.console import (
    ConsolePool,
    ConsoleRefusedError,
    ConsoleSession,
    ConsoleTarget,
    ConsoleTargetError,
    ConsoleTransport,
)
from jupyter_gns3_copilot.console.models import console_websocket_url
from jupyter_gns3_copilot.console.websocket import TelnetCommandFilter, mask_token
from jupyter_gns3_copilot.gns3 import GNS3Client, Node
from jupyter_gns3_copilot.hub.lab_accounts import LabAccounts
from jupyter_gns3_copilot.hub.student_accounts import StudentAccounts
from jupyter_gns3_copilot.labkit.ports import free_tcp_port
from jupyter_gns3_copilot.server.app import GNS3Copilot

SECRET = SecretStr("console-websocket-tests")
NOT_IN_YOUR_LAB = "GNS3 refused the console: this node is not in your lab"
IAC, WILL, DO, SB, SE = 255, 251, 253, 250, 240


# -- without a lab -----------------------------------------------------------------------


def test_outgoing_telnet_commands_are_dropped_and_text_kept_across_writes() -> None:
    drop = TelnetCommandFilter()
    naws = bytes([IAC, SB, 31, 0, 250, 0, 25, IAC, SE])
    assert drop.feed(bytes([IAC, DO, 1, IAC, WILL, 3]) + b"show ip\n") == b"show ip\n"
    assert drop.feed(naws + b"\x03\x1e") == b"\x03\x1e"  # Ctrl-C and IOS break pass
    assert drop.feed(bytes([IAC])) == b"" and drop.feed(bytes([WILL])) == b""
    assert drop.feed(bytes([24]) + "é\n".encode()) == "é\n".encode()
    assert drop.feed(bytes([IAC, SB, 24, IAC, IAC, 1])) == b""
    assert drop.feed(bytes([IAC, SE]) + b"ok") == b"ok"
    assert drop.feed(bytes([IAC, IAC]) + b"x") == b"x"


def test_the_websocket_url_comes_from_the_gns3_url_and_is_required() -> None:
    ids = ("p-1", "n-1")
    assert console_websocket_url("http://gns3:3080/v3/", *ids) == (
        "ws://gns3:3080/v3/projects/p-1/nodes/n-1/console/ws"
    )
    assert console_websocket_url("https://gns3.example", *ids).startswith("wss://gns3.example/")
    with pytest.raises(ConsoleTargetError, match="http"):
        console_websocket_url("gns3:3080", *ids)
    with pytest.raises(ConsoleTargetError, match="node ids"):
        console_websocket_url("http://gns3:3080", "p-1", None)
    fields = {"name": "PC1", "host": "127.0.0.1", "port": 5000, "dialect": "vpcs"}
    for url in (None, "http://gns3/x", "ws://gns3/x?token=abc"):
        with pytest.raises(ValidationError, match="websocket_url"):
            ConsoleTarget(**fields, transport="websocket", websocket_url=url)
    assert ConsoleTarget(**fields).transport == "telnet"
    # A target built again for the next turn equals the kept session's (so it is reused),
    # and neither shows nor dumps its token provider.
    gns3 = GNS3Client("http://gns3:3080", token="eyJ.not.used")
    node = Node(
        node_id="n-1",
        project_id="p-1",
        name="PC1",
        node_type="vpcs",
        console=5000,
        console_type="telnet",
    )
    built = [target_for(node, gns3, "websocket") for _ in range(2)]
    assert built[0] == built[1] and built[0].websocket_url == (
        "ws://gns3:3080/v3/projects/p-1/nodes/n-1/console/ws"
    )
    assert "token" not in repr(built[0]) + str(built[0].model_dump())
    assert mask_token("GET /v3/x/console/ws?token=eyJ.a-b.c&y=1 HTTP/1.1") == (
        "GET /v3/x/console/ws?token=***&y=1 HTTP/1.1"
    )


def test_the_transport_defaults_to_websocket_in_hub_mode_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GNS3_COPILOT_CONSOLE_TRANSPORT", raising=False)
    monkeypatch.delenv("GNS3_COPILOT_HUB_URL", raising=False)
    assert GNS3Copilot().console_transport == "telnet"
    hub = "http://127.0.0.1:8000/services/gns3-copilot/"
    assert GNS3Copilot(hub_service_url=hub).console_transport == "websocket"
    monkeypatch.setenv("GNS3_COPILOT_CONSOLE_TRANSPORT", "telnet")
    assert GNS3Copilot(hub_service_url=hub).console_transport == "telnet"
    assert GNS3Copilot(console_transport="websocket").console_transport == "websocket"


# -- on the lab ---------------------------------------------------------------------------


def our_connections_to(port: int) -> int:
    """How many established TCP connections this process has to `port` (from /proc: the
    socket inodes among our file descriptors, looked up in /proc/net/tcp and tcp6)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                if fields[3] == "01" and fields[9] in inodes:  # 01: ESTABLISHED
                    count += int(fields[2].rsplit(":", 1)[1], 16) == port
    return count


@asynccontextmanager
async def alices_started_pc(lab: Any, prefix: str) -> AsyncIterator[tuple[LabAccounts, Node]]:
    """Alice's project (in her pool) with PC1 started; the admin's `LabAccounts`."""
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as admin:
        accounts = LabAccounts(
            StudentAccounts(admin, SECRET, prefix=prefix, group=f"{prefix}students")
        )
        project = await accounts.create_project_for("alice", f"{prefix}console-lab")
        await admin.open_project(project.project_id)
        node = await admin.create_node_from_template(project.project_id, "VPCS", "PC1")
        await admin.start_node(project.project_id, node.node_id)
        yield accounts, await admin.get_node(project.project_id, node.node_id)


def target_for(node: Node, client: GNS3Client, transport: ConsoleTransport) -> ConsoleTarget:
    return ConsoleTarget.from_node(
        node,
        server_host="127.0.0.1",
        transport=transport,
        gns3_url=client.url,
        token_provider=client.access_token,
    )


def student_client(lab: Any, token: Any) -> GNS3Client:
    return GNS3Client(lab.url, token=token.token.get_secret_value())


@pytest.mark.lab
async def test_the_websocket_console_answers_and_the_telnet_port_is_never_dialled(
    gns3_lab: Any, prefix: str
) -> None:
    gns3_port = int(gns3_lab.url.rsplit(":", 1)[1])
    async with (
        alices_started_pc(gns3_lab, prefix) as (accounts, node),
        student_client(gns3_lab, await accounts.students.student_token("alice")) as alice,
    ):
        assert node.console is not None
        # (connections to the console port, to GNS3) while the pool keeps the session
        # open, and after the pool closed it
        seen: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {}
        for transport in ("websocket", "telnet"):
            async with ConsolePool() as pool:
                target = target_for(node, alice, transport)
                [result] = await pool.run_many([(target, ["show ip"])])
                assert result.status == "success", result.error
                assert "NAME        : PC1" in result.output
                kept = (our_connections_to(node.console), our_connections_to(gns3_port))
            closed = (our_connections_to(node.console), our_connections_to(gns3_port))
            seen[transport] = (kept, closed)
    (console, gns3), (console_after, gns3_after) = seen["websocket"]
    assert console == console_after == 0 and gns3 == gns3_after + 1
    (console, gns3), (console_after, gns3_after) = seen["telnet"]
    assert console == console_after + 1 and gns3 == gns3_after  # the check sees telnet


@pytest.mark.lab
async def test_another_students_token_is_refused_readably_and_not_retried(
    gns3_lab: Any, prefix: str
) -> None:
    async with (
        alices_started_pc(gns3_lab, prefix) as (accounts, node),
        student_client(gns3_lab, await accounts.students.student_token("bob")) as bob,
        ConsolePool() as pool,
    ):
        target = target_for(node, bob, "websocket")
        with pytest.raises(ConsoleRefusedError) as refused:
            await ConsoleSession(target).open()
        assert str(refused.value) == (
            f"PC1: {NOT_IN_YOUR_LAB} (your GNS3 account has no console access to it)."
        )
        with pytest.raises(ConsoleRefusedError, match=NOT_IN_YOUR_LAB):
            await pool.wait_ready(target, timeout=60)  # at once, not after 60 s
        [result] = await pool.run_many([(target, ["show ip"])])
        assert result.status == "failed" and NOT_IN_YOUR_LAB in (result.error or "")


@pytest.mark.lab
async def test_a_token_gns3_rejects_is_renewed_once_then_refused_and_never_logged(
    gns3_lab: Any, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with alices_started_pc(gns3_lab, prefix) as (accounts, node):
        good = (await accounts.students.student_token("alice")).token.get_secret_value()
        asked: list[bool] = []

        async def stale_then_renewed(renew: bool) -> str:
            asked.append(renew)
            return good if renew else "eyJhbGciOiJIUzI1NiJ9.stale.token"

        async def always_bad(renew: bool) -> str:
            return "eyJhbGciOiJIUzI1NiJ9.bad.token"

        fields = {"transport": "websocket", "gns3_url": gns3_lab.url}
        renewed = ConsoleTarget.from_node(node, **fields, token_provider=stale_then_renewed)
        async with ConsoleSession(renewed) as session:
            assert (await session.send("echo typed-secret")).output == "typed-secret"
        assert asked == [False, True]

        bad = ConsoleTarget.from_node(node, **fields, token_provider=always_bad)
        with pytest.raises(ConsoleRefusedError) as refused:
            await ConsoleSession(bad).open()
        assert str(refused.value).startswith(
            "PC1: GNS3 refused the console: it did not accept the GNS3 token (GNS3 said: "
        )
        assert "Could not validate credentials" in str(refused.value)
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "console/ws?token=***" in logged  # the websockets library logged the request
    assert "< CLOSE 1008" in logged  # and frames, but no console data:
    for secret in (good, "stale.token", "bad.token", "typed-secret"):
        assert secret not in logged and secret not in str(refused.value)


# -- hub mode, through a real Jupyter server ------------------------------------------------


@pytest.fixture
def service_port() -> int:
    return free_tcp_port()


@pytest.fixture
def jp_server_config(
    monkeypatch: pytest.MonkeyPatch, service_port: int, tmp_path: Path
) -> dict[str, Any]:
    """A student's server in hub mode (its own hub token; no console setting at all)."""
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", HUB_TOKEN)
    monkeypatch.delenv("GNS3_COPILOT_CONSOLE_TRANSPORT", raising=False)
    return student_server_config(tmp_path, service_port)


@pytest.mark.lab
@pytest.mark.slow
async def test_in_hub_mode_the_tools_reach_consoles_through_the_websocket(
    jp_fetch: Any, jp_serverapp: Any, gns3_lab: Any, service_port: int, tmp_path: Path
) -> None:
    async with (
        hub_service(service_port, gns3_lab, tmp_path / "hub") as runtime,
        GNS3Client(gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password) as admin,
    ):
        project = await runtime.accounts.create_project_for("alice", f"{service_port}-consoles")
        await admin.open_project(project.project_id)
        node = await admin.create_node_from_template(project.project_id, "VPCS", "PC1")
        await admin.start_node(project.project_id, node.node_id)
        node = await admin.get_node(project.project_id, node.node_id)
        shown = await call(
            jp_fetch,
            *("copilot", "projects", project.project_id, "tools", "run_show_commands"),
            method="POST",
            body={
                "arguments": {"devices": [{"device": "PC1", "commands": ["show ip"]}]},
                "stream": False,
            },
        )
        assert shown.code == 200, shown.body
        [entry] = shown.body["tool_calls"]
        assert "NAME        : PC1" in entry["output"], entry
        lab = copilot_app(jp_serverapp).lab()
        assert lab.console_transport == "websocket"
        gns3_port = int(gns3_lab.url.rsplit(":", 1)[1])
        kept = (our_connections_to(node.console), our_connections_to(gns3_port))
        await lab.consoles.aclose()
        closed = (our_connections_to(node.console), our_connections_to(gns3_port))
        assert kept[0] == closed[0] == 0  # never the telnet port...
        assert kept[1] == closed[1] + 1  # ...but the kept session's websocket to GNS3
