"""The tool catalogue, its schemas for the model, and `execute_tool`, the one way to run
a tool call (mode check, argument validation, error handling)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..console import ConsoleError
from ..gns3 import GNS3Error
from . import (
    capture_tools,
    command_tools,
    link_tools,
    node_tools,
    objective_tools,
    skill_tools,
    snapshot_tools,
    topology_tools,
)
from .base import ToolAborted, ToolContext, ToolError, ToolOutcome, ToolResult, ToolSpec
from .modes import MODE_TOOLS, check_mode, mode_allows, refusal

log = logging.getLogger(__name__)

_CATALOGUE_ORDER = (
    "get_topology",
    "list_templates",
    "create_nodes",
    "create_links",
    "start_nodes",
    "stop_nodes",
    "suspend_nodes",
    "reload_nodes",
    "rename_nodes",
    "run_show_commands",
    "run_config_commands",
    "run_vpcs_commands",
    "device_skills",
    "check_objectives",
    "start_capture",
    "stop_capture",
    "analyze_capture",
    "list_snapshots",
    "create_snapshot",
    "restore_snapshot",
    "delete_nodes",
    "delete_links",
    "set_link_state",
    "set_link_filter",
)
_SPECS = {
    spec.name: spec
    for module in (
        topology_tools,
        node_tools,
        link_tools,
        command_tools,
        skill_tools,
        capture_tools,
        snapshot_tools,
        objective_tools,
    )
    for spec in module.SPECS
}
TOOLS: dict[str, ToolSpec] = {name: _SPECS[name] for name in _CATALOGUE_ORDER}
"""Every tool by name, in catalogue order."""

_FAILED_STATUSES = frozenset({"error", "refused", "failed", "aborted"})
_UNSHOWN_KEYWORDS = frozenset({"title", "$defs"})
_BOUND_KEYWORDS = frozenset({"minLength", "maxLength", "minItems", "maxItems"})


def tools_for_mode(mode: str) -> list[ToolSpec]:
    """The tools `mode` allows, in catalogue order (`ValueError` for an unknown mode)."""
    allowed = MODE_TOOLS[check_mode(mode)]
    return [spec for name, spec in TOOLS.items() if name in allowed]


def openai_tool_schema(spec: ToolSpec, *, bounds: bool = False) -> dict[str, Any]:
    """`spec` in the OpenAI tools format: `{"type": "function", "function": {name,
    description, parameters}}`. The parameters are the argument model's JSON schema with
    references inlined, titles dropped and optional fields given their plain type. Unless
    `bounds` (the tool catalogue route shows them), the length and count bounds of strings
    and lists are left out: the model reads this schema with every call, and the argument
    model still enforces those bounds, naming the one broken (numeric ranges stay: they
    say what a value means).
    """
    schema = spec.args_model.model_json_schema()
    unshown = _UNSHOWN_KEYWORDS if bounds else _UNSHOWN_KEYWORDS | _BOUND_KEYWORDS
    parameters = _plain_schema(schema, schema.get("$defs", {}), unshown)
    parameters.pop("description", None)
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": parameters,
        },
    }


async def execute_tool(ctx: ToolContext, name: str, raw_args: Any) -> ToolOutcome:
    """Run the tool call `name(raw_args)` in `ctx` and return its outcome.

    Never raises for expected problems: an unknown tool, a tool the mode does not allow
    (nothing is executed), invalid arguments (field-level messages), GNS3 and console
    errors, an abort. `raw_args` is a dict, a JSON object string, or None. Cancellation
    propagates. After a tool that changes the lab, the context's node cache is dropped.
    """
    spec = TOOLS.get(name)
    if spec is None:
        allowed = ", ".join(s.name for s in tools_for_mode(ctx.mode))
        return _failed({"status": "error", "error": f"Unknown tool {name!r}. Tools: {allowed}."})
    if not mode_allows(ctx.mode, name):
        return _failed(refusal(ctx.mode, name))
    try:
        args = spec.args_model.model_validate(_arguments(raw_args))
    except (ValidationError, ValueError) as exc:
        return _failed({"status": "error", "tool": name, "error": _argument_problem(name, exc)})
    unallowed = unallowed_work(ctx.mode, spec, args)
    if unallowed is not None:
        return _failed(refusal(ctx.mode, name, unallowed))
    changes_lab = changes_lab_with(spec, args)
    try:
        result: ToolResult = await spec.run(ctx, args)
    except ToolAborted as exc:
        result = {"status": "aborted", "tool": name, "error": str(exc)}
    except (ToolError, GNS3Error, ConsoleError) as exc:
        result = {"status": "error", "tool": name, "error": str(exc)}
    except Exception as exc:
        log.exception("Tool %s failed unexpectedly", name)
        error = f"{name} failed unexpectedly ({type(exc).__name__}: {exc})."
        result = {"status": "error", "tool": name, "error": error}
    finally:
        if changes_lab:
            ctx.forget_nodes()
    return ToolOutcome(result=result, changed_lab=changes_lab, ok=_succeeded(result))


def unallowed_work(mode: str, spec: ToolSpec, args: Any) -> str | None:
    """The first tool whose work a call of `spec` with the validated `args` also does
    (`ToolSpec.also_does`) that `mode` does not allow; None when the mode allows it all."""
    also = spec.also_does(args) if spec.also_does is not None else frozenset()
    return next((name for name in sorted(also) if not mode_allows(mode, name)), None)


def changes_lab_with(spec: ToolSpec, args: Any) -> bool:
    """Whether a call of `spec` with the validated `args` changes the lab: the tool does,
    or a tool whose work the call also does (`ToolSpec.also_does`)."""
    also = spec.also_does(args) if spec.also_does is not None else frozenset()
    return spec.changes_lab or any(TOOLS[name].changes_lab for name in also)


def call_changes_lab(name: str, raw_args: Any) -> bool:
    """Whether a call of `name` with `raw_args` (not validated yet) may change the lab:
    True for an unknown tool; arguments its model refuses change nothing."""
    spec = TOOLS.get(name)
    if spec is None:
        return True
    if spec.changes_lab or spec.also_does is None:
        return spec.changes_lab
    try:
        args = spec.args_model.model_validate(_arguments(raw_args))
    except (ValidationError, ValueError):
        return False
    return changes_lab_with(spec, args)


def _failed(result: dict[str, Any]) -> ToolOutcome:
    return ToolOutcome(result=result, changed_lab=False, ok=False)


def _arguments(raw_args: Any) -> Mapping[str, Any]:
    if raw_args is None or raw_args == "":
        return {}
    if isinstance(raw_args, str):
        try:
            raw_args = json.loads(raw_args)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the arguments are not valid JSON ({exc})") from None
    if not isinstance(raw_args, Mapping):
        raise ValueError(f"the arguments must be a JSON object, not {type(raw_args).__name__}")
    return raw_args


def _argument_problem(name: str, exc: ValidationError | ValueError) -> str:
    if not isinstance(exc, ValidationError):
        return f"Invalid arguments for {name}: {exc}."
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    return f"Invalid arguments for {name}: " + "; ".join(problems) + "."


def _succeeded(result: ToolResult) -> bool:
    """False when nothing asked for was done (refused, error, all items failed/aborted)."""
    if isinstance(result, dict):
        return result.get("status") not in _FAILED_STATUSES
    statuses = [item.get("status") for item in result if isinstance(item, dict)]
    return not statuses or any(status not in _FAILED_STATUSES for status in statuses)


def _plain_schema(node: Any, defs: Mapping[str, Any], unshown: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_plain_schema(item, defs, unshown) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        referenced = defs[node["$ref"].rsplit("/", 1)[-1]]
        rest = {key: value for key, value in node.items() if key != "$ref"}
        return _plain_schema({**referenced, **rest}, defs, unshown)
    plain: dict[str, Any] = {}
    for key, value in node.items():
        if key in unshown:
            continue
        if key == "properties":
            plain[key] = {prop: _plain_schema(sub, defs, unshown) for prop, sub in value.items()}
        else:
            plain[key] = _plain_schema(value, defs, unshown)
    options = plain.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        del plain["anyOf"]
        plain = {**next(o for o in options if o != {"type": "null"}), **plain}
    if "default" in plain and plain["default"] is None:
        del plain["default"]
    return plain
