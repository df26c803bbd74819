"""`NodeCalls`: GNS3 templates and nodes (look up by name, create from a template with a
name, rename and update, delete, start / stop / suspend / reload one or all).

A QEMU node whose kernel command line carries a `hostname=` argument (the lab kit's
routers: their init names the host after it, so the console prompt is `R1#`) gets its
own name there when it is created or renamed (`named_command_line`);
`with_kernel_argument` sets or takes out any other `name=value` argument (an interface's
MTU, `mtu.eth1=1400`, read by the same init at boot).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .connection import names_text
from .errors import GNS3Conflict, GNS3Error, GNS3NotFound
from .models import Node, Template
from .projects import ProjectCalls
from .topology import natural_key

_HOSTNAME_ARGUMENT = re.compile(r"(?<!\S)hostname=\S*")
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.\-]{0,62}")


def named_command_line(node: Node) -> str | None:
    """`node`'s kernel command line with its `hostname=` argument set to the node's name;
    None when it has no such argument, already names the node, or the name is no host
    name (`R1`, `core-2`: letters, digits, dots and dashes)."""
    line = node.properties.get("kernel_command_line")
    if not isinstance(line, str) or not _HOST_NAME.fullmatch(node.name):
        return None
    named = _HOSTNAME_ARGUMENT.sub(f"hostname={node.name}", line)
    return named if named != line else None


def with_kernel_argument(line: str, name: str, value: str | None) -> str:
    """The kernel command line `line` with its `name=` argument set to `value` (added at
    the end when missing), or taken out when `value` is None."""
    argument = re.compile(rf"(?<!\S){re.escape(name)}=\S*")
    kept = " ".join(word for word in line.split() if not argument.fullmatch(word))
    return kept if value is None else f"{kept} {name}={value}".strip()


class NodeCalls(ProjectCalls):
    """The template and node part of `GNS3Client`."""

    # -- templates ---------------------------------------------------------------------

    async def list_templates(self) -> list[Template]:
        """All node templates (builtin ones such as "VPCS" and "Ethernet switch" included)."""
        return [Template.model_validate(t) for t in await self.request_json("GET", "/templates")]

    async def find_template(self, template: str) -> Template:
        """The template whose id, name or template_type is `template` (case-insensitive).

        A name match wins over a type match; among several templates of one type, builtin
        ones come first, then by name. Raises `GNS3NotFound` listing the template names.
        """
        templates = await self.list_templates()
        wanted = template.strip().lower()
        for matches in (
            [t for t in templates if t.template_id == template],
            [t for t in templates if t.name.lower() == wanted],
            sorted(
                (t for t in templates if t.template_type.lower() == wanted),
                key=lambda t: (not t.builtin, natural_key(t.name)),
            ),
        ):
            if matches:
                return matches[0]
        raise GNS3NotFound(
            f"No GNS3 template named '{template}'. "
            f"Templates: {names_text([t.name for t in templates])}.",
            kind="template",
            name=template,
            available=sorted((t.name for t in templates), key=natural_key),
        )

    # -- nodes -------------------------------------------------------------------------

    def _node_path(self, project_id: str, node_id: str, action: str = "") -> str:
        self.check_id("project", project_id)
        self.check_id("node", node_id)
        return f"/projects/{project_id}/nodes/{node_id}{action}"

    async def list_nodes(self, project_id: str) -> list[Node]:
        """The nodes of a project."""
        self.check_id("project", project_id)
        data = await self.request_json(
            "GET", f"/projects/{project_id}/nodes", subjects=[("project", project_id)]
        )
        return [Node.model_validate(n) for n in data]

    async def get_node(self, project_id: str, node_id: str) -> Node:
        """One node by id."""
        data = await self.request_json(
            "GET",
            self._node_path(project_id, node_id),
            subjects=[("project", project_id), ("node", node_id)],
        )
        return Node.model_validate(data)

    async def find_node(self, project_id: str, node: str) -> Node:
        """The node whose id or name is `node` (exact name, else the only case-insensitive one).

        Raises `GNS3NotFound` naming the project and listing its node names.
        """
        return await self._pick_node(project_id, await self.list_nodes(project_id), node)

    async def _pick_node(self, project_id: str, nodes: Sequence[Node], node: str) -> Node:
        for matches in (
            [n for n in nodes if n.node_id == node],
            [n for n in nodes if n.name == node],
            [n for n in nodes if n.name.lower() == node.lower()],
        ):
            if len(matches) == 1:
                return matches[0]
        project = await self.get_project(project_id)
        names = [n.name for n in nodes]
        raise GNS3NotFound(
            f"No node named '{node}' in project {project.name}. Nodes: {names_text(names)}.",
            kind="node",
            name=node,
            available=sorted(names, key=natural_key),
        )

    async def create_node_from_template(
        self,
        project_id: str,
        template: str | Template,
        name: str | None = None,
        x: int = 0,
        y: int = 0,
        *,
        compute_id: str = "local",
    ) -> Node:
        """Add a node made from `template` (a Template, or its id, name or type) at x/y.

        Without `name` GNS3 picks one from the template (PC1, PC2...). GNS3 3.0 ignores a
        name at creation, so the node is renamed right after; GNS3 removes spaces from
        names. A `hostname=` kernel argument gets the node's name (module docstring).
        Raises `GNS3Conflict` when the project already has a node named `name`.
        """
        self.check_id("project", project_id)
        if not isinstance(template, Template):
            template = await self.find_template(template)
        if name is not None:
            existing = [n.name for n in await self.list_nodes(project_id)]
            if name in existing:
                raise GNS3Conflict(
                    f"Project already has a node named {name}; node names must be unique.",
                    detail=f"existing nodes: {names_text(existing)}",
                )
        data = await self.request_json(
            "POST",
            f"/projects/{project_id}/templates/{template.template_id}",
            json={"x": x, "y": y, "compute_id": compute_id},
            subjects=[("project", project_id), ("template", template.name)],
        )
        node = Node.model_validate(data)
        try:
            if name is not None and node.name != name:
                return await self.update_node(project_id, node.node_id, name=name)
            return await self._name_host(project_id, node)
        except GNS3Error:
            await self.delete_node(project_id, node.node_id)
            raise

    async def _name_host(self, project_id: str, node: Node) -> Node:
        """`node`, its `hostname=` kernel argument set to its name first if it has one."""
        line = named_command_line(node)
        if line is None:
            return node
        return await self.update_node(
            project_id, node.node_id, properties={"kernel_command_line": line}
        )

    async def update_node(
        self,
        project_id: str,
        node_id: str,
        *,
        name: str | None = None,
        x: int | None = None,
        y: int | None = None,
        z: int | None = None,
        locked: bool | None = None,
        properties: dict[str, Any] | None = None,
    ) -> Node:
        """Change the given fields of a node (rename, move...) and return it updated.

        Renaming a started VPCS/router gives `GNS3Conflict` with GNS3's message; switches
        and hubs can be renamed while started. A renamed node's `hostname=` kernel argument
        follows its new name (module docstring).
        """
        changes = {
            key: value
            for key, value in (
                ("name", name),
                ("x", x),
                ("y", y),
                ("z", z),
                ("locked", locked),
                ("properties", properties),
            )
            if value is not None
        }
        data = await self.request_json(
            "PUT",
            self._node_path(project_id, node_id),
            json=changes,
            subjects=[("project", project_id), ("node", node_id)],
        )
        node = Node.model_validate(data)
        return await self._name_host(project_id, node) if name is not None else node

    async def delete_node(self, project_id: str, node_id: str) -> None:
        """Delete a node and its links."""
        await self.request(
            "DELETE",
            self._node_path(project_id, node_id),
            subjects=[("project", project_id), ("node", node_id)],
        )

    async def _node_action(self, project_id: str, node_id: str, action: str) -> None:
        await self.request(
            "POST",
            self._node_path(project_id, node_id, f"/{action}"),
            json={},
            subjects=[("project", project_id), ("node", node_id)],
        )

    async def start_node(self, project_id: str, node_id: str) -> None:
        """Start a node. The call returns once GNS3 has started it, not when it has booted."""
        await self._node_action(project_id, node_id, "start")

    async def stop_node(self, project_id: str, node_id: str) -> None:
        """Stop a node."""
        await self._node_action(project_id, node_id, "stop")

    async def suspend_node(self, project_id: str, node_id: str) -> None:
        """Suspend a node (VPCS accepts it but stays "started")."""
        await self._node_action(project_id, node_id, "suspend")

    async def reload_node(self, project_id: str, node_id: str) -> None:
        """Reload (restart) a node."""
        await self._node_action(project_id, node_id, "reload")

    async def start_all(self, project_id: str) -> None:
        """Start every node of the project."""
        self.check_id("project", project_id)
        await self.request(
            "POST", f"/projects/{project_id}/nodes/start", subjects=[("project", project_id)]
        )

    async def stop_all(self, project_id: str) -> None:
        """Stop every node of the project."""
        self.check_id("project", project_id)
        await self.request(
            "POST", f"/projects/{project_id}/nodes/stop", subjects=[("project", project_id)]
        )
