"""Deciding one check on the real devices: `decide(check, devices)` gives a `CheckVerdict`
(pass or fail with a sentence a student understands and the output lines that decided,
or error when it cannot be decided: a node stopped, a console silent).

A check only reads: commands go through `DeviceAccess`, which screens each one with the
command policy's read-only rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import re
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

from ..capture import CaptureError, analyze_pcap
from ..devices.reachability import read_check
from ..devices.readers import (
    Address,
    ReadError,
    interface_lines,
    line_at,
    parsed_rows,
    same_interface,
)
from ..gns3 import GNS3Error, GNS3NotFound, Link
from ..gns3.models import Port
from ..tools.base import ToolContext
from ..tools.capture_tools import read_link_capture
from ..tools.link_tools import LinkEnds, find_link
from .devices import DeviceAccess, Undecided
from .model import (
    FOUND,
    AddressCheck,
    Check,
    CommandCheck,
    LinkCheck,
    NodeRunningCheck,
    ParsedCheck,
    ReachableCheck,
    TrafficCheck,
    is_regex_pattern,
    link_ports,
)
from .results import CheckVerdict, Evidence
from .templating import TemplateProblem, render_text

MAX_EVIDENCE_LINES = 6
"""Output lines kept as a check's evidence."""
RETRY_INTERVAL = 1.0
"""Seconds between two pings of a `reachable` check that waits for convergence."""
VPCS_PING_INTERVAL_MS = 50
"""Milliseconds between a VPCS ping's probes (`-i`; its default is 1000)."""
LINUX_PING_INTERVAL = 0.2
"""Seconds between a Linux ping's probes (`-i`; the least iputils allows every user)."""


async def decide(check: Check, devices: DeviceAccess) -> CheckVerdict:
    """The verdict of `check` on the project's devices (module docstring)."""
    decider = _DECIDERS.get(check.kind)
    if decider is None:
        return CheckVerdict(status="error", explanation=f"{check.kind} checks are not available")
    try:
        return await decider(check, devices)
    except Undecided as exc:
        return CheckVerdict(status="error", explanation=_sentence(str(exc)))


async def _node_running(check: Any, devices: DeviceAccess) -> CheckVerdict:
    assert isinstance(check, NodeRunningCheck)
    node = await devices.node(check.node)
    evidence = [Evidence(node=node.name, lines=[f"status: {node.status}"])]
    if node.status == "started":
        return CheckVerdict(
            status="pass", explanation=f"{node.name} is running.", evidence=evidence
        )
    return CheckVerdict(
        status="fail", explanation=f"{node.name} is {node.status}.", evidence=evidence
    )


async def _link(check: Any, devices: DeviceAccess) -> CheckVerdict:
    assert isinstance(check, LinkCheck)
    node_a = await devices.node(check.nodes[0])
    node_b = await devices.node(check.nodes[1])
    wanted = check.ports
    joined: list[tuple[str, str]] = []
    for link in await devices.links():
        ends = {end.node_id: end for end in link.nodes}
        if len(link.nodes) != 2 or set(ends) != {node_a.node_id, node_b.node_id}:
            continue
        end_a, end_b = ends[node_a.node_id], ends[node_b.node_id]
        port_a = node_a.port_at(end_a.adapter_number, end_a.port_number)
        port_b = node_b.port_at(end_b.adapter_number, end_b.port_number)
        names = (port_a.short_name if port_a else "?", port_b.short_name if port_b else "?")
        joined.append(names)
        if wanted is None or (_names_port(wanted[0], port_a) and _names_port(wanted[1], port_b)):
            text = f"{node_a.name} {names[0]} - {node_b.name} {names[1]}"
            return CheckVerdict(
                status="pass",
                explanation=f"A link joins {text}.",
                evidence=[Evidence(node=node_a.name, lines=[f"link {text}"])],
            )
    if not joined or wanted is None:
        return CheckVerdict(
            status="fail", explanation=f"No link joins {node_a.name} and {node_b.name}."
        )
    found = ", ".join(f"{node_a.name} {p} - {node_b.name} {q}" for p, q in joined)
    return CheckVerdict(
        status="fail",
        explanation=f"{node_a.name} and {node_b.name} are linked ({found}), but not "
        f"{node_a.name} {wanted[0]} to {node_b.name} {wanted[1]}.",
        evidence=[Evidence(node=node_a.name, lines=[f"link {found}"])],
    )


def _names_port(wanted: str, port: Port | None) -> bool:
    return port is not None and (
        same_interface(wanted, port.name) or same_interface(wanted, port.short_name)
    )


async def _address(check: Any, devices: DeviceAccess) -> CheckVerdict:
    assert isinstance(check, AddressCheck)
    node = await devices.target(check.node)
    wanted = ipaddress.IPv4Interface(check.address)
    command, found = await devices.addresses(node.name)
    where = f"{node.name} {check.interface}" if check.interface else node.name
    if check.interface:
        found = [a for a in found if same_interface(check.interface, a.interface)]
    lines = [a.line for a in found]
    if not found:  # the lines that say so: VPCS's 0.0.0.0/0, the interface without one
        output = (await devices.run(node.name, command)).output
        lines = [
            line
            for interface, line in interface_lines(output, node.dialect)
            if not check.interface or same_interface(check.interface, interface)
        ] or _summary_lines(output)
    evidence = [Evidence(node=node.name, command=command, lines=lines[:MAX_EVIDENCE_LINES])]
    if any(a.address == wanted for a in found):
        return CheckVerdict(status="pass", explanation=f"{where} has {wanted}.", evidence=evidence)
    if not found:
        return CheckVerdict(
            status="fail", explanation=f"{where} has no IPv4 address.", evidence=evidence
        )
    has = ", ".join(str(a.address) for a in found)
    return CheckVerdict(
        status="fail", explanation=f"{where} has {has}, not {wanted}.", evidence=evidence
    )


async def _command(check: Any, devices: DeviceAccess) -> CheckVerdict:
    assert isinstance(check, CommandCheck)
    node = await devices.target(check.node)
    result = await devices.run(node.name, check.command)
    if not result.ok:
        raise Undecided(f"{node.name} did not accept `{check.command}`: {result.error}")
    output = result.output
    lines = [line for line in output.splitlines() if line.strip()]
    if check.regex is not None:
        pattern = re.compile(check.regex, re.MULTILINE)
        hits = [line for line in lines if pattern.search(line)]
        ok = bool(hits) or bool(pattern.search(output))
        deciding = hits or _key_lines(check.regex, lines)
    elif check.contains is not None:
        hits = [line for line in lines if check.contains in line]
        ok = check.contains in output
        deciding = hits
    else:
        assert check.not_contains is not None
        hits = [line for line in lines if check.not_contains in line]
        ok = check.not_contains not in output
        deciding = hits
    found, found_line = _read(check.read, output)
    if found_line is not None:
        deciding = [found_line, *(line for line in deciding if line != found_line)]
    return CheckVerdict(
        status="pass" if ok else "fail",
        explanation=_said(check, node.name, ok, found, deciding),
        evidence=[
            Evidence(
                node=node.name,
                command=check.command,
                lines=(deciding or lines)[:MAX_EVIDENCE_LINES],
            )
        ],
    )


def _said(check: CommandCheck, node: str, ok: bool, found: str | None, deciding: list[str]) -> str:
    """A command check's result in words: the lab file's `say` (its `{{ found }}` filled
    in), else a sentence naming the command, the node and the line that decided; never
    the pattern."""
    say = check.say
    words = (say.passed if ok else say.failed) if say else None
    if say and words and (found is not None or not say.uses_found()):
        try:
            return render_text(words, {FOUND: found})
        except TemplateProblem:
            pass  # a parameter's value that reads as a template: say it in general words
    said = f"{_code(check.command)} on {node}"
    line = _code(" ".join(deciding[0].split())) if deciding else None
    if check.regex is not None:
        if ok:
            return f"{said} shows {line}." if line else f"{said} shows what the objective asks."
        if line:
            return f"{said} shows {line}, not what the objective asks."
        return f"{said} does not show what the objective asks."
    text = _code(check.contains or check.not_contains or "")
    shows = ok == (check.contains is not None)
    return f"{said} shows {text}." if shows else f"{said} does not show {text}."


def _read(pattern: str | None, output: str) -> tuple[str | None, str | None]:
    """What a `read` regex's group takes from `output`, and the line it is on."""
    if pattern is None:
        return None, None
    match = re.search(pattern, output, re.MULTILINE)
    if match is None or match.group(1) is None:
        return None, None
    return match.group(1).strip(), line_at(output, match.start())


_PATTERN_ESCAPE = re.compile(r"\\[A-Za-z]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_/-]{2,}")


def _key_lines(regex: str, lines: list[str]) -> list[str]:
    """The output lines a failed pattern was looking for: those holding one of its words
    (`GATEWAY` of `GATEWAY +: 10.0.0.254$`), the longest word found first; none when the
    pattern has no word or no line holds one."""
    words = dict.fromkeys(_WORD.findall(_PATTERN_ESCAPE.sub(" ", regex)))
    for word in sorted(words, key=len, reverse=True):
        found = [line for line in lines if word.lower() in line.lower()]
        if found:
            return found
    return []


def _code(text: str) -> str:
    """`text` as Markdown inline code (longer fences around a text holding backticks)."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


async def _parsed(check: Any, devices: DeviceAccess) -> CheckVerdict:
    assert isinstance(check, ParsedCheck)
    node = await devices.target(check.node)
    platform = check.platform or node.dialect
    result = await devices.run(node.name, check.command)
    if not result.ok:
        raise Undecided(f"{node.name} did not accept `{check.command}`: {result.error}")
    try:
        rows = parsed_rows(result.output, platform, check.command)
    except ReadError as exc:
        raise Undecided(str(exc)) from None
    unknown = sorted({f for f in check.match if rows and f not in rows[0]})
    if unknown:
        fields = ", ".join(rows[0])
        raise Undecided(
            f"the rows of `{check.command}` have no field {', '.join(unknown)} (fields: {fields})"
        )
    matching = [row for row in rows if _row_matches(row, check.match)]
    wanted = check.expect
    if wanted == "present":
        ok = bool(matching)
    elif wanted == "absent":
        ok = not matching
    else:
        ok = len(matching) == wanted
    condition = " and ".join(_field_words(k, v) for k, v in check.match.items())
    expected = {"present": "at least one", "absent": "none"}.get(str(wanted), str(wanted))
    explanation = (
        f"`{check.command}` on {node.name}: {len(matching)} of {len(rows)} rows "
        f"{'with ' + condition if condition else 'in all'} "
        f"({'as expected' if ok else f'expected {expected}'})."
    )
    return CheckVerdict(
        status="pass" if ok else "fail",
        explanation=explanation,
        evidence=[
            Evidence(
                node=node.name,
                command=check.command,
                lines=[_row_text(row) for row in (matching or rows)][:MAX_EVIDENCE_LINES],
            )
        ],
    )


def _field_words(field: str, wanted: str) -> str:
    """A `match` entry as a student reads it, never the pattern: "status up" for `up`,
    "status like down" for `/down/`, "interface as the objective asks" for a pattern that
    is more than a word."""
    if not is_regex_pattern(wanted):
        return f"{field} {wanted}"
    word = wanted[1:-1].strip("^$")
    return (
        f"{field} like {word}"
        if re.fullmatch(r"[\w :/-]+", word)
        else f"{field} as the objective asks"
    )


def _row_matches(row: Mapping[str, Any], match: Mapping[str, str]) -> bool:
    return all(_value_matches(row.get(field), wanted) for field, wanted in match.items())


def _value_matches(value: Any, wanted: str) -> bool:
    if isinstance(value, list):
        return any(_value_matches(item, wanted) for item in value)
    text = str(value if value is not None else "").strip()
    if is_regex_pattern(wanted):
        return re.search(wanted[1:-1], text, re.IGNORECASE) is not None
    return text.lower() == wanted.strip().lower()


def _row_text(row: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_join(v)}" for k, v in row.items() if v not in ("", [], None))


def _join(value: Any) -> str:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "/".join(str(v) for v in value)
    return str(value)


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


async def _reachable(check: Any, devices: DeviceAccess) -> CheckVerdict:
    assert isinstance(check, ReachableCheck)
    source = await devices.target(check.source)
    if check.address is not None:
        address, named = check.address, f"{check.to} ({check.address})"
    else:
        address, named = await _destination(check.to, devices)
    command = ping_command(source.dialect, address, check.count)
    deadline = time.monotonic() + check.wait
    fresh = False
    while True:
        result = await devices.run(source.name, command, fresh=fresh)
        reading = read_check(source.dialect, command, result.output)
        answered = reading is not None and bool(reading.received)
        if answered == check.expect or time.monotonic() >= deadline:
            break
        await asyncio.sleep(RETRY_INTERVAL)
        fresh = True
    lines = [reading.detail] if reading is not None and reading.detail else []
    lines = lines or _summary_lines(result.output)
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


def ping_command(dialect: str, address: str, count: int) -> str:
    """The ping of `count` probes to `address` on a `dialect` console, its probes sent one
    after the other's answer: VPCS sleeps its interval (1 s by default) after every probe,
    the last one too, and Linux between two probes; a check would wait for nothing."""
    if dialect == "cisco_ios":
        return f"ping {address} repeat {count}"
    if dialect == "linux":
        return f"ping -c {count} -i {LINUX_PING_INTERVAL} -W 1 {address}"
    return f"ping {address} -c {count} -i {VPCS_PING_INTERVAL_MS}"


def _summary_lines(output: str) -> list[str]:
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-MAX_EVIDENCE_LINES:]


async def _traffic(check: Any, devices: DeviceAccess) -> CheckVerdict:
    assert isinstance(check, TrafficCheck)
    ends = link_ports(check.link)
    named = _link_text(check)
    try:
        link = await find_link(devices.ctx, LinkEnds(**ends.model_dump()))
    except GNS3NotFound as exc:
        raise Undecided(str(exc)) from None
    async with devices.capture_lock(link.link_id):
        matched = await _captured(devices, link, check)
    evidence = [Evidence(node=ends.a, lines=[f"{matched} packets matching {check.filter}"])]
    seconds = f"{check.seconds:g} s"
    if matched > 0:
        return CheckVerdict(
            status="pass",
            explanation=f"{matched} {check.filter} packets crossed {named} in {seconds}.",
            evidence=evidence,
        )
    return CheckVerdict(
        status="fail",
        explanation=f"No {check.filter} packets crossed {named} in {seconds}.",
        evidence=evidence,
    )


async def _captured(devices: DeviceAccess, link: Link, check: TrafficCheck) -> int:
    """The packets matching the check's filter that crossed `link` during the check (a
    capture the student runs is left running; only the packets it gained count)."""
    ctx = devices.ctx
    link = await ctx.until_aborted(ctx.gns3.get_link(ctx.project_id, link.link_id))
    started = not link.capturing
    try:
        before = 0 if started else await _matched(ctx, link, check.filter)
        if started:
            await ctx.until_aborted(ctx.gns3.start_capture(ctx.project_id, link.link_id))
        waits: list[Awaitable[Any]] = [asyncio.sleep(check.seconds)]
        if check.during is not None:
            ping = check.during.ping
            waits.append(_ping_once(devices, ping.source, ping.to))
        await asyncio.gather(*waits)
        link = await ctx.until_aborted(ctx.gns3.get_link(ctx.project_id, link.link_id))
        return await _matched(ctx, link, check.filter) - before
    except (GNS3Error, CaptureError) as exc:
        raise Undecided(f"the capture on {_link_text(check)} failed: {exc}") from None
    finally:
        if started:
            with contextlib.suppress(GNS3Error):
                await ctx.gns3.stop_capture(ctx.project_id, link.link_id)


def _link_text(check: TrafficCheck) -> str:
    """The check's link as a student reads it: `PC1 e0 - SW1 e1`."""
    ends = link_ports(check.link)
    return f"{ends.a} {ends.a_port} - {ends.b} {ends.b_port}"


async def _matched(ctx: ToolContext, link: Link, display_filter: str) -> int:
    data = await read_link_capture(ctx, link)
    analysis, _ = await ctx.until_aborted(
        analyze_pcap(data, display_filter=display_filter, limit=1)
    )
    return analysis.matched


async def _ping_once(devices: DeviceAccess, source: str, to: str) -> None:
    """Traffic for a `traffic` check: its ping's answer does not matter."""
    target = await devices.target(source)
    address, _ = await _destination(to, devices)
    await devices.run(target.name, ping_command(target.dialect, address, 3), fresh=True)


_DECIDERS = {
    "reachable": _reachable,
    "traffic": _traffic,
    "node_running": _node_running,
    "link": _link,
    "address": _address,
    "command": _command,
    "parsed": _parsed,
}
