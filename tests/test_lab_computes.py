"""Labs on several GNS3 computes: the lab kit's extra computes and the copilot's tools on them.

On a real lab with a controller plus two computes (`gns3_computes_lab`): the kit starts, lists,
registers and stops real compute processes; `create_nodes` places nodes on a compute
named by the request or on the project's usual one; two VPCS on two different computes
ping each other through their cross-compute link (GNS3's UDP tunnel) over telnet and
over the console websocket, a capture on that link sees the pings (and, once stopped,
is said to be out of reach: GNS3 keeps it on the compute), a link filter drops
them, and a snapshot is taken while the project is stopped (as GNS3 wants with remote
computes). Restoring it needs the controller and the computes on different networks,
which one machine cannot give (docs/instructor/computes.md).
"""

from __future__ import annotations

import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.tools import call

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.gns3.computes import LOCAL_COMPUTE, busiest_compute
from jupyter_gns3_copilot.gns3.models import Node
from jupyter_gns3_copilot.labkit import LabError, LabServer, LabStatus
from jupyter_gns3_copilot.labkit.computes import MAX_COMPUTES
from jupyter_gns3_copilot.labkit.instance import CONFIG_FILE, ENV_FILE, STATE_FILE
from jupyter_gns3_copilot.labkit.processes import has_marker
from jupyter_gns3_copilot.testing.pytest_plugin import LabCompute
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, ToolContext


def lab_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`gns3-copilot-lab ARGS` in a process of its own, as a person runs it."""
    command = [sys.executable, "-m", "jupyter_gns3_copilot.labkit", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=240)


def _node(name: str, compute_id: str | None) -> Node:
    return Node(node_id=name, name=name, node_type="vpcs", compute_id=compute_id)


def test_the_projects_compute_is_where_most_of_its_nodes_are() -> None:
    assert busiest_compute([]) == LOCAL_COMPUTE
    nodes = [_node("a", "c-2"), _node("b", "c-1"), _node("c", "c-2")]
    assert busiest_compute(nodes) == "c-2"
    assert busiest_compute(nodes[:2]) == "c-1", "a tie goes to the smallest id"
    assert busiest_compute([*nodes[:2], _node("d", None)]) == LOCAL_COMPUTE


def test_a_lab_refuses_a_compute_count_it_cannot_run() -> None:
    with pytest.raises(LabError, match=f"between 0 and {MAX_COMPUTES}"):
        LabServer(computes=MAX_COMPUTES + 1)
    refused = lab_cli("start", "--computes", "-1", "--instance-dir", "/nonexistent")
    assert refused.returncode == 1
    assert "--computes must be between 0" in refused.stderr


@pytest.mark.lab
def test_the_kit_starts_lists_and_stops_its_computes(tmp_path: Path) -> None:
    """`start --computes 1` runs a registered compute with its own ports and private config;
    `status` lists it; `stop` ends it with the lab; no password is in the state file."""
    instance = str(tmp_path / "lab")
    started = lab_cli("start", "--computes", "1", "--instance-dir", instance)
    assert started.returncode == 0, started.stderr
    assert "compute:  compute-1 at http://127.0.0.2:" in started.stdout
    lab = LabServer.from_instance(instance)
    try:
        shown = lab_cli("status", "--instance-dir", instance)
        assert shown.returncode == 0, shown.stderr
        status = LabStatus.model_validate_json(shown.stdout)
        [compute] = status.computes
        assert compute.running and compute.name == "compute-1"
        assert compute.console_ports != status.console_ports
        assert compute.udp_ports != status.udp_ports
        [state] = lab.computes
        config = state.instance_dir / CONFIG_FILE
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        assert "compute_password" in config.read_text()
        state_text = (Path(instance) / STATE_FILE).read_text()
        assert (
            "password" not in state_text
            and "compute_password" not in (Path(instance) / ENV_FILE).read_text()
        )
        with httpx.Client(base_url=lab.url, trust_env=False, timeout=30) as client:
            login = client.post(
                "/v3/access/users/authenticate",
                json={"username": lab.username, "password": lab.password},
            )
            client.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
            listed = {c["compute_id"]: c["name"] for c in client.get("/v3/computes").json()}
            assert listed == {compute.compute_id: "compute-1"}
            assert client.post(f"/v3/computes/{compute.compute_id}/connect").status_code == 204
    finally:
        assert lab_cli("stop", "--instance-dir", instance).returncode == 0
    assert not lab.status().running
    assert not has_marker(compute.pid, str(status.lab_id)), "the compute outlived its lab"


@pytest.mark.lab
async def test_two_vpcs_on_two_computes_ping_capture_filter_and_snapshot(
    gns3_computes_lab: Any, gns3_computes: Any
) -> None:
    first, second = gns3_computes
    lab = gns3_computes_lab
    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        project = await gns3.create_project(f"pytest-computes-{uuid.uuid4().hex[:8]}")
        try:
            await _two_vpcs_on_two_computes(gns3, project.project_id, first, second)
        finally:
            await gns3.close_project(project.project_id)
            await gns3.delete_project(project.project_id)


async def _two_vpcs_on_two_computes(
    gns3: GNS3Client, project_id: str, first: LabCompute, second: LabCompute
) -> None:
    async with ConsolePool() as pool:
        ctx = ToolContext(gns3=gns3, project_id=project_id, consoles=pool, mode=LAB_AUTOMATION)
        refused = await call(
            ctx, "create_nodes", {"nodes": [{"template": "VPCS", "compute": "nowhere"}]}
        )
        [entry] = refused.result["nodes"]
        assert entry["status"] == "failed"
        assert entry["error"] == (
            f"No compute named 'nowhere'. Computes: {first.name}, {second.name}, local."
        )

        created = await call(
            ctx,
            "create_nodes",
            {"nodes": [{"template": "VPCS", "name": "PC1", "compute": first.name}]},
        )
        assert created.result["nodes"][0]["compute"] == first.name
        created = await call(
            ctx,
            "create_nodes",
            {
                "nodes": [
                    {"template": "VPCS", "name": "PC2", "compute": second.compute_id},
                    {"template": "VPCS", "name": "PC3"},
                ]
            },
        )
        assert [n.get("compute") for n in created.result["nodes"]] == [second.name, first.name]
        placed = {n.name: n.compute_id for n in await gns3.list_nodes(project_id)}
        assert placed == {
            "PC1": first.compute_id,
            "PC2": second.compute_id,
            "PC3": first.compute_id,
        }

        link = {"a": "PC1", "a_port": "e0", "b": "PC2", "b_port": "e0"}
        linked = await call(ctx, "create_links", {"links": [link]})
        assert linked.ok, linked.result
        started = await call(ctx, "start_nodes", {"nodes": ["PC1", "PC2"]})
        assert started.result["status"] == "success", started.result
        addressed = await call(
            ctx,
            "run_vpcs_commands",
            {
                "devices": [
                    {"device": "PC1", "commands": ["ip 10.9.0.1/24"]},
                    {"device": "PC2", "commands": ["ip 10.9.0.2/24"]},
                ]
            },
        )
        assert [e["status"] for e in addressed.result] == ["success"] * 2, addressed.result

        ends = link
        capture = await call(ctx, "start_capture", {"link": ends})
        assert capture.ok, capture.result

        async def ping(source: str, target: str) -> str:
            answer = await call(
                ctx,
                "run_show_commands",
                {"devices": [{"device": source, "commands": [f"ping {target} -c 2"]}]},
            )
            [result] = answer.result
            assert result["status"] == "success", result
            return str(result["output"])

        assert "10.9.0.2 icmp_seq=1 ttl=64" in await ping("PC1", "10.9.0.2")
        ctx.devices.console_transport = "websocket"  # through the controller, as in hub mode
        assert "10.9.0.1 icmp_seq=1 ttl=64" in await ping("PC2", "10.9.0.1")

        analysed = await call(ctx, "analyze_capture", {"link": ends, "display_filter": "icmp"})
        assert analysed.ok, analysed.result
        assert analysed.result["protocols"].get("ICMP", 0) >= 4, analysed.result
        stopped = await call(ctx, "stop_capture", {"link": ends})
        assert "analyze_capture cannot read it" in stopped.result["note"]
        unread = await call(ctx, "analyze_capture", {"link": ends})
        assert unread.result["error"] == (
            "The stopped capture of PC1 e0 <-> PC2 e0 stays on its GNS3 compute, out of reach; "
            "start the capture again and analyze it while it runs."
        )

        dropped = await call(ctx, "set_link_filter", {"link": ends, "packet_loss": 100})
        assert dropped.ok, dropped.result
        assert "icmp_seq=1 ttl=64" not in await ping("PC1", "10.9.0.2")
        cleared = await call(ctx, "set_link_filter", {"link": ends})
        assert cleared.ok, cleared.result
        assert "10.9.0.2 icmp_seq=1 ttl=64" in await ping("PC1", "10.9.0.2")

        # GNS3 snapshots a project only while it is stopped: the tool says so, with the
        # nodes on the two computes, before asking GNS3.
        running = await call(ctx, "create_snapshot", {"name": "two computes"})
        assert running.result["status"] == "refused", running.result
        assert sorted(running.result["running"]) == ["PC1", "PC2"]
        assert "stop_running true" in running.result["error"]
        assert (await call(ctx, "stop_nodes", {"nodes": ["*"]})).ok
        saved = await call(ctx, "create_snapshot", {"name": "two computes"})
        assert saved.ok, saved.result
        listed = await call(ctx, "list_snapshots", {})
        assert [entry["name"] for entry in listed.result["snapshots"]] == ["two computes"]
