"""Where the hub service puts students' copies of a lab (`placement`), and the dashboard's
view of the GNS3 computes.

On a real lab with two extra computes (`gns3_computes_lab`) and the real dashboard service
(tests/support/dashboard.py, whose caller lookup is the one stand-in): a group mapping
puts each student's copy on their group's compute, where the student's own copilot (her
GNS3 token, consoles through the controller's websocket as in hub mode) adds a PC that
lands on the same compute and pings, and a reset copy goes back to the same compute; `least_loaded`
spreads a class over the computes (all of them on this one host report the same memory,
so the copies already given decide); a mapping naming a compute GNS3 lacks is refused
with the valid ones; the overview lists each compute's load, students and devices.
"""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.dashboard import dashboard_service, record_usage
from support.tools import by_device, call

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.gns3.access import AccessToken
from jupyter_gns3_copilot.gns3.computes import LOCAL_COMPUTE, ComputeLoad
from jupyter_gns3_copilot.hub.placement import check_rule, describe_placement, least_loaded
from jupyter_gns3_copilot.tools import LAB_AUTOMATION, ToolContext


def _load(compute_id: str, memory: float, cpu: float) -> ComputeLoad:
    return ComputeLoad(
        compute_id=compute_id, name=compute_id, cpu_usage_percent=cpu, memory_usage_percent=memory
    )


def test_least_loaded_weighs_memory_then_copies_given_then_cpu() -> None:
    loads = [_load("a", 41, 90), _load("b", 48, 10), _load("c", 70, 0)]
    assert least_loaded(loads, Counter()) == "b", "41% and 48% are one step: less CPU wins"
    assert least_loaded(loads, Counter({"b": 1})) == "a"
    assert least_loaded([_load("a", 35, 0), *loads], Counter({"a": 5})) == "a"
    assert least_loaded([], Counter()) is None


def test_the_placement_setting_is_checked_and_described() -> None:
    assert check_rule("least_loaded") == "least_loaded"
    assert check_rule({"tas": "compute-2"}) == {"tas": "compute-2"}
    for wrong in ("busiest", {"tas": ""}, {"tas": 2}, ["compute-1"]):
        with pytest.raises(ValueError, match="placement must be 'template', 'least_loaded'"):
            check_rule(wrong)
    assert describe_placement("template") == "where the template's devices are"
    assert "group tas to compute-2" in describe_placement({"tas": "compute-2"})


async def _template(gns3: GNS3Client, name: str) -> str:
    template = await gns3.create_project(name)
    await gns3.create_node_from_template(template.project_id, "VPCS", "PC1")
    await gns3.close_project(template.project_id)
    return template.name


async def _node_compute(gns3: GNS3Client, project_id: str) -> str | None:
    await gns3.open_project(project_id)
    (node,) = await gns3.list_nodes(project_id)
    return node.compute_id


async def _alices_copilot_works_on_her_compute(
    url: str, token: AccessToken, project_id: str, compute: str
) -> None:
    """Alice's copilot, with her own GNS3 token and consoles through the controller's
    websocket as in hub mode, adds a PC to her placed lab (it goes on her lab's compute),
    links and starts both, and they ping."""
    async with (
        GNS3Client(url, token=token.token.get_secret_value()) as mine,
        ConsolePool() as pool,
    ):
        ctx = ToolContext(
            gns3=mine,
            project_id=project_id,
            consoles=pool,
            mode=LAB_AUTOMATION,
            console_transport="websocket",
        )
        created = await call(ctx, "create_nodes", {"nodes": [{"template": "VPCS", "name": "PC2"}]})
        assert created.result["nodes"][0]["compute"] == compute, created.result
        link = {"a": "PC1", "a_port": "e0", "b": "PC2", "b_port": "e0"}
        assert (await call(ctx, "create_links", {"links": [link]})).ok
        started = await call(ctx, "start_nodes", {"nodes": ["*"]})
        assert started.result["status"] == "success", started.result
        addresses = {"PC1": "10.8.0.1/24", "PC2": "10.8.0.2/24"}
        devices = [{"device": d, "commands": [f"ip {a}"]} for d, a in addresses.items()]
        assert (await call(ctx, "run_vpcs_commands", {"devices": devices})).ok
        ping = [{"device": "PC2", "commands": ["ping 10.8.0.1 -c 2"]}]
        ran = await call(ctx, "run_show_commands", {"devices": ping})
        assert "10.8.0.1 icmp_seq=1 ttl=64" in by_device(ran.result)["PC2"]["output"], ran.result


@pytest.mark.lab
async def test_copies_go_to_their_groups_compute_and_the_dashboard_shows_computes(
    gns3_computes_lab: Any, gns3_computes: Any, tmp_path: Path
) -> None:
    first, second = gns3_computes
    lab, prefix = gns3_computes_lab, f"t{uuid.uuid4().hex[:6]}-"
    gns3 = GNS3Client(lab.url, username=lab.username, password=lab.password)
    rule = {"tas": second.compute_id, "students": first.name}
    async with (
        gns3,
        dashboard_service(tmp_path, gns3, account_prefix=prefix, placement=rule) as service,
    ):
        await record_usage(service.store, "alice", 100, "turn-a1")  # alice is in "students"
        template = await _template(gns3, f"{prefix}placed")
        async with service.client() as api:
            alices = await api.post(
                "api/labs/assign", json={"template": template, "students": ["alice"]}
            )
            assert alices.status_code == 200, alices.text
            bobs = await api.post(
                "api/labs/assign", json={"template": template, "students": ["bob"], "group": "tas"}
            )
            assert bobs.status_code == 200, bobs.text
            alice_copy = alices.json()["alice"]["project_id"]
            bob_copy = bobs.json()["bob"]["project_id"]
            assert await _node_compute(gns3, alice_copy) == first.compute_id
            assert await _node_compute(gns3, bob_copy) == second.compute_id
            token = await service.deps.accounts.students.student_token("alice")
            await _alices_copilot_works_on_her_compute(lab.url, token, alice_copy, first.name)

            overview = (await api.get("api/students")).json()
            computes = {c["name"]: c for c in overview["computes"]}
            assert list(computes) == [LOCAL_COMPUTE, first.name, second.name]
            assert (computes[first.name]["students"], computes[first.name]["nodes"]) == (
                ["alice"],
                2,
            )
            assert (computes[second.name]["students"], computes[second.name]["nodes"]) == (
                ["bob"],
                1,
            )
            assert all(0 <= c["memory_usage_percent"] <= 100 for c in computes.values())
            page = await api.get("")
            assert 'id="computes"' in page.text and "group tas to" in page.text

            reset = await api.post(
                "api/labs/reset",
                json={"student": "alice", "project": alice_copy, "template": template},
            )
            assert reset.status_code == 200, reset.text
            assert await _node_compute(gns3, reset.json()["project_id"]) == first.compute_id

    wrong = {"tas": "nowhere"}
    admin = GNS3Client(lab.url, username=lab.username, password=lab.password)
    async with (
        admin,
        dashboard_service(
            tmp_path / "wrong", admin, account_prefix=prefix, placement=wrong
        ) as service,
    ):
        async with service.client() as api:
            refused = await api.post(
                "api/labs/assign",
                json={"template": template, "students": ["carol"], "group": "tas"},
            )
        assert refused.status_code == 409
        assert refused.json()["error"]["message"] == (
            f"placement: No compute named 'nowhere'. Computes: {first.name}, {second.name}, local."
        )
        assert await service.deps.accounts.student_projects("carol") == []


@pytest.mark.lab
async def test_least_loaded_spreads_a_class_over_the_computes(
    gns3_computes_lab: Any, gns3_computes: Any, tmp_path: Path
) -> None:
    lab, prefix = gns3_computes_lab, f"t{uuid.uuid4().hex[:6]}-"
    gns3 = GNS3Client(lab.url, username=lab.username, password=lab.password)
    async with (
        gns3,
        dashboard_service(
            tmp_path, gns3, account_prefix=prefix, placement="least_loaded"
        ) as service,
    ):
        template = await _template(gns3, f"{prefix}spread")
        async with service.client() as api:
            assigned = await api.post(
                "api/labs/assign",
                json={"template": template, "students": ["alice", "bob", "carol"]},
            )
            assert assigned.status_code == 200, assigned.text
            placed = [
                await _node_compute(gns3, copy["project_id"]) for copy in assigned.json().values()
            ]
        everywhere = {LOCAL_COMPUTE, *(c.compute_id for c in gns3_computes)}
        assert set(placed) == everywhere
