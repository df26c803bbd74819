"""The routing checks decided on REAL FRR routers: the routed triangle of
`testing.routed_lab` (R1-R3 under QEMU with OSPF Full, PC1 and PC2 as VPCS), shared with
the other modules here (conftest.py). Each check goes through `objectives.checks.decide`
with a `DeviceAccess`, as a lab check does; the routers are changed between checks with
the copilot's own `run_config_commands` (automation mode), over the same consoles.
"""

from __future__ import annotations

import asyncio
import textwrap
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from support.tools import client_for

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.objectives.checks import decide
from jupyter_gns3_copilot.objectives.devices import DeviceAccess
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import Check, LabFile
from jupyter_gns3_copilot.objectives.results import CheckVerdict
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, TEACHING, ToolContext, execute_tool

pytestmark = [pytest.mark.lab, pytest.mark.slow]

CONVERGED = 90.0
"""Seconds a check may `wait` for the routers to converge after a change."""


Decide = Callable[..., Awaitable[CheckVerdict]]
"""`decide(check=None, **fields)`: a check (a rendered lab's, or given by its fields)
decided."""
Configure = Callable[[str, list[str]], Awaitable[None]]


@asynccontextmanager
async def routers(project: Any) -> AsyncIterator[tuple[Decide, Configure]]:
    """`decide`: a check decided as a lab check run decides it (a fresh `DeviceAccess`
    each time, so nothing is read from an earlier run);
    `configure(router, lines)`: the copilot configures a router."""
    async with client_for(project) as gns3, ConsolePool() as consoles:
        checking = ToolContext(
            gns3=gns3, project_id=project.project_id, consoles=consoles, mode=TEACHING
        )
        setup = ToolContext(
            gns3=gns3, project_id=project.project_id, consoles=consoles, mode=LAB_AUTOMATION
        )

        async def decided(check: Check | None = None, **fields: Any) -> CheckVerdict:
            return await decide(
                check or one_check(fields), DeviceAccess(checking.devices, checking.project_id)
            )

        async def configure(router: str, lines: list[str]) -> None:
            outcome = await execute_tool(
                setup, "run_config_commands", {"devices": [{"device": router, "commands": lines}]}
            )
            assert outcome.ok, outcome.result

        yield decided, configure


def one_check(fields: dict[str, Any]) -> Check:
    """A check given by its fields, validated as the lab file's."""
    objective = {"id": "o", "text": "o", "check": fields}
    lab = LabFile.model_validate(
        {"title": "t", "stages": [{"id": "s", "title": "S", "objectives": [objective]}]}
    )
    return only_check(lab)


def only_check(lab: LabFile) -> Check:
    """The check of a lab of one objective."""
    return lab.stages[0].objectives[0].checks[0]


async def until_failed(decided: Decide, **check: Any) -> CheckVerdict:
    """The check decided again until it fails (a change takes the routers a few seconds:
    a dead interval); AssertionError when it still passes after `CONVERGED` s."""
    began = time.monotonic()
    while True:
        verdict = await decided(**check)
        if verdict.status == "fail" or time.monotonic() - began > CONVERGED:
            return verdict
        await asyncio.sleep(1)


async def test_ospf_neighbours_are_read_by_router_id_and_interface(triangle: Any) -> None:
    """Full adjacencies pass by router id and by interface, each neighbour named by the
    router cabled to that port as well; a wrong router id fails naming the neighbour
    there is; a VPCS is no router: undecided, naming its dialect."""
    async with routers(triangle) as (decided, _):
        by_id = await decided(kind="ospf_neighbor", node="R1", neighbor="2.2.2.2")
        assert by_id.status == "pass", by_id.explanation
        assert by_id.explanation == "R1 sees R2 (2.2.2.2) on eth0 in state Full."
        assert by_id.evidence[0].lines == ["2.2.2.2 Full/- on eth0 (10.0.12.2)"]
        by_interface = await decided(kind="ospf_neighbor", node="R3", interface="e1")
        assert by_interface.explanation == "R3 sees R1 (1.1.1.1) on eth1 in state Full."
        wrong_id = await decided(
            kind="ospf_neighbor", node="R1", neighbor="2.2.2.9", interface="eth0"
        )
        assert (wrong_id.status, wrong_id.explanation) == (
            "fail",
            "R1's OSPF neighbour on eth0 is R2 (2.2.2.2), not 2.2.2.9.",
        )
        pc = await decided(kind="ospf_neighbor", node="PC1", neighbor="1.1.1.1")
        assert pc.status == "error"
        assert pc.explanation.startswith(
            "PC1 is a VPCS PC (console dialect vpcs): it does not answer routing JSON"
        )


async def test_routes_by_protocol_next_hop_and_absence(triangle: Any) -> None:
    """A route learned by OSPF through either of its next hops passes; a wrong next hop,
    a connected network asked as OSPF, a static route over OSPF, and a route that must not
    be there fail saying what the router has; removing the static route passes again
    once the check has waited for it."""
    async with routers(triangle) as (decided, configure):
        ospf = await decided(  # both paths are equal: a wait while SPF settles on the two
            kind="route",
            node="R1",
            prefix="10.0.23.0/24",
            protocol="ospf",
            via="10.0.13.3",
            wait=CONVERGED,
        )
        assert ospf.status == "pass", ospf.explanation
        assert ospf.explanation == (
            "R1 learns 10.0.23.0/24 by OSPF through 10.0.12.2 and 10.0.13.3."
        )
        wrong_hop = await decided(kind="route", node="R1", prefix="192.168.3.0/24", via="10.0.12.2")
        assert (wrong_hop.status, wrong_hop.explanation) == (
            "fail",
            "R1 reaches 192.168.3.0/24 through 10.0.13.3, not through 10.0.12.2.",
        )
        connected = await decided(kind="route", node="R1", prefix="192.168.1.0/24", protocol="ospf")
        assert connected.explanation.startswith(
            "R1 learns 192.168.1.0/24 as a connected network (distance 0), not by OSPF"
        )
        absent = await decided(kind="route", node="R2", prefix="10.99.0.0/24", expect=False)
        assert (absent.status, absent.explanation) == (
            "pass",
            "R2 has no route to 10.99.0.0/24, as required.",
        )
        present = await decided(kind="route", node="R2", prefix="192.168.1.0/24", expect=False)
        assert (present.status, present.explanation) == (
            "fail",
            "R2 has a route to 192.168.1.0/24 (by OSPF through 10.0.12.1), which it must not.",
        )

        await configure("R1", ["ip route 10.0.23.0/24 10.0.12.2"])
        static = await decided(kind="route", node="R1", prefix="10.0.23.0/24", protocol="ospf")
        assert (static.status, static.explanation) == (
            "fail",
            "R1 learns 10.0.23.0/24 by a static route (distance 1), not by OSPF "
            "(distance 110): the route with the lower distance is used.",
        )
        await configure("R1", ["no ip route 10.0.23.0/24 10.0.12.2"])
        again = await decided(
            kind="route", node="R1", prefix="10.0.23.0/24", protocol="ospf", wait=CONVERGED
        )
        assert again.status == "pass", again.explanation


BGP_LAB = textwrap.dedent(
    """\
    title: BGP between R1 and R2
    parameters:
      as_r2: {int: [65002, 65002]}
      r2_link: {choice: [10.0.12.0/24]}
    stages:
      - id: bgp
        title: BGP
        objectives:
          - id: session
            text: "R1 peers with R2 (AS {{ as_r2 }})"
            check:
              kind: bgp_session
              node: R1
              neighbor: "{{ r2_link | host(2) }}"
              remote_as: "{{ as_r2 }}"
              wait: 90
    """
)


async def test_a_bgp_session_established_or_not(triangle: Any) -> None:
    """R1 and R2 peer (AS 65001 and 65002): the session passes, with the AS of a
    per-student template too; a wrong AS in the check fails naming the AS; R1 peering
    with R3 under a wrong AS never comes up and fails naming its state."""
    async with routers(triangle) as (decided, configure):
        await configure("R2", ["router bgp 65002", "neighbor 10.0.12.1 remote-as 65001"])
        await configure(
            "R1",
            [
                "router bgp 65001",
                "neighbor 10.0.12.2 remote-as 65002",
                "neighbor 10.0.13.3 remote-as 65099",
            ],
        )
        await configure("R3", ["router bgp 65003", "neighbor 10.0.13.1 remote-as 65001"])
        established = await decided(only_check(load_lab(BGP_LAB).for_student("ada", "salt")))
        assert established.status == "pass", established.explanation
        assert established.explanation == (
            "R1's BGP session with 10.0.12.2 is Established with AS 65002."
        )
        wrong_as = await decided(
            kind="bgp_session", node="R1", neighbor="10.0.12.2", remote_as=65003
        )
        assert (wrong_as.status, wrong_as.explanation) == (
            "fail",
            "R1's BGP session with 10.0.12.2 is with AS 65002, not 65003.",
        )
        not_up = await decided(kind="bgp_session", node="R1", neighbor="10.0.13.3", wait=5)
        assert not_up.status == "fail"
        assert not_up.explanation.startswith("R1's BGP session with 10.0.13.3 is ")
        assert not_up.explanation.endswith(
            "(not Established): is the neighbour's address or AS right?"
        )
        assert not_up.evidence[0].lines[0].startswith("10.0.13.3 AS 65099 ")
        await configure("R1", ["no router bgp 65001"])
        await configure("R2", ["no router bgp 65002"])
        await configure("R3", ["no router bgp 65003"])
        gone = await decided(kind="bgp_session", node="R1", neighbor="10.0.12.2", wait=30)
        assert gone.explanation == "R1 has no BGP session with 10.0.12.2: BGP does not run on R1."
        # a route BGP should teach, on a router without BGP: no waiting for it
        by_bgp = await decided(
            kind="route", node="R1", prefix="192.168.3.0/24", protocol="bgp", wait=30
        )
        assert by_bgp.status == "fail"
        assert by_bgp.explanation.endswith("not by BGP. BGP does not run on R1."), by_bgp


JSON_LAB = textwrap.dedent(
    """\
    title: OSPF as FRR tells it
    parameters:
      adjacencies: {int: [2, 2]}
    stages:
      - id: ospf
        title: OSPF
        objectives:
          - id: full
            text: "R1 has {{ adjacencies }} full adjacencies in area 0"
            check:
              kind: json
              node: R1
              command: show ip ospf json
              query: areas."0.0.0.0".nbrFullAdjacentCounter
              expect: "{{ adjacencies }}"
    """
)


async def test_a_json_query_into_any_show_command(triangle: Any) -> None:
    """A query finds the number a per-student template renders as text; a wrong value
    fails naming what the router shows, in the lab file's words when it gives them."""
    async with routers(triangle) as (decided, _):
        full = await decided(only_check(load_lab(JSON_LAB).for_student("ada", "salt")))
        assert (full.status, full.explanation) == (
            "pass",
            "`show ip ospf json` on R1 shows 2, as the objective asks.",
        )
        router_id = await decided(
            kind="json", node="R2", command="show ip ospf json", query="routerId", expect="2.2.2.9"
        )
        assert (router_id.status, router_id.explanation) == (
            "fail",
            "`show ip ospf json` on R2 shows 2.2.2.2, not 2.2.2.9.",
        )
        assert router_id.evidence[0].lines == ["routerId: 2.2.2.2"]
        said = await decided(
            kind="json",
            node="R3",
            command="show ip ospf neighbor json",
            query='neighbors."1.1.1.1"[0].ifaceName',
            expect="eth0:10.0.13.3",
            say={"fail": "R3 meets R1 on {{ found }}."},
        )
        assert (said.status, said.explanation) == ("fail", "R3 meets R1 on eth1:10.0.13.3.")


async def test_an_ospf_neighbour_lost_to_a_hello_interval_and_waited_for(triangle: Any) -> None:
    """R2's hello interval changed on its link to R1: R1 drops R2's hellos and the
    neighbour goes (FRR lists it no more): the check fails saying what to look at. Put
    back, a check that waits passes once the adjacency is Full again."""
    async with routers(triangle) as (decided, configure):
        await configure("R2", ["interface eth0", "ip ospf hello-interval 3"])
        try:
            lost = await until_failed(decided, kind="ospf_neighbor", node="R1", neighbor="2.2.2.2")
            assert lost.status == "fail", lost.explanation
            assert lost.explanation == (
                "R1 has no OSPF neighbour 2.2.2.2 (it sees R3 (3.3.3.3) on eth1): its router "
                "id may be another, or OSPF may not run on the link, or its two ends may "
                "disagree on the area, the subnet, or the hello and dead intervals."
            )
        finally:
            await configure("R2", ["interface eth0", "ip ospf hello-interval 1"])
        back = await decided(kind="ospf_neighbor", node="R1", neighbor="2.2.2.2", wait=CONVERGED)
        assert back.status == "pass", back.explanation
