"""Packet capture, snapshots, deletes and link faults.

Lab tests drive REAL VPCS nodes through the real gns3-server 3.0.6 of the `gns3_project`
fixture and the lab kit's uBridge stand-in, which writes the captures and applies the
link filters GNS3 sends it; every tool runs through `execute_tool`. The pure tests decode
pcap files generated with dpkt with both decoders (tshark must be installed: `make
system-deps`).
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import socket
import uuid
from pathlib import Path
from typing import Any

import dpkt
import pytest
from support.agent import wire

from jupyter_gns3_copilot.capture import CaptureError, analyze_pcap
from jupyter_gns3_copilot.capture.display_filter import compile_filter
from jupyter_gns3_copilot.chat.options import TurnOptions
from jupyter_gns3_copilot.chat.service import AgentService
from jupyter_gns3_copilot.chat.settings import ChatSettings
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.devices.template_cache import TemplateCache
from jupyter_gns3_copilot.gns3 import GNS3Client, GNS3Conflict
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text, tool_call
from jupyter_gns3_copilot.tools import (
    LAB_AUTOMATION,
    TEACHING,
    LabAccess,
    ToolContext,
    ToolOutcome,
    execute_tool,
    tools_for_mode,
)
from jupyter_gns3_copilot.tools.changes import PlannedChange, planned_change
from jupyter_gns3_copilot.tools.outcomes import read_result

MAC1, MAC2 = bytes.fromhex("005079666800"), bytes.fromhex("005079666801")
PC1_PC2 = {"a": "PC1", "a_port": "e0", "b": "PC2", "b_port": "e0"}
DECODERS = ("tshark", "python")


def client_for(project: Any) -> GNS3Client:
    return GNS3Client(
        project.url, username=project.username, password=project.password, token=project.token
    )


async def call(ctx: ToolContext, name: str, args: Any) -> ToolOutcome:
    """Run a tool; its result must serialise as the graph sends it to the model."""
    outcome = await execute_tool(ctx, name, args)
    json.dumps(outcome.result, ensure_ascii=False)
    return outcome


# -- pure: decoders ------------------------------------------------------------------------


def _ip(source: str, destination: str, protocol: int, payload: Any) -> dpkt.ethernet.Ethernet:
    packet = dpkt.ip.IP(
        src=socket.inet_aton(source), dst=socket.inet_aton(destination), p=protocol, data=payload
    )
    packet.len = len(bytes(packet))
    return dpkt.ethernet.Ethernet(dst=MAC2, src=MAC1, type=dpkt.ethernet.ETH_TYPE_IP, data=packet)


def sample_pcap() -> bytes:
    """ARP request, ICMP echo request and reply, a UDP datagram, a TCP SYN."""
    out = io.BytesIO()
    writer = dpkt.pcap.Writer(out)
    arp = dpkt.arp.ARP(
        op=dpkt.arp.ARP_OP_REQUEST,
        sha=MAC1,
        spa=socket.inet_aton("10.0.0.1"),
        tha=b"\0" * 6,
        tpa=socket.inet_aton("10.0.0.2"),
    )
    frames = [
        dpkt.ethernet.Ethernet(
            dst=b"\xff" * 6, src=MAC1, type=dpkt.ethernet.ETH_TYPE_ARP, data=arp
        ),
        *(
            _ip(src, dst, 1, dpkt.icmp.ICMP(type=kind, data=dpkt.icmp.ICMP.Echo(id=7, seq=1)))
            for src, dst, kind in (("10.0.0.1", "10.0.0.2", 8), ("10.0.0.2", "10.0.0.1", 0))
        ),
        _ip("10.0.0.1", "10.0.0.2", 17, dpkt.udp.UDP(sport=5000, dport=6000, ulen=8)),
        _ip("10.0.0.1", "10.0.0.3", 6, dpkt.tcp.TCP(sport=40000, dport=80, flags=dpkt.tcp.TH_SYN)),
    ]
    for index, frame in enumerate(frames):
        writer.writepkt(bytes(frame), 1_700_000_000 + index / 100)
    return out.getvalue()


@pytest.mark.parametrize("decoder", DECODERS)
async def test_both_decoders_give_the_same_columns(decoder: Any) -> None:
    analysis, cut = await analyze_pcap(sample_pcap(), decoder=decoder)
    assert analysis.decoder == decoder and not cut
    rows = [(r.no, r.source, r.destination, r.protocol) for r in analysis.packets]
    assert rows[:3] == [
        (1, "00:50:79:66:68:00", "ff:ff:ff:ff:ff:ff", "ARP"),
        (2, "10.0.0.1", "10.0.0.2", "ICMP"),
        (3, "10.0.0.2", "10.0.0.1", "ICMP"),
    ]
    assert rows[4] == (5, "10.0.0.1", "10.0.0.3", "TCP")
    infos = [r.info for r in analysis.packets]
    assert infos[0] == "Who has 10.0.0.2? Tell 10.0.0.1"
    assert infos[1].startswith("Echo (ping) request") and infos[2].startswith("Echo (ping) reply")
    assert "40000 → 80 [SYN]" in infos[4]
    assert [r.time for r in analysis.packets] == [0.0, 0.01, 0.02, 0.03, 0.04]
    assert analysis.matched == 5 and analysis.protocols["ICMP"] == 2

    icmp, _ = await analyze_pcap(sample_pcap(), decoder=decoder, display_filter="icmp", limit=1)
    assert icmp.matched == 2 and icmp.shown == 1 and icmp.protocols == {"ICMP": 2}
    mixed, _ = await analyze_pcap(
        sample_pcap(), decoder=decoder, display_filter="arp or (ip.dst == 10.0.0.3 && tcp)"
    )
    assert [r.no for r in mixed.packets] == [1, 5]


async def test_bad_captures_and_filters_are_clear_errors() -> None:
    with pytest.raises(CaptureError, match="not a pcap file"):
        await analyze_pcap(b"hello, this is no capture")
    with pytest.raises(CaptureError, match="tshark could not use the display filter 'icmp =='"):
        await analyze_pcap(sample_pcap(), decoder="tshark", display_filter="icmp ==")
    with pytest.raises(CaptureError, match="Without tshark, display filters may use"):
        await analyze_pcap(sample_pcap(), decoder="python", display_filter="frame.len > 60")
    for bad in ("(icmp", "icmp and", "ip.src == 1 ) x", "ip.ttl == 64"):
        with pytest.raises(CaptureError):
            compile_filter(bad)

    whole = sample_pcap()
    for decoder in DECODERS:
        # a capture still being written ends in the middle of a record
        analysis, cut = await analyze_pcap(whole[:-10], decoder=decoder)  # type: ignore[arg-type]
        assert cut and analysis.matched == 4
        bounded, cut = await analyze_pcap(whole, decoder=decoder, max_bytes=100)  # type: ignore[arg-type]
        assert cut and bounded.matched == 1


def test_the_new_tools_per_mode_and_their_argument_bounds() -> None:
    teaching = {spec.name for spec in tools_for_mode(TEACHING)}
    lab = {spec.name for spec in tools_for_mode(LAB_AUTOMATION)}
    watching = {"start_capture", "stop_capture", "analyze_capture"}
    saving = {"list_snapshots", "create_snapshot"}
    changing = {
        "restore_snapshot",
        "delete_nodes",
        "delete_links",
        "set_link_state",
        "set_link_filter",
    }
    assert watching | saving <= teaching and not changing & teaching
    assert watching | saving | changing <= lab
    specs = {spec.name: spec for spec in tools_for_mode(LAB_AUTOMATION)}
    assert {name for name in watching | saving | changing if specs[name].changes_lab} == changing


async def test_bad_arguments_are_refused_before_gns3_is_asked() -> None:
    ctx = ToolContext(
        gns3=GNS3Client("http://127.0.0.1:9", timeout=2.0),
        project_id="00000000-0000-0000-0000-000000000000",
        consoles=ConsolePool(),
        mode=LAB_AUTOMATION,
    )
    cases = {
        "set_link_filter": ({"link": PC1_PC2, "jitter_ms": 5}, "jitter_ms needs a delay_ms"),
        "delete_nodes": ({"nodes": ["*"]}, "name each node to delete"),
        "analyze_capture": ({"link": PC1_PC2, "limit": 1001}, "limit: Input should be less"),
        "create_snapshot": ({"name": "  "}, "the name is blank"),
        "set_link_state": ({"links": [PC1_PC2], "state": "sideways"}, "state: Input should be"),
    }
    for name, (args, problem) in cases.items():
        outcome = await call(ctx, name, args)
        assert not outcome.ok and problem in outcome.result["error"], outcome.result
    ctx.mode = TEACHING
    refused = await call(ctx, "restore_snapshot", {"name": "start"})
    assert refused.result["status"] == "refused"
    await ctx.gns3.aclose()


# -- the real lab ---------------------------------------------------------------------------


async def two_pcs(ctx: ToolContext, *, switch: bool = False) -> None:
    """PC1 and PC2 (10.0.0.1/2), linked directly (or through Switch1), started, addressed."""
    nodes = [{"template": "VPCS", "name": name} for name in ("PC1", "PC2")]
    links = [PC1_PC2]
    if switch:
        nodes.append({"template": "Ethernet switch", "name": "Switch1"})
        links = [
            {"a": f"PC{n}", "a_port": "e0", "b": "Switch1", "b_port": f"e{n - 1}"} for n in (1, 2)
        ]
    assert (await call(ctx, "create_nodes", {"nodes": nodes})).ok
    assert (await call(ctx, "create_links", {"links": links})).ok
    started = await call(ctx, "start_nodes", {"nodes": ["*"]})
    assert started.result["status"] == "success", started.result
    addressed = await call(
        ctx,
        "run_vpcs_commands",
        {"devices": [{"device": f"PC{n}", "commands": [f"ip 10.0.0.{n}/24"]} for n in (1, 2)]},
    )
    assert [e["status"] for e in addressed.result] == ["success", "success"], addressed.result


async def ping(ctx: ToolContext, count: int = 1) -> str:
    """PC1 pings PC2 (a diagnostic command: allowed in both modes); the console output."""
    outcome = await call(
        ctx,
        "run_show_commands",
        {"devices": [{"device": "PC1", "commands": [f"ping 10.0.0.2 -c {count}"]}]},
    )
    [entry] = outcome.result
    assert entry["status"] == "success", entry
    return str(entry["output"])


def replies(output: str) -> int:
    return len(re.findall(r"10\.0\.0\.2 icmp_seq=\d+ ttl=64", output))


@pytest.mark.lab
@pytest.mark.slow
async def test_a_teaching_mode_capture_shows_arp_and_icmp(
    gns3_project: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Given two addressed VPCS behind a switch; in teaching mode a capture on PC1's link
    during a ping shows the ARP exchange and the ICMP echo requests and replies, while the
    capture runs and after it stopped, with tshark and with the Python decoder alike."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        await two_pcs(ctx, switch=True)
        ctx.mode = TEACHING
        link = {"a": "Switch1", "a_port": "Ethernet0", "b": "pc1", "b_port": "eth0"}

        never = await call(ctx, "analyze_capture", {"link": link})
        assert never.result["error"] == (
            "PC1 e0 <-> Switch1 e0 has no packet capture; call start_capture first."
        )
        started = await call(ctx, "start_capture", {"link": link})
        assert started.ok and not started.changed_lab, started.result
        assert started.result["link"] == "PC1 e0 <-> Switch1 e0"
        assert replies(await ping(ctx, count=3)) == 3

        running = await call(ctx, "analyze_capture", {"link": link})
        assert running.ok, running.result
        result = running.result
        assert result["capturing"] is True and result["decoder"] == "tshark"
        assert result["columns"] == ["no", "time", "source", "destination", "protocol", "info"]
        infos = [(row[2], row[3], row[4], row[5]) for row in result["rows"]]
        assert any(
            p == "ARP" and i.startswith("Who has 10.0.0.2? Tell 10.0.0.1") for *_, p, i in infos
        )
        assert any(
            p == "ARP" and i.startswith("10.0.0.2 is at 00:50:79:66:68:") for *_, p, i in infos
        )
        requests = [r for r in infos if r[:3] == ("10.0.0.1", "10.0.0.2", "ICMP")]
        answers = [r for r in infos if r[:3] == ("10.0.0.2", "10.0.0.1", "ICMP")]
        assert len(requests) == 3 and all("Echo (ping) request" in r[3] for r in requests)
        assert len(answers) == 3 and all("Echo (ping) reply" in r[3] for r in answers)
        assert result["protocols"]["ICMP"] == 6
        assert "Capture stream" not in caplog.text, "read from the file, not the stream"
        # the running capture was read through GNS3's capture stream: the whole file
        found = await gns3.find_link(gns3_project.project_id, "PC1", "e0", "Switch1", "e0")
        streamed = await gns3.stream_capture(
            gns3_project.project_id, found.link_id, max_bytes=1 << 20
        )
        assert streamed == await gns3.read_capture(gns3_project.project_id, found.link_id)

        stopped = await call(ctx, "stop_capture", {"link": link})
        assert stopped.ok, stopped.result
        again = await call(ctx, "stop_capture", {"link": link})
        assert again.result["error"] == "PC1 e0 <-> Switch1 e0 is not being captured."
        icmp_only = await call(
            ctx, "analyze_capture", {"link": link, "display_filter": "icmp", "limit": 2}
        )
        assert icmp_only.result["capturing"] is False
        assert icmp_only.result["matched"] == 6 and icmp_only.result["shown"] == 2
        assert icmp_only.result["protocols"] == {"ICMP": 6}

        with pytest.raises(GNS3Conflict, match="no active packet capture"):
            await gns3.stream_capture(gns3_project.project_id, found.link_id, max_bytes=100)
        # the same real capture through the Python decoder
        pcap = await gns3.read_capture(gns3_project.project_id, found.link_id)
        decoded = {}
        for decoder in DECODERS:
            analysis, _ = await analyze_pcap(pcap, decoder=decoder)  # type: ignore[arg-type]
            decoded[decoder] = [
                (r.no, r.source, r.destination, r.protocol, r.info.split("  ")[0].split(",")[0])
                for r in analysis.packets
                if r.protocol in ("ARP", "ICMP")
            ]
        assert decoded["python"] == decoded["tshark"] and len(decoded["python"]) >= 8

        unknown = await call(ctx, "start_capture", {"link": {**link, "b_port": "e1"}})
        assert "'e1' is not a port of node PC1" in unknown.result["error"]
        missing = await call(ctx, "analyze_capture", {"link": PC1_PC2})
        assert missing.result["error"] == (
            "No link between PC1 e0 and PC2 e0. Links: PC1 e0 <-> Switch1 e0; "
            "PC2 e0 <-> Switch1 e1."
        )


@pytest.mark.lab
async def test_snapshot_restore_brings_back_a_deleted_node(gns3_project: Any) -> None:
    """Given PC1 - PC2 saved as snapshot 'start' (in teaching mode); when PC2 is deleted
    and the lab restored, PC2 and its link are back."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        nodes = [{"template": "VPCS", "name": name} for name in ("PC1", "PC2", "PC3")]
        assert (await call(ctx, "create_nodes", {"nodes": nodes})).ok
        assert (await call(ctx, "create_links", {"links": [PC1_PC2]})).ok
        ctx.mode = TEACHING
        idle = await call(ctx, "start_capture", {"link": PC1_PC2})
        assert idle.result["error"] == (
            "GNS3 refused: Cannot capture because there is no running device on this link"
        )
        saved = await call(ctx, "create_snapshot", {"name": "start"})
        assert saved.ok and not saved.changed_lab and saved.result["snapshot"]["name"] == "start"
        twice = await call(ctx, "create_snapshot", {"name": "start"})
        assert (
            twice.result["error"] == "A snapshot named 'start' exists already; pick another name."
        )
        listed = await call(ctx, "list_snapshots", {})
        assert [s["name"] for s in listed.result["snapshots"]] == ["start"]

        ctx.mode = LAB_AUTOMATION
        deleted = await call(ctx, "delete_nodes", {"nodes": ["PC2", "PC9"]})
        assert deleted.result["status"] == "partial_success" and deleted.changed_lab
        gone, unknown = deleted.result["nodes"]
        assert gone == {"name": "PC2", "status": "success"}
        assert unknown["error"] == "No node named 'PC9' in this project. Nodes: PC1, PC2, PC3."
        unlinked = await call(ctx, "delete_links", {"links": [{**PC1_PC2, "b": "PC3"}]})
        assert unlinked.result["links"][0]["error"].startswith("No link between PC1 e0 and PC3 e0.")
        topology = await call(ctx, "get_topology", {})
        assert "PC2" not in topology.result["text"]

        wrong = await call(ctx, "restore_snapshot", {"name": "nope"})
        assert (
            wrong.result["error"] == "No snapshot named 'nope' in this project. Snapshots: 'start'."
        )
        restored = await call(ctx, "restore_snapshot", {"name": "START"})
        assert restored.ok and restored.changed_lab, restored.result
        assert restored.result["nodes"] == ["PC1", "PC2", "PC3"]
        topology = await call(ctx, "get_topology", {})
        assert "PC1 e0 <-> PC2 e0" in topology.result["text"]

        removed = await call(ctx, "delete_links", {"links": [{**PC1_PC2, "a": "PC2", "b": "PC1"}]})
        assert removed.result["links"][0]["link"] in ("PC1 e0 <-> PC2 e0", "PC2 e0 <-> PC1 e0")
        assert "<->" not in (await call(ctx, "get_topology", {})).result["text"]


@pytest.mark.lab
async def test_a_running_lab_is_saved_only_when_asked_to_stop_and_restart_it(
    gns3_project: Any,
) -> None:
    """Given PC1 - PC2 running (GNS3 snapshots a stopped lab only); when a snapshot is
    asked without `stop_running`, then nothing is saved and the result names the running
    nodes and what to do (automation and teaching mode alike, each with its advice);
    teaching mode refuses `stop_running` (stopping nodes is automation mode's) and stops
    nothing; in automation mode it is a change to approve whose plan names the nodes, and
    it stops them, saves the snapshot and starts them again: running, their consoles
    answering, the snapshot listed; aborted while they are down, they stay stopped and
    the result says so."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        await two_pcs(ctx)

        held = await call(ctx, "create_snapshot", {"name": "running"})
        assert not held.ok and not held.changed_lab
        assert held.result["status"] == "refused" and held.result["running"] == ["PC1", "PC2"]
        assert held.result["error"].startswith(
            "No snapshot was taken: GNS3 saves a snapshot of a stopped lab only, and PC1, "
            "PC2 are running. Ask the user whether to stop them"
        )
        reading = read_result("create_snapshot", json.dumps(held.result), mode=LAB_AUTOMATION)
        assert (reading.summary, reading.outcome) == (
            "snapshot not saved · PC1, PC2 running",
            "refused",
        )
        assert reading.note is not None
        assert "`%copilot snapshot create NAME --stop --mode automation`" in reading.note
        assert "in GNS3, right-click PC1, PC2 and choose Stop" in reading.note
        assert (await planned_change(ctx, "create_snapshot", {"name": "x"})) == PlannedChange()

        ctx.mode = TEACHING
        stopping = {"name": "running", "stop_running": True}
        refused = await call(ctx, "create_snapshot", stopping)
        assert refused.result["status"] == "refused" and "stop_nodes" in refused.result["error"]
        assert not refused.changed_lab
        assert await planned_change(ctx, "create_snapshot", stopping) is None
        reading = read_result("create_snapshot", json.dumps(refused.result), arguments=stopping)
        assert reading.note == (
            "Teaching mode: I can't stop the running nodes for a snapshot; here is how you "
            "would do it: in GNS3, right-click the running nodes and choose Stop, then save "
            "the snapshot."
        )
        advised = await call(ctx, "create_snapshot", {"name": "running"})
        assert "ask the instructor for automation mode" in advised.result["error"]
        reading = read_result("create_snapshot", json.dumps(advised.result), mode=TEACHING)
        assert reading.note is not None and reading.note.startswith(
            "Teaching mode: I can't stop nodes, and GNS3 saves a snapshot of a stopped lab only"
        )
        statuses = {n.name: n.status for n in await gns3.list_nodes(gns3_project.project_id)}
        assert statuses == {"PC1": "started", "PC2": "started"}

        ctx.mode = LAB_AUTOMATION
        planned = await planned_change(ctx, "create_snapshot", stopping)
        assert planned is not None and planned.changes
        assert planned.plan == (
            "stop PC1, PC2 (the lab stops; what was not saved on a device (VPCS `save`, "
            "IOS `write memory`) is lost when it stops), save snapshot 'running', then "
            "start PC1, PC2 again"
        )
        saved = await call(ctx, "create_snapshot", stopping)
        assert saved.ok and saved.changed_lab, saved.result
        assert saved.result["snapshot"]["name"] == "running"
        assert saved.result["stopped"] == saved.result["started_again"] == ["PC1", "PC2"]
        reading = read_result("create_snapshot", json.dumps(saved.result), mode=LAB_AUTOMATION)
        assert (reading.summary, reading.outcome) == (
            "saved snapshot 'running' · PC1, PC2 stopped for it and started again",
            "ok",
        )
        statuses = {n.name: n.status for n in await gns3.list_nodes(gns3_project.project_id)}
        assert statuses == {"PC1": "started", "PC2": "started"}
        listed = await call(ctx, "list_snapshots", {})
        assert [s["name"] for s in listed.result["snapshots"]] == ["running"]
        # the name is taken now: the call fails before stopping anything, so it asks nothing
        assert await planned_change(ctx, "create_snapshot", stopping) == PlannedChange()
        shown = await call(
            ctx, "run_show_commands", {"devices": [{"device": "PC2", "commands": ["show ip"]}]}
        )
        assert shown.result[0]["status"] == "success" and "NAME" in shown.result[0]["output"]

        # Stop pressed once the nodes are down: they stay stopped, and the result says so.
        ctx.abort = asyncio.Event()
        ctx.progress = lambda event: (
            ctx.abort.set() if event["message"].startswith("saving snapshot") else None
        )
        aborted = await call(ctx, "create_snapshot", {"name": "later", "stop_running": True})
        assert aborted.result == {
            "status": "aborted",
            "tool": "create_snapshot",
            "error": "Stopped: the request was aborted; PC1, PC2 stayed stopped (start_nodes "
            "starts them again).",
        }
        assert aborted.changed_lab and not aborted.ok
        statuses = {n.name: n.status for n in await gns3.list_nodes(gns3_project.project_id)}
        assert statuses == {"PC1": "stopped", "PC2": "stopped"}


@pytest.mark.lab
@pytest.mark.slow
async def test_link_faults_change_a_real_ping(gns3_project: Any) -> None:
    """Given PC1 - PC2 pinging; 100% packet loss makes the ping fail and removing the
    filter makes it pass; a link taken down fails it and bringing it up restores it; a
    delay shows in the ping's round-trip time."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        await two_pcs(ctx)
        assert replies(await ping(ctx)) == 1

        lossy = await call(ctx, "set_link_filter", {"link": PC1_PC2, "packet_loss": 100})
        assert lossy.ok and lossy.changed_lab, lossy.result
        assert lossy.result["filters"] == {"packet_loss": [100]}
        assert replies(await ping(ctx, count=2)) == 0
        cleared = await call(ctx, "set_link_filter", {"link": PC1_PC2})
        assert cleared.result["filters"] == {}
        assert replies(await ping(ctx)) == 1

        down = await call(ctx, "set_link_state", {"links": [PC1_PC2], "state": "down"})
        assert down.result["links"][0]["state"] == "down", down.result
        assert replies(await ping(ctx)) == 0
        topology = await call(ctx, "get_topology", {})
        assert "PC1 e0 <-> PC2 e0 [suspended]" in topology.result["text"]
        up = await call(ctx, "set_link_state", {"links": [PC1_PC2], "state": "up"})
        assert up.result["links"][0]["state"] == "up"
        assert replies(await ping(ctx)) == 1

        delayed = await call(
            ctx, "set_link_filter", {"link": PC1_PC2, "delay_ms": 300, "jitter_ms": 10}
        )
        assert delayed.result["filters"] == {"delay": [300, 10]}
        output = await ping(ctx)
        # The injected delay is a lower bound on the round trip, not a measurement of ours.
        [rtt] = re.findall(r"ttl=64 time=([\d.]+) ms", output)
        assert float(rtt) >= 290, output
        assert (await call(ctx, "set_link_filter", {"link": PC1_PC2})).ok
        assert replies(await ping(ctx)) == 1


@pytest.mark.lab
async def test_faults_on_a_link_gns3_cannot_filter_are_refused(gns3_project: Any) -> None:
    """Between two Ethernet switches no node applies filters: both fault tools say so."""
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        switches = [{"template": "Ethernet switch", "name": f"SW{n}"} for n in (1, 2)]
        assert (await call(ctx, "create_nodes", {"nodes": switches})).ok
        trunk = {"a": "SW1", "a_port": "e7", "b": "SW2", "b_port": "e7"}
        assert (await call(ctx, "create_links", {"links": [trunk]})).ok
        lossy = await call(ctx, "set_link_filter", {"link": trunk, "packet_loss": 50})
        assert lossy.result["error"] == (
            "GNS3 cannot apply packet_loss on SW1 e7 <-> SW2 e7: neither end is a node "
            "type that filters traffic (e.g. two switches)."
        )
        down = await call(ctx, "set_link_state", {"links": [trunk], "state": "down"})
        assert down.result["status"] == "failed"
        assert down.result["links"][0]["error"].startswith("GNS3 cannot suspend this link")


@pytest.mark.lab
@pytest.mark.slow
async def test_a_teaching_chat_turn_captures_a_ping_and_the_model_sees_icmp(
    gns3_project: Any, scripted_llm: ScriptedLLM, scripted_model_settings: Any, tmp_path: Path
) -> None:
    """Given two addressed VPCS; in a teaching-mode chat turn the (strict, scripted) model
    starts a capture, pings, analyses the capture and answers: the tool result it is sent
    holds the ICMP echo requests and replies as table rows, and no capture bytes."""
    link = {"a": "PC1", "a_port": "e0", "b": "PC2", "b_port": "e0"}
    scripted_llm.add(
        tool_call("start_capture", {"link": link}, id="call_capture"),
        tool_call(
            "run_show_commands",
            {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.2 -c 2"]}]},
            id="call_ping",
        ),
        tool_call("analyze_capture", {"link": link, "display_filter": "icmp"}, id="call_analyze"),
        text("PC1's pings crossed the link: two echo requests, two replies."),
        text("Capture", when={"tools": False}),
    )
    async with client_for(gns3_project) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=gns3_project.project_id, consoles=pool, mode=LAB_AUTOMATION
        )
        await two_pcs(ctx)
        service = await AgentService.open(
            gns3_project.project_id, ChatSettings(tmp_path), lab=LabAccess(gns3, pool)
        )
        try:
            events = [
                wire(event)
                async for event in service.stream_chat(
                    "Show me what a ping looks like on the wire",
                    user_id="student1",
                    llm=scripted_model_settings,
                    options=TurnOptions(mode=TEACHING),
                )
            ]
        finally:
            await service.close()

    ended = {e["tool_call_id"]: e for e in events if e["type"] == "tool_end"}
    assert set(ended) == {"call_capture", "call_ping", "call_analyze"}
    assert not [e for e in events if e["type"] == "error"], events
    final = next(r for r in scripted_llm.chat_requests if r.reply_index == 3)
    [sent] = [m for m in final.messages if m.get("tool_call_id") == "call_analyze"]
    result = json.loads(sent["content"])
    assert result["status"] == "success" and result["matched"] == 4
    rows = [(row[2], row[3], row[4]) for row in result["rows"]]
    assert rows.count(("10.0.0.1", "10.0.0.2", "ICMP")) == 2
    assert rows.count(("10.0.0.2", "10.0.0.1", "ICMP")) == 2
    assert all("Echo (ping)" in row[5] for row in result["rows"])


# -- the template list shared by turns -------------------------------------------------------


@pytest.mark.lab
async def test_the_template_list_is_read_once_for_many_turns(gns3_project: Any) -> None:
    """Given GNS3's real template list behind a `TemplateCache`; when templates are asked
    for again and again; then GNS3 is asked once, again only for a template id the copy
    lacks or once the copy is older than its maximum age, and readers at once share one
    read."""
    now = [0.0]
    async with client_for(gns3_project) as gns3:
        asked: list[str] = []

        async def record(request: Any) -> None:
            if request.url.path.endswith("/templates"):
                asked.append(request.url.path)

        gns3._http.event_hooks["request"].append(record)
        cache = TemplateCache(gns3, max_age=60.0, clock=lambda: now[0])
        vpcs = await gns3.find_template("VPCS")
        asked.clear()
        found = await asyncio.gather(*(cache.get(vpcs.template_id) for _ in range(5)))
        assert [t.name if t else None for t in found] == ["VPCS"] * 5 and len(asked) == 1
        now[0] = 59.0
        assert await cache.get(vpcs.template_id) is not None and len(asked) == 1
        assert await cache.get(str(uuid.uuid4())) is None and len(asked) == 2
        now[0] = 59.0 + 60.0
        assert await cache.get(vpcs.template_id) is not None and len(asked) == 3
