"""Human approval before changes: which calls ask, what the person sees, what the model is
told.

A tool call that needs approval pauses the graph with LangGraph's `interrupt()` (in
`graph.tool_node`, before any call of the reply runs) holding an `ApprovalRequest`; the
checkpoint keeps it, so it survives a client that leaves and a server restart. The turn
resumes with `Command(resume=ApprovalDecision)`.

Rule for a reply with several calls: one approval per call that needs one, asked one
after the other in the reply's order; nothing of the reply runs until every one is
decided; then the approved calls run in order, and each declined one gets
`declined_result` (calls that need no approval run as usual).

No Jupyter import here (the core).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

DEFAULT_TIMEOUT = 600.0
"""Seconds an approval waits by default; unanswered, it counts as rejected."""
SUMMARY_MAX_CHARS = 600

_NAMESPACE = uuid.UUID("5f0c6a52-4b1e-4a64-9d0e-0c6f2a7d11aa")


class ApprovalRequest(BaseModel):
    """What a paused turn waits on: the `interrupt()` value kept in the checkpoint (no
    secret in it), and the `approval_required` event's fields plus when it expires and
    the turn's mode, temperature and time limit with the seconds of it used before the
    wait (a turn resumed after a restart needs them; None in requests saved before these
    fields existed, and for a turn without a limit)."""

    approval_id: str
    tool_call_id: str
    tool_name: str
    tool_input: dict[str, Any]
    summary: str
    asked_at: datetime
    timeout: float
    mode: str
    temperature: float | None = None
    time_limit: int | None = None
    time_used: float | None = None

    @property
    def expires_at(self) -> datetime:
        return self.asked_at + timedelta(seconds=self.timeout)

    def remaining(self, now: datetime | None = None) -> float:
        """Seconds left to decide (<= 0: expired)."""
        now = now or datetime.now(timezone.utc)
        return (self.expires_at - now).total_seconds()


class ApprovalDecision(BaseModel):
    """The resume value: how the person (or the clock) decided."""

    decision: Literal["approve", "reject", "timeout"]
    comment: str | None = Field(default=None, max_length=2000)


def approval_id_for(session_id: str, tool_call_id: str) -> str:
    """The approval's id: stable for a call (the same after a restart), unguessable
    without the session and call ids."""
    return str(uuid.uuid5(_NAMESPACE, f"{session_id}\n{tool_call_id}"))


def new_request(
    session_id: str,
    tool_call_id: str,
    tool_name: str,
    tool_input: Mapping[str, Any] | str,
    *,
    timeout: float,
    mode: str,
    temperature: float | None,
    time_limit: int | None = None,
    time_used: float | None = None,
    configuring: Mapping[str, Sequence[str]] | None = None,
    plan: str | None = None,
) -> ApprovalRequest:
    """The request for one call, asked now (`time_used`: seconds of the turn's
    `time_limit` used so far; `configuring`: the command lines that change each device,
    which the plan names, see `summarize`; `plan`: the tool's own words for what the
    call would do, `ToolSpec.plans`, shown instead)."""
    args = dict(tool_input) if isinstance(tool_input, Mapping) else {"arguments": tool_input}
    return ApprovalRequest(
        approval_id=approval_id_for(session_id, tool_call_id),
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        tool_input=args,
        summary=_clip(plan) if plan else summarize(tool_name, args, configuring),
        asked_at=datetime.now(timezone.utc),
        timeout=timeout,
        mode=mode,
        temperature=temperature,
        time_limit=time_limit,
        time_used=time_used,
    )


def declined_result(decision: ApprovalDecision, timeout: float) -> str:
    """The tool result the model reads for a call that was not approved."""
    if decision.decision == "timeout":
        message = (
            f"No one approved this change within {timeout:g} seconds, so it was not "
            "executed. Do not retry it unasked; tell the user what it would have done."
        )
    else:
        message = "The user declined this change; it was not executed."
        if decision.comment:
            message += f" Their comment: {decision.comment}"
    body = {"status": "declined", "decision": decision.decision, "message": message}
    if decision.comment:
        body["comment"] = decision.comment
    return json.dumps(body, ensure_ascii=False, indent=2)


# -- summaries -------------------------------------------------------------------------------


def summarize(
    tool_name: str,
    args: Mapping[str, Any],
    configuring: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """A plan a person can judge, e.g. "create PC3 (vpcs)", "link PC3 e0 - Switch1 e2",
    "on R1: interface g0/0, ip address 10.0.0.1 255.255.255.0"; steps joined by "; ".

    Shapes the catalogue uses (device commands, links, nodes to create, renames, node
    names) are read by their fields, so new tools of the same shapes read well too;
    anything else is the tool name and its arguments as compact JSON. With
    `configuring` (the lines that change each device), a device's step names those
    lines and mentions the diagnostics that run with them: "on PC3: ip 10.0.0.73/24
    (also runs: show ip)"; devices with none are left out.
    """
    verb = tool_name.split("_", 1)[0]
    steps: list[str | None] = []
    for value in args.values():
        if isinstance(value, list) and value:
            steps += [_step(verb, item, configuring) for item in value]
    if not steps or any(step is None for step in steps):
        text = f"{tool_name} {json.dumps(dict(args), ensure_ascii=False, separators=(',', ':'))}"
    else:
        text = "; ".join(step for step in steps if step)
    return _clip(text)


def _clip(text: str) -> str:
    return text if len(text) <= SUMMARY_MAX_CHARS else text[: SUMMARY_MAX_CHARS - 1] + "…"


def _step(
    verb: str, item: Any, configuring: Mapping[str, Sequence[str]] | None = None
) -> str | None:
    if isinstance(item, str):
        return f"{verb} {item}"
    if not isinstance(item, Mapping):
        return None
    if "device" in item and isinstance(item.get("commands"), list):
        lines = [line.strip() for c in item["commands"] for line in str(c).splitlines()]
        lines = [line for line in lines if line]
        if configuring is None:
            return f"on {item['device']}: " + ", ".join(lines)
        changing = list(configuring.get(str(item["device"]), ()))
        if not changing:
            return ""
        others = [line for line in lines if line not in changing]
        also = f" (also runs: {', '.join(others)})" if others else ""
        return f"on {item['device']}: " + ", ".join(changing) + also
    if {"a", "a_port", "b", "b_port"} <= item.keys():
        noun = "link" if verb == "create" else f"{verb} link"
        return f"{noun} {item['a']} {item['a_port']} - {item['b']} {item['b_port']}"
    if "template" in item:
        name = item.get("name") or "a node"
        return f"{verb} {name} ({item['template']})"
    if "name" in item and "new_name" in item:
        return f"{verb} {item['name']} -> {item['new_name']}"
    return None
