"""The copilot drives FRR routers: what the model is told about their dialect, the
routers the tools create, and the console tools, `%copilot run` and the approvals on
them, against the REAL local GNS3 lab (the lab kit's "FRR router" template), a real
Jupyter server subprocess and IPython shell with the `%copilot` magics, and the scripted
model server (a TEST DOUBLE of the OpenAI API).

The routed part shares one project for the module (`routed`): R1 and R2, made by the
`create_nodes` tool, cabled eth0 to eth0 (10.0.12.0/24), started and configured for OSPF
on their consoles; booting them is what the tests pay for once.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.agent import USER, collect, copilot
from support.consoles import router_console
from support.server import magics_shell
from support.tools import call

from jupyter_gns3_copilot.agent.device_notes import HEADER
from jupyter_gns3_copilot.agent.llm_access import ModelSettings
from jupyter_gns3_copilot.console import ConsolePool, ConsoleSession
from jupyter_gns3_copilot.devices.address_book import addresses_text
from jupyter_gns3_copilot.devices.readers import Address
from jupyter_gns3_copilot.events import ApprovalRequiredEvent
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit.frr import FRR_TEMPLATE
from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint
from jupyter_gns3_copilot.testing.pytest_plugin import SCRIPTED_MODEL_NAME, GNS3Project
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text
from jupyter_gns3_copilot.tools import ToolContext
from jupyter_gns3_copilot.tools.modes import LAB_AUTOMATION

TITLE_REPLY = {"tools": False}


def skip_without_frr(lab: Any) -> None:
    problem = getattr(lab, "router_problems", {}).get(FRR_TEMPLATE)
    if problem:
        pytest.skip(problem)


@pytest.mark.lab
async def test_the_model_is_told_frr_differs_from_ios_when_the_lab_has_an_frr_router(
    gns3_lab: Any,
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a project with PC1 only, the system prompt carries no dialect notes; once R1
    (FRR router, not even started) is added, the next turn's system prompt names R1 as
    `frr` with the notes from the FRR skills: CIDR addresses, `router ospf` without a
    number, `show interface brief`."""
    skip_without_frr(gns3_lab)
    pid = gns3_project.project_id
    scripted_llm.add(
        text("Hello.", when={"last_message": "hello"}),
        text("Again.", when={"last_message": "again"}),
        text("Chat", when=TITLE_REPLY),
    )
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        await gns3.create_node_from_template(pid, "VPCS", "PC1")
        async with copilot(gns3_project, tmp_path) as service:
            await collect(service.stream_chat("hello", user_id=USER, llm=scripted_model_settings))
            await gns3.create_node_from_template(pid, FRR_TEMPLATE, "R1", x=200)
            await collect(service.stream_chat("again", user_id=USER, llm=scripted_model_settings))
    prompts = {
        r.messages[-1]["content"]: r.messages[0]["content"]
        for r in scripted_llm.chat_requests
        if r.body.get("tools")
    }
    assert "PC1" in prompts["hello"] and HEADER not in prompts["hello"]
    assert "ip address" not in prompts["hello"]
    notes = prompts["again"].split(HEADER, 1)[1]
    frr_line = next(line for line in notes.splitlines() if line.startswith("- frr (R1):"))
    assert "`ip address 10.0.0.1/24`" in frr_line
    assert "`router ospf` without a process number" in frr_line
    assert "`show interface brief`, not `show ip interface brief`" in frr_line
    assert "vpcs" not in notes


def test_the_topologys_address_lines_list_each_device_in_name_order() -> None:
    """The topology's lines list each device's addresses per interface, devices in name
    order, `none` when a device has none."""
    found = [
        Address("eth0", ipaddress.IPv4Interface("10.0.12.1/24"), "eth0 up 10.0.12.1/24"),
        Address("eth0", ipaddress.IPv4Interface("10.0.99.1/24"), "10.0.99.1/24"),
    ]
    text = addresses_text({"R10": [], "R2": found})
    assert text == "Addresses:\n  R2   eth0 10.0.12.1/24, eth0 10.0.99.1/24\n  R10  none\n"
    assert addresses_text({}) == ""


# -- two routers, booted once for the module -------------------------------------------------

OSPF_TIMEOUT = 120.0
ROUTERS = ("R1", "R2")


async def _until_full(session: ConsoleSession) -> None:
    deadline = time.monotonic() + OSPF_TIMEOUT
    while True:
        shown = await session.send("show ip ospf neighbor json")
        neighbors = json.loads(shown.output)["neighbors"]
        states = [n["nbrState"] for found in neighbors.values() for n in found]
        if states and all(state.startswith("Full") for state in states):
            return
        assert time.monotonic() < deadline, f"no OSPF Full: {shown.output}"
        await asyncio.sleep(1)


async def _build(project: GNS3Project) -> dict[str, Any]:
    """R1 and R2 created by the `create_nodes` tool, cabled, started and running OSPF;
    what the tool answered and the prompts their consoles opened at."""
    pid = project.project_id
    async with GNS3Client(project.url, token=project.token) as gns3, ConsolePool() as pool:
        ctx = ToolContext(
            gns3=gns3, project_id=pid, consoles=pool, mode=LAB_AUTOMATION, abort=asyncio.Event()
        )
        nodes = [{"template": FRR_TEMPLATE, "name": name} for name in ROUTERS]
        created = await call(ctx, "create_nodes", {"nodes": nodes})
        await gns3.create_link(pid, "R1", "e0", "R2", "e0")
        await gns3.start_all(pid)
        sessions = [await router_console(gns3, pid, name, project.url) for name in ROUTERS]
        prompts = [session.prompt for session in sessions]
        try:
            for number, session in enumerate(sessions, start=1):
                configured = await session.configure(
                    [
                        "interface eth0",
                        f"ip address 10.0.12.{number}/24",
                        "ip ospf network point-to-point",
                        "ip ospf hello-interval 1",
                        "ip ospf dead-interval 4",
                        "exit",
                        "router ospf",
                        f"ospf router-id {number}.{number}.{number}.{number}",
                        "network 10.0.12.0/24 area 0",
                    ]
                )
                assert all(line.ok for line in configured), configured
            await _until_full(sessions[0])
        finally:
            for session in sessions:
                await session.close()
    return {"created": created.result, "prompts": prompts}


@pytest.fixture(scope="module")
def routed(gns3_lab: Any, gns3_http: httpx.Client) -> Iterator[tuple[GNS3Project, dict[str, Any]]]:
    """A project of the module with R1 and R2 running OSPF (module docstring), and what
    building it saw; closed and deleted afterwards."""
    skip_without_frr(gns3_lab)
    name = f"pytest-copilot-frr-{uuid.uuid4().hex[:8]}"
    response = gns3_http.post("/v3/projects", json={"name": name})
    assert response.status_code in (200, 201), response.text
    project = GNS3Project(
        project_id=response.json()["project_id"],
        name=name,
        url=gns3_lab.url,
        username=gns3_lab.username,
        password=gns3_lab.password,
        token=gns3_http.headers["Authorization"].removeprefix("Bearer "),
    )
    try:
        yield project, asyncio.run(_build(project))
    finally:
        path = f"/v3/projects/{project.project_id}"
        gns3_http.post(f"{path}/close")
        gns3_http.delete(path)


@pytest.fixture(scope="module")
def module_llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM(models=[SCRIPTED_MODEL_NAME]) as server:
        yield server


@pytest.fixture(scope="module")
def server(
    gns3_lab: Any, module_llm: ScriptedLLM, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterServer]:
    """A Jupyter server where every change waits for a person's approval."""
    stack = JupyterServer(
        gns3_lab,
        ModelEndpoint.scripted_model(module_llm),
        tmp_path_factory.mktemp("copilot-frr"),
        traits={"require_approval": "changes"},
    )
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def shell(
    server: JupyterServer,
    routed: tuple[GNS3Project, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[InteractiveShell]:
    """The `%copilot` magics on `server`, using the routers' project."""
    with magics_shell(server, monkeypatch) as ip:
        ip.magics_manager.registry["CopilotMagics"].api.use(routed[0].project_id)
        yield ip


def api(shell: InteractiveShell) -> Any:
    return shell.magics_manager.registry["CopilotMagics"].api


@pytest.mark.lab
@pytest.mark.slow
def test_routers_made_by_the_tool_prompt_with_their_own_names(
    routed: tuple[GNS3Project, dict[str, Any]],
) -> None:
    """`create_nodes` from the FRR router template: each router is said to speak `frr`,
    and once started its console opens at its own name (`R1#`, not `router#`)."""
    _, built = routed
    created = {node["name"]: node for node in built["created"]["nodes"]}
    assert set(created) == set(ROUTERS)
    assert all(
        node["status"] == "success" and node["dialect"] == "frr" for node in created.values()
    )
    assert built["prompts"] == ["R1#", "R2#"]


@pytest.mark.lab
@pytest.mark.slow
def test_copilot_run_shows_ospf_neighbours_on_both_routers(
    shell: InteractiveShell, capsys: Any
) -> None:
    """`%copilot run R1, R2: show ip ospf neighbor` (run_show_commands over both routers)
    gives each its neighbour in state Full; `%copilot run R1: ...` alone gives R1's."""
    both = shell.run_cell("%copilot run R1, R2: show ip ospf neighbor")
    assert both.error_in_exec is None, both.error_in_exec
    results = both.result.tool_results
    assert set(results) == {"R1", "R2"}
    assert "2.2.2.2" in results["R1"].output and "1.1.1.1" in results["R2"].output
    assert all(r.status == "ok" and "Full" in r.output for r in results.values()), results
    assert both.result.tool_calls[0].name == "run_show_commands"

    capsys.readouterr()
    one = shell.run_cell("%copilot run R1: show ip ospf neighbor")
    assert list(one.result.tool_results) == ["R1"]
    assert "Full" in capsys.readouterr().out


@pytest.mark.lab
@pytest.mark.slow
def test_configuration_asks_first_in_lab_mode_and_reports_a_rejected_line(
    shell: InteractiveShell,
) -> None:
    """In lab mode, configuration lines for R1 wait for approval (the plan names them),
    then run; vtysh's `% Unknown command` for the IOS-style address is a failed line:
    the card's outcome is partial, the line's own result failed, and the CIDR address
    after it is set."""
    copilot = api(shell)
    plans: list[str] = []

    def approve_when_asked(event: Any) -> None:
        if isinstance(event, ApprovalRequiredEvent):
            plans.append(event.summary)
            copilot.approve(session=event.session_id)

    commands = "interface eth1; ip address 10.0.13.1 255.255.255.0; ip address 10.0.13.1/24"
    turn = copilot.run("R1", commands, tool="config", mode="lab", on_event=approve_when_asked)
    assert len(plans) == 1 and "R1" in plans[0] and "10.0.13.1/24" in plans[0], plans
    [call] = turn.tool_calls
    assert call.name == "run_config_commands" and call.outcome == "partial"
    r1 = turn.tool_results["R1"]
    assert r1.status == "partial" and r1.delivery == "partial_success"
    assert r1.error is not None
    [failed] = r1.error.splitlines()
    assert failed.startswith("ip address 10.0.13.1 255.255.255.0: % Unknown command"), failed
    shown = copilot.run("R1", "show interface brief", mode="lab")
    assert "10.0.13.1/24" in shown.tool_results["R1"].output


@pytest.mark.lab
@pytest.mark.slow
def test_teaching_mode_refuses_configuration_on_the_router(shell: InteractiveShell) -> None:
    """In teaching mode a configuration line for R1 is refused, nothing asked or sent;
    show commands still run."""
    copilot = api(shell)
    asked: list[Any] = []
    turn = copilot.run(
        "R1",
        "interface eth2; ip address 10.0.14.1/24",
        tool="config",
        mode="teaching",
        on_event=lambda event: (
            asked.append(event) if isinstance(event, ApprovalRequiredEvent) else None
        ),
    )
    assert asked == []
    assert turn.tool_calls[0].outcome == "refused"
    refused = shell.run_cell("%copilot run --mode teaching R1: write memory")
    assert refused.result.tool_results["R1"].status == "refused"
    shown = copilot.run("R1", "show interface brief", mode="teaching")
    assert shown.tool_results["R1"].ok and "10.0.14.1" not in shown.tool_results["R1"].output


@pytest.mark.lab
@pytest.mark.slow
def test_show_topology_lists_the_routers_with_their_addresses(
    shell: InteractiveShell, capsys: Any
) -> None:
    """`%copilot show topology` prints the routers and, under `Addresses:`, each router's
    addresses as read on its console (vtysh's `show interface brief`)."""
    capsys.readouterr()
    shown = shell.run_cell("%copilot show topology")
    assert shown.error_in_exec is None, shown.error_in_exec
    out = capsys.readouterr().out
    nodes, addresses = out.split("Addresses:", 1)
    assert "R1" in nodes and "R2" in nodes and "R1 e0 <-> R2 e0" in nodes
    rows = {line.split()[0]: line for line in addresses.strip().splitlines()}
    assert "eth0 10.0.12.1/24" in rows["R1"] and "eth0 10.0.12.2/24" in rows["R2"], out
