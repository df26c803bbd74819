"""Links by node and port names: `create_links`, `delete_links`, `set_link_state`
(suspend / resume) and `set_link_filter` (packet loss, delay, jitter, corruption)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from pydantic import Field, model_validator

from ..gns3 import GNS3Error, Link
from ..gns3.links import link_filters
from ..gns3.topology import natural_key, resolve_link_end
from .base import ToolAborted, ToolArguments, ToolContext, ToolError, ToolSpec, summary_status
from .placement import follows_layout, relayout

MAX_LINKS = 100
"""Links one call may create, delete or change."""
MAX_FILTER_VALUE = 32767
"""GNS3's bound for delays and jitters in milliseconds."""


# An existing link by both ends. No docstring (it would become schema text) and short
# descriptions: this object recurs in seven tools' schemas, sent with every model call.
class LinkEnds(ToolArguments):
    a: str = Field(min_length=1, description="Node, e.g. 'PC1'.")
    a_port: str = Field(min_length=1, description="Port, e.g. 'e0'.")
    b: str = Field(min_length=1, description="Other node.")
    b_port: str = Field(min_length=1, description="Its port.")


class LinkToCreate(LinkEnds):
    a: str = Field(min_length=1, description="Node, e.g. 'PC1'.")
    a_port: str = Field(min_length=1, description="Port name or short name, e.g. 'e0', 'g0/0'.")
    b: str = Field(min_length=1, description="Other node.")
    b_port: str = Field(min_length=1, description="Its port.")


class CreateLinksArgs(ToolArguments):
    links: list[LinkToCreate] = Field(
        min_length=1, max_length=MAX_LINKS, description="Links to create."
    )


class LinksArgs(ToolArguments):
    links: list[LinkEnds] = Field(
        min_length=1,
        max_length=MAX_LINKS,
        description="Links, each named by both ends.",
    )


class LinkStateArgs(LinksArgs):
    state: Literal["up", "down"] = Field(
        description="'down' suspends the links (like a pulled cable), 'up' resumes them."
    )


class LinkFilterArgs(ToolArguments):
    link: LinkEnds = Field(description="The link, by both ends.")
    packet_loss: int = Field(default=0, ge=0, le=100, description="Loss %.")
    delay_ms: int = Field(default=0, ge=0, le=MAX_FILTER_VALUE, description="Delay ms.")
    jitter_ms: int = Field(
        default=0,
        ge=0,
        le=MAX_FILTER_VALUE,
        description="Jitter ms (+/-); needs delay_ms.",
    )
    corrupt: int = Field(default=0, ge=0, le=100, description="Corruption %.")

    @model_validator(mode="after")
    def _jitter_needs_delay(self) -> LinkFilterArgs:
        if self.jitter_ms and not self.delay_ms:
            raise ValueError("jitter_ms needs a delay_ms above 0")
        return self

    def filters(self) -> dict[str, list[int]]:
        """The GNS3 filters these arguments ask for (off ones left out)."""
        return link_filters(self.packet_loss, self.delay_ms, self.jitter_ms, self.corrupt)


async def link_text(ctx: ToolContext, link: Link) -> str:
    """The link as `PC1 e0 <-> Switch1 e0` (node names fetched again if one is new)."""
    nodes = {node.node_id: node for node in await ctx.nodes()}
    if any(end.node_id not in nodes for end in link.nodes):
        nodes = {node.node_id: node for node in await ctx.nodes(refresh=True)}
    return " <-> ".join(resolve_link_end(end, nodes).to_text() for end in link.nodes)


async def find_link(ctx: ToolContext, ends: LinkEnds) -> Link:
    """The project's link between the two named ports; `GNS3NotFound` naming what exists."""
    return await ctx.until_aborted(
        ctx.gns3.find_link(ctx.project_id, ends.a, ends.a_port, ends.b, ends.b_port)
    )


async def create_links(ctx: ToolContext, args: CreateLinksArgs) -> dict[str, Any]:
    """Create each link; unknown nodes or ports and ports already in use fail alone. A lab
    that followed the drawing's layout is laid out again (`placement`), its moved nodes
    listed in `moved`."""
    report = ctx.reporter("create_links")
    keep_laid_out = follows_layout(await ctx.gns3.get_topology(ctx.project_id))

    async def create(ends: LinkEnds) -> dict[str, Any]:
        link = await ctx.until_aborted(
            ctx.gns3.create_link(ctx.project_id, ends.a, ends.a_port, ends.b, ends.b_port)
        )
        text = await link_text(ctx, link)
        report(f"linked {text}")
        return {"link": text}

    answer = await _each_link(ctx, args.links, create, "created")
    created = any(r["status"] == "success" for r in answer["links"])
    if keep_laid_out and not ctx.aborted and created:
        moved = await relayout(ctx)
        if moved:
            answer["moved"] = sorted(moved, key=natural_key)
    return answer


async def delete_links(ctx: ToolContext, args: LinksArgs) -> dict[str, Any]:
    """Delete each link; an unknown link fails alone, listing the links that exist."""
    report = ctx.reporter("delete_links")

    async def delete(ends: LinkEnds) -> dict[str, Any]:
        link = await find_link(ctx, ends)
        text = await link_text(ctx, link)
        await ctx.until_aborted(ctx.gns3.delete_link(ctx.project_id, link.link_id))
        report(f"deleted {text}")
        return {"link": text}

    return await _each_link(ctx, args.links, delete, "deleted")


async def set_link_state(ctx: ToolContext, args: LinkStateArgs) -> dict[str, Any]:
    """Suspend ('down') or resume ('up') each link through GNS3's link suspend."""
    change = ctx.gns3.suspend_link if args.state == "down" else ctx.gns3.resume_link

    async def apply(ends: LinkEnds) -> dict[str, Any]:
        link = await find_link(ctx, ends)
        entry: dict[str, Any] = {"link": await link_text(ctx, link)}
        if not await ctx.until_aborted(ctx.gns3.link_filter_types(ctx.project_id, link.link_id)):
            raise ToolError(
                "GNS3 cannot suspend this link: neither end is a node type that filters "
                "traffic (e.g. two switches); suspend a link to a PC or router instead."
            )
        updated = await ctx.until_aborted(change(ctx.project_id, link.link_id))
        entry["state"] = "down" if updated.suspend else "up"
        if updated.filters and not updated.suspend:
            entry["filters"] = updated.filters
        return entry

    return await _each_link(ctx, args.links, apply, "changed")


async def set_link_filter(ctx: ToolContext, args: LinkFilterArgs) -> dict[str, Any]:
    """Set the link's packet filters to exactly the ones asked (all 0: remove them)."""
    link = await find_link(ctx, args.link)
    text = await link_text(ctx, link)
    available = await ctx.until_aborted(ctx.gns3.link_filter_types(ctx.project_id, link.link_id))
    filters = args.filters()
    missing = sorted(set(filters) - set(available))
    if missing:
        raise ToolError(
            f"GNS3 cannot apply {', '.join(missing)} on {text}"
            + (
                f" (it offers {', '.join(available)})."
                if available
                else ": neither end is a node type that filters traffic (e.g. two switches)."
            )
        )
    updated = await ctx.until_aborted(
        ctx.gns3.set_link_filters(ctx.project_id, link.link_id, filters)
    )
    result: dict[str, Any] = {
        "status": "success",
        "link": text,
        "filters": updated.filters,
        "state": "down" if updated.suspend else "up",
    }
    if updated.suspend:
        result["note"] = "the link is down (suspended); the filters apply once it is up"
    return result


async def _each_link(
    ctx: ToolContext,
    requests: Sequence[LinkEnds],
    action: Callable[[LinkEnds], Awaitable[dict[str, Any]]],
    done: str,
) -> dict[str, Any]:
    """Run `action` on each requested link in order; failures and aborts stay per link."""
    results: list[dict[str, Any]] = []
    for ends in requests:
        asked = ends.model_dump()
        if ctx.aborted:
            results.append({**asked, "status": "aborted", "error": f"not {done}: aborted"})
            continue
        try:
            entry = await action(ends)
        except ToolAborted:
            results.append({**asked, "status": "aborted", "error": f"not {done}: aborted"})
            continue
        except (GNS3Error, ToolError) as exc:
            results.append({**asked, "status": "failed", "error": str(exc)})
            continue
        results.append({**asked, "status": "success", **entry})
    return {"status": summary_status([r["status"] for r in results]), "links": results}


SPECS = [
    ToolSpec(
        name="create_links",
        description="Connect node ports, e.g. PC1 e0 to Switch1 e0; one link per port.",
        args_model=CreateLinksArgs,
        run=create_links,
        changes_lab=True,
    ),
    ToolSpec(
        name="delete_links",
        description="Delete links, each named by both ends.",
        args_model=LinksArgs,
        run=delete_links,
        changes_lab=True,
    ),
    ToolSpec(
        name="set_link_state",
        description="Take links down (like a pulled cable) or up again.",
        args_model=LinkStateArgs,
        run=set_link_state,
        changes_lab=True,
    ),
    ToolSpec(
        name="set_link_filter",
        description=(
            "Set a link's faults (loss, delay, jitter, corruption), replacing its filters; "
            "all 0 removes them."
        ),
        args_model=LinkFilterArgs,
        run=set_link_filter,
        changes_lab=True,
    ),
]
