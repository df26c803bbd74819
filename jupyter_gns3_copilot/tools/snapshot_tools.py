"""Snapshots of the project ("reset my lab"): `list_snapshots`, `create_snapshot`,
`restore_snapshot`, by snapshot name.

GNS3 takes a snapshot of a stopped lab only ("Project must be stopped in order to export
it": a VPCS, router or other node with a process of its own is started or suspended, see
`Node.blocks_snapshots`). `create_snapshot` then saves nothing and says which nodes run
and what to do (status `refused`, their names in `running`), unless asked to
`stop_running`: it stops those nodes, takes the snapshot and starts the same nodes again
(waiting for their consoles), which is stopping nodes, hence automation mode only and approved
first where changes are (`ToolSpec.also_does`, `plans`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import Field, field_validator

from ..gns3 import GNS3Error, Snapshot
from ..gns3.topology import natural_key
from .base import NoArguments, ToolAborted, ToolArguments, ToolContext, ToolError, ToolSpec
from .modes import mode_allows
from .node_tools import NodeNamesArgs, start_nodes, stop_nodes

MAX_NAME_CHARS = 100


class SnapshotArgs(ToolArguments):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="Snapshot name.")

    @field_validator("name")
    @classmethod
    def _strip(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the name is blank")
        return value.strip()


class CreateSnapshotArgs(SnapshotArgs):
    stop_running: bool = Field(
        default=False,
        description=(
            "Stop the running nodes for the snapshot and start them again (automation mode; "
            "only once the user agreed: what is not saved on them is lost)."
        ),
    )


UNSAVED_LOST = (
    "what was not saved on a device (VPCS `save`, IOS `write memory`) is lost when it stops"
)


def _entry(snapshot: Snapshot) -> dict[str, Any]:
    created = datetime.fromtimestamp(snapshot.created_at, tz=timezone.utc)
    return {"name": snapshot.name, "created_at": created.isoformat(timespec="seconds")}


async def _snapshots(ctx: ToolContext) -> list[Snapshot]:
    return await ctx.until_aborted(ctx.gns3.list_snapshots(ctx.project_id))


async def list_snapshots(ctx: ToolContext, args: NoArguments) -> dict[str, Any]:
    """The project's snapshots, oldest first."""
    return {"status": "success", "snapshots": [_entry(s) for s in await _snapshots(ctx)]}


async def _running(ctx: ToolContext) -> list[str]:
    """The names of the nodes that keep GNS3 from taking a snapshot, in name order."""
    nodes = await ctx.nodes(refresh=True)
    return sorted((n.name for n in nodes if n.blocks_snapshots), key=natural_key)


async def create_snapshot(ctx: ToolContext, args: CreateSnapshotArgs) -> dict[str, Any]:
    """Save the project's current state (topology and saved configurations) by name; with
    running nodes, refuse with advice, or (`stop_running`) stop them, save, and start the
    same nodes again (module docstring)."""
    existing = await _snapshots(ctx)
    if any(s.name == args.name for s in existing):
        raise ToolError(f"A snapshot named {args.name!r} exists already; pick another name.")
    running = await _running(ctx)
    if running and not args.stop_running:
        return _running_refusal(ctx.mode, running)
    if not running:
        snapshot = await ctx.until_aborted(ctx.gns3.create_snapshot(ctx.project_id, args.name))
        return {"status": "success", "snapshot": _entry(snapshot)}
    return await _stopped_for_snapshot(ctx, args.name, running)


def _running_refusal(mode: str, running: list[str]) -> dict[str, Any]:
    names = ", ".join(running)
    if mode_allows(mode, "stop_nodes"):
        how = (
            "Ask the user whether to stop them for the snapshot and start them again "
            f"({UNSAVED_LOST}); if they agree, call create_snapshot again with "
            "stop_running true. Or they stop the nodes themselves first."
        )
    else:
        how = (
            "Tell the user to stop them first (in GNS3: right-click, Stop; "
            f"{UNSAVED_LOST}), then ask again; or ask the instructor for automation mode, where "
            "the copilot can stop them and start them again."
        )
    return {
        "status": "refused",
        "tool": "create_snapshot",
        "running": running,
        "error": f"No snapshot was taken: GNS3 saves a snapshot of a stopped lab only, and "
        f"{names} {'is' if len(running) == 1 else 'are'} running. {how}",
    }


async def _stopped_for_snapshot(ctx: ToolContext, name: str, running: list[str]) -> dict[str, Any]:
    """Stop `running`, take snapshot `name`, start the nodes that stopped again (on an
    abort they stay stopped, and the error says so)."""
    report = ctx.reporter("create_snapshot")
    report(f"stopping {', '.join(running)} for the snapshot")
    stopped = await stop_nodes(ctx, NodeNamesArgs(nodes=running))
    down = [e["name"] for e in stopped["nodes"] if e["status"] == "success"]
    left_stopped = "Stopped: the request was aborted; " + (
        f"{', '.join(down)} stayed stopped (start_nodes starts them again)."
        if down
        else "no node was stopped."
    )
    snapshot: Snapshot | None = None
    problem: str | None = None
    if len(down) < len(running):
        problem = "Not every running node stopped, so no snapshot was taken: " + "; ".join(
            f"{e['name']}: {e.get('error', e['status'])}"
            for e in stopped["nodes"]
            if e["status"] != "success"
        )
    else:
        report(f"saving snapshot {name!r}")
        try:
            snapshot = await ctx.until_aborted(ctx.gns3.create_snapshot(ctx.project_id, name))
        except ToolAborted:
            raise ToolAborted(left_stopped) from None
        except GNS3Error as exc:
            problem = f"No snapshot was taken: {exc}"
    if ctx.aborted:
        raise ToolAborted(left_stopped)
    report(f"starting {', '.join(down)} again")
    started = await start_nodes(ctx, NodeNamesArgs(nodes=down)) if down else {"nodes": []}
    again = [e["name"] for e in started["nodes"] if e["status"] == "success"]
    result: dict[str, Any] = {"status": "success" if again == down else "partial_success"}
    if snapshot is not None:
        result["snapshot"] = _entry(snapshot)
    else:
        result.update(status="error", error=problem)
    restarted = (
        "then started again" if again == down else f"started again: {', '.join(again) or 'none'}"
    )
    result.update(
        stopped=down,
        started_again=again,
        note=f"{', '.join(down)} were stopped for the snapshot, {restarted}; {UNSAVED_LOST}",
    )
    not_started = [e for e in started["nodes"] if e["status"] != "success"]
    if not_started:
        result["not_started_again"] = not_started
    return result


async def plan_snapshot(ctx: ToolContext, args: CreateSnapshotArgs) -> str | None:
    """What `create_snapshot` with `stop_running` would do, for the approval card; None
    when no node runs (it only saves: no change) or the name is taken (it fails first)."""
    if not args.stop_running or any(s.name == args.name for s in await _snapshots(ctx)):
        return None
    running = await _running(ctx)
    if not running:
        return None
    names = ", ".join(running)
    return (
        f"stop {names} (the lab stops; {UNSAVED_LOST}), save snapshot {args.name!r}, "
        f"then start {names} again"
    )


def _stops_nodes(args: CreateSnapshotArgs) -> frozenset[str]:
    return frozenset({"stop_nodes", "start_nodes"}) if args.stop_running else frozenset()


async def restore_snapshot(ctx: ToolContext, args: SnapshotArgs) -> dict[str, Any]:
    """Bring the project back to the named snapshot; its nodes come back stopped."""
    existing = await _snapshots(ctx)
    snapshot = _pick(existing, args.name)
    await ctx.until_aborted(ctx.gns3.restore_snapshot(ctx.project_id, snapshot.snapshot_id))
    nodes = await ctx.nodes(refresh=True)
    return {
        "status": "success",
        "snapshot": _entry(snapshot),
        "nodes": sorted((n.name for n in nodes), key=natural_key),
        "note": "the lab is as saved in the snapshot; its nodes are stopped (start_nodes) "
        "and captures were removed",
    }


def _pick(snapshots: list[Snapshot], name: str) -> Snapshot:
    for matches in (
        [s for s in snapshots if s.name == name],
        [s for s in snapshots if s.name.lower() == name.lower()],
    ):
        if len(matches) == 1:
            return matches[0]
    names = ", ".join(repr(s.name) for s in snapshots) or "none"
    raise ToolError(f"No snapshot named {name!r} in this project. Snapshots: {names}.")


SPECS = [
    ToolSpec(
        name="list_snapshots",
        description="List the lab's snapshots (saved states).",
        args_model=NoArguments,
        run=list_snapshots,
    ),
    ToolSpec(
        name="create_snapshot",
        description=(
            "Save the lab's state as a named snapshot, e.g. 'before OSPF'. GNS3 needs "
            "the nodes stopped."
        ),
        args_model=CreateSnapshotArgs,
        run=create_snapshot,
        also_does=_stops_nodes,
        plans=plan_snapshot,
    ),
    ToolSpec(
        name="restore_snapshot",
        description=(
            "Reset the lab to a snapshot; later changes are lost, nodes come back stopped."
        ),
        args_model=SnapshotArgs,
        run=restore_snapshot,
        changes_lab=True,
    ),
]
