"""The topology of one GNS3 project (project, nodes, links) and its text rendering.

`Topology` holds GNS3's own objects and resolves each link's ends to node names and port
short names (`connections`). Everything it renders is deterministic: nodes sorted by name
(natural order, so PC2 comes before PC10), each link written from its lesser end, links
sorted; the same lab always gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, computed_field

from .models import Link, LinkEnd, Node, Project
from .svg import render_svg

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders embedded numbers numerically ("PC2" < "PC10"), case-insensitive."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.lower())
        for part in re.split(r"(\d+)", text)
        if part
    )


def single_line(text: str) -> str:
    """`text` with control characters (newlines, tabs...) replaced by spaces."""
    return _CONTROL_CHARS.sub(" ", text)


class ConnectionEnd(BaseModel):
    """A link end resolved to names: `port` is the port's short name (e.g. "e0").

    When GNS3 no longer knows the node or port, `node_name` is the node id and `port` is
    "adapter/port".
    """

    node_id: str
    node_name: str
    port: str
    adapter_number: int
    port_number: int

    def sort_key(self) -> tuple[object, ...]:
        """Natural order by node name, then port."""
        return (natural_key(self.node_name), natural_key(self.port), self.node_id)

    def to_text(self) -> str:
        """E.g. `PC1 e0`."""
        return f"{single_line(self.node_name)} {single_line(self.port)}"


class Connection(BaseModel):
    """A link with both ends resolved; `a` is the lesser end in natural name order."""

    link_id: str
    a: ConnectionEnd
    b: ConnectionEnd
    suspended: bool = False
    capturing: bool = False

    def to_text(self) -> str:
        """E.g. `PC1 e0 <-> Switch1 e0 [suspended]`."""
        markers = "".join(
            f" [{name}]"
            for name, on in (("suspended", self.suspended), ("capturing", self.capturing))
            if on
        )
        return f"{self.a.to_text()} <-> {self.b.to_text()}{markers}"


def resolve_link_end(end: LinkEnd, nodes_by_id: Mapping[str, Node]) -> ConnectionEnd:
    """`end` resolved to its node's name and port short name."""
    node = nodes_by_id.get(end.node_id)
    port = node.port_at(end.adapter_number, end.port_number) if node else None
    return ConnectionEnd(
        node_id=end.node_id,
        node_name=node.name if node else end.node_id,
        port=port.short_name if port else f"{end.adapter_number}/{end.port_number}",
        adapter_number=end.adapter_number,
        port_number=end.port_number,
    )


class Topology(BaseModel):
    """A project with its nodes and links: `Topology(project, nodes, links)`."""

    project: Project
    nodes: list[Node]
    links: list[Link]

    def __init__(
        self,
        project: Project,
        nodes: Iterable[Node] = (),
        links: Iterable[Link] = (),
        **ignored: Any,
    ) -> None:
        # `ignored` takes the computed `connections` when validating a dumped topology.
        super().__init__(project=project, nodes=list(nodes), links=list(links), **ignored)

    @property
    def sorted_nodes(self) -> list[Node]:
        """The nodes in natural name order."""
        return sorted(self.nodes, key=lambda n: (natural_key(n.name), n.name, n.node_id))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def connections(self) -> list[Connection]:
        """Every two-ended link, resolved to node names and port short names, sorted."""
        nodes_by_id = {node.node_id: node for node in self.nodes}
        connections = []
        for link in self.links:
            if len(link.nodes) != 2:
                continue
            a, b = sorted(
                (resolve_link_end(end, nodes_by_id) for end in link.nodes),
                key=ConnectionEnd.sort_key,
            )
            connections.append(
                Connection(
                    link_id=link.link_id,
                    a=a,
                    b=b,
                    suspended=link.suspend,
                    capturing=link.capturing,
                )
            )
        return sorted(connections, key=lambda c: (c.a.sort_key(), c.b.sort_key(), c.link_id))

    def to_text(self) -> str:
        """A compact, deterministic description for prompts and humans.

        A header (project name, status, counts), a node table (name, type, status, console)
        and one line per link such as `PC1 e0 <-> Switch1 e0`. Ends with a newline.
        """
        connections = self.connections
        status = self.project.status or "unknown"
        lines = [
            f"Project {single_line(self.project.name)} ({status}): "
            f"{_count(len(self.nodes), 'node')}, {_count(len(connections), 'link')}",
            "Nodes:",
        ]
        rows = [("NAME", "TYPE", "STATUS", "CONSOLE")] + [
            (single_line(n.name), n.node_type, n.status, n.console_endpoint or "-")
            for n in self.sorted_nodes
        ]
        if len(rows) == 1:
            lines.append("  (none)")
        else:
            widths = [max(len(row[i]) for row in rows) for i in range(3)]
            for name, node_type, node_status, console in rows:
                lines.append(
                    f"  {name.ljust(widths[0])}  {node_type.ljust(widths[1])}  "
                    f"{node_status.ljust(widths[2])}  {console}"
                )
        lines.append("Links:")
        lines.extend(f"  {c.to_text()}" for c in connections)
        if not connections:
            lines.append("  (none)")
        return "\n".join(lines) + "\n"

    def to_svg(self) -> str:
        """A self-contained SVG drawing of the lab (see `svg.render_svg`)."""
        return render_svg(self)

    def to_dict(self) -> dict[str, object]:
        """JSON-compatible dict: project, nodes, links and the resolved `connections`."""
        return self.model_dump(mode="json")

    def to_json(self) -> str:
        """`to_dict()` as indented JSON."""
        return self.model_dump_json(indent=2)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
