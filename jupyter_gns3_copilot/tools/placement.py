"""GNS3 coordinates from the topology drawing's layout (`gns3/layout.py`), so the GNS3 web
UI shows the picture `%copilot show topology` draws.

A lab *follows the layout* when every node sits where the layout of its current graph puts
it (or it has no node yet): the copilot placed it. `create_nodes` and `create_links` keep
such a lab laid out after they change it (`relayout`); a lab a person arranged (any node
elsewhere) is never moved, and new nodes go to free spots instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from ..gns3 import GNS3Error, Topology
from ..gns3.layout import NODE_EXTENT, layout
from ..gns3.svg import layout_edges, layout_nodes
from .base import ToolContext


def gns3_positions(topology: Topology) -> dict[str, tuple[int, int]]:
    """Each node's GNS3 position (its top-left corner) from the layout of `topology`."""
    centres = layout(layout_nodes(topology), layout_edges(topology))
    return {
        node_id: (round(x - NODE_EXTENT), round(y - NODE_EXTENT))
        for node_id, (x, y) in centres.items()
    }


def follows_layout(topology: Topology) -> bool:
    """Whether every node is at its layout position (True for an empty lab)."""
    wanted = gns3_positions(topology)
    return all((node.x, node.y) == wanted[node.node_id] for node in topology.nodes)


async def relayout(ctx: ToolContext) -> Mapping[str, tuple[int, int]]:
    """Move every node of the project to its layout position; the moves made (by node
    name). Nodes GNS3 refuses to move keep their place (the lab then no longer follows
    the layout, so it is left alone afterwards)."""
    topology = await ctx.gns3.get_topology(ctx.project_id)
    wanted = gns3_positions(topology)
    moves = {
        node.node_id: (node.name, wanted[node.node_id])
        for node in topology.nodes
        if (node.x, node.y) != wanted[node.node_id]
    }

    async def move(node_id: str, x: int, y: int) -> None:
        await ctx.gns3.update_node(ctx.project_id, node_id, x=x, y=y)

    results = await asyncio.gather(
        *(move(node_id, x, y) for node_id, (_, (x, y)) in moves.items()), return_exceptions=True
    )
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, GNS3Error):
            raise result
    ctx.forget_nodes()
    return {
        name: position
        for (name, position), result in zip(moves.values(), results, strict=True)
        if not isinstance(result, BaseException)
    }
