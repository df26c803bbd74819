"""Links: `create_links` by node and port names."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..gns3 import GNS3Error
from ..gns3.topology import natural_key, resolve_link_end
from .base import ToolAborted, ToolArguments, ToolContext, ToolSpec, summary_status
from .placement import follows_layout, relayout


class LinkToCreate(ToolArguments):
    a: str = Field(min_length=1, description="Name of the node at one end, e.g. 'PC1'.")
    a_port: str = Field(
        min_length=1,
        description="Port of node a, by GNS3 port name or short name, e.g. 'e0', "
        "'Ethernet0', 'g0/0' (see get_topology or create_nodes for the ports).",
    )
    b: str = Field(min_length=1, description="Name of the node at the other end.")
    b_port: str = Field(min_length=1, description="Port of node b, e.g. 'e0'.")


class CreateLinksArgs(ToolArguments):
    links: list[LinkToCreate] = Field(
        min_length=1, max_length=100, description="The links to create, in order."
    )


async def create_links(ctx: ToolContext, args: CreateLinksArgs) -> dict[str, Any]:
    """Create each link; unknown nodes or ports and ports already in use fail alone. A lab
    that followed the drawing's layout is laid out again (`placement`), its moved nodes
    listed in `moved`."""
    report = ctx.reporter("create_links")
    keep_laid_out = follows_layout(await ctx.gns3.get_topology(ctx.project_id))
    results: list[dict[str, Any]] = []
    for request in args.links:
        asked = request.model_dump()
        if ctx.aborted:
            results.append({**asked, "status": "aborted", "error": "not created: aborted"})
            continue
        try:
            link = await ctx.until_aborted(
                ctx.gns3.create_link(
                    ctx.project_id, request.a, request.a_port, request.b, request.b_port
                )
            )
        except ToolAborted:
            results.append({**asked, "status": "aborted", "error": "not created: aborted"})
            continue
        except GNS3Error as exc:
            results.append({**asked, "status": "failed", "error": str(exc)})
            continue
        nodes = {node.node_id: node for node in await ctx.nodes()}
        if any(end.node_id not in nodes for end in link.nodes):
            nodes = {node.node_id: node for node in await ctx.nodes(refresh=True)}
        ends = " <-> ".join(resolve_link_end(end, nodes).to_text() for end in link.nodes)
        report(f"linked {ends}")
        results.append({**asked, "status": "success", "link": ends})
    answer: dict[str, Any] = {
        "status": summary_status([r["status"] for r in results]),
        "links": results,
    }
    if keep_laid_out and not ctx.aborted and any(r["status"] == "success" for r in results):
        moved = await relayout(ctx)
        if moved:
            answer["moved"] = sorted(moved, key=natural_key)
    return answer


SPECS = [
    ToolSpec(
        name="create_links",
        description=(
            "Connect node ports with links, e.g. PC1 e0 to Switch1 e0. Each port takes one "
            "link; a port already in use is reported with what it is linked to."
        ),
        args_model=CreateLinksArgs,
        run=create_links,
        changes_lab=True,
    )
]
