"""Snapshots of the project ("reset my lab"): `list_snapshots`, `create_snapshot`,
`restore_snapshot`, by snapshot name."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from pydantic import Field, field_validator

from ..gns3 import Snapshot
from ..gns3.topology import natural_key
from .base import NoArguments, ToolArguments, ToolContext, ToolError, ToolSpec

MAX_NAME_CHARS = 100


class SnapshotArgs(ToolArguments):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS, description="Snapshot name.")

    @field_validator("name")
    @classmethod
    def _strip(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the name is blank")
        return value.strip()


def _entry(snapshot: Snapshot) -> dict[str, Any]:
    created = datetime.fromtimestamp(snapshot.created_at, tz=timezone.utc)
    return {"name": snapshot.name, "created_at": created.isoformat(timespec="seconds")}


async def _snapshots(ctx: ToolContext) -> list[Snapshot]:
    return await ctx.until_aborted(ctx.gns3.list_snapshots(ctx.project_id))


async def list_snapshots(ctx: ToolContext, args: NoArguments) -> dict[str, Any]:
    """The project's snapshots, oldest first."""
    return {"status": "success", "snapshots": [_entry(s) for s in await _snapshots(ctx)]}


async def create_snapshot(ctx: ToolContext, args: SnapshotArgs) -> dict[str, Any]:
    """Save the project's current state (topology and saved configurations) by name."""
    existing = await _snapshots(ctx)
    if any(s.name == args.name for s in existing):
        raise ToolError(f"A snapshot named {args.name!r} exists already; pick another name.")
    snapshot = await ctx.until_aborted(ctx.gns3.create_snapshot(ctx.project_id, args.name))
    return {"status": "success", "snapshot": _entry(snapshot)}


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
        description="Save the lab's state as a named snapshot, e.g. 'before OSPF'.",
        args_model=SnapshotArgs,
        run=create_snapshot,
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
