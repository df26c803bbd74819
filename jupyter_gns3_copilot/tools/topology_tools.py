"""Reading the lab: `get_topology` and `list_templates`."""

from __future__ import annotations

from typing import Any

from ..console import DialectError, resolve_dialect
from ..console.dialects import NODE_TYPE_DIALECTS
from ..gns3 import Node, Template
from ..gns3.topology import natural_key
from .base import NoArguments, ToolContext, ToolSpec


def node_dialect(node: Node, template: Template | None) -> str | None:
    """The console dialect of `node` (`vpcs`, `cisco_ios`, `frr`, `linux`), None when
    unknown; `template`: its template, whose tags, usage notes and `netmiko_device_type`
    may tell it (see `resolve_dialect`)."""
    if node.console_type != "telnet":
        return None
    try:
        return resolve_dialect(
            node.node_type,
            tags=node.tags,
            properties=node.properties,
            inherited=template.notes if template is not None else (),
            netmiko_device_types=(
                node.netmiko_device_type,
                template.netmiko_device_type if template is not None else None,
            ),
        ).name
    except DialectError:
        return None


async def get_topology(ctx: ToolContext, args: NoArguments) -> dict[str, Any]:
    """The project as compact text plus structured nodes and links."""
    topology = await ctx.until_aborted(ctx.gns3.get_topology(ctx.project_id))
    ctx.remember_nodes(topology.nodes)
    nodes = [
        {
            "name": node.name,
            "type": node.node_type,
            "status": node.status,
            "console": node.console_endpoint,
            "dialect": node_dialect(node, await ctx.template(node)),
            "ports": [port.short_name for port in node.ports],
            "x": node.x,
            "y": node.y,
        }
        for node in topology.sorted_nodes
    ]
    links: list[dict[str, Any]] = []
    for connection in topology.connections:
        link: dict[str, Any] = {
            "a": connection.a.node_name,
            "a_port": connection.a.port,
            "b": connection.b.node_name,
            "b_port": connection.b.port,
        }
        if connection.suspended:
            link["suspended"] = True
        links.append(link)
    return {
        "project": topology.project.name,
        "text": topology.to_text(),
        "nodes": nodes,
        "links": links,
    }


async def list_templates(ctx: ToolContext, args: NoArguments) -> dict[str, Any]:
    """The node templates, with the console dialect their nodes speak when known."""
    templates = await ctx.until_aborted(ctx.gns3.list_templates())
    return {
        "templates": [
            {
                "name": template.name,
                "template_id": template.template_id,
                "type": template.template_type,
                "category": template.category,
                "dialect": NODE_TYPE_DIALECTS.get(template.template_type),
            }
            for template in sorted(templates, key=lambda t: natural_key(t.name))
        ]
    }


SPECS = [
    ToolSpec(
        name="get_topology",
        description=(
            "Read the lab in full: nodes (type, status, console dialect, ports, position) "
            "and links."
        ),
        args_model=NoArguments,
        run=get_topology,
    ),
    ToolSpec(
        name="list_templates",
        description=(
            "List the templates nodes are created from (name, id, type, console dialect)."
        ),
        args_model=NoArguments,
        run=list_templates,
    ),
]
