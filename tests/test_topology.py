"""The topology model and its text/SVG renderings, on hand-built GNS3 objects (no server)."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET

import pytest

from jupyter_gns3_copilot.gns3 import GNS3NotFound, Link, Node, Project, Topology
from jupyter_gns3_copilot.gns3.svg import STATUS_COLOURS, text_note_svg

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
        shape = group.find(f"{SVG}ellipse")
        if shape is None:
            shape = group.find(f"{SVG}rect")
        assert shape is not None
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


def test_svg_places_nodes_inside_the_viewbox_from_gns3_positions(lab: Topology) -> None:
    root = ET.fromstring(lab.to_svg())
    _, _, width, height = (float(v) for v in (root.get("viewBox") or "").split())
    ellipses = {
        g.get("data-node-id"): g.find(f"{SVG}ellipse")
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "node" and g.find(f"{SVG}ellipse") is not None
    }
    centres = {
        node_id: (float(e.get("cx") or 0), float(e.get("cy") or 0))
        for node_id, e in ellipses.items()
    }
    for cx, cy in centres.values():
        assert 0 < cx < width and 0 < cy < height
    # Relative placement follows GNS3's x/y: PC1 left of PC10, above PC2.
    assert centres["id-PC1"][0] < centres["id-PC10"][0]
    assert centres["id-PC1"][1] < centres["id-PC2"][1]
    assert centres["id-PC10"][0] - centres["id-PC1"][0] == 600


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
