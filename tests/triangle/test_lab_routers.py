"""Lab checks and catch-up on real FRR routers (the routed triangle of
`testing.routed_lab`, shared with the other modules here: conftest.py): a router going
down under a running check gives a ⚠ the student can read, not a crash or a hang, and the
check passes again once the router is back; a catch-up to a stage restores the
configurations the routers had saved when its snapshot was taken.

Everything goes through the lab's own path (`objectives.service.ProjectLabs`: the lab file
attached to the project, `prepare_check`, `prepare_catch_up`), as the routes and
`%copilot check` / `%copilot catch-up STAGE` use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
import time
from collections.abc import AsyncIterator

import pytest

from jupyter_gns3_copilot.console import ConsolePool, ConsoleSession
from jupyter_gns3_copilot.devices.access import Devices
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.objectives.api import LabCheckSelection
from jupyter_gns3_copilot.objectives.results import ObjectiveResult
from jupyter_gns3_copilot.objectives.service import ProjectLabs
from jupyter_gns3_copilot.testing.pytest_plugin import GNS3Project
from jupyter_gns3_copilot.testing.routed_lab import (
    BOOT_TIMEOUT,
    FULL_TIMEOUT,
    ROUTERS,
    configure_triangle,
    console_targets,
    until_full,
)

pytestmark = [pytest.mark.lab, pytest.mark.slow]

STUDENT = "alice"
SNAPSHOT = "ospf-configured"
LAB = textwrap.dedent(
    f"""\
    title: OSPF triangle
    stages:
      - id: ospf
        title: OSPF adjacencies
        snapshot: {SNAPSHOT}
        objectives:
          - id: r2-full
            text: R2 has a Full OSPF neighbour
            check: {{kind: command, node: R2, command: show ip ospf neighbor, contains: Full}}
    """
)


@contextlib.asynccontextmanager
async def project_labs(project: GNS3Project) -> AsyncIterator[tuple[GNS3Client, ProjectLabs]]:
    """The project's GNS3 client and its `ProjectLabs`, `LAB` attached as its lab file."""
    async with (
        GNS3Client(project.url, token=project.token) as gns3,
        ConsolePool() as pool,
    ):
        labs = ProjectLabs(Devices(gns3, pool), salt="router tests")
        await labs.attach(project.project_id, LAB)
        yield gns3, labs


async def check_r2(labs: ProjectLabs, project_id: str) -> ObjectiveResult:
    prepared = await labs.prepare_check(project_id, STUDENT, LabCheckSelection(stream=False))
    [result] = (await prepared.report()).results
    return result


async def until_passes(labs: ProjectLabs, project_id: str) -> ObjectiveResult:
    """The R2 check run again until it passes (OSPF converging); fails after a while."""
    deadline = time.monotonic() + BOOT_TIMEOUT + FULL_TIMEOUT
    while True:
        result = await check_r2(labs, project_id)
        if result.status == "pass" or time.monotonic() > deadline:
            return result
        await asyncio.sleep(1)


async def vtysh(gns3: GNS3Client, project_id: str, router: str, lines: list[str]) -> list[str]:
    """Each line's output on `router`'s console (configuration lines go in
    configuration mode when they start with `conf:`); a refused line fails the test."""
    target = (await console_targets(gns3, project_id))[router]
    session = ConsoleSession(target, prompt_timeout=BOOT_TIMEOUT)
    await session.open()
    outputs = []
    try:
        for line in lines:
            if line.startswith("conf:"):
                [result] = await session.configure([line.removeprefix("conf:")])
            else:
                result = await session.send(line)
            assert result.ok, result
            outputs.append(result.output)
    finally:
        await session.close()
    return outputs


async def test_a_router_stopped_under_a_running_check_gives_an_error_and_comes_back(
    triangle: GNS3Project,
) -> None:
    """Given R2 Full with its OSPF configuration saved and a check of R2 running, waiting
    for R2's console (someone else is typing on it); when R2 is stopped meanwhile, the
    check ends with an error (⚠) saying that R2 went down and what to do, in plain words
    (no console address); once R2 is started again, the same check passes with the
    console pool as it was."""
    pid = triangle.project_id
    async with project_labs(triangle) as (gns3, labs):
        await vtysh(gns3, pid, "R2", ["write memory"])
        assert (await check_r2(labs, pid)).status == "pass"  # R2's session kept: warm
        [r2] = [n for n in await gns3.list_nodes(pid) if n.name == "R2"]
        busy = labs.devices.consoles.lock(await labs.devices.console_target(r2))
        async with busy:
            running = asyncio.ensure_future(check_r2(labs, pid))
            await asyncio.sleep(1)
            assert not running.done()  # waiting for R2's console
            await gns3.stop_node(pid, r2.node_id)
        result = await asyncio.wait_for(running, 120)
        assert result.status == "error", result
        assert result.explanation == (
            "R2 is stopped now: it went down during the check; start it and check again."
        )

        await gns3.start_node(pid, r2.node_id)
        again = await until_passes(labs, pid)
        assert again.status == "pass", again


async def test_a_catch_up_restores_the_configurations_the_routers_had_saved(
    triangle: GNS3Project,
) -> None:
    """Given the routers' OSPF configurations saved and the lab stopped and snapshotted as
    the `ospf` stage's snapshot, then R1 started (the only router changed: one boot, not
    three); when R1 drops OSPF, adds a static route and saves that, a catch-up to `ospf`
    (confirmed) brings back R1's earlier saved configuration (OSPF, no static route),
    every adjacency is Full again and the stage's check passes. The PCs, which keep no
    configuration across the restore, are configured again for the tests after it."""
    pid = triangle.project_id
    async with project_labs(triangle) as (gns3, labs):
        for router in ROUTERS:
            [saved] = await vtysh(gns3, pid, router, ["write memory"])
            assert "[OK]" in saved, saved
        await gns3.stop_all(pid)
        await gns3.create_snapshot(pid, SNAPSHOT)
        [r1] = [n for n in await gns3.list_nodes(pid) if n.name == "R1"]
        await gns3.start_node(pid, r1.node_id)  # vtysh waits for its console to answer
        changed = await vtysh(
            gns3,
            pid,
            "R1",
            ["conf:no router ospf", "conf:ip route 10.9.9.0/24 Null0", "write memory"],
        )
        assert "[OK]" in changed[-1], changed
        [before] = await vtysh(gns3, pid, "R1", ["show running-config"])
        assert "router ospf" not in before and "ip route 10.9.9.0/24 Null0" in before

        catch_up = await labs.prepare_catch_up(pid, STUDENT, "ospf", confirm=True)
        done = await catch_up.restore()
        assert (done.stage, done.snapshot, done.restored) == ("ospf", SNAPSHOT, True)
        async with ConsolePool() as pool:
            targets = await console_targets(gns3, pid)
            waits = (pool.wait_ready(t, timeout=BOOT_TIMEOUT) for t in targets.values())
            await asyncio.gather(*waits)
        await configure_triangle(gns3, pid, routers=())
        [after] = await vtysh(gns3, pid, "R1", ["show running-config"])
        assert "ospf router-id 1.1.1.1" in after, after
        assert "10.9.9.0" not in after, after
        await until_full(gns3, pid)
        assert (await check_r2(labs, pid)).status == "pass"
