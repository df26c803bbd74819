"""`LinkCalls`: GNS3 links, named by their nodes and ports (create, find, delete), their
suspension and packet filters."""

from __future__ import annotations

import asyncio
from typing import Any

from .errors import GNS3Conflict, GNS3NotFound
from .models import Link, LinkEnd, Node, Port, Project
from .nodes import NodeCalls
from .topology import Topology, resolve_link_end

_NO_OP_FILTER = {"frequency_drop": ["0"]}
"""A packet filter that drops nothing; as a string, because GNS3's controller discards a
filter whose first value is the number 0 (see `GNS3Client._update_link`)."""


def link_filters(
    packet_loss: int = 0, delay_ms: int = 0, jitter_ms: int = 0, corrupt: int = 0
) -> dict[str, list[int]]:
    """GNS3's packet filters for these values, the ones at 0 left out (as GNS3 drops them):
    `packet_loss` [percent], `delay` [ms, jitter ms], `corrupt` [percent]."""
    filters: dict[str, list[int]] = {}
    if packet_loss:
        filters["packet_loss"] = [packet_loss]
    if delay_ms:
        filters["delay"] = [delay_ms, jitter_ms]
    if corrupt:
        filters["corrupt"] = [corrupt]
    return filters


def _is_port(end: LinkEnd, node: Node, port: Port) -> bool:
    return (end.node_id, end.adapter_number, end.port_number) == (
        node.node_id,
        port.adapter_number,
        port.port_number,
    )


class LinkCalls(NodeCalls):
    """The link part of `GNS3Client`."""

    # -- links -------------------------------------------------------------------------

    def _link_path(self, project_id: str, link_id: str, action: str = "") -> str:
        self.check_id("project", project_id)
        self.check_id("link", link_id)
        return f"/projects/{project_id}/links/{link_id}{action}"

    async def list_links(self, project_id: str) -> list[Link]:
        """The links of a project."""
        self.check_id("project", project_id)
        data = await self.request_json(
            "GET", f"/projects/{project_id}/links", subjects=[("project", project_id)]
        )
        return [Link.model_validate(link) for link in data]

    async def get_link(self, project_id: str, link_id: str) -> Link:
        """One link by id."""
        data = await self.request_json(
            "GET",
            self._link_path(project_id, link_id),
            subjects=[("project", project_id), ("link", link_id)],
        )
        return Link.model_validate(data)

    async def create_link(
        self, project_id: str, a_node: str, a_port: str, b_node: str, b_port: str
    ) -> Link:
        """Link port `a_port` of node `a_node` to port `b_port` of node `b_node`.

        Nodes are given by name (or id), ports by name or short name, case-insensitively
        ("e0", "Ethernet0", "eth0"). Raises `GNS3NotFound` for an unknown node or port (the
        error lists the node's ports) and `GNS3Conflict` when a port is already linked.
        """
        nodes, links = await asyncio.gather(
            self.list_nodes(project_id), self.list_links(project_id)
        )
        ends: list[tuple[Node, Port]] = []
        for node_ref, port_ref in ((a_node, a_port), (b_node, b_port)):
            node = await self._pick_node(project_id, nodes, node_ref)
            ends.append((node, node.find_port(port_ref)))
        nodes_by_id = {n.node_id: n for n in nodes}
        for node, port in ends:
            for link in links:
                if any(_is_port(end, node, port) for end in link.nodes):
                    peers = [
                        resolve_link_end(end, nodes_by_id).to_text()
                        for end in link.nodes
                        if not _is_port(end, node, port)
                    ]
                    raise GNS3Conflict(
                        f"{node.name} {port.short_name} is already linked"
                        f"{' to ' + ', '.join(peers) if peers else ''}; "
                        "delete that link first or pick a free port.",
                        detail=f"link {link.link_id}",
                    )
        return await self._post_link(
            project_id,
            [(node.node_id, port.adapter_number, port.port_number) for node, port in ends],
        )

    async def _post_link(self, project_id: str, ends: list[tuple[str, int, int]]) -> Link:
        """A new link between the ports `ends` (node id, adapter number, port number)."""
        data = await self.request_json(
            "POST",
            f"/projects/{project_id}/links",
            json={
                "nodes": [
                    {"node_id": node_id, "adapter_number": adapter, "port_number": port}
                    for node_id, adapter, port in ends
                ]
            },
            subjects=[("project", project_id)],
        )
        return Link.model_validate(data)

    async def delete_link(self, project_id: str, link_id: str) -> None:
        """Delete a link."""
        await self.request(
            "DELETE",
            self._link_path(project_id, link_id),
            subjects=[("project", project_id), ("link", link_id)],
        )

    async def find_link(
        self, project_id: str, a_node: str, a_port: str, b_node: str, b_port: str
    ) -> Link:
        """The link between port `a_port` of `a_node` and port `b_port` of `b_node` (in
        either order), named as `create_link` takes them.

        Raises `GNS3NotFound` for an unknown node or port, and (kind "link") when no link
        joins the two ports, listing the project's links (`PC1 e0 <-> Switch1 e0`).
        """
        nodes, links = await asyncio.gather(
            self.list_nodes(project_id), self.list_links(project_id)
        )
        wanted = set()
        for node_ref, port_ref in ((a_node, a_port), (b_node, b_port)):
            node = await self._pick_node(project_id, nodes, node_ref)
            port = node.find_port(port_ref)
            wanted.add((node.node_id, port.adapter_number, port.port_number))
        for link in links:
            if {(e.node_id, e.adapter_number, e.port_number) for e in link.nodes} == wanted:
                return link
        project = Project(project_id=project_id, name="")
        existing = [c.to_text() for c in Topology(project, nodes, links).connections]
        asked = f"{a_node} {a_port} and {b_node} {b_port}"
        raise GNS3NotFound(
            f"No link between {asked}. Links: {'; '.join(existing) or 'none'}.",
            kind="link",
            name=asked,
            available=existing,
        )

    async def _put_link(self, project_id: str, link_id: str, changes: dict[str, Any]) -> Link:
        data = await self.request_json(
            "PUT",
            self._link_path(project_id, link_id),
            json=changes,
            subjects=[("project", project_id), ("link", link_id)],
        )
        return Link.model_validate(data)

    async def _update_link(self, project_id: str, link_id: str, changes: dict[str, Any]) -> Link:
        """PUT `changes` (`suspend`, `filters`) to the link, so that the node applying the
        link's filters ends with no filter when the link ends with none.

        GNS3 3.0.6's compute ignores a NIO update whose filters are empty (VPCS and
        others keep the previous ones: resuming a link or removing its last filter left
        the drop or loss filter in place). Then the link first gets `_NO_OP_FILTER`, a
        filter that drops nothing, which the compute applies, and then no filter: the
        controller reports none and the compute keeps the no-op until the link is
        created again (project reopened).
        """
        before = await self.get_link(project_id, link_id)
        suspended = changes.get("suspend", before.suspend)
        filters = changes.get("filters", before.filters)
        if not suspended and not filters and (before.suspend or before.filters):
            await self._put_link(project_id, link_id, {**changes, "filters": _NO_OP_FILTER})
            changes = {"filters": {}}
        return await self._put_link(project_id, link_id, changes)

    async def suspend_link(self, project_id: str, link_id: str) -> Link:
        """Suspend a link (no traffic crosses it until resumed)."""
        return await self._update_link(project_id, link_id, {"suspend": True})

    async def resume_link(self, project_id: str, link_id: str) -> Link:
        """Resume a suspended link (its packet filters, if any, apply again); the link
        as it is now, whose id may differ.

        GNS3 3.0.6's compute never clears a QEMU port's suspension once set (it copies
        `suspend` into the port only when true, and turns the guest's link off again at
        every update), so a suspended link to a QEMU node (a router) is cabled again
        instead: deleted and created between the same ports, with the same filters.
        """
        link = await self.get_link(project_id, link_id)
        if not link.suspend or not await self._touches_qemu(project_id, link):
            return await self._update_link(project_id, link_id, {"suspend": False})
        await self.delete_link(project_id, link_id)
        cabled = await self._post_link(
            project_id, [(e.node_id, e.adapter_number, e.port_number) for e in link.nodes]
        )
        if link.filters:
            return await self._put_link(project_id, cabled.link_id, {"filters": link.filters})
        return cabled

    async def _touches_qemu(self, project_id: str, link: Link) -> bool:
        ends = {end.node_id for end in link.nodes}
        nodes = await self.list_nodes(project_id)
        return any(n.node_type == "qemu" for n in nodes if n.node_id in ends)

    async def set_link_filters(
        self, project_id: str, link_id: str, filters: dict[str, list[int]]
    ) -> Link:
        """Replace the link's packet filters by `filters` (`{}` removes them all), e.g.
        `{"packet_loss": [30], "delay": [100, 10]}`: GNS3's types `frequency_drop`
        [N], `packet_loss` [percent], `delay` [ms, jitter ms], `corrupt` [percent]. GNS3
        drops a filter whose first value is 0. A suspended link keeps dropping everything
        until resumed; its filters apply then.
        """
        return await self._update_link(project_id, link_id, {"filters": filters})

    async def link_filter_types(self, project_id: str, link_id: str) -> list[str]:
        """The filter types GNS3 can apply on this link: none when neither end is a node
        type that filters (e.g. a link between two Ethernet switches), and then a
        suspend has no effect on traffic either."""
        data = await self.request_json(
            "GET",
            self._link_path(project_id, link_id, "/available_filters"),
            subjects=[("project", project_id), ("link", link_id)],
        )
        return [str(item["type"]) for item in data]
