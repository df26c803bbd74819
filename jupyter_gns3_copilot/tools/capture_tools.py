"""Packet capture on a link: `start_capture`, `stop_capture`
and `analyze_capture`, which returns a short decoded table, never raw bytes."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import Field

from ..capture import CaptureError, analyze_pcap
from ..devices.captures import read_link_capture
from ..gns3 import LOCAL_COMPUTE, GNS3NotFound, Link
from .base import ToolArguments, ToolContext, ToolError, ToolSpec
from .link_tools import LinkEnds, find_link, link_text

log = logging.getLogger(__name__)

DEFAULT_PACKETS = 50
MAX_PACKETS = 1000
MAX_FILTER_CHARS = 300


class CaptureArgs(ToolArguments):
    link: LinkEnds = Field(description="The link, by both ends.")


class AnalyzeCaptureArgs(CaptureArgs):
    display_filter: str | None = Field(
        default=None,
        max_length=MAX_FILTER_CHARS,
        description="Wireshark display filter, e.g. 'arp or icmp'; omit for all.",
    )
    limit: int = Field(
        default=DEFAULT_PACKETS,
        ge=1,
        le=MAX_PACKETS,
        description="Most packets listed; counts cover all.",
    )


async def start_capture(ctx: ToolContext, args: CaptureArgs) -> dict[str, Any]:
    """Start capturing the link's packets (a node on the link must be started)."""
    link = await find_link(ctx, args.link)
    text = await link_text(ctx, link)
    if link.capturing:
        return {"status": "success", "link": text, "note": "the link was already being captured"}
    await ctx.until_aborted(ctx.gns3.start_capture(ctx.project_id, link.link_id))
    return {
        "status": "success",
        "link": text,
        "note": "capturing; generate traffic, then call analyze_capture (running or stopped)",
    }


async def stop_capture(ctx: ToolContext, args: CaptureArgs) -> dict[str, Any]:
    """Stop the link's capture; what was captured stays readable by analyze_capture,
    unless the link is on a remote compute (then the result says so)."""
    link = await find_link(ctx, args.link)
    text = await link_text(ctx, link)
    if not link.capturing:
        raise ToolError(f"{text} is not being captured.")
    await ctx.until_aborted(ctx.gns3.stop_capture(ctx.project_id, link.link_id))
    result = {"status": "success", "link": text}
    if await _on_remote_compute(ctx, link):
        result["note"] = (
            "the capture stays on the link's GNS3 compute: analyze_capture cannot read it"
        )
    return result


async def analyze_capture(ctx: ToolContext, args: AnalyzeCaptureArgs) -> dict[str, Any]:
    """Decode the link's latest capture (running or stopped) into a short table."""
    link = await find_link(ctx, args.link)
    text = await link_text(ctx, link)
    try:
        data = await ctx.until_aborted(read_link_capture(ctx.gns3, ctx.project_id, link))
    except GNS3NotFound as exc:
        if exc.kind != "capture":
            raise
        if link.capture_file_name and await _on_remote_compute(ctx, link):
            raise ToolError(
                f"The stopped capture of {text} stays on its GNS3 compute, out of reach; "
                "start the capture again and analyze it while it runs."
            ) from None
        raise ToolError(f"{text} has no packet capture; call start_capture first.") from None
    try:
        analysis, cut = await ctx.until_aborted(
            analyze_pcap(data, display_filter=args.display_filter, limit=args.limit)
        )
    except CaptureError as exc:
        raise ToolError(str(exc)) from None
    result: dict[str, Any] = {
        "status": "success",
        "link": text,
        "capturing": link.capturing,
        "decoder": analysis.decoder,
        "matched": analysis.matched,
        "shown": analysis.shown,
        "protocols": analysis.protocols,
        "columns": ["no", "time", "source", "destination", "protocol", "info"],
        "rows": [
            [row.no, row.time, row.source, row.destination, row.protocol, row.info]
            for row in analysis.packets
        ],
    }
    if args.display_filter:
        result["display_filter"] = args.display_filter
    if cut:
        result["note"] = "only the first part of the capture was analysed (size bound)"
    return result


async def _on_remote_compute(ctx: ToolContext, link: Link) -> bool:
    """True when a node of `link` is on a compute other than the controller's own (GNS3
    keeps a stopped capture on the compute; only `local`'s are in the project's files)."""
    ends = {end.node_id for end in link.nodes}
    return any(
        node.compute_id not in (None, LOCAL_COMPUTE)
        for node in await ctx.nodes()
        if node.node_id in ends
    )


SPECS = [
    ToolSpec(
        name="start_capture",
        description="Start a packet capture on a link (a node on it must run).",
        args_model=CaptureArgs,
        run=start_capture,
    ),
    ToolSpec(
        name="stop_capture",
        description="Stop a link's capture; it stays readable.",
        args_model=CaptureArgs,
        run=stop_capture,
    ),
    ToolSpec(
        name="analyze_capture",
        description="Decode a link's capture into a packet table and counts per protocol.",
        args_model=AnalyzeCaptureArgs,
        run=analyze_capture,
    ),
]
