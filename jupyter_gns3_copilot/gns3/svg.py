"""SVG drawing of a topology, laid out from its graph (`layout.py`), themed for JupyterLab.

The output is one self-contained `<svg>` element: no scripts, no external resources, no
`<style>` element (inline SVG in a notebook would leak it into the page). Node centres come
from `layout.layout` (a switch with its hosts as a star, no link through a node), the same
positions `create_nodes` gives GNS3. Switches and hubs are boxes, other nodes circles,
outlined by status (started green, stopped red, suspended amber, anything else grey) and
tinted with that colour at low opacity. Links are lines between node centres (dashed when
suspended); each end's port short name sits on its link near that end, moved along the
link (or beside it) until it overlaps no other label, node or name. A legend explains the
colours. The same topology always gives the same bytes.

Theme: colours that must follow the page (background, text, label halo) are `style`
properties with JupyterLab's CSS variables and a light fallback, e.g.
`fill: var(--jp-layout-color1, #ffffff)` (a presentation attribute cannot hold `var()`).
Inline in the page (HTML output, the sidebar's DOM) the drawing takes the theme's colours,
dark included; as an `<img>` (JupyterLab's `image/svg+xml` renderer, a file) variables do
not reach it and it shows the fallbacks: dark text on its own white background, readable
on any page. Status and link colours are mid-tones chosen to read on both.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .layout import NODE_EXTENT, LayoutNode, layout
from .models import Node, Project


class DrawnEnd(Protocol):
    """What the drawing reads of a link end (a `topology.ConnectionEnd`)."""

    @property
    def node_id(self) -> str: ...

    @property
    def port(self) -> str: ...


class DrawnLink(Protocol):
    """What the drawing reads of a link (a `topology.Connection`)."""

    @property
    def link_id(self) -> str: ...

    @property
    def a(self) -> DrawnEnd: ...

    @property
    def b(self) -> DrawnEnd: ...

    @property
    def suspended(self) -> bool: ...

    def to_text(self) -> str: ...


class Drawable(Protocol):
    """What the drawing reads of a topology (a `topology.Topology`, which draws itself
    with `to_svg`; this module does not import it)."""

    @property
    def project(self) -> Project: ...

    @property
    def sorted_nodes(self) -> list[Node]: ...

    @property
    def connections(self) -> Sequence[DrawnLink]: ...


NODE_SIZE = 2 * NODE_EXTENT
MARGIN = 40
TITLE_HEIGHT = 28
LEGEND_HEIGHT = 36
MIN_WIDTH = 440
NAME_GAP = 16
NAME_CHAR_WIDTH = 7.0
TITLE_CHAR_WIDTH = 8.5
PORT_LABEL_GAP = 12
LABEL_CHAR_WIDTH = 6.0
LABEL_HEIGHT = 12.0

STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "started": ("#2e7d32", "#e8f5e9"),
    "stopped": ("#c62828", "#ffebee"),
    "suspended": ("#f9a825", "#fff8e1"),
}
"""Node status -> (outline colour, legend fill tint)."""
UNKNOWN_STATUS_COLOURS = ("#757575", "#f5f5f5")
NODE_TINT_OPACITY = 0.18
"""The node's fill: its outline colour at this opacity, over whatever background."""
LINK_COLOUR = "#78909c"
SUSPENDED_DASH = "6 4"
BACKGROUND = "fill: var(--jp-layout-color1, #ffffff)"
TEXT = "fill: var(--jp-ui-font-color1, #212121)"
TEXT_SECONDARY = "fill: var(--jp-ui-font-color2, #424242)"
LABEL_HALO = "fill: var(--jp-ui-font-color1, #263238); stroke: var(--jp-layout-color1, #ffffff)"

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
    text = "0.0" if text == "-0.0" else text
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class Rect:
    """An axis-aligned box: left, top, right, bottom."""

    left: float
    top: float
    right: float
    bottom: float

    def overlap(self, other: Rect) -> float:
        """The area the two boxes share (0 when apart)."""
        width = min(self.right, other.right) - max(self.left, other.left)
        height = min(self.bottom, other.bottom) - max(self.top, other.top)
        return max(width, 0.0) * max(height, 0.0)


@dataclass(frozen=True)
class _Box:
    """A node's square in SVG coordinates, centred on its layout position."""

    cx: float
    cy: float
    name_half_width: float

    @property
    def x(self) -> float:
        return self.cx - NODE_EXTENT

    @property
    def y(self) -> float:
        return self.cy - NODE_EXTENT

    @property
    def radius(self) -> float:
        return NODE_EXTENT

    @property
    def shape(self) -> Rect:
        return Rect(self.x, self.y, self.x + NODE_SIZE, self.y + NODE_SIZE)

    @property
    def name(self) -> Rect:
        """Where the node's name is written (below the shape)."""
        baseline = self.y + NODE_SIZE + NAME_GAP
        half = self.name_half_width + 2
        return Rect(self.cx - half, baseline - 12, self.cx + half, baseline + 3)


def _name_half_width(node: Node) -> float:
    return len(node.name) * NAME_CHAR_WIDTH / 2


def layout_nodes(topology: Drawable) -> list[LayoutNode]:
    """The topology's nodes as the layout takes them (natural name order; switches and
    hubs are star centres)."""
    return [LayoutNode(n.node_id, n.node_type in _BOX_NODE_TYPES) for n in topology.sorted_nodes]


def layout_edges(topology: Drawable) -> list[tuple[str, str]]:
    """The topology's links as (node id, node id) pairs."""
    return [(c.a.node_id, c.b.node_id) for c in topology.connections]


def render_svg(topology: Drawable) -> str:
    """Draw `topology` as a standalone SVG document (a string starting with `<svg`)."""
    nodes = topology.sorted_nodes
    project = topology.project
    title = f"{project.name} ({project.status or 'unknown'})"
    centres = layout(layout_nodes(topology), layout_edges(topology))
    if nodes:
        left = min(centres[n.node_id][0] - max(NODE_EXTENT, _name_half_width(n)) for n in nodes)
        right = max(centres[n.node_id][0] + max(NODE_EXTENT, _name_half_width(n)) for n in nodes)
        top = min(centres[n.node_id][1] - NODE_EXTENT for n in nodes)
        bottom = max(centres[n.node_id][1] + NODE_EXTENT + NAME_GAP + 4 for n in nodes)
    else:
        left, right, top, bottom = 0.0, 200.0, 0.0, 40.0
    width = max(right - left + 2 * MARGIN, MIN_WIDTH, len(title) * TITLE_CHAR_WIDTH + 32)
    height = TITLE_HEIGHT + (bottom - top) + 2 * MARGIN + LEGEND_HEIGHT
    shift_x = (width - (right - left)) / 2 - left
    shift_y = TITLE_HEIGHT + MARGIN - top
    boxes = {
        n.node_id: _Box(
            centres[n.node_id][0] + shift_x, centres[n.node_id][1] + shift_y, _name_half_width(n)
        )
        for n in nodes
    }

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(width)}" '
        f'height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
        f'font-family="sans-serif" role="img" aria-label="{_esc("GNS3 topology " + title)}">',
        f"<title>{_esc('GNS3 topology ' + title)}</title>",
        f'<rect class="background" x="0" y="0" width="{_num(width)}" height="{_num(height)}" '
        f'style="{BACKGROUND}"/>',
        f'<text x="16" y="22" font-size="14" font-weight="bold" style="{TEXT}">'
        f"{_esc(title)}</text>",
    ]
    if not nodes:
        parts.append(
            f'<text x="{_num(width / 2)}" y="{_num(TITLE_HEIGHT + MARGIN + 20)}" '
            f'text-anchor="middle" font-size="12" style="{TEXT_SECONDARY}">'
            "No nodes in this project</text>"
        )
    parts.extend(_links(topology, boxes))
    parts.extend(_nodes(nodes, boxes))
    parts.extend(_port_labels(topology, boxes))
    parts.extend(_legend(height - LEGEND_HEIGHT / 2))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _links(topology: Drawable, boxes: dict[str, _Box]) -> list[str]:
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
        outline, _ = STATUS_COLOURS.get(node.status, UNKNOWN_STATUS_COLOURS)
        paint = (
            f'fill="{outline}" fill-opacity="{NODE_TINT_OPACITY}" stroke="{outline}" '
            'stroke-width="3"'
        )
        # The tint goes over an opaque disc of the page's colour: links end at the centre.
        if node.node_type in _BOX_NODE_TYPES:
            outline_of = (
                f'<rect x="{_num(box.x)}" y="{_num(box.y)}" width="{_num(NODE_SIZE)}" '
                f'height="{_num(NODE_SIZE)}" rx="6" '
            )
        else:
            outline_of = (
                f'<ellipse cx="{_num(box.cx)}" cy="{_num(box.cy)}" rx="{_num(NODE_EXTENT)}" '
                f'ry="{_num(NODE_EXTENT)}" '
            )
        shape = f'{outline_of}class="base" style="{BACKGROUND}"/>{outline_of}{paint}/>'
        console = f", console {node.console_endpoint}" if node.console_endpoint else ""
        parts.append(
            f'<g class="node" data-node-id="{_esc(node.node_id)}" '
            f'data-status="{_esc(node.status)}">'
            f"<title>{_esc(f'{node.name} ({node.node_type}, {node.status}{console})')}</title>"
            f"{shape}"
            f'<text x="{_num(box.cx)}" y="{_num(box.cy + 4)}" text-anchor="middle" '
            f'font-size="10" style="{TEXT_SECONDARY}">'
            f"{_esc(_TYPE_LABELS.get(node.node_type, node.node_type))}</text>"
            f'<text x="{_num(box.cx)}" y="{_num(box.y + NODE_SIZE + NAME_GAP)}" '
            f'text-anchor="middle" font-size="12" font-weight="bold" style="{TEXT}">'
            f"{_esc(node.name)}</text></g>"
        )
    parts.append("</g>")
    return parts


def label_rect(x: float, y: float, text: str) -> Rect:
    """The box of a port label written centred at x with its baseline at y."""
    half = (len(text) * LABEL_CHAR_WIDTH + 4) / 2
    return Rect(x - half, y - LABEL_HEIGHT + 3, x + half, y + 3)


def _label_candidates(near: _Box, far: _Box) -> list[tuple[float, float]]:
    """Baseline points for the port name of the end at `near`: on the link, from just
    outside the node to 45% of the link, then the same points beside the link."""
    dx, dy = far.cx - near.cx, far.cy - near.cy
    length = math.hypot(dx, dy)
    if length == 0:
        return [(near.cx, near.y - PORT_LABEL_GAP / 2)]
    ux, uy = dx / length, dy / length
    first = near.radius + PORT_LABEL_GAP
    last = max(first, 0.45 * length)
    steps = [first + 4 * i for i in range(int((last - first) / 4) + 1)]
    points = []
    for side in (0.0, 11.0, -11.0):
        for distance in steps:
            points.append(
                (near.cx + ux * distance - uy * side, near.cy + uy * distance + ux * side + 4)
            )
    return points


def place_port_labels(
    topology: Drawable, boxes: dict[str, _Box]
) -> list[tuple[DrawnLink, str, float, float]]:
    """Each link end's (connection, port, x, y): the first candidate point whose label box
    overlaps no label placed before, no node and no node name (else the least overlap)."""
    obstacles = [rect for box in boxes.values() for rect in (box.shape, box.name)]
    placed: list[Rect] = []
    labels = []
    for connection in topology.connections:
        a, b = boxes.get(connection.a.node_id), boxes.get(connection.b.node_id)
        if a is None or b is None:
            continue
        for end, near, far in ((connection.a, a, b), (connection.b, b, a)):
            best: tuple[float, float, float] | None = None
            for x, y in _label_candidates(near, far):
                rect = label_rect(x, y, end.port)
                cost = sum(rect.overlap(other) for other in (*placed, *obstacles))
                if best is None or cost < best[0]:
                    best = (cost, x, y)
                if cost == 0:
                    break
            assert best is not None
            _, x, y = best
            placed.append(label_rect(x, y, end.port))
            labels.append((connection, end.port, x, y))
    return labels


def _port_labels(topology: Drawable, boxes: dict[str, _Box]) -> list[str]:
    parts = ['<g class="port-labels">']
    for _, port, x, y in place_port_labels(topology, boxes):
        parts.append(
            f'<text class="port-label" x="{_num(x)}" y="{_num(y)}" text-anchor="middle" '
            f'font-size="10" stroke-width="3" paint-order="stroke" style="{LABEL_HALO}">'
            f"{_esc(port)}</text>"
        )
    parts.append("</g>")
    return parts


def _legend(baseline_y: float) -> list[str]:
    parts = ['<g class="legend">']
    x = 16.0
    for status, (outline, _) in STATUS_COLOURS.items():
        parts.append(
            f'<circle cx="{_num(x + 6)}" cy="{_num(baseline_y)}" r="6" fill="{outline}" '
            f'fill-opacity="{NODE_TINT_OPACITY}" stroke="{outline}" stroke-width="3"/>'
            f'<text x="{_num(x + 18)}" y="{_num(baseline_y + 4)}" font-size="11" '
            f'style="{TEXT_SECONDARY}">{status}</text>'
        )
        x += 96
    parts.append(
        f'<line x1="{_num(x)}" y1="{_num(baseline_y)}" x2="{_num(x + 28)}" '
        f'y2="{_num(baseline_y)}" stroke="{LINK_COLOUR}" stroke-width="2" '
        f'stroke-dasharray="{SUSPENDED_DASH}"/>'
        f'<text x="{_num(x + 36)}" y="{_num(baseline_y + 4)}" font-size="11" '
        f'style="{TEXT_SECONDARY}">suspended link</text>'
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
