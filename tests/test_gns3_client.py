"""The GNS3 client against a real gns3-server (the local lab fixtures), plus its offline errors.

Fixtures `gns3_lab` (one server per run) and `gns3_project` (a fresh project per test,
deleted afterwards) come from jupyter_gns3_copilot.testing's pytest plugin.
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from support.http_counting import CountingTransport

from jupyter_gns3_copilot.gns3 import (
    GNS3AuthError,
    GNS3Client,
    GNS3Conflict,
    GNS3NotFound,
    GNS3Timeout,
    GNS3Unreachable,
    Link,
    Node,
)
from jupyter_gns3_copilot.gns3.nodes import named_command_line, with_kernel_argument
from jupyter_gns3_copilot.labkit.router import ROUTER_TEMPLATE, hostname_command_line

PCAP_MAGICS = {b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"}


def client_for(server: Any, **kwargs: Any) -> GNS3Client:
    """A client for the lab's user (`server` is the lab or a project fixture); it reuses
    the project fixture's token, so that only the auth tests pay for a login."""
    options: dict[str, Any] = {
        "username": server.username,
        "password": server.password,
        "token": getattr(server, "token", None),
    }
    options.update(kwargs)
    return GNS3Client(server.url, **options)


async def build_small_lab(gns3: GNS3Client, project_id: str) -> dict[str, Link]:
    """3 VPCS and a switch, each PC linked to the switch by port name (three spellings)."""
    for index, name in enumerate(["PC1", "PC2", "PC3"]):
        await gns3.create_node_from_template(project_id, "VPCS", name, x=index * 150 - 150, y=-150)
    await gns3.create_node_from_template(project_id, "ethernet_switch", "Switch1", x=0, y=50)
    return {
        "PC1": await gns3.create_link(project_id, "PC1", "e0", "Switch1", "e0"),
        "PC2": await gns3.create_link(project_id, "pc2", "Ethernet0", "Switch1", "eth1"),
        "PC3": await gns3.create_link(project_id, "Switch1", "Ethernet2", "PC3", "eth0"),
    }


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_server_gives_a_readable_error() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    async with GNS3Client(url, username="admin", password="admin", timeout=5) as gns3:
        with pytest.raises(GNS3Unreachable) as caught:
            await gns3.list_projects()
    message = str(caught.value)
    assert url in message and "connection refused" in message
    assert "GNS3_URL" in message and "c.GNS3Copilot.gns3_url" in message
    assert caught.value.url == url and caught.value.status is None


async def test_silent_server_gives_a_timeout_error() -> None:
    with socket.socket() as listener:  # accepts connections (kernel backlog), never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        async with GNS3Client(url, token="t", timeout=0.5) as gns3:
            with pytest.raises(GNS3Timeout) as caught:
                await gns3.list_projects()
    assert "did not answer GET /projects within 0.5 s" in str(caught.value)
    assert caught.value.url == f"{url}/v3/projects"


@pytest.mark.lab
async def test_version_needs_no_login(gns3_lab: Any) -> None:
    transport = CountingTransport()
    async with GNS3Client(gns3_lab.url, transport=transport) as gns3:
        version = await gns3.version()
    assert version.version.startswith("3.")
    assert transport.paths == ["/v3/version"]


@pytest.mark.lab
async def test_wrong_password_gives_auth_error(gns3_lab: Any) -> None:
    async with client_for(gns3_lab, password="not-the-password") as gns3:
        with pytest.raises(GNS3AuthError) as caught:
            await gns3.list_projects()
    error = caught.value
    assert error.status == 401
    assert gns3_lab.username in str(error) and "GNS3_PASSWORD" in str(error)
    assert error.detail == "Authentication was unsuccessful."


@pytest.mark.lab
async def test_no_credentials_and_rejected_token_give_auth_errors(gns3_lab: Any) -> None:
    async with GNS3Client(gns3_lab.url) as anonymous:
        with pytest.raises(GNS3AuthError, match="requires a login"):
            await anonymous.list_projects()
    async with GNS3Client(gns3_lab.url, token="not-a-jwt") as stale:
        with pytest.raises(GNS3AuthError, match="refused the access token"):
            await stale.list_projects()


@pytest.mark.lab
async def test_token_is_reused_and_renewed_once_when_rejected(gns3_lab: Any) -> None:
    transport = CountingTransport()
    async with client_for(gns3_lab, transport=transport) as gns3:
        for _ in range(3):
            await gns3.list_projects()
        await gns3.list_templates()
        assert transport.count("/access/users/authenticate") == 1
        token = gns3.token

    # Given a token GNS3 rejects, the client logs in again once and carries on.
    transport = CountingTransport()
    async with client_for(gns3_lab, token="expired-token", transport=transport) as gns3:
        await gns3.list_projects()
        await gns3.list_projects()
        assert transport.count("/access/users/authenticate") == 1
        assert transport.count("/projects") == 3  # the rejected try, its retry, one more
        assert gns3.token not in (None, "expired-token")

    # A valid token given up front needs no login at all.
    transport = CountingTransport()
    async with GNS3Client(gns3_lab.url, token=token, transport=transport) as gns3:
        await gns3.list_projects()
    assert transport.count("/access/users/authenticate") == 0


@pytest.mark.lab
async def test_templates_are_found_by_name_or_type(gns3_lab: Any) -> None:
    async with client_for(gns3_lab) as gns3:
        vpcs = await gns3.find_template("vpcs")
        switch = await gns3.find_template("Ethernet Switch")
        assert (vpcs.name, vpcs.template_type) == ("VPCS", "vpcs")
        assert switch.template_type == "ethernet_switch"
        assert (await gns3.find_template(vpcs.template_id)) == vpcs
        with pytest.raises(GNS3NotFound) as caught:
            await gns3.find_template("c7200")
    assert caught.value.kind == "template" and "VPCS" in caught.value.available
    assert "c7200" in str(caught.value) and "VPCS" in str(caught.value)


@pytest.mark.lab
async def test_projects_are_resolved_by_id_or_name(gns3_project: Any) -> None:
    async with client_for(gns3_project) as gns3:
        by_id = await gns3.resolve_project(gns3_project.project_id)
        by_name = await gns3.resolve_project(gns3_project.name)
        assert by_id.project_id == by_name.project_id == gns3_project.project_id
        assert by_id.status == "opened"
        with pytest.raises(GNS3NotFound) as caught:
            await gns3.resolve_project("no such lab")
        assert caught.value.kind == "project" and gns3_project.name in caught.value.available
        with pytest.raises(GNS3NotFound) as caught:
            await gns3.get_project("00000000-0000-0000-0000-000000000000")
        assert caught.value.status == 404 and "00000000-0000" in str(caught.value)


@pytest.mark.lab
async def test_unknown_nodes_are_named_in_errors(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        await gns3.create_node_from_template(project_id, "VPCS", "PC1")
        with pytest.raises(GNS3NotFound) as caught:
            await gns3.find_node(project_id, "PC9")
        assert str(caught.value) == (
            f"No node named 'PC9' in project {gns3_project.name}. Nodes: PC1."
        )
        missing = "11111111-2222-3333-4444-555555555555"
        with pytest.raises(GNS3NotFound) as caught:
            await gns3.get_node(project_id, missing)
        assert (caught.value.kind, caught.value.name) == ("node", missing)
        with pytest.raises(GNS3NotFound) as caught:
            await gns3.start_node(project_id, "PC1")
        assert "look the node up by name" in str(caught.value)


@pytest.mark.lab
async def test_nodes_are_created_named_moved_and_deleted(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        default = await gns3.create_node_from_template(project_id, "VPCS", x=10, y=20)
        named = await gns3.create_node_from_template(project_id, "vpcs", "Client", x=200)
        assert default.name == "PC1" and (default.x, default.y) == (10, 20)
        assert default.status == "stopped" and default.console_type == "telnet"
        assert default.console_host and default.console
        assert [p.short_name for p in default.ports] == ["e0"]
        assert named.name == "Client"
        with pytest.raises(GNS3Conflict, match="already has a node named Client"):
            await gns3.create_node_from_template(project_id, "VPCS", "Client")

        moved = await gns3.update_node(project_id, named.node_id, name="Server", x=-50, y=75)
        assert (moved.name, moved.x, moved.y) == ("Server", -50, 75)
        assert (await gns3.find_node(project_id, "server")).node_id == named.node_id

        await gns3.delete_node(project_id, default.node_id)
        assert [n.name for n in await gns3.list_nodes(project_id)] == ["Server"]


def test_a_hostname_kernel_argument_names_the_node() -> None:
    """A node whose kernel command line has `hostname=` gets its own name there; nodes
    without one, already named, or with a name that is no host name are left alone."""

    def node(name: str, line: str | None) -> Node:
        properties = {} if line is None else {"kernel_command_line": line}
        return Node(node_id="n", name=name, node_type="qemu", properties=properties)

    line = "console=ttyS0 quiet hostname=router panic=-1"
    assert named_command_line(node("R1", line)) == "console=ttyS0 quiet hostname=R1 panic=-1"
    assert named_command_line(node("core-2", line)) == line.replace("router", "core-2")
    assert named_command_line(node("R1", "console=ttyS0 hostname=R1")) is None
    assert named_command_line(node("R1", "console=ttyS0 myhostname=x")) is None
    assert named_command_line(node("R1", None)) is None
    assert named_command_line(node("R 1", line)) is None


def test_a_kernel_argument_is_set_replaced_or_taken_out() -> None:
    """`with_kernel_argument` adds a `name=value` argument at the end, replaces the one
    there (and only that name: `mtu.eth1` leaves `mtu.eth10` alone), or takes it out."""
    line = "console=ttyS0 quiet hostname=R2 panic=-1"
    set_once = with_kernel_argument(line, "mtu.eth1", "1400")
    assert set_once == f"{line} mtu.eth1=1400"
    both = with_kernel_argument(
        with_kernel_argument(set_once, "mtu.eth10", "9000"), "mtu.eth1", "1300"
    )
    assert both == f"{line} mtu.eth10=9000 mtu.eth1=1300"
    assert with_kernel_argument(both, "mtu.eth1", None) == f"{line} mtu.eth10=9000"
    assert with_kernel_argument(line, "mtu.eth1", None) == line


@pytest.mark.lab
async def test_a_router_node_is_named_on_its_kernel_command_line(
    gns3_project: Any, gns3_lab: Any
) -> None:
    """The lab kit's router templates carry `hostname=router`: a node created from one gets
    its name there (so its prompt is `R1#`), and a renamed one its new name."""
    if getattr(gns3_lab, "router_problems", {}).get(ROUTER_TEMPLATE):
        pytest.skip(gns3_lab.router_problems[ROUTER_TEMPLATE])
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        router = await gns3.create_node_from_template(project_id, ROUTER_TEMPLATE, "R1")
        assert router.properties["kernel_command_line"] == hostname_command_line("R1")
        default = await gns3.create_node_from_template(project_id, ROUTER_TEMPLATE)
        assert default.properties["kernel_command_line"].endswith(f" hostname={default.name}")
        renamed = await gns3.update_node(project_id, router.node_id, name="edge-1")
        assert renamed.properties["kernel_command_line"] == hostname_command_line("edge-1")


@pytest.mark.lab
async def test_links_by_port_name_and_topology_rendering(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        links = await build_small_lab(gns3, project_id)
        assert all(len(link.nodes) == 2 for link in links.values())

        with pytest.raises(GNS3NotFound) as caught:
            await gns3.create_link(project_id, "PC1", "e1", "Switch1", "e5")
        assert caught.value.kind == "port" and caught.value.available == ("e0",)
        assert "Available ports: e0 (Ethernet0)" in str(caught.value)

        with pytest.raises(GNS3Conflict) as conflict:
            await gns3.create_link(project_id, "PC1", "e0", "Switch1", "e7")
        assert str(conflict.value).startswith("PC1 e0 is already linked to Switch1 e0")

        topology = await gns3.get_topology(gns3_project.name)

    text = topology.to_text()
    assert text.startswith(f"Project {gns3_project.name} (opened): 4 nodes, 3 links\n")
    for name in ("PC1", "PC2", "PC3", "Switch1"):
        assert f"\n  {name} " in text
    for line in ("PC1 e0 <-> Switch1 e0", "PC2 e0 <-> Switch1 e1", "PC3 e0 <-> Switch1 e2"):
        assert f"\n  {line}\n" in text

    root = ET.fromstring(topology.to_svg())
    drawn = "".join(root.itertext())
    for name in ("PC1", "PC2", "PC3", "Switch1"):
        assert name in drawn
    link_ids = {g.get("data-link-id") for g in root.iter() if g.get("class") == "link"}
    assert link_ids == {link.link_id for link in links.values()}


@pytest.mark.lab
async def test_suspended_link_is_marked(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        links = await build_small_lab(gns3, project_id)
        suspended = await gns3.suspend_link(project_id, links["PC2"].link_id)
        assert suspended.suspend is True
        text = (await gns3.get_topology(project_id)).to_text()
        assert "  PC2 e0 <-> Switch1 e1 [suspended]\n" in text
        assert "  PC1 e0 <-> Switch1 e0\n" in text
        resumed = await gns3.resume_link(project_id, links["PC2"].link_id)
        assert resumed.suspend is False

        await gns3.delete_link(project_id, links["PC3"].link_id)
        remaining = {link.link_id for link in await gns3.list_links(project_id)}
        assert remaining == {links["PC1"].link_id, links["PC2"].link_id}


@pytest.mark.lab
async def test_renaming_a_running_node_gives_gns3s_conflict(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        await build_small_lab(gns3, project_id)
        pc1 = await gns3.find_node(project_id, "PC1")
        await gns3.start_node(project_id, pc1.node_id)
        assert (await gns3.get_node(project_id, pc1.node_id)).status == "started"
        with pytest.raises(GNS3Conflict) as caught:
            await gns3.update_node(project_id, pc1.node_id, name="Renamed")
        assert caught.value.status == 409
        assert "not possible to rename a node that is already powered on" in str(caught.value)
        assert caught.value.detail and "powered on" in caught.value.detail

        switch = await gns3.find_node(project_id, "Switch1")
        renamed = await gns3.update_node(project_id, switch.node_id, name="Core")
        assert renamed.name == "Core" and renamed.status == "started"

        await gns3.stop_node(project_id, pc1.node_id)
        assert (await gns3.get_node(project_id, pc1.node_id)).status == "stopped"


@pytest.mark.lab
async def test_start_all_and_stop_all(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        await build_small_lab(gns3, project_id)
        await gns3.start_all(project_id)
        assert {n.status for n in await gns3.list_nodes(project_id)} == {"started"}
        await gns3.stop_all(project_id)
        statuses = {n.name: n.status for n in await gns3.list_nodes(project_id)}
        assert statuses["PC1"] == statuses["PC2"] == statuses["PC3"] == "stopped"


@pytest.mark.lab
async def test_snapshots_are_created_listed_and_restored(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        await gns3.create_node_from_template(project_id, "VPCS", "PC1")
        snapshot = await gns3.create_snapshot(project_id, "one pc")
        assert [s.name for s in await gns3.list_snapshots(project_id)] == ["one pc"]
        assert snapshot.snapshot_id in {
            s.snapshot_id for s in await gns3.list_snapshots(project_id)
        }

        await gns3.create_node_from_template(project_id, "VPCS", "PC2")
        restored = await gns3.restore_snapshot(project_id, snapshot.snapshot_id)
        assert restored.project_id == project_id
        assert [n.name for n in await gns3.list_nodes(project_id)] == ["PC1"]

        with pytest.raises(GNS3Conflict, match="already exists"):
            await gns3.create_snapshot(project_id, "one pc")


@pytest.mark.lab
async def test_text_note_drawing_is_created(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        note = await gns3.create_text_note(project_id, "VLAN 10 <users> & guests", x=40, y=-60)
        assert (note.x, note.y) == (40, -60)
        drawings = await gns3.list_drawings(project_id)
    assert [d.drawing_id for d in drawings] == [note.drawing_id]
    root = ET.fromstring(drawings[0].svg)
    assert "VLAN 10 <users> & guests" in "".join(root.itertext())


@pytest.mark.lab
async def test_packet_capture_is_started_stopped_and_read(gns3_project: Any) -> None:
    project_id = gns3_project.project_id
    async with client_for(gns3_project) as gns3:
        links = await build_small_lab(gns3, project_id)
        link_id = links["PC1"].link_id
        with pytest.raises(GNS3NotFound, match="no packet capture"):
            await gns3.read_capture(project_id, link_id)

        await gns3.start_all(project_id)
        capturing = await gns3.start_capture(project_id, link_id)
        assert capturing.capturing is True and capturing.capture_file_name
        await gns3.stop_capture(project_id, link_id)
        assert (await gns3.get_link(project_id, link_id)).capturing is False
        pcap = await gns3.read_capture(project_id, link_id)
        await gns3.stop_all(project_id)
    assert pcap[:4] in PCAP_MAGICS


@pytest.mark.lab
async def test_a_project_file_is_written_and_read_back(gns3_project: Any) -> None:
    """The lab file lives in the project's directory (and travels with a duplicate)."""
    project_id = gns3_project.project_id
    text = "title: Lab\nstages: []\n# é\n".encode()
    async with client_for(gns3_project) as gns3:
        with pytest.raises(GNS3NotFound, match=r"file 'lab\.yaml' not found"):
            await gns3.read_project_file(project_id, "lab.yaml")
        await gns3.write_project_file(project_id, "lab.yaml", text)
        assert await gns3.read_project_file(project_id, "lab.yaml") == text
        await gns3.write_project_file(project_id, "lab.yaml", b"title: Again\n")
        assert await gns3.read_project_file(project_id, "lab.yaml") == b"title: Again\n"
