"""Deciding the routing checks from an FRR router's own JSON: `ospf_neighbor` (`show ip
ospf neighbor json`), `route` (`show ip route PREFIX json`), `bgp_session` (`show bgp
summary json`) and `json` (any `show ... json` and a JMESPath query into its answer).

`decide_routing(check, devices)` reads the router through `DeviceAccess` (so the command
policy's read-only rules screen each command) and tries again every `RETRY_INTERVAL`
while the check fails and its `wait` lasts (routing converges), unless the router's
configuration cannot bring it about (`CheckVerdict.settled`: the protocol does not run,
the BGP neighbour is not configured or has another AS). A failure names what the
router has instead, in words a student understands, with the entries that decided as
evidence. A node that does not answer `show ... json` (a VPCS, a Linux shell) leaves the
check undecided (`Undecided`), naming its console dialect.

The verdicts themselves, from the parsed answer alone, are in `routing_verdicts`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError

from .devices import DeviceAccess, Undecided
from .network_checks import RETRY_INTERVAL
from .results import CheckVerdict, Evidence, inline_code
from .routing_model import BgpSessionCheck, JsonCheck, OspfNeighborCheck, RouteCheck
from .routing_verdicts import (
    BGP_SUMMARY,
    OSPF_NEIGHBORS,
    bgp_session_verdict,
    ospf_neighbor_verdict,
    route_command,
    route_verdict,
)
from .templating import said

RoutingCheck = OspfNeighborCheck | RouteCheck | BgpSessionCheck | JsonCheck
PROTOCOL_STATES = {"ospf": ("OSPF", "show ip ospf json"), "bgp": ("BGP", BGP_SUMMARY)}
"""A routing protocol a `route` check names: its name for students, and the command whose
answer is empty (`{}`) when it does not run on the router (a route it should learn is then
missing for good: the check stops waiting)."""
JSON_DIALECTS = ("frr",)
"""The console dialects whose devices answer `show ... json`."""
SHARED_SEGMENTS = frozenset(
    {"ethernet_switch", "ethernet_hub", "cloud", "nat", "frame_relay_switch", "atm_switch"}
)
"""GNS3 node types that join a router to its neighbours without being one."""
DEVICE_WORDS = {"vpcs": "a VPCS PC", "linux": "a Linux shell", "cisco_ios": "an IOS router"}
"""How a student reads a console dialect that speaks no JSON."""


async def decide_routing(check: RoutingCheck, devices: DeviceAccess) -> CheckVerdict:
    """The verdict of a routing check (module docstring), retried while it `wait`s."""
    return await until_passed(check.wait, lambda fresh: _attempt(check, devices, fresh))


async def until_passed(
    wait: float, attempt: Callable[[bool], Awaitable[CheckVerdict]]
) -> CheckVerdict:
    """`attempt`'s verdict, tried again every `RETRY_INTERVAL` while it fails, is not
    `settled` and `wait` seconds have not passed since the first try; `attempt(fresh)`
    types its commands again when `fresh` (a retry must read the device anew, not the
    run's first answer)."""
    deadline = time.monotonic() + wait
    fresh = False
    while True:
        verdict = await attempt(fresh)
        if verdict.status != "fail" or verdict.settled or time.monotonic() >= deadline:
            return verdict
        await asyncio.sleep(RETRY_INTERVAL)
        fresh = True


async def _attempt(check: RoutingCheck, devices: DeviceAccess, fresh: bool) -> CheckVerdict:
    if isinstance(check, OspfNeighborCheck):
        node, data = await read_json(devices, check.node, OSPF_NEIGHBORS, fresh)
        return ospf_neighbor_verdict(check, node, data, await cabled_routers(devices, node))
    if isinstance(check, RouteCheck):
        command = route_command(check.prefix)
        node, data = await read_json(devices, check.node, command, fresh)
        verdict = route_verdict(check, node, data)
        protocol = PROTOCOL_STATES.get(check.protocol or "")
        # asked on the first try only: a protocol running then does not stop by itself
        if verdict.status == "fail" and check.expect and protocol is not None and not fresh:
            name, state = protocol
            _, running = await read_json(devices, node, state)
            if running == {}:
                return verdict.model_copy(
                    update={
                        "explanation": f"{verdict.explanation} {name} does not run on {node}.",
                        "settled": True,
                    }
                )
        return verdict
    if isinstance(check, BgpSessionCheck):
        node, data = await read_json(devices, check.node, BGP_SUMMARY, fresh)
        return bgp_session_verdict(check, node, data)
    node, data = await read_json(devices, check.node, check.command, fresh)
    return json_verdict(check, node, data)


async def read_json(
    devices: DeviceAccess, name: str, command: str, fresh: bool = False
) -> tuple[str, Any]:
    """The node's name and its answer to `command`, parsed (an empty answer, as FRR gives
    for a protocol that does not run, is `{}`). `Undecided` when the node speaks no JSON,
    refuses the command or answers something else."""
    target = await devices.target(name)
    if target.dialect not in JSON_DIALECTS:
        device = DEVICE_WORDS.get(target.dialect, f"a {target.dialect} device")
        raise Undecided(
            f"{target.name} is {device} (console dialect {target.dialect}): it does not "
            f"answer routing JSON such as `{command}`; this check reads an FRR router"
        )
    result = await devices.run(target.name, command, fresh=fresh)
    if not result.ok:
        raise Undecided(f"{target.name} did not accept `{command}`: {result.error}")
    text = result.output.strip()
    try:
        return target.name, json.loads(text) if text else {}
    except ValueError:
        raise Undecided(f"{target.name} did not answer `{command}` in JSON") from None


async def cabled_routers(devices: DeviceAccess, name: str) -> dict[str, str]:
    """The node cabled straight to each port of the node called `name`, by port name, as
    GNS3's links tell (none for a port cabled to a switch, a hub or a cloud: a neighbour is
    further). Empty when GNS3's topology cannot be read: neighbours are then named by
    their router id alone."""
    try:
        node = await devices.node(name)
        names = await devices.node_names()
        cabled: dict[str, str] = {}
        for link in await devices.links():
            if len(link.nodes) != 2:
                continue
            for mine, other in (link.nodes, link.nodes[::-1]):
                port = node.port_at(mine.adapter_number, mine.port_number)
                if mine.node_id != node.node_id or port is None or other.node_id not in names:
                    continue
                far = await devices.node(names[other.node_id])
                if far.node_type not in SHARED_SEGMENTS:
                    cabled[port.name] = far.name
        return cabled
    except Undecided:
        return {}


# -- a query into any JSON answer ----------------------------------------------------------------


def json_verdict(check: JsonCheck, node: str, data: object) -> CheckVerdict:
    """The verdict of a `json` check on `node`'s parsed answer: the JMESPath query finds
    `expect` (a number and text of that number are the same value: a templated `expect`
    renders to text). The lab file's `say` words it when given."""
    try:
        found = jmespath.search(check.query, data)
    except JMESPathError as exc:
        raise Undecided(f"the objective's query cannot be used: {exc}") from None
    ok = same_value(found, check.expect)
    shown = value_text(found)
    words = said(check.say, ok, None if found is None else shown)
    on = f"{inline_code(check.command)} on {node}"
    wanted = value_text(check.expect)
    if words is None:
        if ok:
            words = f"{on} shows {shown}, as the objective asks."
        elif found is None:
            words = f"{on} shows nothing where the objective looks ({wanted} is wanted)."
        else:
            words = f"{on} shows {shown}, not {wanted}."
    return CheckVerdict(
        status="pass" if ok else "fail",
        explanation=words,
        evidence=[Evidence(node=node, command=check.command, lines=[f"{check.query}: {shown}"])],
    )


def same_value(found: object, wanted: object) -> bool:
    """Whether a JSON value found equals the value wanted: numbers by value, and a number
    equals text that reads as that number (`65002` and `"65002"`); true and false only
    equal themselves (never 1 or 0); lists and objects item by item."""
    if isinstance(found, bool) or isinstance(wanted, bool):
        return isinstance(found, bool) and isinstance(wanted, bool) and found == wanted
    if isinstance(found, str) and _is_number(wanted):
        return _number(found) == wanted
    if _is_number(found) and isinstance(wanted, str):
        return _number(wanted) == found
    if isinstance(found, list) and isinstance(wanted, list):
        return len(found) == len(wanted) and all(
            same_value(f, w) for f, w in zip(found, wanted, strict=True)
        )
    if isinstance(found, dict) and isinstance(wanted, dict):
        return found.keys() == wanted.keys() and all(same_value(found[k], wanted[k]) for k in found)
    return found == wanted


def value_text(value: object) -> str:
    """A JSON value as a student reads it: text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "nothing"
    return json.dumps(value, separators=(", ", ": "))


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None
