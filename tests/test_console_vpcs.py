"""Device consoles against REAL VPCS nodes in the local GNS3 lab.

Fixtures `gns3_lab`/`gns3_project` (one real gns3-server per run, a fresh project per
test) come from jupyter_gns3_copilot.testing's pytest plugin. Nodes are created and
started with the project's GNS3 client; every console byte goes through GNS3's own telnet
proxy to the real VPCS program. Each test runs over both console transports: telnet to
the console port, and GNS3's authenticated console websocket.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from support.consoles import UNUSED_ADDRESS, build_pcs, console_targets
from support.tools import client_for

from jupyter_gns3_copilot.console import (
    ConsolePool,
    ConsoleTimeoutError,
    ConsoleTransport,
    run_many,
    wait_ready,
)

pytestmark = [pytest.mark.lab, pytest.mark.parametrize("transport", ["telnet", "websocket"])]

ADDRESSES = {"PC1": "10.0.0.1", "PC2": "10.0.0.2", "PC3": "10.0.0.3"}


@pytest.mark.slow
async def test_vpcs_lab_addresses_show_ip_and_ping(
    gns3_project: Any, transport: ConsoleTransport
) -> None:
    """Given 3 VPCS behind a switch, started; when their consoles are ready, addresses set
    and `show ip` run on all at once; then each shows its own address, and a ping reaches
    a neighbour but not an unused address."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        await build_pcs(gns3, gns3_project, list(ADDRESSES), switch=True)
        await gns3.start_all(gns3_project.project_id)
        targets = await console_targets(gns3, gns3_project, transport)
        assert list(targets) == list(ADDRESSES)

        progress: list[tuple[float, str]] = []
        waited = await asyncio.gather(
            *(
                pool.wait_ready(target, timeout=30, progress=lambda *a: progress.append(a))
                for target in targets.values()
            )
        )
        assert all(seconds >= 0 for seconds in waited)
        assert sorted(message for _, message in progress)[-3:] == [
            "PC1 is ready",
            "PC2 is ready",
            "PC3 is ready",
        ]

        configured = await pool.run_many(
            [
                (targets[name], [f"ip {address}/24 10.0.0.254"])
                for name, address in ADDRESSES.items()
            ]
        )
        for result, (name, address) in zip(configured, ADDRESSES.items(), strict=True):
            assert result.status == "success", result.error
            assert result.output.startswith(f"{name}> ip {address}/24 10.0.0.254\n")
            assert f" : {address} 255.255.255.0 gateway 10.0.0.254" in result.output

        shown = await pool.run_many([(target, ["show ip"]) for target in targets.values()])
        assert [result.device_name for result in shown] == list(ADDRESSES)
        for result, (name, address) in zip(shown, ADDRESSES.items(), strict=True):
            assert result.status == "success" and result.error is None
            assert result.commands == ["show ip"]
            lines = result.output.splitlines()
            assert lines[0] == f"{name}> show ip"
            assert f"IP/MASK     : {address}/24" in lines
            assert any(line.startswith(f"NAME        : {name}") for line in lines)
            assert not any(line.strip() == f"{name}>" for line in lines)
            assert "\r" not in result.output and "\x1b" not in result.output

        [pinged] = await pool.run_many(
            [
                (
                    targets["PC1"],
                    [f"ping {ADDRESSES['PC2']} -c 2", f"ping {UNUSED_ADDRESS} -c 1"],
                )
            ]
        )
        assert pinged.status == "success", pinged.error
        reply, unanswered = pinged.output.split("\n\nPC1> ")
        assert f"{ADDRESSES['PC2']} icmp_seq=1 ttl=64 time=" in reply
        assert f"host ({UNUSED_ADDRESS}) not reachable" in unanswered


async def test_two_callers_on_one_vpcs_do_not_interleave(
    gns3_project: Any, transport: ConsoleTransport
) -> None:
    """Given one VPCS; when two callers send command lists to it at the same time; then
    the device's own history shows each caller's commands together, in order."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        await build_pcs(gns3, gns3_project, ["PC1"], switch=False)
        await gns3.start_all(gns3_project.project_id)
        target = (await console_targets(gns3, gns3_project, transport))["PC1"]
        await pool.wait_ready(target, timeout=30)

        first = [f"echo first-{n}" for n in range(5)]
        second = [f"echo second-{n}" for n in range(5)]
        results = await asyncio.gather(pool.run(target, first), pool.run(target, second))
        for result, commands in zip(results, (first, second), strict=True):
            assert result.status == "success", result.error
            echoed = [line for line in result.output.splitlines() if "> " not in line and line]
            assert echoed == [command.removeprefix("echo ") for command in commands]

        [history] = await pool.run_many([(target, ["history"])])
        received = [line for line in history.output.splitlines() if line.startswith("echo ")]
        assert received in (first + second, second + first)


@pytest.mark.slow
async def test_wait_ready_follows_the_node_start_and_reconnects_after_a_restart(
    gns3_project: Any, transport: ConsoleTransport
) -> None:
    """Given a stopped VPCS; waiting for it times out with a clear message; once started,
    its prompt is awaited instead of slept for; a kept session survives a node restart."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        await build_pcs(gns3, gns3_project, ["PC1"], switch=False)
        target = (await console_targets(gns3, gns3_project, transport))["PC1"]

        with pytest.raises(ConsoleTimeoutError) as caught:
            await wait_ready(target, timeout=1.0, poll_interval=0.2)
        assert "PC1" in str(caught.value) and "refused the connection" in str(caught.value)
        [refused] = await run_many([(target, ["show ip"])])
        assert refused.status == "failed" and "Is the node started?" in (refused.error or "")

        node = await gns3.find_node(gns3_project.project_id, "PC1")
        await gns3.start_node(gns3_project.project_id, node.node_id)
        progress: list[tuple[float, str]] = []
        seconds = await pool.wait_ready(
            target, timeout=30, poll_interval=0.1, progress=lambda *a: progress.append(a)
        )
        assert seconds == progress[-1][0] and progress[-1][1] == "PC1 is ready"
        before = await pool.run(target, ["ip 10.0.0.1/24"])
        assert before.status == "success", before.error

        await gns3.stop_node(gns3_project.project_id, node.node_id)
        await gns3.start_node(gns3_project.project_id, node.node_id)
        await pool.wait_ready(target, timeout=30, poll_interval=0.1)
        after = await pool.run(target, ["show ip"])
        assert after.status == "success", after.error
        assert "IP/MASK     : 0.0.0.0/0" in after.output
