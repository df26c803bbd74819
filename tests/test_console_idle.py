"""The idle check of kept console sessions, against REAL VPCS nodes in the local GNS3 lab.

A kept session whose console stayed quiet is reused without pressing Enter; one whose
console printed something meanwhile (a command someone left running) is woken, and
interrupted, first; a closed one is replaced. The pools here trust no session by age
(`trust_recent=0`), so every call goes through the idle check without waiting for it.
A second telnet client on the same console (GNS3's proxy sends a console's output to every
client) plays the person typing in GNS3's own console window, and watches what is typed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import telnetlib3
from support.consoles import UNUSED_ADDRESS, build_pcs, console_targets
from support.tools import client_for

from jupyter_gns3_copilot.console import ConsolePool, ConsoleSession, ConsoleTarget

pytestmark = pytest.mark.lab


async def started_pc(gns3: Any, project: Any, pool: ConsolePool) -> ConsoleTarget:
    await build_pcs(gns3, project, ["PC1"], switch=False)
    await gns3.start_all(project.project_id)
    target = (await console_targets(gns3, project, "telnet"))["PC1"]
    await pool.wait_ready(target, timeout=30)
    first = await pool.run(target, ["ip 10.0.0.1/24"])
    assert first.status == "success", first.error
    return target


async def read_until(reader: Any, text: str, seen: str = "") -> str:
    """What `reader` gives until `text` has appeared (bounded, never a fixed sleep)."""
    while text not in seen:
        chunk = await asyncio.wait_for(reader.read(4096), 10)
        assert chunk, f"console closed before {text!r}; seen {seen!r}"
        seen += chunk
    return seen


async def console_printed(session: ConsoleSession) -> None:
    """Return once the kept session has noticed output or a close. Reaches into the
    session: no public API waits for what an idle console prints."""
    assert session.line._reading is not None
    await asyncio.wait({session.line._reading}, timeout=10)


async def test_a_quiet_console_takes_the_command_without_an_enter_first(
    gns3_project: Any,
) -> None:
    async with client_for(gns3_project) as gns3, ConsolePool(trust_recent=0) as pool:
        target = await started_pc(gns3, gns3_project, pool)
        assert pool._sessions[target.key].quiet
        reader, writer = await telnetlib3.open_connection(target.host, target.port)
        try:
            result = await pool.run(target, ["show ip"])
            observed = await read_until(reader, "show ip")
            observed = await read_until(reader, "PC1>", observed.split("show ip", 1)[1])
        finally:
            writer.close()
    assert result.status == "success", result.error
    assert "10.0.0.1/24" in result.output
    # the console saw the command first: no Enter (and no extra prompt) before it
    assert "PC1>" not in observed.split("IP/MASK")[0]


async def test_a_console_left_busy_is_interrupted_before_the_next_command(
    gns3_project: Any,
) -> None:
    async with client_for(gns3_project) as gns3, ConsolePool(trust_recent=0) as pool:
        target = await started_pc(gns3, gns3_project, pool)
        session = pool._sessions[target.key]
        reader, writer = await telnetlib3.open_connection(target.host, target.port)
        try:
            writer.write(f"ping {UNUSED_ADDRESS} -t\n")
            await read_until(reader, "not reachable")
            await console_printed(session)
            assert not session.quiet
            result = await pool.run(target, ["show ip"])
        finally:
            writer.close()
    assert result.status == "success", result.error
    assert "10.0.0.1/24" in result.output and "not reachable" not in result.output


async def test_a_console_closed_while_idle_is_not_used_again(gns3_project: Any) -> None:
    async with client_for(gns3_project) as gns3, ConsolePool(trust_recent=0) as pool:
        target = await started_pc(gns3, gns3_project, pool)
        session = pool._sessions[target.key]
        node = await gns3.find_node(gns3_project.project_id, "PC1")
        await gns3.stop_node(gns3_project.project_id, node.node_id)
        await console_printed(session)
        assert not session.quiet
        stopped = await pool.run(target, ["show ip"])
        await gns3.start_node(gns3_project.project_id, node.node_id)
        await pool.wait_ready(target, timeout=30)
        again = await pool.run(target, ["show ip"])
    assert stopped.status == "failed"
    assert "Is the node started?" in (stopped.error or "")
    assert again.status == "success", again.error
    assert not session.is_open  # a new connection answered
