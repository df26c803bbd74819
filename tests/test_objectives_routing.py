"""The routing checks' reading and words (`objectives/routing_checks.py`), decided from
JSON CAPTURED FROM REAL FRR 8.4.4 ROUTERS (tests/captures/frr/: the routed triangle of
`testing.routed_lab`, captured over their consoles): OSPF neighbours Full, in 2-Way and in
ExStart while a network type changed, one gone after a hello interval changed on the other
end, none on a router without OSPF; routes learned by OSPF (two next hops), by a static
route over OSPF, a connected one, none; a BGP summary with an Established and an Active
session, and one of a router without BGP. The checks on the routers themselves are in
tests/triangle/test_objectives_routing_lab.py.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.tools import offline_context

from jupyter_gns3_copilot.console import ConsoleTarget
from jupyter_gns3_copilot.devices.policy import CommandPolicy
from jupyter_gns3_copilot.objectives.checks import decide
from jupyter_gns3_copilot.objectives.devices import DeviceAccess, Undecided
from jupyter_gns3_copilot.objectives.errors import LabFileError
from jupyter_gns3_copilot.objectives.hints import configuring_judge, filter_answer
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.results import CheckVerdict
from jupyter_gns3_copilot.objectives.routing_checks import json_verdict, same_value, until_passed
from jupyter_gns3_copilot.objectives.routing_model import (
    BgpSessionCheck,
    JsonCheck,
    OspfNeighborCheck,
    RouteCheck,
)
from jupyter_gns3_copilot.objectives.routing_verdicts import (
    bgp_session_verdict,
    ospf_neighbor_verdict,
    route_command,
    route_verdict,
)

FRR = Path(__file__).parent / "captures" / "frr"


def captured(name: str) -> Any:
    return json.loads((FRR / f"{name}.json").read_text())


def ospf(**fields: Any) -> OspfNeighborCheck:
    return OspfNeighborCheck.model_validate({"kind": "ospf_neighbor", "node": "R1", **fields})


def route(**fields: Any) -> RouteCheck:
    return RouteCheck.model_validate({"kind": "route", "node": "R1", **fields})


def bgp(**fields: Any) -> BgpSessionCheck:
    return BgpSessionCheck.model_validate({"kind": "bgp_session", "node": "R1", **fields})


def query(**fields: Any) -> JsonCheck:
    return JsonCheck.model_validate(
        {"kind": "json", "node": "R1", "command": "show ip ospf json", **fields}
    )


# -- OSPF neighbours --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [{"neighbor": "2.2.2.2"}, {"interface": "eth1"}, {"neighbor": "3.3.3.3", "interface": "e1"}],
)
def test_a_full_ospf_neighbour_passes_by_router_id_interface_or_both(
    fields: dict[str, str],
) -> None:
    verdict = ospf_neighbor_verdict(ospf(**fields), "R1", captured("r1_ospf_neighbors_full"))
    assert verdict.status == "pass", verdict.explanation
    assert verdict.explanation.startswith("R1 sees ") and "in state Full." in verdict.explanation
    assert verdict.evidence[0].command == "show ip ospf neighbor json"


def test_an_ospf_neighbour_not_full_says_what_to_look_at() -> None:
    two_way = ospf_neighbor_verdict(
        ospf(neighbor="2.2.2.2"), "R1", captured("r1_ospf_neighbors_2way")
    )
    assert two_way.status == "fail"
    assert two_way.explanation.startswith(
        "R1 sees 2.2.2.2 on eth0 in state 2-Way, not Full: on a shared network"
    )
    assert two_way.evidence[0].lines == ["2.2.2.2 2-Way/DROther on eth0 (10.0.12.2)"]
    cabled = ospf_neighbor_verdict(
        ospf(neighbor="2.2.2.2"), "R1", captured("r1_ospf_neighbors_2way"), {"e0": "R2"}
    )
    assert cabled.explanation.startswith("R1 sees R2 (2.2.2.2) on eth0 in state 2-Way")
    exstart = ospf_neighbor_verdict(
        ospf(interface="eth0"), "R1", captured("r1_ospf_neighbors_exstart")
    )
    assert exstart.explanation == (
        "R1 sees 2.2.2.2 on eth0 in state ExStart, not Full: "
        "the two ends may disagree on the interface MTU."
    )
    # the captured ExStart entry with its state edited to Init (FRR drops hellos with other
    # intervals, so the routers never showed Init here)
    data = captured("r1_ospf_neighbors_exstart")
    data["neighbors"]["2.2.2.2"][0]["nbrState"] = "Init/DROther"
    init = ospf_neighbor_verdict(ospf(neighbor="2.2.2.2"), "R2", data)
    assert init.explanation.startswith(
        "R2 sees 2.2.2.2 on eth0 in state Init, not Full: hello or dead intervals may differ"
    )
    # a state other than Full asked for, and found
    assert (
        ospf_neighbor_verdict(
            ospf(neighbor="2.2.2.2", state="2-Way"), "R1", captured("r1_ospf_neighbors_2way")
        ).status
        == "pass"
    )


def test_a_missing_ospf_neighbour_names_those_there_are() -> None:
    full = captured("r1_ospf_neighbors_full")
    gone = ospf_neighbor_verdict(
        ospf(neighbor="2.2.2.2"), "R1", captured("r1_ospf_neighbors_hello_mismatch")
    )
    assert gone.status == "fail"
    assert gone.explanation == (
        "R1 has no OSPF neighbour 2.2.2.2 (it sees 3.3.3.3 on eth1): its router id may be "
        "another, or OSPF may not run on the link, or its two ends may disagree on the area, "
        "the subnet, or the hello and dead intervals."
    )
    assert gone.evidence[0].lines == ["3.3.3.3 Full/- on eth1 (10.0.13.3)"]
    wrong_id = ospf_neighbor_verdict(ospf(neighbor="9.9.9.9", interface="eth0"), "R1", full)
    assert wrong_id.explanation == "R1's OSPF neighbour on eth0 is 2.2.2.2, not 9.9.9.9."
    elsewhere = ospf_neighbor_verdict(ospf(neighbor="2.2.2.2", interface="eth1"), "R1", full)
    assert elsewhere.explanation == "R1 sees 2.2.2.2 on eth0, not on eth1."
    none = ospf_neighbor_verdict(
        ospf(interface="eth1"), "R3", captured("r3_ospf_neighbors_no_ospf")
    )
    assert none.explanation.startswith("R3 has no OSPF neighbour on eth1: OSPF may not run")
    assert none.evidence[0].lines == ["no OSPF neighbour"]


# -- routes -----------------------------------------------------------------------------------


def test_a_route_passes_by_protocol_and_any_of_its_next_hops() -> None:
    data = captured("r1_route_10.0.23.0_ospf_ecmp")
    for via in ("10.0.12.2", "10.0.13.3"):
        verdict = route_verdict(route(prefix="10.0.23.0/24", protocol="ospf", via=via), "R1", data)
        assert verdict.status == "pass", verdict.explanation
    assert verdict.explanation == (
        "R1 learns 10.0.23.0/24 by OSPF through 10.0.12.2 and 10.0.13.3."
    )
    assert verdict.evidence[0].command == "show ip route 10.0.23.0/24 json"
    assert verdict.evidence[0].lines == [
        "ospf 10.0.23.0/24 [110/20] via 10.0.12.2 eth0, via 10.0.13.3 eth1, in use"
    ]


def test_a_route_fails_saying_what_the_router_has_instead() -> None:
    wrong_hop = route_verdict(
        route(prefix="192.168.3.0/24", via="10.0.12.2"), "R1", captured("r1_route_192.168.3.0_ospf")
    )
    assert wrong_hop.status == "fail"
    assert wrong_hop.explanation == (
        "R1 reaches 192.168.3.0/24 through 10.0.13.3, not through 10.0.12.2."
    )
    static = route_verdict(
        route(prefix="10.0.23.0/24", protocol="ospf"),
        "R1",
        captured("r1_route_10.0.23.0_static_over_ospf"),
    )
    assert static.explanation == (
        "R1 learns 10.0.23.0/24 by a static route (distance 1), not by OSPF (distance 110): "
        "the route with the lower distance is used."
    )
    assert [line.split(" [")[0] for line in static.evidence[0].lines] == [
        "static 10.0.23.0/24",
        "ospf 10.0.23.0/24",
    ]
    connected = route_verdict(
        route(prefix="10.0.12.0/24", protocol="ospf"),
        "R1",
        captured("r1_route_10.0.12.0_connected"),
    )
    assert connected.explanation.startswith(
        "R1 learns 10.0.12.0/24 as a connected network (distance 0), not by OSPF (distance 110)"
    )
    absent = route_verdict(route(prefix="10.99.0.0/24"), "R1", captured("r1_route_absent"))
    assert absent.explanation == "R1 has no route to 10.99.0.0/24."
    assert absent.evidence[0].lines == ["no route to 10.99.0.0/24"]


def test_a_route_that_must_be_absent() -> None:
    absent = route_verdict(
        route(prefix="10.99.0.0/24", expect=False), "R1", captured("r1_route_absent")
    )
    assert (absent.status, absent.explanation) == (
        "pass",
        "R1 has no route to 10.99.0.0/24, as required.",
    )
    present = route_verdict(
        route(prefix="192.168.3.0/24", expect=False), "R1", captured("r1_route_192.168.3.0_ospf")
    )
    assert (present.status, present.explanation) == (
        "fail",
        "R1 has a route to 192.168.3.0/24 (by OSPF through 10.0.13.3), which it must not.",
    )
    # absent by that protocol: the static route is used, not OSPF's
    not_by_ospf = route_verdict(
        route(prefix="10.0.23.0/24", protocol="ospf", expect=False),
        "R1",
        captured("r1_route_10.0.23.0_static_over_ospf"),
    )
    assert not_by_ospf.status == "pass", not_by_ospf.explanation


def test_a_route_command_names_the_network() -> None:
    assert route_command("10.0.23.0/24") == "show ip route 10.0.23.0/24 json"


# -- BGP sessions -----------------------------------------------------------------------------


def test_an_established_bgp_session_passes_with_its_as_as_a_number_or_rendered_text() -> None:
    data = captured("r1_bgp_summary")
    for remote_as in (65002, "65002"):
        verdict = bgp_session_verdict(bgp(neighbor="10.0.12.2", remote_as=remote_as), "R1", data)
        assert verdict.status == "pass", verdict.explanation
    assert verdict.explanation == ("R1's BGP session with 10.0.12.2 is Established with AS 65002.")
    assert verdict.evidence[0].lines == [
        "10.0.12.2 AS 65002 Established, up 00:00:15, 0 prefixes received"
    ]


def test_a_bgp_session_fails_on_its_state_or_as() -> None:
    data = captured("r1_bgp_summary")
    active = bgp_session_verdict(bgp(neighbor="10.0.13.3"), "R1", data)
    assert (active.status, active.explanation) == (
        "fail",
        "R1's BGP session with 10.0.13.3 is Active (not Established): is the neighbour's "
        "address or AS right?",
    )
    wrong_as = bgp_session_verdict(bgp(neighbor="10.0.12.2", remote_as=65003), "R1", data)
    assert wrong_as.explanation == "R1's BGP session with 10.0.12.2 is with AS 65002, not 65003."
    missing = bgp_session_verdict(bgp(neighbor="10.0.23.3"), "R1", data)
    assert missing.explanation == (
        "R1 has no BGP session with 10.0.23.3; it has sessions with 10.0.12.2, 10.0.13.3."
    )
    no_bgp = bgp_session_verdict(bgp(neighbor="10.0.13.1"), "R3", captured("r3_bgp_summary_no_bgp"))
    assert no_bgp.explanation == "R3 has no BGP session with 10.0.13.1: BGP does not run on R3."
    assert no_bgp.evidence[0].lines == ["BGP is not running"]


def test_a_templated_as_number_renders_to_a_number_or_is_a_problem_of_the_file() -> None:
    lab = textwrap.dedent(
        """\
        title: BGP
        parameters:
          as_r2: {int: [65000, 65100]}
          word: {choice: [north]}
        stages:
          - id: s
            title: S
            objectives:
              - id: o
                text: "R1 peers with AS {{ as_r2 }}"
                check: {kind: bgp_session, node: R1, neighbor: 10.0.12.2, remote_as: "{{ as_r2 }}"}
        """
    )
    rendered = load_lab(lab).render({"as_r2": 65042})
    check = rendered.stages[0].objectives[0].check
    assert isinstance(check, BgpSessionCheck) and check.remote_as == 65042
    with pytest.raises(LabFileError, match="is not an AS number"):
        load_lab(lab.replace('"{{ as_r2 }}"}', '"{{ word }}"}'))


# -- a query into any JSON answer -------------------------------------------------------------


def test_a_json_query_compares_values_and_numbers_with_their_text() -> None:
    data = captured("r1_ospf")
    full = 'areas."0.0.0.0".nbrFullAdjacentCounter'
    passed = json_verdict(query(query=full, expect=2), "R1", data)
    assert (passed.status, passed.explanation) == (
        "pass",
        "`show ip ospf json` on R1 shows 2, as the objective asks.",
    )
    assert passed.evidence[0].lines == [f"{full}: 2"]
    templated = json_verdict(query(query=full, expect="2"), "R1", data)
    assert templated.status == "pass", templated.explanation
    failed = json_verdict(query(query=full, expect=3), "R1", data)
    assert failed.explanation == "`show ip ospf json` on R1 shows 2, not 3."
    router_id = json_verdict(query(query="routerId", expect="2.2.2.2"), "R1", data)
    assert router_id.explanation == "`show ip ospf json` on R1 shows 1.1.1.1, not 2.2.2.2."
    nothing = json_verdict(query(query='areas."0.0.0.1".backbone', expect=True), "R1", data)
    assert nothing.explanation == (
        "`show ip ospf json` on R1 shows nothing where the objective looks (true is wanted)."
    )


def test_a_json_check_says_its_result_in_the_lab_files_words() -> None:
    say = {"pass": "OSPF runs as {{ found }}.", "fail": "The router id is {{ found }}."}
    data = captured("r1_ospf")
    failed = json_verdict(query(query="routerId", expect="2.2.2.2", say=say), "R2", data)
    assert failed.explanation == "The router id is 1.1.1.1."
    passed = json_verdict(query(query="routerId", expect="1.1.1.1", say=say), "R1", data)
    assert passed.explanation == "OSPF runs as 1.1.1.1."
    # {{ found }} with nothing found: the general words
    nothing = json_verdict(query(query="nothing", expect=1, say=say), "R1", data)
    assert nothing.explanation.startswith("`show ip ospf json` on R1 shows nothing")


def test_values_compare_as_json_with_numbers_read_from_text() -> None:
    assert same_value(65002, "65002") and same_value("65002", 65002)
    assert same_value(2.0, 2) and same_value([1, "a"], ["1", "a"])
    assert same_value({"a": 1}, {"a": "1"}) and not same_value({"a": 1}, {"b": 1})
    assert not same_value(True, 1) and not same_value(0, False) and same_value(True, True)
    assert not same_value("abc", 1) and not same_value(None, 0) and same_value(None, None)


def test_an_answer_not_shaped_as_frrs_is_undecided() -> None:
    with pytest.raises(Undecided, match="is not as FRR gives it"):
        ospf_neighbor_verdict(ospf(interface="eth0"), "R1", {"neighbors": []})
    with pytest.raises(Undecided, match="is not as FRR gives it"):
        bgp_session_verdict(bgp(neighbor="10.0.12.2"), "R1", [1, 2])


def test_failures_point_the_way_without_configuration() -> None:
    """A `nudge` stage shows the copilot's answers without configuration lines; the
    routing checks' failures (which the copilot reads from `check_objectives` and may
    repeat) name what to look at, never a command that would fix it, so they pass the
    stage's filter whole."""
    policy = CommandPolicy()
    judge = configuring_judge(
        lambda command, dialect: policy.check(command, dialect=dialect, read_only=True),
        {"R1": "frr", "R2": "frr", "R3": "frr"},
    )
    failures = [
        ospf_neighbor_verdict(ospf(neighbor="2.2.2.2"), "R1", captured("r1_ospf_neighbors_2way")),
        ospf_neighbor_verdict(
            ospf(neighbor="2.2.2.2"), "R1", captured("r1_ospf_neighbors_hello_mismatch")
        ),
        route_verdict(
            route(prefix="10.0.23.0/24", protocol="ospf"),
            "R1",
            captured("r1_route_10.0.23.0_static_over_ospf"),
        ),
        bgp_session_verdict(bgp(neighbor="10.0.13.3"), "R1", captured("r1_bgp_summary")),
        json_verdict(query(query="routerId", expect="2.2.2.2"), "R1", captured("r1_ospf")),
    ]
    for verdict in failures:
        assert verdict.status == "fail"
        assert filter_answer(verdict.explanation, judge) == (verdict.explanation, 0)


async def test_a_node_that_answers_no_json_is_undecided_naming_its_dialect() -> None:
    """Through the lab's entry point: a Linux shell as R1 is never sent the command (its
    console is a port nothing listens on: nothing connects), the check is undecided and
    says why."""
    shell = ConsoleTarget(name="R1", host="127.0.0.1", port=9, dialect="linux")
    ctx = offline_context(console_targets={"R1": shell})
    verdict = await decide(route(prefix="10.0.23.0/24"), DeviceAccess(ctx.devices, ctx.project_id))
    assert (verdict.status, verdict.explanation) == (
        "error",
        "R1 is a Linux shell (console dialect linux): it does not answer routing JSON such "
        "as `show ip route 10.0.23.0/24 json`; this check reads an FRR router.",
    )


async def test_a_check_that_waits_is_tried_again_until_it_passes_not_when_undecided() -> None:
    """`wait`: a failing attempt is made again (its commands typed anew) until it passes;
    an undecided one is not, nor a failing one without `wait`."""
    tries: list[bool] = []

    def attempt(outcomes: list[str]) -> Any:
        async def tried(fresh: bool) -> CheckVerdict:
            tries.append(fresh)
            status = outcomes[min(len(tries) - 1, len(outcomes) - 1)]
            return CheckVerdict(status=status, explanation=status)

        return tried

    assert (await until_passed(30, attempt(["fail", "pass"]))).status == "pass"
    assert tries == [False, True]  # the retry reads the device anew
    tries.clear()
    assert (await until_passed(30, attempt(["error", "pass"]))).status == "error"
    assert tries == [False]  # undecided: no retry
    tries.clear()
    assert (await until_passed(0, attempt(["fail", "pass"]))).status == "fail"
    assert tries == [False]
    tries.clear()

    async def settled(fresh: bool) -> CheckVerdict:
        tries.append(fresh)
        return CheckVerdict(status="fail", explanation="no OSPF", settled=True)

    assert (await until_passed(30, settled)).status == "fail"
    assert tries == [False]  # the configuration lacks what it needs: no waiting


def test_a_failure_only_configuring_can_change_is_settled_and_others_are_not() -> None:
    """A check stops waiting (`settled`) when the router runs no OSPF, runs no BGP, has no
    session configured with the neighbour or has it with another AS; not while a
    neighbour is heard but not Full, nor while a session is Active. A settled verdict
    stays out of what a check reports."""
    no_ospf = ospf_neighbor_verdict(
        ospf(interface="eth1"), "R3", captured("r3_ospf_neighbors_no_ospf")
    )
    stuck = ospf_neighbor_verdict(
        ospf(neighbor="2.2.2.2"), "R1", captured("r1_ospf_neighbors_exstart")
    )
    unheard = ospf_neighbor_verdict(
        ospf(neighbor="2.2.2.2"), "R1", captured("r1_ospf_neighbors_hello_mismatch")
    )
    assert (no_ospf.settled, stuck.settled, unheard.settled) == (True, False, False)
    data = captured("r1_bgp_summary")
    no_bgp = bgp_session_verdict(bgp(neighbor="10.0.13.1"), "R3", captured("r3_bgp_summary_no_bgp"))
    missing = bgp_session_verdict(bgp(neighbor="10.0.23.3"), "R1", data)
    other_as = bgp_session_verdict(bgp(neighbor="10.0.12.2", remote_as=65003), "R1", data)
    active = bgp_session_verdict(bgp(neighbor="10.0.13.3"), "R1", data)
    assert (no_bgp.settled, missing.settled, other_as.settled) == (True, True, True)
    assert active.status == "fail" and not active.settled
    assert "settled" not in no_bgp.model_dump()
