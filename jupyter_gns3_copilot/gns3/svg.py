"""SVG drawing of a topology, laid out from the nodes' GNS3 scene positions.

The output is one self-contained `<svg>` element: no scripts, no external resources, no
`<style>` element (inline SVG in a notebook would leak it into the page), only
presentation attributes. Nodes are drawn at their GNS3 x/y (top-left corner) shifted into a
viewBox with a margin; switches and hubs are boxes, other nodes circles, outlined and tinted
by status (started green, stopped red, suspended amber, anything else grey). Links are lines
between node centres (dashed when suspended) with port short names near each end. A legend
explains the colours. The same topology always gives the same bytes.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import Node
    from .topology import Topology

DEFAULT_NODE_SIZE = 60
MARGIN = 40
TITLE_HEIGHT = 28
LEGEND_HEIGHT = 36
MIN_WIDTH = 440
NAME_GAP = 16
NAME_CHAR_WIDTH = 7.0
TITLE_CHAR_WIDTH = 8.5
PORT_LABEL_GAP = 12

STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "started": ("#2e7d32", "#e8f5e9"),
    "stopped": ("#c62828", "#ffebee"),
    "suspended": ("#f9a825", "#fff8e1"),
}
"""Node status -> (outline colour, fill tint)."""
UNKNOWN_STATUS_COLOURS = ("#757575", "#f5f5f5")
LINK_COLOUR = "#546e7a"
SUSPENDED_DASH = "6 4"

_BOX_NODE_TYPES = frozenset({"ethernet_switch", "ethernet_hub", "frame_relay_switch", "atm_switch"})
_TYPE_LABELS = {
    "ethernet_switch": "switch",
    "ethernet_hub": "hub",
    "frame_relay_switch": "FR switch",
    "atm_switch": "ATM switch",
}
# Characters XML 1.0 forbids even when escaped.
_INVALID_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _esc(text: str) -> str:
    return html.escape(_INVALID_XML_CHARS.sub("", text), quote=True)


def _num(value: float) -> str:
    text = f"{value + 0.0:.1f}"
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class _Box:
    """A node's rectangle in SVG coordinates."""

    x: float
    y: float
    width: float
    height: float
    name_half_width: float

    @property
    def cx(self) -> float:
        return self.x + self.width / 2

    @property
    def cy(self) -> float:
        return self.y + self.height / 2

    @property
    def radius(self) -> float:
        return max(self.width, self.height) / 2

    def name_covers(self, x: float, y: float) -> bool:
        """Whether a port label centred near x/y would overlap the node's name below it."""
        baseline = self.y + self.height + NAME_GAP
        return abs(x - self.cx) < self.name_half_width + 10 and baseline - 18 < y < baseline + 9


def _size(node: Node) -> tuple[int, int]:
    return (node.width or DEFAULT_NODE_SIZE, node.height or DEFAULT_NODE_SIZE)


def _name_half_width(node: Node) -> float:
    return len(node.name) * NAME_CHAR_WIDTH / 2


def _horizontal_extent(node: Node) -> tuple[float, float]:
    """Left and right edges of the node together with its name written below it."""
    width = _size(node)[0]
    half = max(width / 2, _name_half_width(node))
    return node.x + width / 2 - half, node.x + width / 2 + half


def render_svg(topology: Topology) -> str:
    """Draw `topology` as a standalone SVG document (a string starting with `<svg`)."""
    nodes = topology.sorted_nodes
    project = topology.project
    title = f"{project.name} ({project.status or 'unknown'})"
    if nodes:
        left = min(_horizontal_extent(n)[0] for n in nodes)
        right = max(_horizontal_extent(n)[1] for n in nodes)
        top = min(n.y for n in nodes)
        bottom = max(n.y + _size(n)[1] + NAME_GAP + 4 for n in nodes)
    else:
        left, right, top, bottom = 0.0, 200.0, 0.0, 40.0
    width = max(right - left + 2 * MARGIN, MIN_WIDTH, len(title) * TITLE_CHAR_WIDTH + 32)
    height = TITLE_HEIGHT + (bottom - top) + 2 * MARGIN + LEGEND_HEIGHT
    shift_x = (width - (right - left)) / 2 - left
    shift_y = TITLE_HEIGHT + MARGIN - top
    boxes = {
        n.node_id: _Box(n.x + shift_x, n.y + shift_y, *_size(n), _name_half_width(n)) for n in nodes
    }

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
        f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
        f'font-family="sans-serif" role="img" aria-label="{_esc("GNS3 topology " + title)}">',
        f"<title>{_esc('GNS3 topology ' + title)}</title>",
        f'<rect x="0" y="0" width="{_num(width)}" height="{_num(height)}" fill="#ffffff"/>',
        '<text x="16" y="22" font-size="14" font-weight="bold" fill="#212121">'
        f"{_esc(title)}</text>",
    ]
    if not nodes:
        parts.append(
            f'<text x="{_num(width / 2)}" y="{_num(TITLE_HEIGHT + MARGIN + 20)}" '
            'text-anchor="middle" font-size="12" fill="#757575">No nodes in this project</text>'
        )
    parts.extend(_links(topology, boxes))
    parts.extend(_nodes(nodes, boxes))
    parts.extend(_port_labels(topology, boxes))
    parts.extend(_legend(height - LEGEND_HEIGHT / 2))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _links(topology: Topology, boxes: dict[str, _Box]) -> list[str]:
    parts = ['<g class="links">']
    for connection in topology.connections:
        a, b = boxes.get(connection.a.node_id), boxes.get(connection.b.node_id)
        if a is None or b is None:
            continue
        dash = f' stroke-dasharray="{SUSPENDED_DASH}"' if connection.suspended else ""
        parts.append(
            f'<g class="link" data-link-id="{_esc(connection.link_id)}">'
            f'<line x1="{_num(a.cx)}" y1="{_num(a.cy)}" x2="{_num(b.cx)}" y2="{_num(b.cy)}" '
            f'stroke="{LINK_COLOUR}" stroke-width="2"{dash}/>'
            f"<title>{_esc(connection.to_text())}</title></g>"
        )
    parts.append("</g>")
    return parts


def _nodes(nodes: list[Node], boxes: dict[str, _Box]) -> list[str]:
    parts = ['<g class="nodes">']
    for node in nodes:
        box = boxes[node.node_id]
        outline, fill = STATUS_COLOURS.get(node.status, UNKNOWN_STATUS_COLOURS)
        paint = f'fill="{fill}" stroke="{outline}" stroke-width="3"'
        if node.node_type in _BOX_NODE_TYPES:
            shape = (
                f'<rect x="{_num(box.x)}" y="{_num(box.y)}" width="{_num(box.width)}" '
                f'height="{_num(box.height)}" rx="6" {paint}/>'
            )
        else:
            shape = (
                f'<ellipse cx="{_num(box.cx)}" cy="{_num(box.cy)}" rx="{_num(box.width / 2)}" '
                f'ry="{_num(box.height / 2)}" {paint}/>'
            )
        console = f", console {node.console_endpoint}" if node.console_endpoint else ""
        parts.append(
            f'<g class="node" data-node-id="{_esc(node.node_id)}" '
            f'data-status="{_esc(node.status)}">'
            f"<title>{_esc(f'{node.name} ({node.node_type}, {node.status}{console})')}</title>"
            f"{shape}"
            f'<text x="{_num(box.cx)}" y="{_num(box.cy + 4)}" text-anchor="middle" '
            f'font-size="10" fill="#424242">'
            f"{_esc(_TYPE_LABELS.get(node.node_type, node.node_type))}</text>"
            f'<text x="{_num(box.cx)}" y="{_num(box.y + box.height + NAME_GAP)}" '
            f'text-anchor="middle" font-size="12" font-weight="bold" fill="#212121">'
            f"{_esc(node.name)}</text></g>"
        )
    parts.append("</g>")
    return parts


def _label_point(near: _Box, far: _Box) -> tuple[float, float]:
    """Where to write the port name of the end at `near`: on the line, just outside the
    node and clear of its name, but never past 45% of the line."""
    dx, dy = far.cx - near.cx, far.cy - near.cy
    length = (dx * dx + dy * dy) ** 0.5
    if length == 0:
        return near.cx, near.y - PORT_LABEL_GAP / 2
    distance = near.radius + PORT_LABEL_GAP
    while distance < 0.45 * length and near.name_covers(
        near.cx + dx * distance / length, near.cy + dy * distance / length + 3
    ):
        distance += 4
    t = min(0.45, distance / length)
    return near.cx + dx * t, near.cy + dy * t + 3


def _port_labels(topology: Topology, boxes: dict[str, _Box]) -> list[str]:
    parts = ['<g class="port-labels">']
    for connection in topology.connections:
        a, b = boxes.get(connection.a.node_id), boxes.get(connection.b.node_id)
        if a is None or b is None:
            continue
        for end, near, far in ((connection.a, a, b), (connection.b, b, a)):
            x, y = _label_point(near, far)
            parts.append(
                f'<text class="port-label" x="{_num(x)}" y="{_num(y)}" text-anchor="middle" '
                'font-size="10" fill="#263238" stroke="#ffffff" stroke-width="3" '
                f'paint-order="stroke">{_esc(end.port)}</text>'
            )
    parts.append("</g>")
    return parts


def _legend(baseline_y: float) -> list[str]:
    parts = ['<g class="legend">']
    x = 16.0
    for status, (outline, fill) in STATUS_COLOURS.items():
        parts.append(
            f'<circle cx="{_num(x + 6)}" cy="{_num(baseline_y)}" r="6" fill="{fill}" '
            f'stroke="{outline}" stroke-width="3"/>'
            f'<text x="{_num(x + 18)}" y="{_num(baseline_y + 4)}" font-size="11" '
            f'fill="#424242">{status}</text>'
        )
        x += 96
    parts.append(
        f'<line x1="{_num(x)}" y1="{_num(baseline_y)}" x2="{_num(x + 28)}" '
        f'y2="{_num(baseline_y)}" stroke="{LINK_COLOUR}" stroke-width="2" '
        f'stroke-dasharray="{SUSPENDED_DASH}"/>'
        f'<text x="{_num(x + 36)}" y="{_num(baseline_y + 4)}" font-size="11" '
        'fill="#424242">suspended link</text>'
    )
    parts.append("</g>")
    return parts


def text_note_svg(text: str, *, font_size: int = 12) -> str:
    """A GNS3 text drawing: `text` (one line per line of text) in a sized `<svg>`."""
    lines = text.splitlines() or [""]
    line_height = round(font_size * 1.4)
    width = max(len(line) for line in lines) * round(font_size * 0.6) + 8
    height = len(lines) * line_height + 4
    spans = "".join(
        f'<tspan x="0" dy="{line_height if i else font_size}">{_esc(line)}</tspan>'
        for i, line in enumerate(lines)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
        f'<text font-family="sans-serif" font-size="{font_size}" fill="#000000">{spans}</text>'
        "</svg>"
    )
