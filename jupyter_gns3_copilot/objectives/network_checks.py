"""Deciding `reachable` and `traffic` checks: pings from a device (retried while a check
`wait`s for convergence, unless a VPCS lacks a gateway or an address: only configuring it
helps; one without an address is not made to ping at all) and packets captured on a link
while the check waits (read as they come: the first matching packet passes the check, a
failing check waits it all)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import math
import time

from ..capture import CaptureError, analyze_pcap
from ..console import ConsoleTarget
from ..console.models import CommandResult
from ..devices.captures import read_link_capture
from ..devices.reachability import Check, read_check
from ..devices.readers import ADDRESS_COMMANDS, Address
from ..gns3 import GNS3Error, GNS3NotFound, Link
from .devices import DeviceAccess, Undecided
from .model import ReachableCheck, TrafficCheck
from .model_base import link_ports
from .results import CheckVerdict, Evidence, summary_lines

RETRY_INTERVAL = 1.0
"""Seconds between two pings of a `reachable` check that waits for convergence."""
VPCS_PING_INTERVAL_MS = 50
"""Milliseconds between a VPCS ping's probes (`-i`; its default is 1000)."""
LINUX_PING_INTERVAL = 0.2
"""Seconds between a Linux ping's probes (`-i`; the least iputils allows every user)."""
VPCS_TRAFFIC_REPLY_MS = 200
"""Milliseconds a `traffic` check's VPCS ping waits for each answer (`-w`; VPCS waits
1000): its answers do not decide the check, the packets it sends do."""
CAPTURE_POLL_INTERVAL = 0.5
"""Seconds between two reads of a `traffic` check's capture while it waits."""
FRR_PING_PROBES = 5
"""Probes an FRR router's `ping` sends: vtysh passes no count (`ping WORD`), the lab kit's
router sends 5 (`labkit.frr.PING_PROBES`)."""


async def reachable(check: ReachableCheck, devices: DeviceAccess) -> CheckVerdict:
    """The verdict of a `reachable` check."""
    source = await devices.target(check.source)
    if check.address is not None:
        address, named = check.address, f"{check.to} ({check.address})"
    else:
        address, named = await _destination(check.to, devices)
    if source.dialect == "vpcs" and not await _addressed(source.name, devices):
        return await _without_address(check, source.name, named, devices)
    command = ping_command(source.dialect, address, check.count)
    deadline = time.monotonic() + check.wait
    fresh = False
    while True:
        reading, result = await _ping(devices, source, command, check.count, fresh)
        answered = reading is not None and bool(reading.received)
        if answered == check.expect or time.monotonic() >= deadline:
            break
        if reading is not None and reading.problem == "no gateway":
            break  # a PC without a gateway: only setting one helps, waiting does not
        await asyncio.sleep(RETRY_INTERVAL)
        fresh = True
    lines = [reading.detail] if reading is not None and reading.detail else []
    lines = lines or summary_lines(result.output)
    evidence = [Evidence(node=source.name, command=command, lines=lines)]
    counted = (
        f"{reading.received} of {reading.sent} answered"
        if reading is not None and reading.sent
        else (reading.problem if reading is not None and reading.problem else "no answer")
    )
    if answered:
        said = f"{source.name} reaches {named} ({counted})"
        explanation = f"{said}." if check.expect else f"{said}, which it must not."
    else:
        said = f"{source.name} does not reach {named} ({counted})"
        explanation = f"{said}." if check.expect else f"{said}, as required."
        if check.address is not None and check.expect:
            explanation += await _has_instead(check.to, check.address, devices)
    return CheckVerdict(
        status="pass" if answered == check.expect else "fail",
        explanation=explanation,
        evidence=evidence,
    )


async def _addressed(name: str, devices: DeviceAccess) -> bool:
    """Whether the VPCS called `name` has an IPv4 address (True when they cannot be read:
    its ping then says). VPCS drops its console when it pings with an interval (`-i`, as
    checks do) and no address of its own, so a check asks first."""
    try:
        return bool(await _reachable_addresses(name, devices))
    except Undecided:
        return True


async def _without_address(
    check: ReachableCheck, source: str, named: str, devices: DeviceAccess
) -> CheckVerdict:
    """The verdict of a `reachable` check from a VPCS without an address: it reaches
    nothing (waiting changes nothing: only configuring it does); what the other end has
    instead, as after a ping."""
    command = ADDRESS_COMMANDS["vpcs"]
    evidence = [Evidence(node=source, command=command, lines=[f"{source} has no IPv4 address"])]
    said = f"{source} does not reach {named}: {source} has no IPv4 address"
    if not check.expect:
        return CheckVerdict(status="pass", explanation=f"{said}, as required.", evidence=evidence)
    instead = await _has_instead(check.to, check.address, devices) if check.address else ""
    return CheckVerdict(status="fail", explanation=f"{said}.{instead}", evidence=evidence)


async def _ping(
    devices: DeviceAccess, source: ConsoleTarget, command: str, count: int, fresh: bool
) -> tuple[Check | None, CommandResult]:
    """One attempt of a `reachable` check: `command` typed once, or on an FRR router (whose
    ping sends `FRR_PING_PROBES`, whatever the count) as many times as it takes to send
    `count` probes, stopping at the first answered; the probes of every ping counted."""
    rounds = math.ceil(count / FRR_PING_PROBES) if source.dialect == "frr" else 1
    sent = received = 0
    for round_ in range(rounds):
        result = await devices.run(source.name, command, fresh=fresh or round_ > 0)
        reading = read_check(source.dialect, command, result.output)
        if reading is None or rounds == 1:
            return reading, result
        sent, received = sent + (reading.sent or 0), received + (reading.received or 0)
        reading = dataclasses.replace(reading, sent=sent, received=received)
        if received:
            break
    return reading, result


async def _destination(to: str, devices: DeviceAccess) -> tuple[str, str]:
    """The address `to` names (itself, or the first address a node has, loopbacks left
    out) and how a student reads it (`PC2 (10.0.0.2)`)."""
    try:
        return str(ipaddress.IPv4Address(to)), to
    except ValueError:
        pass
    target = await devices.target(to)
    found = await _reachable_addresses(target.name, devices)
    if not found:
        raise Undecided(f"{target.name} has no IPv4 address to reach")
    address = str(found[0].address.ip)
    return address, f"{target.name} ({address})"


async def _reachable_addresses(name: str, devices: DeviceAccess) -> list[Address]:
    _, found = await devices.addresses(name)
    return [a for a in found if not a.address.ip.is_loopback]


async def _has_instead(node: str, address: str, devices: DeviceAccess) -> str:
    """` PC2 has 10.0.0.7.` when the node the ping was for has other addresses than the
    one expected (nothing when they cannot be read: the ping's failure says enough)."""
    try:
        found = await _reachable_addresses(node, devices)
    except Undecided:
        return ""
    if any(str(a.address.ip) == address for a in found):
        return ""
    named = (await devices.target(node)).name
    if not found:
        return f" {named} has no IPv4 address."
    return f" {named} has {', '.join(str(a.address.ip) for a in found)}."


def ping_command(
    dialect: str, address: str, count: int, *, vpcs_reply_ms: int | None = None
) -> str:
    """The ping of `count` probes to `address` on a `dialect` console, its probes sent one
    after the other's answer: VPCS sleeps its interval (1 s by default) after every probe,
    the last one too, and Linux between two probes; a check would wait for nothing. FRR's
    `ping` takes no count: it sends `FRR_PING_PROBES` (`reachable` pings again for more).
    `vpcs_reply_ms`: how long VPCS waits for each answer (`-w`), when not its own 1 s."""
    if dialect == "cisco_ios":
        return f"ping {address} repeat {count}"
    if dialect == "frr":
        return f"ping {address}"
    if dialect == "linux":
        return f"ping -c {count} -i {LINUX_PING_INTERVAL} -W 1 {address}"
    reply = f" -w {vpcs_reply_ms}" if vpcs_reply_ms is not None else ""
    return f"ping {address} -c {count} -i {VPCS_PING_INTERVAL_MS}{reply}"


async def traffic(check: TrafficCheck, devices: DeviceAccess) -> CheckVerdict:
    """The verdict of a `traffic` check."""
    ends = link_ports(check.link)
    named = _link_text(check)
    try:
        link = await devices.find_link(ends.a, ends.a_port, ends.b, ends.b_port)
    except GNS3NotFound as exc:
        raise Undecided(str(exc)) from None
    async with devices.capture_lock(link.link_id):
        matched, seconds = await _captured(devices, link, check)
    evidence = [Evidence(node=ends.a, lines=[f"{matched} packets matching {check.filter}"])]
    if matched > 0:
        took = f"{round(seconds, 1):g} s"
        return CheckVerdict(
            status="pass",
            explanation=f"{matched} {check.filter} packets crossed {named} in {took}.",
            evidence=evidence,
        )
    return CheckVerdict(
        status="fail",
        explanation=f"No {check.filter} packets crossed {named} in {check.seconds:g} s.",
        evidence=evidence,
    )


async def _captured(devices: DeviceAccess, link: Link, check: TrafficCheck) -> tuple[int, float]:
    """The packets matching the check's filter that crossed `link` during the check (a
    capture the student runs is left running; only the packets it gained count), and
    the seconds it took. The capture is read every `CAPTURE_POLL_INTERVAL` (once the
    `during` ping is over): the first matching packets end the check, for packets only
    add up; none, and it waits its `seconds` out."""
    gns3, project_id = devices.devices.gns3, devices.project_id
    link = await devices.until_aborted(gns3.get_link(project_id, link.link_id))
    started = not link.capturing
    ping: asyncio.Future[None] | None = None
    try:
        before = 0 if started else await _matched(devices, link, check.filter)
        if started:
            await devices.until_aborted(gns3.start_capture(project_id, link.link_id))
        began = time.monotonic()
        deadline = began + check.seconds
        if check.during is not None:
            during = check.during.ping
            ping = asyncio.ensure_future(_ping_once(devices, during.source, during.to))
        while True:
            left = deadline - time.monotonic()
            if ping is not None and not ping.done():
                await asyncio.wait([ping], timeout=max(left, 0))
            else:
                await asyncio.sleep(max(min(CAPTURE_POLL_INTERVAL, left), 0))
            waited = time.monotonic() - began
            over = waited >= check.seconds
            if ping is not None and (over or ping.done()):
                await ping  # its error, if any, leaves the check undecided
            link = await devices.until_aborted(gns3.get_link(project_id, link.link_id))
            matched = await _matched(devices, link, check.filter) - before
            if matched > 0 or over:
                return matched, min(waited, check.seconds)
    except (GNS3Error, CaptureError) as exc:
        raise Undecided(f"the capture on {_link_text(check)} failed: {exc}") from None
    finally:
        if ping is not None and not ping.done():
            ping.cancel()
        if started:
            with contextlib.suppress(GNS3Error):
                await gns3.stop_capture(project_id, link.link_id)


def _link_text(check: TrafficCheck) -> str:
    """The check's link as a student reads it: `PC1 e0 - SW1 e1`."""
    ends = link_ports(check.link)
    return f"{ends.a} {ends.a_port} - {ends.b} {ends.b_port}"


async def _matched(devices: DeviceAccess, link: Link, display_filter: str) -> int:
    data = await devices.until_aborted(
        read_link_capture(devices.devices.gns3, devices.project_id, link)
    )
    analysis, _ = await devices.until_aborted(
        analyze_pcap(data, display_filter=display_filter, limit=1)
    )
    return analysis.matched


async def _ping_once(devices: DeviceAccess, source: str, to: str) -> None:
    """Traffic for a `traffic` check: its ping's answer does not matter."""
    target = await devices.target(source)
    address, _ = await _destination(to, devices)
    command = ping_command(target.dialect, address, 3, vpcs_reply_ms=VPCS_TRAFFIC_REPLY_MS)
    await devices.run(target.name, command, fresh=True)
