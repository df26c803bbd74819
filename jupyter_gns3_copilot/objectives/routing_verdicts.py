"""The routing checks' verdicts, decided from a router's parsed JSON answer alone (no
device): an OSPF neighbour's state, the routes to a prefix, a BGP session, a JMESPath
query's value. A failure names what the router has instead, in words a student
understands, with the entries that decided as evidence; an answer whose shape is not
FRR's raises `RoutingAnswerError`. The unit tests feed them JSON captured from real FRR
8.4 routers; `routing_checks` reads the routers.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..devices.readers import same_interface
from .devices import Undecided
from .results import MAX_EVIDENCE_LINES, CheckVerdict, Evidence
from .routing_model import BgpSessionCheck, OspfNeighborCheck, RouteCheck

OSPF_NEIGHBORS = "show ip ospf neighbor json"
BGP_SUMMARY = "show bgp summary json"


def route_command(prefix: str) -> str:
    """The command that shows the routes to `prefix` (`a.b.c.d/len`) alone."""
    return f"show ip route {ipaddress.IPv4Network(prefix)} json"


OSPF_STUCK = {
    "Init": "hello or dead intervals may differ, or it does not hear this router's hellos",
    "2-Way": "on a shared network, routers that are neither DR nor BDR stay in 2-Way; "
    "otherwise the two ends' network types may differ",
    "ExStart": "the two ends may disagree on the interface MTU",
    "Exchange": "the two ends may disagree on the interface MTU",
    "Loading": "they are still exchanging their databases; check again in a moment",
    "Attempt": "no hello has been heard from it lately",
    "Down": "no hello has been heard from it lately",
}
"""Why an OSPF neighbour may stay short of Full, per the state it is in."""
NOT_HEARD = (
    "OSPF may not run on the link, or its two ends may disagree on the area, the subnet, "
    "or the hello and dead intervals"
)
"""Why an OSPF neighbour is not seen at all."""
PROTOCOL_WORDS = {
    "connected": "as a connected network",
    "static": "by a static route",
    "kernel": "from the kernel",
    "ospf": "by OSPF",
    "bgp": "by BGP",
    "rip": "by RIP",
    "isis": "by IS-IS",
}


class RoutingAnswerError(ValueError):
    """An answer whose shape is not FRR's."""


# -- OSPF neighbours -----------------------------------------------------------------------------


@dataclass(frozen=True)
class OspfNeighbor:
    """One neighbour of `show ip ospf neighbor json`: `state` is `Full` of `Full/DR`."""

    router_id: str
    state: str
    role: str
    interface: str
    address: str

    @property
    def line(self) -> str:
        """The neighbour as an evidence line."""
        role = f"/{self.role}" if self.role else ""
        return f"{self.router_id} {self.state}{role} on {self.interface} ({self.address})"


def ospf_neighbors(data: object) -> list[OspfNeighbor]:
    """The neighbours of FRR's `show ip ospf neighbor json` answer (`{"neighbors":
    {router id: [entry, ...]}}`; `{}` when OSPF does not run)."""
    found = _mapping(data, "the OSPF neighbours").get("neighbors", {})
    neighbors = []
    for router_id, entries in _mapping(found, "neighbors").items():
        for entry in _list(entries, router_id):
            entry = _mapping(entry, router_id)
            state, _, role = str(entry.get("nbrState") or entry.get("state") or "").partition("/")
            interface = str(entry.get("ifaceName", "")).partition(":")[0]
            address = str(entry.get("ifaceAddress") or entry.get("address") or "")
            neighbors.append(OspfNeighbor(router_id, state, role, interface, address))
    return neighbors


def ospf_neighbor_verdict(
    check: OspfNeighborCheck, node: str, data: object, cabled: Mapping[str, str] | None = None
) -> CheckVerdict:
    """The verdict of an `ospf_neighbor` check on `node`'s parsed answer; `cabled` (port
    name -> the node cabled to it, `cabled_routers`) names the neighbours by their node
    too: "R2 (2.2.2.2)"."""
    neighbors = _read(ospf_neighbors, data, node, OSPF_NEIGHBORS)
    named = _neighbor_names(neighbors, cabled or {})
    wanted_id, interface = check.neighbor, check.interface
    matching = [
        n
        for n in neighbors
        if (wanted_id is None or n.router_id == wanted_id)
        and (interface is None or same_interface(interface, n.interface))
    ]
    lines = [n.line for n in matching or neighbors] or ["no OSPF neighbour"]
    evidence = [Evidence(node=node, command=OSPF_NEIGHBORS, lines=lines[:MAX_EVIDENCE_LINES])]
    in_state = [n for n in matching if n.state.lower() == check.state.lower()]
    if in_state:
        found = in_state[0]
        return CheckVerdict(
            status="pass",
            explanation=f"{node} sees {named[found]} on {found.interface} in state {found.state}.",
            evidence=evidence,
        )
    if matching:
        found = matching[0]
        explanation = (
            f"{node} sees {named[found]} on {found.interface} in state {found.state}, "
            f"not {check.state}"
        )
        stuck = OSPF_STUCK.get(found.state) if check.state == "Full" else None
        explanation += f": {stuck}." if stuck else "."
        return CheckVerdict(status="fail", explanation=explanation, evidence=evidence)
    return CheckVerdict(
        status="fail",
        explanation=_no_ospf_neighbor(node, wanted_id, interface, neighbors, named),
        evidence=evidence,
        settled=data == {},  # OSPF does not run on the router: no neighbour comes
    )


def _neighbor_names(
    neighbors: list[OspfNeighbor], cabled: Mapping[str, str]
) -> dict[OspfNeighbor, str]:
    """Each neighbour as a student reads it: `R2 (2.2.2.2)` when a node is cabled to the
    port it is seen on, else its router id."""
    names = {}
    for neighbor in neighbors:
        far = next(
            (n for port, n in cabled.items() if same_interface(neighbor.interface, port)), None
        )
        names[neighbor] = f"{far} ({neighbor.router_id})" if far else neighbor.router_id
    return names


def _no_ospf_neighbor(
    node: str,
    wanted_id: str | None,
    interface: str | None,
    neighbors: list[OspfNeighbor],
    named: Mapping[OspfNeighbor, str],
) -> str:
    """Why no neighbour matches: the neighbour is on another interface, another one is on
    the interface, or it is not heard at all (naming those that are)."""
    elsewhere = [n.interface for n in neighbors if n.router_id == wanted_id]
    if elsewhere:
        return f"{node} sees {wanted_id} on {' and '.join(elsewhere)}, not on {interface}."
    there = [named[n] for n in neighbors if interface and same_interface(interface, n.interface)]
    if there:
        return f"{node}'s OSPF neighbour on {interface} is {' and '.join(there)}, not {wanted_id}."
    what = f" {wanted_id}" if wanted_id else ""
    where = f" on {interface}" if interface else ""
    if not neighbors:
        return f"{node} has no OSPF neighbour{what}{where}: {NOT_HEARD}."
    seen = ", ".join(f"{named[n]} on {n.interface}" for n in neighbors)
    maybe = "its router id may be another, or " if wanted_id else ""
    return f"{node} has no OSPF neighbour{what}{where} (it sees {seen}): {maybe}{NOT_HEARD}."


# -- routes --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NextHop:
    """Where a route sends packets: a gateway `ip` or, directly connected, none."""

    ip: str | None
    interface: str | None
    active: bool

    @property
    def words(self) -> str:
        """The next hop as a student reads it."""
        if self.ip is None:
            return f"directly on {self.interface}" if self.interface else "directly"
        return f"through {self.ip}"


@dataclass(frozen=True)
class RouteEntry:
    """One route to a prefix (`show ip route PREFIX json` lists one per protocol that
    knows it); `selected` is the one the router uses."""

    prefix: str
    protocol: str
    selected: bool
    distance: int | None
    metric: int | None
    next_hops: tuple[NextHop, ...]

    @property
    def used_hops(self) -> list[NextHop]:
        """The next hops it sends packets to (the active ones; all when none is)."""
        return [h for h in self.next_hops if h.active] or list(self.next_hops)

    @property
    def line(self) -> str:
        """The route as an evidence line, close to FRR's own `show ip route`."""
        parts = [self.protocol, self.prefix]
        if self.distance is not None:
            parts.append(f"[{self.distance}/{self.metric}]")
        hops = [
            f"via {h.ip} {h.interface or ''}".strip() if h.ip else h.words for h in self.used_hops
        ]
        return " ".join([*parts, ", ".join(hops)] if hops else parts) + (
            ", in use" if self.selected else ", not used"
        )

    @property
    def how(self) -> str:
        """How the route is learned and where it goes: `by OSPF through 10.0.12.2`."""
        return f"{PROTOCOL_WORDS.get(self.protocol, self.protocol)} {self.through()}"

    def through(self) -> str:
        """Its next hops as a student reads them: `through 10.0.12.2 and 10.0.13.3`."""
        hops = self.used_hops
        gateways = [h.ip for h in hops if h.ip]
        if gateways:
            return "through " + " and ".join(gateways)
        return hops[0].words if hops else "directly"


def route_entries(data: object, prefix: str) -> list[RouteEntry]:
    """The routes to `prefix` in FRR's `show ip route PREFIX json` answer (`{prefix:
    [entry, ...]}`; `{}` when there is none)."""
    entries = []
    for entry in _list(_mapping(data, "the routes").get(prefix, []), prefix):
        entry = _mapping(entry, prefix)
        hops = tuple(
            NextHop(
                ip=str(hop["ip"]) if hop.get("ip") else None,
                interface=str(hop["interfaceName"]) if hop.get("interfaceName") else None,
                active=bool(hop.get("active")),
            )
            for hop in (_mapping(h, prefix) for h in _list(entry.get("nexthops", []), prefix))
        )
        entries.append(
            RouteEntry(
                prefix=prefix,
                protocol=str(entry.get("protocol", "")),
                selected=bool(entry.get("selected")),
                distance=_int_or_none(entry.get("distance")),
                metric=_int_or_none(entry.get("metric")),
                next_hops=hops,
            )
        )
    return entries


def route_verdict(check: RouteCheck, node: str, data: object) -> CheckVerdict:
    """The verdict of a `route` check on `node`'s parsed answer: the route the router
    uses (FRR's selected one) must be learned by `protocol` and go through `via` when
    they are given; with `expect: false`, no route it uses may."""
    prefix = str(ipaddress.IPv4Network(check.prefix))
    command = route_command(prefix)
    entries = _read(lambda d: route_entries(d, prefix), data, node, command)
    used = next((e for e in entries if e.selected), None)
    lines = [e.line for e in entries] or [f"no route to {prefix}"]
    evidence = [Evidence(node=node, command=command, lines=lines[:MAX_EVIDENCE_LINES])]
    problem = _route_problem(check, node, prefix, used, entries)
    if used is not None and problem is None:  # the route the check names is used
        if check.expect:
            explanation = f"{node} learns {prefix} {used.how}."
        else:
            explanation = f"{node} has a route to {prefix} ({used.how}), which it must not."
    elif check.expect:
        explanation = problem or ""
    elif used is None:
        explanation = f"{node} has no route to {prefix}, as required."
    else:
        explanation = f"{node} reaches {prefix} {used.how}, as required."
    passed = (used is not None and problem is None) == check.expect
    return CheckVerdict(
        status="pass" if passed else "fail", explanation=explanation, evidence=evidence
    )


def _route_problem(
    check: RouteCheck,
    node: str,
    prefix: str,
    used: RouteEntry | None,
    entries: list[RouteEntry],
) -> str | None:
    """Why the route the router uses is not the one the check asks for (None: it is)."""
    if used is None:
        if not entries:
            return f"{node} has no route to {prefix}."
        known = " and ".join(sorted({PROTOCOL_WORDS.get(e.protocol, e.protocol) for e in entries}))
        return (
            f"{node} has no route in use to {prefix} (it knows one {known}, but does not use it)."
        )
    if check.protocol is not None and used.protocol != check.protocol:
        learned = PROTOCOL_WORDS.get(used.protocol, used.protocol)
        wanted = PROTOCOL_WORDS.get(check.protocol, check.protocol)
        other = next((e for e in entries if e.protocol == check.protocol), None)
        if other is not None and used.distance is not None and other.distance is not None:
            return (
                f"{node} learns {prefix} {learned} (distance {used.distance}), not {wanted} "
                f"(distance {other.distance}): the route with the lower distance is used."
            )
        return f"{node} learns {prefix} {learned}, not {wanted}."
    if check.via is not None and not any(h.ip == check.via for h in used.used_hops):
        return f"{node} reaches {prefix} {used.through()}, not through {check.via}."
    return None


# -- BGP sessions --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BgpPeer:
    """One peer of `show bgp summary json`: `state` is its first word (`Idle` of `Idle
    (Admin)`), `shown` the whole."""

    address: str
    remote_as: int | None
    state: str
    shown: str
    uptime: str
    received: int | None

    @property
    def line(self) -> str:
        """The peer as an evidence line."""
        up = "" if self.uptime in ("", "never") else f", up {self.uptime}"
        got = f", {self.received} prefixes received" if self.received is not None else ""
        remote = f" AS {self.remote_as}" if self.remote_as is not None else ""
        return f"{self.address}{remote} {self.shown}{up}{got}"


def bgp_peers(data: object) -> tuple[bool, list[BgpPeer]]:
    """Whether BGP runs, and the peers of FRR's `show bgp summary json` answer (`{"ipv4
    Unicast": {"as": ..., "peers": {address: {...}}}, ...}` per address family; `{}` when
    BGP does not run). A peer of several families is listed once."""
    families = _mapping(data, "the BGP summary")
    peers: dict[str, BgpPeer] = {}
    for family, summary in families.items():
        summary = _mapping(summary, family)
        for address, peer in _mapping(summary.get("peers", {}), family).items():
            peer = _mapping(peer, address)
            shown = str(peer.get("state", ""))
            peers.setdefault(
                address,
                BgpPeer(
                    address=address,
                    remote_as=_int_or_none(peer.get("remoteAs")),
                    state=shown.split(" ")[0],
                    shown=shown,
                    uptime=str(peer.get("peerUptime", "")),
                    received=_int_or_none(peer.get("pfxRcd")),
                ),
            )
    return bool(families), list(peers.values())


def bgp_session_verdict(check: BgpSessionCheck, node: str, data: object) -> CheckVerdict:
    """The verdict of a `bgp_session` check on `node`'s parsed answer (a `remote_as`
    given as a template is compared as the number it renders to)."""
    running, peers = _read(bgp_peers, data, node, BGP_SUMMARY)
    peer = next((p for p in peers if p.address == check.neighbor), None)
    lines = [p.line for p in ([peer] if peer else peers)]
    lines = lines or ["no BGP session" if running else "BGP is not running"]
    evidence = [Evidence(node=node, command=BGP_SUMMARY, lines=lines[:MAX_EVIDENCE_LINES])]
    session = f"{node}'s BGP session with {check.neighbor}"
    if peer is None:
        if not running:
            explanation = (
                f"{node} has no BGP session with {check.neighbor}: BGP does not run on {node}."
            )
        elif peers:
            others = ", ".join(p.address for p in peers)
            explanation = (
                f"{node} has no BGP session with {check.neighbor}; it has sessions with {others}."
            )
        else:
            explanation = f"{node} runs BGP but has no session with {check.neighbor}."
        # BGP does not run, or the neighbour is not configured: no session comes
        return CheckVerdict(status="fail", explanation=explanation, evidence=evidence, settled=True)
    wanted_as = None if check.remote_as is None else _as_number(check.remote_as)
    problems = []
    if wanted_as is not None and peer.remote_as != wanted_as:
        problems.append(f"is with AS {peer.remote_as}, not {wanted_as}")
    if peer.state != check.state:
        said_state = f"is {peer.shown} (not {check.state})"
        if check.state == "Established":
            said_state += ": is the neighbour's address or AS right?"
        problems.append(said_state)
    if problems:
        explanation = f"{session} " + "; it ".join(problems)
        explanation += "" if explanation.endswith("?") else "."
        other_as = wanted_as is not None and peer.remote_as != wanted_as  # as configured
        return CheckVerdict(
            status="fail", explanation=explanation, evidence=evidence, settled=other_as
        )
    with_as = f" with AS {peer.remote_as}" if wanted_as is not None else ""
    return CheckVerdict(
        status="pass", explanation=f"{session} is {peer.shown}{with_as}.", evidence=evidence
    )


def _as_number(value: int | str) -> int:
    """An AS number as the lab file gives it (a rendered template is text)."""
    try:
        return int(str(value).strip())
    except ValueError:
        raise Undecided(f"the objective's AS number {value!r} is not a number") from None


# -- reading FRR's shapes ------------------------------------------------------------------------


def _read(reader: Callable[[object], Any], data: object, node: str, command: str) -> Any:
    try:
        return reader(data)
    except RoutingAnswerError as exc:
        raise Undecided(f"{node}'s answer to `{command}` is not as FRR gives it ({exc})") from None


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RoutingAnswerError(f"{what} is not an object")
    return value


def _list(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise RoutingAnswerError(f"{what} is not a list")
    return value


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
