"""`device_skills`: guidance per device type and topic from the skills library."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..console import ConsoleTargetError, DialectError
from .base import ToolArguments, ToolContext, ToolSpec


class DeviceSkillsArgs(ToolArguments):
    device_type: str | None = Field(
        default=None,
        description="'vpcs', 'cisco_ios'... or a node name; omit to list types.",
    )
    topic: str | None = Field(
        default=None,
        description="e.g. 'ospf', 'vlans'; omit to list topics.",
    )


async def device_skills(ctx: ToolContext, args: DeviceSkillsArgs) -> dict[str, Any]:
    """Index -> topics of a device type -> full guidance text."""
    device_type = args.device_type
    if device_type and ctx.skills.find_device_type(device_type) is None:
        node = (await ctx.lookup_nodes([device_type])).get(device_type)
        if node is not None:
            try:
                device_type = (await ctx.console_target(node)).dialect
            except (ConsoleTargetError, DialectError) as exc:
                return {
                    "status": "failed",
                    "error": f"Cannot tell the device type of node {node.name}: {exc}",
                    "device_types": ctx.skills.device_types(),
                }
    return ctx.skills.lookup(device_type, args.topic)


SPECS = [
    ToolSpec(
        name="device_skills",
        description=(
            "Guidance per device type and topic; read it before configuring or "
            "troubleshooting a device type you are unsure about."
        ),
        args_model=DeviceSkillsArgs,
        run=device_skills,
    )
]
