"""The topology model and its text/SVG renderings, on hand-built GNS3 objects (no server)."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from jupyter_gns3_copilot.gns3 import GNS3NotFound, Link, Node, Project, Topology
from jupyter_gns3_copilot.gns3.layout import NODE_EXTENT, LayoutNode, layout
from jupyter_gns3_copilot.gns3.svg import STATUS_COLOURS, Rect, label_rect, text_note_svg

SVG = "{http://www.w3.org/2000/svg}"


def make_node(
    name: str,
    node_type: str = "vpcs",
    status: str = "stopped",
    x: int = 0,
    y: int = 0,
    ports: int = 1,
    console: int | None = None,
) -> Node:
    return Node.model_validate(
        {
            "node_id": f"id-{name}",
            "name": name,
            "node_type": node_type,
            "status": status,
            "console": console,
            "console_host": "127.0.0.1" if console else None,
            "console_type": "telnet" if console else "none",
            "x": x,
            "y": y,
            "width": 60,
            "height": 60,
            "ports": [
                {
                    "name": f"Ethernet{i}",
                    "short_name": f"e{i}",
                    "adapter_number": 0 if node_type == "ethernet_switch" else i,
                    "port_number": i if node_type == "ethernet_switch" else 0,
                }
                for i in range(ports)
            ],
        }
    )


def make_link(link_id: str, a: Node, a_port: int, b: Node, b_port: int, **extra: object) -> Link:
    def end(node: Node, index: int) -> dict[str, object]:
        port = node.ports[index]
        return {
            "node_id": node.node_id,
            "adapter_number": port.adapter_number,
            "port_number": port.port_number,
            "label": {"text": port.short_name, "x": 0, "y": 0},
        }

    return Link.model_validate(
        {"link_id": link_id, "nodes": [end(a, a_port), end(b, b_port)], **extra}
    )


@pytest.fixture
def lab() -> Topology:
    """Given a lab: three PCs and an oddly named VM around a switch, one link suspended."""
    pc1 = make_node("PC1", status="started", x=-300, y=-100, console=5000)
    pc2 = make_node("PC2", x=-300, y=100, console=5001)
    pc10 = make_node("PC10", status="suspended", x=300, y=-100, console=5002)
    odd = make_node("R&D<1>", node_type="qemu", status="started", x=300, y=100, console=5003)
    switch = make_node("Switch1", node_type="ethernet_switch", status="started", ports=8)
    links = [
        make_link("l1", pc1, 0, switch, 0),
        make_link("l2", switch, 1, pc2, 0),  # written switch-first on purpose
        make_link("l3", pc10, 0, switch, 2, suspend=True),
        make_link("l4", odd, 0, switch, 3),
    ]
    project = Project(project_id="p1", name="Lab <&> 1", status="opened")
    return Topology(project, [switch, pc10, odd, pc2, pc1], links)


def test_to_text_is_a_sorted_table_and_link_list(lab: Topology) -> None:
    assert lab.to_text() == (
        "Project Lab <&> 1 (opened): 5 nodes, 4 links\n"
        "Nodes:\n"
        "  NAME     TYPE             STATUS     CONSOLE\n"
        "  PC1      vpcs             started    telnet 127.0.0.1:5000\n"
        "  PC2      vpcs             stopped    telnet 127.0.0.1:5001\n"
        "  PC10     vpcs             suspended  telnet 127.0.0.1:5002\n"
        "  R&D<1>   qemu             started    telnet 127.0.0.1:5003\n"
        "  Switch1  ethernet_switch  started    -\n"
        "Links:\n"
        "  PC1 e0 <-> Switch1 e0\n"
        "  PC2 e0 <-> Switch1 e1\n"
        "  PC10 e0 <-> Switch1 e2 [suspended]\n"
        "  R&D<1> e0 <-> Switch1 e3\n"
    )


def test_renderings_do_not_depend_on_input_order(lab: Topology) -> None:
    nodes, links = list(lab.nodes), list(lab.links)
    random.Random(7).shuffle(nodes)
    links.reverse()
    shuffled = Topology(lab.project, nodes, links)
    assert shuffled.to_text() == lab.to_text()
    assert shuffled.to_svg() == lab.to_svg()
    assert shuffled.to_json() == Topology(lab.project, nodes, links).to_json()


def test_link_to_an_unknown_node_or_port_still_renders() -> None:
    pc1 = make_node("PC1")
    ghost = Link.model_validate(
        {
            "link_id": "l9",
            "nodes": [
                {"node_id": "id-PC1", "adapter_number": 0, "port_number": 0},
                {"node_id": "gone", "adapter_number": 1, "port_number": 2},
            ],
        }
    )
    topology = Topology(Project(project_id="p", name="p"), [pc1], [ghost])
    assert "  gone 1/2 <-> PC1 e0\n" in topology.to_text()
    ET.fromstring(topology.to_svg())


def test_empty_project_renders() -> None:
    topology = Topology(Project(project_id="p", name="empty", status="closed"))
    assert topology.to_text() == (
        "Project empty (closed): 0 nodes, 0 links\nNodes:\n  (none)\nLinks:\n  (none)\n"
    )
    root = ET.fromstring(topology.to_svg())
    assert "No nodes in this project" in "".join(root.itertext())


def test_svg_is_valid_self_contained_xml_with_every_node_and_link(lab: Topology) -> None:
    svg = lab.to_svg()
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    for forbidden in ("<script", "<style", "href", "url(", "<foreignObject", "on"):
        if forbidden == "on":
            assert not any(attr.startswith("on") for el in root.iter() for attr in el.attrib), (
                "event handler attribute"
            )
        else:
            assert forbidden not in svg

    node_groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    names = {"".join(g.find(f"{SVG}text[2]").itertext()) for g in node_groups}
    assert names == {"PC1", "PC2", "PC10", "R&D<1>", "Switch1"}

    link_groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "link"]
    assert {g.get("data-link-id") for g in link_groups} == {"l1", "l2", "l3", "l4"}
    titles = {g.findtext(f"{SVG}title") for g in link_groups}
    assert "PC10 e0 <-> Switch1 e2 [suspended]" in titles
    assert "R&D<1> e0 <-> Switch1 e3" in titles

    port_labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "port-label"]
    assert sorted(port_labels) == sorted(["e0", "e0", "e0", "e0", "e0", "e1", "e2", "e3"])


def test_svg_escapes_names(lab: Topology) -> None:
    svg = lab.to_svg()
    assert "R&amp;D&lt;1&gt;" in svg
    assert "Lab &lt;&amp;&gt; 1" in svg
    assert "R&D<1>" not in svg


def test_svg_colours_nodes_by_status_and_dashes_suspended_links(lab: Topology) -> None:
    root = ET.fromstring(lab.to_svg())
    for group in root.iter(f"{SVG}g"):
        if group.get("class") != "node":
            continue
        [shape] = [e for e in group if e.tag in (f"{SVG}ellipse", f"{SVG}rect") and e.get("stroke")]
        assert shape.get("stroke") == STATUS_COLOURS[group.get("data-status") or ""][0]
    lines = {
        g.get("data-link-id"): g.find(f"{SVG}line")
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "link"
    }
    assert lines["l3"].get("stroke-dasharray")
    assert lines["l1"].get("stroke-dasharray") is None
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "legend")
    assert {"started", "stopped", "suspended", "suspended link"} <= set(legend.itertext())


def svg_geometry(topology: Topology) -> tuple[Any, dict[str, tuple[float, float]]]:
    """The parsed SVG and each node's drawn centre by node id."""
    root = ET.fromstring(topology.to_svg())
    centres = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") != "node":
            continue
        ellipse, rect = group.find(f"{SVG}ellipse"), group.find(f"{SVG}rect")
        if ellipse is not None:
            centre = (float(ellipse.get("cx") or 0), float(ellipse.get("cy") or 0))
        else:
            assert rect is not None
            x, y = float(rect.get("x") or 0), float(rect.get("y") or 0)
            centre = (x + float(rect.get("width") or 0) / 2, y + float(rect.get("height") or 0) / 2)
        centres[group.get("data-node-id") or ""] = centre
    return root, centres


def segment_hits_box(
    a: tuple[float, float], b: tuple[float, float], box: tuple[float, ...]
) -> bool:
    """Whether segment a-b meets the rectangle (left, top, right, bottom): Liang-Barsky."""
    (x0, y0), (x1, y1) = a, b
    left, top, right, bottom = box
    t0, t1 = 0.0, 1.0
    for p, q in (
        (-(x1 - x0), x0 - left),
        (x1 - x0, right - x0),
        (-(y1 - y0), y0 - top),
        (y1 - y0, bottom - y0),
    ):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return False
    return True


def check_drawing(topology: Topology) -> None:
    """No link drawn through a node's box; no two port labels, and no label and node box,
    overlapping; every node inside the viewBox."""
    root, centres = svg_geometry(topology)
    _, _, width, height = (float(v) for v in (root.get("viewBox") or "").split())
    half = NODE_EXTENT
    for cx, cy in centres.values():
        assert half < cx < width - half and half < cy < height - half
    boxes = {n: (cx - half, cy - half, cx + half, cy + half) for n, (cx, cy) in centres.items()}
    for connection in topology.connections:
        a, b = centres[connection.a.node_id], centres[connection.b.node_id]
        for node_id, box in boxes.items():
            if node_id not in (connection.a.node_id, connection.b.node_id):
                assert not segment_hits_box(a, b, box), (connection.to_text(), node_id)
    labels = [
        label_rect(float(t.get("x") or 0), float(t.get("y") or 0), t.text or "")
        for t in root.iter(f"{SVG}text")
        if t.get("class") == "port-label"
    ]
    assert len(labels) == 2 * len(topology.connections)
    for i, one in enumerate(labels):
        for other in labels[i + 1 :]:
            assert one.overlap(other) == 0, (one, other)
        for box in boxes.values():
            assert one.overlap(Rect(*box)) == 0, (one, box)


def star(pcs: int, *, row: bool = True) -> Topology:
    """A switch with `pcs` PCs, placed by GNS3 in a row (as create_nodes used to)."""
    switch = make_node("Switch1", node_type="ethernet_switch", ports=max(pcs, 1), x=0)
    hosts = [make_node(f"PC{i + 1}", x=250 * (i + 1) if row else 0) for i in range(pcs)]
    links = [make_link(f"l{i}", host, 0, switch, i) for i, host in enumerate(hosts)]
    return Topology(Project(project_id="p", name="star"), [switch, *hosts], links)


def test_a_switch_and_its_hosts_are_drawn_as_a_star_not_a_chain() -> None:
    """Given Switch1 linked to PC1 and PC2, which GNS3 has in one row; when drawn; then the
    PCs hang below the switch, left and right of it, far from collinear with it, and
    nothing crosses a node or a label."""
    topology = star(2)
    _, centres = svg_geometry(topology)
    (sx, sy), (x1, y1), (x2, y2) = centres["id-Switch1"], centres["id-PC1"], centres["id-PC2"]
    assert y1 > sy and y2 > sy
    assert x1 < sx < x2
    # the triangle's area, against a chain's (about 0)
    area = abs((x1 - sx) * (y2 - sy) - (x2 - sx) * (y1 - sy)) / 2
    assert area > 5000
    check_drawing(topology)
    assert layout(
        [LayoutNode("PC1"), LayoutNode("PC2"), LayoutNode("Switch1", hub=True)],
        [("PC1", "Switch1"), ("PC2", "Switch1")],
    ) == layout(
        [LayoutNode("PC1"), LayoutNode("PC2"), LayoutNode("Switch1", hub=True)],
        [("Switch1", "PC2"), ("Switch1", "PC1"), ("PC1", "Switch1")],
    )


@pytest.mark.parametrize("pcs", [1, 3, 6, 12])
def test_stars_of_any_size_keep_links_and_labels_apart(pcs: int) -> None:
    check_drawing(star(pcs))


def random_lab(seed: int) -> Topology:
    """A generated lab: routers and switches linked as a tree plus a few extra links (rings,
    parallel paths), PCs on switches, a few unlinked nodes."""
    rng = random.Random(seed)
    nodes, links, used = [], [], {}

    def port(node: Node) -> int:
        used[node.node_id] = used.get(node.node_id, -1) + 1
        return used[node.node_id]

    def link(a: Node, b: Node) -> None:
        links.append(make_link(f"l{len(links)}", a, port(a), b, port(b)))

    core = []
    for index in range(rng.randint(1, 5)):
        kind = rng.choice(["ethernet_switch", "dynamips"])
        core.append(
            make_node(f"{'S' if kind == 'ethernet_switch' else 'R'}{index}", kind, ports=16)
        )
    for index, node in enumerate(core[1:], 1):
        link(node, core[rng.randrange(index)])
    for _ in range(rng.randint(0, 2)):
        a, b = rng.sample(core, 2) if len(core) > 1 else (core[0], core[0])
        if a is not b:
            link(a, b)
    nodes += core
    for index in range(rng.randint(0, 9)):
        pc = make_node(f"PC{index}")
        nodes.append(pc)
        if rng.random() < 0.85:
            link(pc, rng.choice(core))
    return Topology(Project(project_id="p", name=f"lab {seed}"), nodes, links)


@pytest.mark.parametrize("seed", range(40))
def test_generated_labs_never_draw_a_link_through_a_node_or_labels_on_each_other(
    seed: int,
) -> None:
    check_drawing(random_lab(seed))


def test_the_drawing_follows_the_jupyterlab_theme_with_light_fallbacks(lab: Topology) -> None:
    """Background, text and label halo use JupyterLab's CSS variables with fallbacks, in
    `style` (a presentation attribute cannot hold var()); nothing is a fixed white."""
    svg = lab.to_svg()
    root = ET.fromstring(svg)
    background = next(r for r in root.iter(f"{SVG}rect") if r.get("class") == "background")
    assert background.get("style") == "fill: var(--jp-layout-color1, #ffffff)"
    texts = list(root.iter(f"{SVG}text"))
    assert all("var(--jp-ui-font-color" in (t.get("style") or "") for t in texts)
    labels = [t for t in texts if t.get("class") == "port-label"]
    assert all("stroke: var(--jp-layout-color1, #ffffff)" in (t.get("style") or "") for t in labels)
    for element in root.iter():
        for name, value in element.attrib.items():
            assert name == "style" or "var(" not in value, (element.tag, name)
    assert 'fill="#ffffff"' not in svg and 'stroke="#ffffff"' not in svg


def test_to_dict_is_json_with_resolved_connections(lab: Topology) -> None:
    data = json.loads(json.dumps(lab.to_dict()))
    assert data["project"]["name"] == "Lab <&> 1"
    assert len(data["nodes"]) == 5
    first = data["connections"][0]
    assert (first["a"]["node_name"], first["a"]["port"]) == ("PC1", "e0")
    assert (first["b"]["node_name"], first["b"]["port"]) == ("Switch1", "e0")
    assert Topology.model_validate(data).to_text() == lab.to_text()


def test_models_ignore_unknown_fields_and_default_tags() -> None:
    node = Node.model_validate(
        {
            "node_id": "n",
            "name": "PC1",
            "node_type": "vpcs",
            "ports": None,
            "properties": None,
            "some_future_field": 1,
        }
    )
    assert node.tags == [] and node.ports == [] and node.properties == {}
    tagged = Node.model_validate({"node_id": "n", "name": "R1", "node_type": "qemu", "tags": ["x"]})
    assert tagged.tags == ["x"]


@pytest.mark.parametrize("spec", ["e0", "E0", "Ethernet0", "ethernet0", "eth0", " e0 "])
def test_find_port_accepts_name_short_name_and_common_spellings(spec: str) -> None:
    assert make_node("PC1").find_port(spec).short_name == "e0"


def test_find_port_error_lists_the_ports() -> None:
    switch = make_node("Switch1", node_type="ethernet_switch", ports=3)
    assert switch.find_port("Ethernet2").port_number == 2
    with pytest.raises(GNS3NotFound) as caught:
        switch.find_port("e7")
    error = caught.value
    assert (error.kind, error.name, error.available) == ("port", "e7", ("e0", "e1", "e2"))
    assert str(error) == (
        "'e7' is not a port of node Switch1. "
        "Available ports: e0 (Ethernet0), e1 (Ethernet1), e2 (Ethernet2)."
    )


def test_text_note_svg_is_escaped_xml() -> None:
    svg = text_note_svg("a < b & c\nsecond line")
    root = ET.fromstring(svg)
    assert [t.text for t in root.iter(f"{SVG}tspan")] == ["a < b & c", "second line"]
