"""Deciding one check on the real devices: `decide(check, devices)` gives a `CheckVerdict`
(pass or fail with a sentence a student understands and the output lines that decided,
or error when it cannot be decided: a node stopped, a console silent).

A check only reads: commands go through `DeviceAccess`, which screens each one with the
command policy's read-only rules.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence

from ..devices.readers import (
    ReadError,
    interface_lines,
    line_at,
    parsed_rows,
    same_interface,
)
from ..gns3.models import Port
from .devices import DeviceAccess, Undecided
from .model import (
    AddressCheck,
    Check,
    CommandCheck,
    LinkCheck,
    NodeRunningCheck,
    ParsedCheck,
    ReachableCheck,
    TrafficCheck,
)
from .model_base import is_regex_pattern
from .network_checks import reachable, traffic
from .results import MAX_EVIDENCE_LINES, CheckVerdict, Evidence, inline_code, summary_lines
from .routing_checks import decide_routing
from .templating import said


async def decide(check: Check, devices: DeviceAccess) -> CheckVerdict:
    """The verdict of `check` on the project's devices (module docstring)."""
    try:
        return await _verdict(check, devices)
    except Undecided as exc:
        return CheckVerdict(status="error", explanation=_sentence(str(exc)))


async def _verdict(check: Check, devices: DeviceAccess) -> CheckVerdict:
    if isinstance(check, ReachableCheck):
        return await reachable(check, devices)
    if isinstance(check, TrafficCheck):
        return await traffic(check, devices)
    if isinstance(check, NodeRunningCheck):
        return await _node_running(check, devices)
    if isinstance(check, LinkCheck):
        return await _link(check, devices)
    if isinstance(check, AddressCheck):
        return await _address(check, devices)
    if isinstance(check, CommandCheck):
        return await _command(check, devices)
    if isinstance(check, ParsedCheck):
        return await _parsed(check, devices)
    return await decide_routing(check, devices)


async def _node_running(check: NodeRunningCheck, devices: DeviceAccess) -> CheckVerdict:
    node = await devices.node(check.node)
    evidence = [Evidence(node=node.name, lines=[f"status: {node.status}"])]
    if node.status == "started":
        return CheckVerdict(
            status="pass", explanation=f"{node.name} is running.", evidence=evidence
        )
    return CheckVerdict(
        status="fail", explanation=f"{node.name} is {node.status}.", evidence=evidence
    )


async def _link(check: LinkCheck, devices: DeviceAccess) -> CheckVerdict:
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


async def _address(check: AddressCheck, devices: DeviceAccess) -> CheckVerdict:
    node = await devices.target(check.node)
    wanted = ipaddress.IPv4Interface(check.address)
    command, found = await devices.addresses(node.name)
    where = f"{node.name} {check.interface}" if check.interface else node.name
    elsewhere = [a.interface for a in found if a.address == wanted]
    if check.interface:
        found = [a for a in found if same_interface(check.interface, a.interface)]
    lines = [a.line for a in found]
    if not found:  # the lines that say so: VPCS's 0.0.0.0/0, the interface without one
        # (an interface FRR does not have: its interfaces, for its output is JSON)
        output = (await devices.run(node.name, command)).output
        every = interface_lines(output, node.dialect)
        lines = [
            line
            for interface, line in every
            if not check.interface or same_interface(check.interface, interface)
        ] or ([line for _, line in every] if node.dialect == "frr" else summary_lines(output))
    evidence = [Evidence(node=node.name, command=command, lines=lines[:MAX_EVIDENCE_LINES])]
    if any(a.address == wanted for a in found):
        return CheckVerdict(status="pass", explanation=f"{where} has {wanted}.", evidence=evidence)
    # the address on another interface than the objective's: say where it is
    on = f" ({wanted} is on {', '.join(elsewhere)})" if elsewhere else ""
    if not found:
        return CheckVerdict(
            status="fail", explanation=f"{where} has no IPv4 address{on}.", evidence=evidence
        )
    has = ", ".join(str(a.address) for a in found)
    return CheckVerdict(
        status="fail", explanation=f"{where} has {has}, not {wanted}{on}.", evidence=evidence
    )


async def _command(check: CommandCheck, devices: DeviceAccess) -> CheckVerdict:
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
    words = said(check.say, ok, found)
    if words is not None:
        return words
    on = f"{inline_code(check.command)} on {node}"
    line = inline_code(" ".join(deciding[0].split())) if deciding else None
    if check.regex is not None:
        if ok:
            return f"{on} shows {line}." if line else f"{on} shows what the objective asks."
        if line:
            return f"{on} shows {line}, not what the objective asks."
        return f"{on} does not show what the objective asks."
    text = inline_code(check.contains or check.not_contains or "")
    shows = ok == (check.contains is not None)
    return f"{on} shows {text}." if shows else f"{on} does not show {text}."


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


async def _parsed(check: ParsedCheck, devices: DeviceAccess) -> CheckVerdict:
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


def _row_matches(row: Mapping[str, object], match: Mapping[str, str]) -> bool:
    return all(_value_matches(row.get(field), wanted) for field, wanted in match.items())


def _value_matches(value: object, wanted: str) -> bool:
    if isinstance(value, list):
        return any(_value_matches(item, wanted) for item in value)
    text = str(value if value is not None else "").strip()
    if is_regex_pattern(wanted):
        return re.search(wanted[1:-1], text, re.IGNORECASE) is not None
    return text.lower() == wanted.strip().lower()


def _row_text(row: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={_join(v)}" for k, v in row.items() if v not in ("", [], None))


def _join(value: object) -> str:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "/".join(str(v) for v in value)
    return str(value)


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
