"""Nodes: create, start (waiting for the console prompt), stop, suspend, reload, rename,
delete.

Every tool here answers per node, in the order asked, with `status` success / failed /
aborted (or partial_success: started, but the console never showed its prompt), so one
bad name never hides what happened to the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from pydantic import Field, field_validator

from ..console import ConsoleAborted, ConsoleError, ConsoleTargetError, DialectError
from ..gns3 import GNS3Error, Node
from ..gns3.computes import LOCAL_COMPUTE, Compute, busiest_compute, find_compute
from ..gns3.topology import natural_key
from .base import ToolAborted, ToolArguments, ToolContext, ToolSpec, summary_status
from .placement import follows_layout, relayout
from .topology_tools import node_dialect

SPACING = 250
"""Pixels kept between automatically placed nodes (and from existing ones)."""
GRID_COLUMNS = 5
"""Automatically placed nodes fill rows of this many spots, left to right."""
ACTION_CONCURRENCY = 8
"""Nodes GNS3 is asked to start/stop/... at once."""


class NodeToCreate(ToolArguments):
    template: str = Field(
        min_length=1,
        description="Template name or id, e.g. 'VPCS'.",
    )
    name: str | None = Field(
        default=None,
        min_length=1,
        description="Unique name; omit for GNS3's (PC1, PC2...).",
    )
    x: int | None = Field(
        default=None,
        description="Position in pixels; omit to place automatically.",
    )
    y: int | None = Field(
        default=None, description="Position in pixels; omit to place automatically."
    )
    compute: str | None = Field(
        default=None,
        min_length=1,
        description="GNS3 compute name or id; omit for the lab's usual one.",
    )


class CreateNodesArgs(ToolArguments):
    nodes: list[NodeToCreate] = Field(min_length=1, max_length=50, description="Nodes to create.")


class NodeNamesArgs(ToolArguments):
    nodes: list[str] = Field(
        min_length=1,
        description="Node names, e.g. ['PC1', 'R1'], or ['*'] for all.",
    )


class DeleteNodesArgs(ToolArguments):
    nodes: list[str] = Field(
        min_length=1,
        max_length=50,
        description="Node names, e.g. ['PC3'].",
    )

    @field_validator("nodes")
    @classmethod
    def _named(cls, names: list[str]) -> list[str]:
        if "*" in names:
            raise ValueError("name each node to delete; '*' is not accepted here")
        return names


class NodeRename(ToolArguments):
    name: str = Field(min_length=1, description="Current name.")
    new_name: str = Field(min_length=1, description="New unique name.")

    @field_validator("name", "new_name")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()


class RenameNodesArgs(ToolArguments):
    nodes: list[NodeRename] = Field(min_length=1, description="Renames to do.")


# -- create --------------------------------------------------------------------------------


def free_spot(
    taken: Iterable[tuple[int, int]], x: int | None = None, y: int | None = None
) -> tuple[int, int]:
    """A position at least `SPACING` px (horizontally or vertically) from every `taken`
    one. A given `x` or `y` is kept and the other coordinate searched; with neither, spots
    fill rows of `GRID_COLUMNS` from the top left of the scene's centre area.
    """
    if x is not None and y is not None:
        return x, y
    taken = list(taken)
    if x is not None:
        candidates: Iterable[tuple[int, int]] = (
            (x, (row - 1) * SPACING) for row in itertools.count()
        )
    elif y is not None:
        offsets = itertools.chain(
            [0], itertools.chain.from_iterable((k, -k) for k in itertools.count(1))
        )
        candidates = ((offset * SPACING, y) for offset in offsets)
    else:
        candidates = (
            ((k % GRID_COLUMNS - GRID_COLUMNS // 2) * SPACING, (k // GRID_COLUMNS - 1) * SPACING)
            for k in itertools.count()
        )
    for cx, cy in candidates:
        if all(abs(cx - tx) >= SPACING or abs(cy - ty) >= SPACING for tx, ty in taken):
            return cx, cy
    raise AssertionError("unreachable: the candidate spots are endless")


async def create_nodes(ctx: ToolContext, args: CreateNodesArgs) -> dict[str, Any]:
    """Create each node from its template, placing those without a position on free spots;
    in a lab that follows the drawing's layout (`placement`) and when no position was
    asked for, every node then goes to its layout position.

    A node goes on the compute it names (by name or id, checked against the controller's
    computes), else on the project's compute: the one most of its nodes are on, `local`
    for an empty project (`busiest_compute`)."""
    report = ctx.reporter("create_nodes")
    before = await ctx.gns3.get_topology(ctx.project_id)
    ctx.remember_nodes(before.nodes)
    keep_laid_out = follows_layout(before) and all(
        request.x is None and request.y is None for request in args.nodes
    )
    taken = [(node.x, node.y) for node in before.nodes]
    usual_compute = busiest_compute(before.nodes)
    computes: list[Compute] = []

    async def known_computes() -> list[Compute]:
        if not computes:
            computes.extend(await ctx.gns3.list_computes())
        return computes

    results: list[dict[str, Any]] = []
    for request in args.nodes:
        asked = {"template": request.template, **({"name": request.name} if request.name else {})}
        if ctx.aborted:
            results.append({**asked, "status": "aborted", "error": "not created: aborted"})
            continue
        x, y = free_spot(taken, request.x, request.y)
        try:
            compute_id = usual_compute
            if request.compute is not None:
                compute_id = find_compute(await known_computes(), request.compute).compute_id
            template = await ctx.until_aborted(ctx.gns3.find_template(request.template))
            node = await ctx.until_aborted(
                ctx.gns3.create_node_from_template(
                    ctx.project_id, template, request.name, x=x, y=y, compute_id=compute_id
                )
            )
        except ToolAborted:
            results.append({**asked, "status": "aborted", "error": "not created: aborted"})
            continue
        except GNS3Error as exc:
            results.append({**asked, "status": "failed", "error": str(exc)})
            continue
        taken.append((node.x, node.y))
        report(f"created {node.name}", node.name)
        created: dict[str, Any] = {
            "name": node.name,
            "template": template.name,
            "status": "success",
            "node_status": node.status,
            "x": node.x,
            "y": node.y,
            "ports": [port.short_name for port in node.ports],
            "dialect": node_dialect(node, template),
        }
        if node.compute_id not in (None, LOCAL_COMPUTE):
            created["compute"] = node.compute_id
            with contextlib.suppress(GNS3Error):
                names = {c.compute_id: c.name for c in await known_computes()}
                created["compute"] = names.get(node.compute_id, node.compute_id)
        if request.name and node.name != request.name:
            created["note"] = f"GNS3 stored the name as {node.name!r}"
        results.append(created)
    if keep_laid_out and not ctx.aborted and any(r["status"] == "success" for r in results):
        moved = await relayout(ctx)
        for created in results:
            if created.get("name") in moved:
                created["x"], created["y"] = moved[created["name"]]
    return {"status": summary_status([r["status"] for r in results]), "nodes": results}


# -- start / stop / suspend / reload ------------------------------------------------------


async def _resolve(ctx: ToolContext, names: Sequence[str]) -> Sequence[Node | dict[str, Any]]:
    """Each requested node in order (duplicates once), or a failure entry for unknown names.

    `["*"]` (or any `*` in the list) means every node of the project, in name order.
    """
    if "*" in names:
        return sorted(await ctx.nodes(refresh=True), key=lambda n: natural_key(n.name))
    found = await ctx.lookup_nodes(names)
    resolved: list[Node | dict[str, Any]] = []
    seen: set[str] = set()
    for name in names:
        node = found.get(name)
        if node is None:
            error = await ctx.unknown_node_message(name)
            resolved.append({"name": name, "status": "failed", "error": error})
        elif node.node_id not in seen:
            seen.add(node.node_id)
            resolved.append(node)
    return resolved


async def _wait_for_console(
    ctx: ToolContext, node: Node, report: Callable[..., None]
) -> dict[str, Any]:
    """Wait until `node`'s console shows its prompt; what to add to the node's entry."""
    try:
        target = await ctx.console_target(node)
    except ConsoleTargetError:
        return {"note": "no telnet console to wait for"}
    except DialectError as exc:
        return {"note": f"console readiness not checked: {exc}"}
    report(f"waiting for {node.name}'s console", node.name)
    try:
        waited = await ctx.consoles.wait_ready(
            target,
            timeout=ctx.boot_timeout,
            abort_event=ctx.abort,
            progress=lambda _elapsed, message: report(message, node.name),
        )
    except ConsoleAborted:
        return {
            "status": "aborted",
            "console_ready": False,
            "error": "aborted while waiting for the console prompt",
        }
    except ConsoleError as exc:
        return {"status": "partial_success", "console_ready": False, "error": str(exc)}
    return {"console_ready": True, "ready_after": round(waited, 2)}


async def _act_on_nodes(
    ctx: ToolContext,
    names: Sequence[str],
    *,
    tool: str,
    action: Callable[[str, str], Awaitable[None]],
    done: str,
    wait_for_console: bool = False,
) -> dict[str, Any]:
    report = ctx.reporter(tool)
    resolved = await _resolve(ctx, names)
    slots = asyncio.Semaphore(ACTION_CONCURRENCY)

    async def one(node: Node) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": node.name, "status": "success"}
        try:
            async with slots:
                await ctx.until_aborted(action(ctx.project_id, node.node_id))
        except ToolAborted:
            return {**entry, "status": "aborted", "error": f"not {done}: aborted"}
        except GNS3Error as exc:
            return {**entry, "status": "failed", "error": str(exc)}
        report(f"{node.name} {done}", node.name)
        if wait_for_console:
            entry.update(await _wait_for_console(ctx, node, report))
        return entry

    entries = await asyncio.gather(
        *(one(item) if isinstance(item, Node) else _echo(item) for item in resolved)
    )
    if not ctx.aborted and any(isinstance(item, Node) for item in resolved):
        statuses = {node.name: node.status for node in await ctx.nodes(refresh=True)}
        for entry in entries:
            if entry["name"] in statuses:
                entry["node_status"] = statuses[entry["name"]]
    return {"status": summary_status([e["status"] for e in entries]), "nodes": list(entries)}


async def _echo(entry: dict[str, Any]) -> dict[str, Any]:
    return entry


async def start_nodes(ctx: ToolContext, args: NodeNamesArgs) -> dict[str, Any]:
    """Start the nodes, then wait for each console's prompt (not a fixed sleep)."""
    return await _act_on_nodes(
        ctx,
        args.nodes,
        tool="start_nodes",
        action=ctx.gns3.start_node,
        done="started",
        wait_for_console=True,
    )


async def stop_nodes(ctx: ToolContext, args: NodeNamesArgs) -> dict[str, Any]:
    """Stop the nodes."""
    return await _act_on_nodes(
        ctx, args.nodes, tool="stop_nodes", action=ctx.gns3.stop_node, done="stopped"
    )


async def suspend_nodes(ctx: ToolContext, args: NodeNamesArgs) -> dict[str, Any]:
    """Suspend the nodes; says so when a node type ignores it (VPCS keeps running)."""
    result = await _act_on_nodes(
        ctx, args.nodes, tool="suspend_nodes", action=ctx.gns3.suspend_node, done="suspended"
    )
    for entry in result["nodes"]:
        if entry["status"] == "success" and entry.get("node_status") == "started":
            entry["note"] = "this node type cannot be suspended; it keeps running"
    return result


async def reload_nodes(ctx: ToolContext, args: NodeNamesArgs) -> dict[str, Any]:
    """Restart the nodes, then wait for each console's prompt."""
    return await _act_on_nodes(
        ctx,
        args.nodes,
        tool="reload_nodes",
        action=ctx.gns3.reload_node,
        done="reloaded",
        wait_for_console=True,
    )


async def delete_nodes(ctx: ToolContext, args: DeleteNodesArgs) -> dict[str, Any]:
    """Delete the nodes (and their links)."""
    return await _act_on_nodes(
        ctx, args.nodes, tool="delete_nodes", action=ctx.gns3.delete_node, done="deleted"
    )


# -- rename -------------------------------------------------------------------------------


async def rename_nodes(ctx: ToolContext, args: RenameNodesArgs) -> dict[str, Any]:
    """Rename nodes one by one; GNS3's refusals (e.g. a started VPCS) are reported."""
    results: list[dict[str, Any]] = []
    for rename in args.nodes:
        entry: dict[str, Any] = {"name": rename.name, "new_name": rename.new_name}
        if ctx.aborted:
            results.append({**entry, "status": "aborted", "error": "not renamed: aborted"})
            continue
        node = (await ctx.lookup_nodes([rename.name])).get(rename.name)
        if node is None:
            error = await ctx.unknown_node_message(rename.name)
            results.append({**entry, "status": "failed", "error": error})
            continue
        others = [n for n in await ctx.nodes() if n.node_id != node.node_id]
        if any(n.name == rename.new_name for n in others):
            error = f"There is already a node named {rename.new_name!r}; names must be unique."
            results.append({**entry, "status": "failed", "error": error})
            continue
        try:
            updated = await ctx.until_aborted(
                ctx.gns3.update_node(ctx.project_id, node.node_id, name=rename.new_name)
            )
        except ToolAborted:
            results.append({**entry, "status": "aborted", "error": "not renamed: aborted"})
            continue
        except GNS3Error as exc:
            results.append({**entry, "status": "failed", "error": str(exc)})
            continue
        ctx.forget_nodes()
        results.append({**entry, "new_name": updated.name, "status": "success"})
    return {"status": summary_status([r["status"] for r in results]), "nodes": results}


SPECS = [
    ToolSpec(
        name="create_nodes",
        description=(
            "Create nodes from templates; returns their names and ports. New nodes are stopped."
        ),
        args_model=CreateNodesArgs,
        run=create_nodes,
        changes_lab=True,
    ),
    ToolSpec(
        name="start_nodes",
        description="Start nodes and wait until each console is ready for commands.",
        args_model=NodeNamesArgs,
        run=start_nodes,
        changes_lab=True,
    ),
    ToolSpec(
        name="stop_nodes",
        description="Stop nodes. A stopped VPCS loses unsaved settings.",
        args_model=NodeNamesArgs,
        run=stop_nodes,
        changes_lab=True,
    ),
    ToolSpec(
        name="suspend_nodes",
        description="Suspend (pause) nodes; VPCS cannot be suspended.",
        args_model=NodeNamesArgs,
        run=suspend_nodes,
        changes_lab=True,
    ),
    ToolSpec(
        name="reload_nodes",
        description="Restart nodes and wait for their consoles. Unsaved configuration is lost.",
        args_model=NodeNamesArgs,
        run=reload_nodes,
        changes_lab=True,
    ),
    ToolSpec(
        name="rename_nodes",
        description="Rename nodes; a started VPCS or router must be stopped first.",
        args_model=RenameNodesArgs,
        run=rename_nodes,
        changes_lab=True,
    ),
    ToolSpec(
        name="delete_nodes",
        description="Delete nodes and their links. Cannot be undone (see snapshots).",
        args_model=DeleteNodesArgs,
        run=delete_nodes,
        changes_lab=True,
    ),
]
