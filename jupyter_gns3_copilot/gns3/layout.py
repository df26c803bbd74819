"""Where to draw each node, from the graph alone: used by the SVG drawing and by
`create_nodes` / `create_links` for GNS3's own coordinates, so both show one picture.

`layout(nodes, edges)` gives each node a centre (x, y), y pointing down, deterministic for
the same input (nodes are taken in the order given; `Topology.sorted_nodes` is natural
name order):

- *leaves* (a node linked to one other node only, which has other links or is a switch or
  hub) are drawn as a star around that node, on a circle wide enough to keep them
  `SPACING` apart, in the widest free angle left by its other links (fanned out below it
  when it has none, at most 120 degrees for up to six leaves, all around for more). A
  switch with PC1 and PC2 is Switch1 above, PC1 and PC2 below left and right, never a
  chain;
- the other linked nodes (the *core*: routers, switches linked to switches) of each
  connected group go on a line when they form a chain, else on a circle;
- groups are placed side by side, unlinked nodes in a row below them;
- finally no link may pass through a node: a node found within `CLEARANCE` of a link it is
  not part of is pushed away from it, perpendicular to the link, until none is (bounded
  rounds; `crossings` reports what is left, for tests and callers).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

SPACING = 150.0
"""Least distance kept between node centres on a star or a line (px)."""
LEAF_RADIUS = 150.0
"""Least distance between a star's centre and its leaves (px)."""
NODE_EXTENT = 30.0
"""Half the size of a node's box (GNS3 and the drawing use 60 px boxes)."""
CLEARANCE = NODE_EXTENT + 14.0
"""How far a link must stay from the centre of a node it does not join."""
GROUP_GAP = 200.0
"""Horizontal space between the boxes of two connected groups."""
REPAIR_ROUNDS = 60

Point = tuple[float, float]
Ordering = Callable[[Iterable[str]], list[str]]
"""Ids sorted in the caller's node order."""


@dataclass(frozen=True)
class LayoutNode:
    """A node to place: its id and whether it is a switch or a hub (a star's centre)."""

    node_id: str
    hub: bool = False


def layout(nodes: Sequence[LayoutNode], edges: Iterable[tuple[str, str]]) -> dict[str, Point]:
    """Each node's centre (see the module docstring). Edges naming unknown nodes, and
    self-links, are ignored."""
    order = {node.node_id: index for index, node in enumerate(nodes)}
    hubs = {node.node_id for node in nodes if node.hub}
    neighbours: dict[str, set[str]] = {node.node_id: set() for node in nodes}
    pairs: set[tuple[str, str]] = set()
    for a, b in edges:
        if a in neighbours and b in neighbours and a != b:
            neighbours[a].add(b)
            neighbours[b].add(a)
            pairs.add((a, b) if order[a] < order[b] else (b, a))

    def ordered(ids: Iterable[str]) -> list[str]:
        return sorted(ids, key=order.__getitem__)

    parent: dict[str, str] = {}
    for node_id in order:
        (only,) = neighbours[node_id] if len(neighbours[node_id]) == 1 else (None,)
        if only is None or only in parent:
            continue
        if (
            len(neighbours[only]) > 1
            or only in hubs
            or (node_id not in hubs and order[only] < order[node_id])
        ):
            parent[node_id] = only
    leaves: dict[str, list[str]] = {}
    for leaf in ordered(parent):
        leaves.setdefault(parent[leaf], []).append(leaf)

    positions: dict[str, Point] = {}
    right = 0.0
    bottom = 0.0
    for group in _groups(ordered(n for n in order if neighbours[n]), neighbours, ordered):
        core = [n for n in group if n not in parent]
        local = _core_positions(core, neighbours, ordered)
        for centre in core:
            local.update(_star(centre, leaves.get(centre, []), local, neighbours))
        left, top, right_edge, low = _bounds(local.values())
        shift = right - left + (GROUP_GAP if positions else 0.0)
        positions.update({n: (x + shift, y - top) for n, (x, y) in local.items()})
        right = right_edge + shift
        bottom = max(bottom, low - top)
    alone = [n for n in order if not neighbours[n]]
    row_y = bottom + SPACING if positions else 0.0
    positions.update({n: (i * SPACING, row_y) for i, n in enumerate(alone)})
    return _repaired(positions, sorted(pairs, key=lambda p: (order[p[0]], order[p[1]])))


def _groups(
    linked: list[str], neighbours: Mapping[str, set[str]], ordered: Ordering
) -> list[list[str]]:
    seen: set[str] = set()
    groups = []
    for start in linked:
        if start in seen:
            continue
        group, todo = [], [start]
        seen.add(start)
        while todo:
            current = todo.pop()
            group.append(current)
            for other in ordered(neighbours[current] - seen):
                seen.add(other)
                todo.append(other)
        groups.append(ordered(group))
    return groups


def _core_positions(
    core: list[str], neighbours: Mapping[str, set[str]], ordered: Ordering
) -> dict[str, Point]:
    """A chain on a horizontal line (in chain order), anything else on a circle."""
    if len(core) <= 1:
        return {n: (0.0, 0.0) for n in core}
    inside = {n: neighbours[n] & set(core) for n in core}
    ends = [n for n in core if len(inside[n]) == 1]
    edges = sum(len(v) for v in inside.values()) // 2
    step = 2 * max(SPACING, LEAF_RADIUS)
    if len(ends) == 2 and edges == len(core) - 1 and all(len(v) <= 2 for v in inside.values()):
        chain, previous = [ends[0]], None
        while len(chain) < len(core):
            (following,) = inside[chain[-1]] - {previous} if previous else inside[chain[-1]]
            previous = chain[-1]
            chain.append(following)
        return {n: (i * step, 0.0) for i, n in enumerate(chain)}
    radius = max(step, step / (2 * math.sin(math.pi / len(core))))
    return {
        n: (
            radius * math.cos(-math.pi / 2 + 2 * math.pi * i / len(core)),
            radius * math.sin(-math.pi / 2 + 2 * math.pi * i / len(core)),
        )
        for i, n in enumerate(ordered(core))
    }


def _star(
    centre: str, leaves: list[str], placed: Mapping[str, Point], neighbours: Mapping[str, set[str]]
) -> dict[str, Point]:
    """The leaves of `centre` on an arc in the widest angle its other links leave free."""
    if not leaves:
        return {}
    cx, cy = placed[centre]
    taken = sorted(
        math.atan2(placed[n][1] - cy, placed[n][0] - cx) % (2 * math.pi)
        for n in neighbours[centre]
        if n in placed and n != centre
    )
    if taken:
        gaps = [
            ((taken[(i + 1) % len(taken)] - a) % (2 * math.pi) or 2 * math.pi, a)
            for i, a in enumerate(taken)
        ]
        width, start = max(gaps, key=lambda gap: (round(gap[0], 9), -gap[1]))
        margin = min(width / 4, math.radians(40))
        start, width = start + margin, width - 2 * margin
    else:
        # Below the centre, fanned out (a V for two, never a straight line through the
        # centre); the whole circle for many.
        width = (
            min(math.pi * (len(leaves) - 1) / len(leaves), 2 * math.pi / 3)
            if len(leaves) <= 6
            else 2 * math.pi * (1 - 1 / len(leaves))
        )
        start = math.pi / 2 - width / 2
    if len(leaves) == 1:
        angles = [start + width / 2]
    else:
        angles = [start + width * i / (len(leaves) - 1) for i in range(len(leaves))]
        # Read left to right: the first leaf on the left when they hang below.
        if not taken:
            angles.reverse()
    step = width / max(len(leaves) - 1, 1)
    radius = LEAF_RADIUS
    if len(leaves) > 1 and step > 0:
        radius = max(radius, SPACING / (2 * math.sin(min(step, math.pi) / 2)))
    return {
        leaf: (cx + radius * math.cos(angle), cy + radius * math.sin(angle))
        for leaf, angle in zip(leaves, angles, strict=True)
    }


def _bounds(points: Iterable[Point]) -> tuple[float, float, float, float]:
    xs, ys = zip(*points, strict=True)
    return min(xs), min(ys), max(xs), max(ys)


def distance_to_segment(point: Point, a: Point, b: Point) -> tuple[float, Point]:
    """The distance from `point` to the segment a-b, and the segment's nearest point."""
    (px, py), (ax, ay), (bx, by) = point, a, b
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length2))
    nx, ny = ax + t * dx, ay + t * dy
    return math.hypot(px - nx, py - ny), (nx, ny)


def crossings(
    positions: Mapping[str, Point], pairs: Iterable[tuple[str, str]], clearance: float = CLEARANCE
) -> list[tuple[str, tuple[str, str]]]:
    """(node, link) for every node closer than `clearance` to a link it is not part of."""
    found = []
    for a, b in pairs:
        for node, point in positions.items():
            if (
                node not in (a, b)
                and distance_to_segment(point, positions[a], positions[b])[0] < clearance
            ):
                found.append((node, (a, b)))
    return found


def overlaps(
    positions: Mapping[str, Point], gap: float = 2 * NODE_EXTENT + 10
) -> list[tuple[str, str]]:
    """Pairs of nodes whose centres are closer than `gap`."""
    items = list(positions.items())
    return [
        (a, b)
        for i, (a, pa) in enumerate(items)
        for b, pb in items[i + 1 :]
        if math.dist(pa, pb) < gap
    ]


def _repaired(positions: dict[str, Point], pairs: list[tuple[str, str]]) -> dict[str, Point]:
    """`positions` with every node pushed off the links it does not join and off the
    other nodes (see module)."""
    for _ in range(REPAIR_ROUNDS):
        close = overlaps(positions)
        if close:
            a, b = close[0]
            (ax, ay), (bx, by) = positions[a], positions[b]
            gap = math.dist((ax, ay), (bx, by))
            ux, uy = ((bx - ax) / gap, (by - ay) / gap) if gap > 1e-6 else (1.0, 0.0)
            push = 2 * NODE_EXTENT + 18 - gap
            positions[b] = (bx + ux * push, by + uy * push)
            continue
        found = crossings(positions, pairs, CLEARANCE + 0.5)
        if not found:
            break
        node, (a, b) = found[0]
        point = positions[node]
        distance, (nx, ny) = distance_to_segment(point, positions[a], positions[b])
        if distance > 1e-6:
            ux, uy = (point[0] - nx) / distance, (point[1] - ny) / distance
        else:  # on the line: step to its left
            dx, dy = positions[b][0] - positions[a][0], positions[b][1] - positions[a][1]
            norm = math.hypot(dx, dy) or 1.0
            ux, uy = -dy / norm, dx / norm
        push = CLEARANCE + 8 - distance
        positions[node] = (point[0] + ux * push, point[1] + uy * push)
    return positions
