"""The example notebooks, executed headlessly (nbclient, widget state stored) against a
real Jupyter server running the extension, the local GNS3 lab (real gns3-server and VPCS)
and the scripted model (a TEST DOUBLE replaying `tests/notebook_scripts/<notebook>.json`).

The kernel finds the server through the variables the extension publishes (set here in
the kernel's environment, since nbclient, not the server, starts it); each notebook uses
its project by name, as a user would, and the test prepares that project beforehand.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from support.notebooks import Executed, device_outputs, tool_items

from jupyter_gns3_copilot.notebook.lab_report import CHECKS_MIME
from jupyter_gns3_copilot.testing.local_stack import (
    NOTEBOOK_PROJECTS,
    JupyterServer,
    ModelEndpoint,
    delete_projects,
    notebook_replies,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text
from jupyter_gns3_copilot.turns import TURN_MIME_TYPE

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SCRIPTS = Path(__file__).resolve().parent / "notebook_scripts"
NAMES = sorted(NOTEBOOK_PROJECTS)
CELL_TIMEOUT = 180


# -- structure (no lab needed) ------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_each_notebook_is_clean_and_has_its_project_and_script(name: str) -> None:
    """Each example notebook is valid, saved without outputs, loads the extension, uses
    its project by name, and has a scripted-model script that loads."""
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.outputs and cell.execution_count is None for cell in code)
    assert code[0].source.startswith("%load_ext jupyter_gns3_copilot")
    project = NOTEBOOK_PROJECTS[name].name
    assert any(f'%copilot use "{project}"' in cell.source for cell in code)
    assert ScriptedLLM(SCRIPTS / f"{name}.json").remaining > 0
    assert notebook.cells[0].cell_type == "markdown"


def test_no_notebooks_script_answers_another_notebooks_messages() -> None:
    """`make lab` queues every notebook's script in one scripted model, where the first
    waiting reply whose `when` matches answers: no reply of one notebook's script may
    match what another notebook sends (its cells' messages, the objective ids its lab's
    `check_objectives` returns), whichever notebook a student runs first."""
    import re

    from jupyter_gns3_copilot.objectives.loader import load_lab

    sent: dict[str, list[str]] = {}
    for name, recipe in NOTEBOOK_PROJECTS.items():
        notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        sent[name] = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
        if recipe.lab_file is not None:
            lab = load_lab(recipe.lab_file.read_text()).lab
            sent[name] += [f'"id": "{o.id}"' for s in lab.stages for o in s.objectives]
    for name in NOTEBOOK_PROJECTS:
        replies = json.loads((SCRIPTS / f"{name}.json").read_text())["replies"]
        patterns = [
            pattern
            for reply in replies
            for pattern in (reply["when"].get("last_message"), reply["when"].get("any_message"))
            if pattern
        ]
        for other, texts in sent.items():
            if other != name:
                matched = [(p, t) for p in patterns for t in texts if re.search(p, t)]
                assert not matched, f"{name}'s script answers {other}: {matched}"


def test_the_graded_labs_script_replays_each_students_own_commands() -> None:
    """The scripted model's script for 04-graded-lab holds the lab's templates: rendered
    for two students, it types each one's own addresses (those their objectives show)."""
    from jupyter_gns3_copilot.objectives.loader import load_lab

    recipe = NOTEBOOK_PROJECTS["04-graded-lab"]
    assert recipe.lab_file is not None
    document = load_lab(recipe.lab_file.read_text())
    typed = {}
    for user in ("alice", "bob"):
        replies = notebook_replies(SCRIPTS / "04-graded-lab.json", recipe, user, "salt")
        [pcs, r1] = replies[1].tool_calls
        typed[user] = pcs.arguments["devices"][0]["commands"][0]
        pc1_text = document.for_student(user, "salt").stages[0].objectives[0].text
        assert typed[user] == f"ip {pc1_text.split()[2]}", (typed[user], pc1_text)
        assert r1.arguments["devices"][0]["commands"][0].startswith("ip addr add 10.0.")
        assert "{{" not in json.dumps([r.model_dump(mode="json") for r in replies])
    assert typed["alice"] != typed["bob"]


def test_the_ospf_labs_subnets_never_overlap_and_its_script_types_each_students_own() -> None:
    """The OSPF lab draws each of its five subnets from a pool of its own, so no student's
    subnets overlap; its objectives use the routing check kinds; the scripted model's
    script, rendered for a student, configures that student's addresses and networks on
    the routers and takes down a link the project really has."""
    import ipaddress

    from jupyter_gns3_copilot.objectives.loader import load_lab
    from jupyter_gns3_copilot.objectives.parameters import student_values

    recipe = NOTEBOOK_PROJECTS["05-ospf-lab"]
    assert recipe.lab_file is not None
    document = load_lab(recipe.lab_file.read_text())
    lab = document.lab
    kinds = {check.kind for stage in lab.stages for o in stage.objectives for check in o.checks}
    assert {"address", "ospf_neighbor", "route", "json", "reachable"} <= kinds
    for number in range(50):
        subnets = list(student_values(lab, f"student{number}", "salt").values())
        assert all(isinstance(subnet, ipaddress.IPv4Network) for subnet in subnets)
        assert len(subnets) == 5
        for index, subnet in enumerate(subnets):
            assert not any(subnet.overlaps(other) for other in subnets[index + 1 :]), subnets

    assert [recipe.nodes[name][0] for name in ("R1", "R2", "R3")] == ["FRR router"] * 3
    typed = {}
    for user in ("alice", "bob"):
        values = student_values(lab, user, "salt")
        replies = notebook_replies(SCRIPTS / "05-ospf-lab.json", recipe, user, "salt")
        assert "{{" not in json.dumps([r.model_dump(mode="json") for r in replies])
        calls = {call.id: call.arguments for reply in replies for call in reply.tool_calls}
        r1 = calls["call_address_routers"]["devices"][0]
        shown = document.for_student(user, "salt").stages[0].objectives[0].text
        r1_eth0 = f"{values['r1r2'][1]}/24"
        assert r1["device"] == "R1" and f"ip address {r1_eth0}" in r1["commands"]
        assert f"R1 has {r1_eth0} on eth0" in shown
        r3_ospf = calls["call_ospf"]["devices"][2]["commands"]
        assert f"network {values['lan2']} area 0" in r3_ospf
        assert "ip ospf dead-interval 4" in r3_ospf
        typed[user] = r1["commands"]
        [down] = calls["call_link_down"]["links"]
        assert (down["a"], down["a_port"], down["b"], down["b_port"]) in recipe.links
    assert typed["alice"] != typed["bob"]


def test_the_bgp_labs_subnets_never_overlap_and_its_script_peers_each_students_routers() -> None:
    """The BGP lab draws each of its five subnets from a pool of its own; its objectives
    check sessions with `bgp_session` and routes learned by BGP; the scripted model's
    script, rendered for a student, names that student's neighbour addresses with the AS
    numbers the objectives expect, and the routers' solution does the same."""
    import ipaddress

    from jupyter_gns3_copilot.objectives.loader import load_lab
    from jupyter_gns3_copilot.objectives.parameters import student_values
    from jupyter_gns3_copilot.objectives.routing_model import BgpSessionCheck, RouteCheck
    from jupyter_gns3_copilot.testing.solved_labs import SOLUTIONS

    recipe = NOTEBOOK_PROJECTS["06-bgp-lab"]
    assert recipe.lab_file is not None
    document = load_lab(recipe.lab_file.read_text())
    for number in range(50):
        subnets = list(student_values(document.lab, f"student{number}", "salt").values())
        assert all(isinstance(subnet, ipaddress.IPv4Network) for subnet in subnets)
        for index, subnet in enumerate(subnets):
            assert not any(subnet.overlaps(other) for other in subnets[index + 1 :]), subnets
    assert recipe.links == NOTEBOOK_PROJECTS["05-ospf-lab"].links
    typed = {}
    for user in ("alice", "bob"):
        lab = document.for_student(user, "salt")
        checks = [c for s in lab.stages for o in s.objectives for c in o.checks]
        sessions = {
            (c.node, f"neighbor {c.neighbor} remote-as {c.remote_as}")
            for c in checks
            if isinstance(c, BgpSessionCheck)
        }
        assert len(sessions) == 6
        assert {c.protocol for c in checks if isinstance(c, RouteCheck)} == {"bgp"}
        replies = notebook_replies(SCRIPTS / "06-bgp-lab.json", recipe, user, "salt")
        assert "{{" not in json.dumps([r.model_dump(mode="json") for r in replies])
        calls = {call.id: call.arguments for reply in replies for call in reply.tool_calls}
        scripted = {
            (d["device"], line) for d in calls["call_bgp"]["devices"] for line in d["commands"]
        }
        solution = SOLUTIONS["06-bgp-lab"](lab)
        solved = {(node, line) for node, lines in solution.items() for line in lines}
        assert sessions <= scripted and sessions <= solved, sessions - scripted
        typed[user] = sorted(scripted)
    assert typed["alice"] != typed["bob"]


# -- execution ----------------------------------------------------------------------------


@dataclass
class NotebookStack:
    lab: Any
    llm: ScriptedLLM
    server: JupyterServer


@pytest.fixture(scope="module")
def notebook_stack(
    gns3_lab: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[NotebookStack]:
    """One Jupyter server with the extension for every notebook of this module (starting
    one takes seconds), on the session's lab and one scripted model whose script each
    test replaces."""
    with ScriptedLLM(models=["scripted-model"]) as llm:
        work = tmp_path_factory.mktemp("notebook-server")
        model = ModelEndpoint.scripted_model(llm)
        salt = secrets.token_hex(16)
        with JupyterServer(gns3_lab, model, work, lab_salt=salt) as server:
            yield NotebookStack(gns3_lab, llm, server)


def execute(
    stack: NotebookStack, name: str, tmp_path: Path, server: JupyterServer | None = None
) -> Executed:
    """Prepare the notebook's project and script, run the notebook (on `server`, default
    the stack's), clean up."""
    from nbclient import NotebookClient

    server = server or stack.server
    recipe = NOTEBOOK_PROJECTS[name]
    project_ids = prepare_projects(stack.lab, [recipe])
    assert server.lab_salt is not None
    script = notebook_replies(SCRIPTS / f"{name}.json", recipe, server.user, server.lab_salt)
    stack.llm.reset(script)
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        store_widget_state=True,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    try:
        client.execute(env={**os.environ, **server.kernel_env()})
    finally:
        nbformat.write(notebook, tmp_path / f"{name}.executed.ipynb")
        delete_projects(stack.lab, project_ids.values())
    assert stack.llm.remaining == 0, "every scripted reply was used"
    return Executed(notebook)


def answer(turn: dict[str, Any]) -> str:
    return "".join(item["text"] for item in turn["items"] if item["kind"] == "text")


@pytest.mark.lab
@pytest.mark.slow
def test_getting_started_connects_shows_asks_runs_and_keeps_the_result(
    notebook_stack: NotebookStack, tmp_path: Path
) -> None:
    """Given the project "Copilot demo" (PC1 10.0.0.1/24, PC2 10.0.0.2/24 on a switch);
    when 01-getting-started runs top to bottom; then every step shows what it should:
    the status, the project, the diagram and table, a streamed answer with its tool calls
    on the real PCs, a direct run, the result object, and the continued conversation."""
    run = execute(notebook_stack, "01-getting-started", tmp_path)

    assert "GNS3: http://127.0.0.1:" in run.text("%copilot status")
    assert "published by the copilot extension" in run.text("%copilot status")
    assert "Using project 'Copilot demo' (opened" in run.text('%copilot use "Copilot demo"')
    assert "image/svg+xml" in run.mimetypes("%copilot show topology")
    assert "PC1 e0 <-> Switch1 e0" in run.text("%copilot show topology")

    [turn] = run.saved_turns("turn = %copilot")
    assert turn["status"] == "done" and turn["user"].endswith("which address does PC1 have?")
    tools = tool_items(turn)
    assert [item["name"] for item in tools] == ["get_topology", "run_show_commands"]
    assert all(item["state"] == "done" and item["complete"] for item in tools)
    assert "IP/MASK     : 10.0.0.1/24" in device_outputs(tools[1])["PC1"]
    assert "10.0.0.1/24" in answer(turn)
    assert turn["stats"]["llm_calls"] == 3 and turn["stats"]["input_tokens"] == 7200
    assert "Copilot:" in run.text("turn = %copilot"), "text fallback for viewers without widgets"

    run_bundle = run.saved_bundle("%copilot run PC1, PC2")
    # A direct run is no conversation: nothing to continue in the sidebar.
    assert run_bundle["direct_run"] is True and run_bundle["session_id"] is None
    [direct] = run_bundle["turns"]
    outputs = device_outputs(tool_items(direct)[0])
    assert "10.0.0.2/24" in outputs["PC2"] and "10.0.0.1/24" in outputs["PC1"]

    assert "Turn done · session" in run.text("turn")
    assert "10.0.0.1/24" in run.text("print(turn.text)")
    assert "'ok'" in run.text("print(turn.text)")
    assert "IP/MASK     : 10.0.0.1/24" in run.text('print(turn.tool_results["PC1"].output)')
    assert "title='Lab overview and PC1 address'" in run.text("turn.statistics")

    [follow_up] = run.saved_turns("%%copilot")
    assert "ttl=" in device_outputs(tool_items(follow_up)[0])["PC1"]
    sessions = run.text("%copilot sessions")
    assert "Lab overview and PC1 address" in sessions and len(sessions.splitlines()) == 3

    # Viewers without the labextension (nbconvert, GitHub) show the answers' text
    from nbconvert import HTMLExporter, MarkdownExporter

    markdown, _ = MarkdownExporter().from_notebook_node(run.notebook)
    html, _ = HTMLExporter().from_notebook_node(run.notebook)
    for exported in (markdown, html):
        assert "has two VPCS PCs, PC1 and PC2" in exported
        assert "| PC1 | ok |" in exported or "<td>PC1</td>" in exported


@pytest.mark.lab
@pytest.mark.slow
def test_build_a_lab_creates_addresses_and_verifies_it(
    notebook_stack: NotebookStack, tmp_path: Path
) -> None:
    """Given an empty project; when 02-build-a-lab runs in automation mode; then the
    copilot builds two VPCS on a switch, addresses them, and PC1 really pings PC2."""
    run = execute(notebook_stack, "02-build-a-lab", tmp_path)

    [build] = run.saved_turns("build = %copilot --mode automation")
    assert [item["name"] for item in tool_items(build)] == [
        "create_nodes",
        "create_links",
        "start_nodes",
    ]
    topology = run.text("%copilot show topology")
    for line in ("PC1 e0 <-> Switch1 e0", "PC2 e0 <-> Switch1 e1"):
        assert line in topology
    assert topology.count("started") == 3

    [verify] = run.saved_turns("verify = %copilot --mode automation")
    ping = tool_items(verify)[-1]
    assert "ttl=" in device_outputs(ping)["PC1"]
    assert "('run_vpcs_commands', 'ok')" in run.text("assert ")
    assert "IP/MASK     : 10.0.0.2/24" in run.text("%copilot run PC2: show ip")
    offered = {
        tool["function"]["name"]
        for request in notebook_stack.llm.chat_requests
        for tool in (request.body or {}).get("tools", [])
    }
    assert "run_vpcs_commands" in offered


@pytest.mark.lab
@pytest.mark.slow
def test_troubleshooting_diagnoses_and_teaches_without_configuring(
    notebook_stack: NotebookStack, tmp_path: Path
) -> None:
    """Given PC2 planted in another subnet; when 03-troubleshooting runs in teaching mode;
    then the copilot reads both PCs and explains the fault, the model is offered no tool
    that configures, a direct configuration is refused on the student's card, and after
    the student's own fix the ping works."""
    run = execute(notebook_stack, "03-troubleshooting", tmp_path)

    [diagnosis] = run.saved_turns("diagnosis = %copilot --mode teaching")
    tools = tool_items(diagnosis)
    assert {item["name"] for item in tools} == {"run_show_commands"}
    assert "IP/MASK     : 10.0.1.2/24" in device_outputs(tools[0])["PC2"]
    ping = tools[1]
    assert device_outputs(ping)["PC1"].endswith("No gateway found")
    assert ping["outcome"] == "failed", "VPCS sent nothing: the card is red, not '1 ok'"
    assert ping["summary"] == ("ran `ping 10.0.1.2 -c 1` on PC1 · 1 failed · PC1: No gateway found")
    listed = run.text("for name, result in diagnosis.tool_results.items()")
    assert "--- PC1 (failed)" in listed, "Turn.tool_results says what the card says"
    assert "10.0.1.2/24" in answer(diagnosis)
    first_request = notebook_stack.llm.chat_requests[0].body or {}
    offered = {tool["function"]["name"] for tool in first_request.get("tools", [])}
    assert "run_show_commands" in offered
    assert not offered & {"run_config_commands", "run_vpcs_commands"}

    # The refused direct command is the student's card, as a refused call of the model's
    # is: no error, no text written for the model
    outputs = run.cell("%copilot run --mode teaching").outputs
    assert not [output for output in outputs if output.output_type == "error"]
    [refused] = run.saved_turns("%copilot run --mode teaching")
    [card] = tool_items(refused)
    assert card["outcome"] == "refused" and "PC2" in card["note"]
    assert card["summary"] == "not run: teaching mode · `ip 10.0.0.2/24` on PC2"
    assert card["note"].endswith(
        "here is how you would do it: on PC2's console, type `ip 10.0.0.2/24`."
    )
    shown = [
        output.data[kind]
        for output in outputs
        for kind in ("text/markdown", "text/plain")
        if kind in output.get("data", {})
    ]
    assert shown and any(card["note"] in text for text in shown)
    assert not any("Explain to the user" in text for text in shown)

    assert "ttl=" in run.text("check = %copilot run PC1: ping")
    [confirm] = run.saved_turns("%%copilot")
    assert confirm["status"] == "done" and "10.0.0.2/24" in answer(confirm)


def saved_checklist(run: Executed, source_start: str) -> dict[str, Any]:
    """The checklist a `%copilot check` cell saved (the report as it was last shown)."""
    [data] = [
        output["data"][CHECKS_MIME]
        for output in run.cell(source_start).outputs
        if CHECKS_MIME in output.get("data", {})
    ]
    return data


@pytest.mark.lab
@pytest.mark.slow
def test_graded_lab_fails_fresh_then_passes_once_built_with_the_students_values(
    notebook_stack: NotebookStack, tmp_path: Path
) -> None:
    """Given the fresh two-LAN lab with its lab file (nothing configured; R1 a Linux router
    that really forwards); when 04-graded-lab runs; then the objectives show this
    student's subnets, the first check fails every objective and says what is missing,
    and after the copilot builds each stage in automation mode with the student's values (the
    scripted model's script rendered for them) every stage's check passes, PC1's trace
    crosses R1, and the final report is full marks."""
    from jupyter_gns3_copilot.objectives.loader import load_lab
    from jupyter_gns3_copilot.objectives.parameters import student_values

    recipe = NOTEBOOK_PROJECTS["04-graded-lab"]
    assert recipe.lab_file is not None and notebook_stack.server.lab_salt is not None
    lab = load_lab(recipe.lab_file.read_text()).lab
    values = student_values(lab, notebook_stack.server.user, notebook_stack.server.lab_salt)
    lan_a, lan_b = values["lan_a"], values["lan_b"]
    pc1, pc3, r1_a = f"{lan_a[1]}", f"{lan_b[1]}", f"{lan_a[-2]}"

    run = execute(notebook_stack, "04-graded-lab", tmp_path)

    [data] = [
        output.data
        for output in run.cell("%copilot lab").outputs
        if "text/markdown" in output.get("data", {})
    ]
    shown = data["text/markdown"]
    assert data["text/plain"] == shown  # a plain-text front end reads the list too
    assert f"PC1 has {pc1}/24 (LAN A)" in shown and f"PC3 has {pc3}/24 (LAN B)" in shown
    assert "R1 e0 <-> Switch1 e2" in run.text("%load_ext")

    # The fresh lab: nothing passes, each check says what is missing
    fresh = saved_checklist(run, "report = %copilot check")
    statuses = {r["id"]: r["status"] for r in fresh["results"]}
    assert len(statuses) == 13 and "pass" not in statuses.values(), statuses
    explained = {r["id"]: r["explanation"] for r in fresh["results"]}
    assert explained["pc1-address"] == "PC1 has no IPv4 address."
    assert explained["r1-lan-a"] == "R1 eth0 has no IPv4 address."
    # in the lab file's words, with what the device has (never the pattern)
    assert explained["pc1-gateway"] == f"PC1's gateway is 0.0.0.0; it should be {r1_a}."
    assert explained["r1-forwards"] == (
        "R1 does not forward packets: net.ipv4.ip_forward is 0; it should be 1."
    )
    # at the address the lab gives PC2 (not undecided for want of one), and not pinged
    # from a PC without an address (VPCS would drop its console)
    assert explained["lan-a"] == (
        f"PC1 does not reach PC2 ({lan_a[2]}): PC1 has no IPv4 address. PC2 has no IPv4 address."
    )
    assert fresh["summary"]["score"] == 0 and fresh["pending"] == []
    assert run.text("report.score, report.max_score") == "(0.0, 16.0)"
    failed = run.text("report.assert_passed()")
    assert failed.startswith("AssertionError: 0 of 16 points; not passed:")
    assert f"- pc1-address (addressing): PC1 has {pc1}/24 (LAN A): PC1 has no IPv4" in failed

    # Each stage built by the copilot with this student's values, then checked
    [addressing] = run.saved_turns("addressing = %copilot --mode automation")
    [read, *configured] = tool_items(addressing)
    assert read["name"] == "check_objectives", "the copilot reads the objectives first"
    objectives = json.loads(read["output"])["objectives"]
    assert {o["status"] for o in objectives} == {"fail"}
    assert f"PC1 has {pc1}/24 (LAN A)" in [o["text"] for o in objectives]
    tools = {item["name"]: device_outputs(item) for item in configured}
    assert f"ip {pc1}/24" in tools["run_vpcs_commands"]["PC1"]
    assert f"ip addr add {r1_a}/24 dev eth0" in tools["run_show_commands"]["R1"]
    for stage in ("addressing", "gateways"):
        checked = saved_checklist(run, f"checked = %copilot check {stage}")
        assert {r["status"] for r in checked["results"]} == {"pass"}, checked["results"]
    [routing] = run.saved_turns("routing = %copilot --mode automation")
    trace = device_outputs(tool_items(routing)[0])["PC1"]
    assert f" 1   {r1_a} " in trace and pc3 in trace.splitlines()[-1]

    final = saved_checklist(run, "final = %copilot check")
    assert final["summary"]["passed"] is True
    by_id = {r["id"]: r for r in final["results"]}
    assert by_id["pc1-pc3"]["explanation"].startswith(f"PC1 reaches PC3 ({pc3}) (")
    assert "icmp packets crossed R1 e1 - Switch2 e0" in by_id["through-r1"]["explanation"]
    assert run.text("final.assert_passed()") == "(16.0, 16.0)"


class Approver:
    """The student at the widget: approves every change waiting in the conversations of
    the project `project` on `server`, as each card's Approve button does (the same
    decision, through the server's approval route), and keeps what it approved
    (`approved`: the tools' names, in order). Runs in a thread until stopped."""

    def __init__(self, server: JupyterServer, project: str) -> None:
        self.server = server
        self.project = project
        self.approved: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="approver", daemon=True)

    def __enter__(self) -> Approver:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        from jupyter_gns3_copilot.notebook.copilot import Copilot
        from jupyter_gns3_copilot.notebook.errors import CopilotError

        with Copilot(server=self.server.server_info) as copilot:
            while not self._stop.wait(0.3):
                try:
                    # The project is built (and rebuilt) under this name by `execute`.
                    copilot.use(self.project)
                    for session in copilot.sessions():
                        for request in copilot.approvals(session.thread_id):
                            copilot.approve(session=session.thread_id)
                            self.approved.append(request["tool_name"])
                except CopilotError:
                    continue


@pytest.fixture(scope="module")
def approving_server(
    notebook_stack: NotebookStack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterServer]:
    """A second server on the module's lab, scripted model and class salt, whose changes
    wait for approval as the extension's default (and `make lab`) has it."""
    work = tmp_path_factory.mktemp("approving-server")
    with JupyterServer(
        notebook_stack.lab,
        ModelEndpoint.scripted_model(notebook_stack.llm),
        work,
        lab_salt=notebook_stack.server.lab_salt,
        traits={"require_approval": "changes"},
    ) as server:
        yield server


def approvals(turn: dict[str, Any]) -> list[tuple[str, str]]:
    """A saved turn's approval cards: (tool name, decision)."""
    return [(i["tool_name"], i["state"]) for i in turn["items"] if i["kind"] == "approval"]


@pytest.mark.lab
@pytest.mark.slow
def test_ospf_lab_fails_fresh_then_passes_each_stage_built_with_approved_configuration(
    notebook_stack: NotebookStack, approving_server: JupyterServer, tmp_path: Path
) -> None:
    """Given the fresh triangle of three FRR routers and two PCs with its lab file, on a
    server where changes wait for approval; when 05-ospf-lab runs with a student approving
    each card; then the objectives show this student's subnets, the first check fails
    every objective, and once the copilot has built each stage in automation mode (each
    configuration call approved, nothing that only reads asked) the stage's check passes:
    addresses, OSPF Full, routes by OSPF, PC1 to PC2 across the routers, and, with the
    R1 - R3 link suspended, PC1 still reaching PC2 through R2; with the link back, the
    adjacencies are Full again."""
    from jupyter_gns3_copilot.objectives.loader import load_lab
    from jupyter_gns3_copilot.objectives.parameters import student_values

    recipe = NOTEBOOK_PROJECTS["05-ospf-lab"]
    assert recipe.lab_file is not None and approving_server.lab_salt is not None
    lab = load_lab(recipe.lab_file.read_text()).lab
    values = student_values(lab, approving_server.user, approving_server.lab_salt)
    lan1, lan2, r1r2 = values["lan1"], values["lan2"], values["r1r2"]
    pc2 = f"{lan2[10]}"

    with Approver(approving_server, recipe.name) as approver:
        run = execute(notebook_stack, "05-ospf-lab", tmp_path, server=approving_server)

    topology = run.text("%load_ext")
    for line in ("R1 e0 <-> R2 e0", "R2 e1 <-> R3 e0", "R1 e1 <-> R3 e1", "PC2 e0 <-> R3 e2"):
        assert line in topology, topology
    shown = run.text("%copilot lab")
    assert f"R1 has {r1r2[1]}/24 on eth0 (to R2)" in shown
    assert f"R1 reaches LAN 2 through R2 ({r1r2[2]}) instead" in shown

    # The fresh lab: nothing passes, each check says what is missing
    fresh = saved_checklist(run, "report = %copilot check")
    statuses = {r["id"]: r["status"] for r in fresh["results"]}
    assert len(statuses) == 16 and "pass" not in statuses.values(), statuses
    for failed in ("r1-addresses", "pc1-lan1", "r1-r2", "r1-lan2", "pc1-pc2", "rerouted"):
        assert statuses[failed] == "fail", fresh["results"]
    explained = {r["id"]: r["explanation"] for r in fresh["results"]}
    assert explained["pc1-lan1"] == "PC1 has no IPv4 address."
    assert explained["pc1-pc2"].endswith(" PC2 has no IPv4 address.")
    assert run.text("report.score, report.max_score") == "(0.0, 20.0)"

    # Each configuration call waited for its card's Approve; nothing that only reads asked
    assert Counter(approver.approved) == {
        "run_config_commands": 2,
        "run_vpcs_commands": 1,
        "set_link_state": 2,
    }
    [addressing] = run.saved_turns("addressing = %copilot --mode automation")
    assert sorted(approvals(addressing)) == [
        ("run_config_commands", "approve"),
        ("run_vpcs_commands", "approve"),
    ]
    [read, *configured] = tool_items(addressing)
    assert read["name"] == "check_objectives", "the copilot reads the objectives first"
    typed = {item["name"]: device_outputs(item) for item in configured}
    assert set(typed["run_config_commands"]) == {"R1", "R2", "R3"}
    assert all(item["outcome"] == "ok" for item in configured), configured
    [ospf] = run.saved_turns("ospf = %copilot --mode automation")
    assert approvals(ospf) == [("run_config_commands", "approve")]

    for stage in ("addressing", "ospf", "routes", "reachability", "failover"):
        checked = saved_checklist(run, f"checked = %copilot check {stage}")
        assert {r["status"] for r in checked["results"]} == {"pass"}, checked["results"]

    [routes] = run.saved_turns("routes = %copilot --mode automation")
    assert approvals(routes) == []
    assert set(device_outputs(tool_items(routes)[0])) == {"R1", "R2", "R3"}
    [reach] = run.saved_turns("reach = %copilot --mode automation")
    trace = device_outputs(tool_items(reach)[0])["PC1"]
    assert f" 1   {lan1[1]} " in trace and pc2 in trace.splitlines()[-1], trace

    [failover] = run.saved_turns("failover = %copilot --mode automation")
    assert approvals(failover) == [("set_link_state", "approve")]
    [down] = tool_items(failover)
    assert down["name"] == "set_link_state" and '"down"' in down["output"]
    rerouted = saved_checklist(run, "checked = %copilot check failover")["results"]
    assert {r["id"] for r in rerouted} == {"still-reaches", "rerouted"}

    [restore] = run.saved_turns("restore = %copilot --mode automation")
    assert approvals(restore) == [("set_link_state", "approve")]
    back = saved_checklist(run, "back = %copilot check ospf")
    assert {r["status"] for r in back["results"]} == {"pass"}, back["results"]


# -- a kernel driven like a front end -------------------------------------------------------


class FrontEnd:
    """A real ipykernel, driven over its channels as JupyterLab would drive it."""

    def __init__(self, env: dict[str, str]) -> None:
        from jupyter_client.manager import KernelManager

        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def send(self, msg_type: str, content: dict[str, Any]) -> str:
        message = self.client.session.msg(msg_type, content)
        self.client.shell_channel.send(message)
        return message["header"]["msg_id"]

    def execute(self, code: str) -> str:
        return self.send(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            },
        )

    def messages_until_idle(self, parent: str, timeout: float = 120) -> list[dict[str, Any]]:
        """The iopub messages answering `parent`, up to its idle status."""
        seen = []
        while True:
            msg = self.client.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != parent:
                continue
            seen.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return seen

    def run(self, code: str) -> list[dict[str, Any]]:
        messages = self.messages_until_idle(self.execute(code))
        errors = [m["content"] for m in messages if m["msg_type"] == "error"]
        assert not errors, errors
        return messages

    def stop(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@pytest.fixture
def front_end(notebook_stack: NotebookStack) -> Iterator[tuple[FrontEnd, str]]:
    """A kernel using a fresh empty project "Copilot kernel tests"; the project's id."""
    from jupyter_gns3_copilot.testing.local_stack import ProjectRecipe

    ids = prepare_projects(notebook_stack.lab, [ProjectRecipe("Copilot kernel tests")])
    kernel = FrontEnd({**os.environ, **notebook_stack.server.kernel_env()})
    try:
        kernel.run('%load_ext jupyter_gns3_copilot\n%copilot use "Copilot kernel tests"')
        yield kernel, ids["Copilot kernel tests"]
    finally:
        kernel.stop()
        delete_projects(notebook_stack.lab, ids.values())


def widget_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The widget's `turns` state as last updated in `messages`."""
    updates = [
        m["content"]["data"]["state"]["turns"]
        for m in messages
        if m["msg_type"] == "comm_msg" and "turns" in m["content"]["data"].get("state", {})
    ]
    return updates[-1]


@pytest.mark.lab
@pytest.mark.slow
def test_the_magics_widget_has_no_input_box_and_the_next_cell_continues(
    notebook_stack: NotebookStack, front_end: tuple[FrontEnd, str]
) -> None:
    """Given a `%copilot` answer (its live widget is replaced by the saved answer when the
    turn ends, so an input box there could never be used); then the widget was opened
    without one (`can_send` false), the output ends as the saved bundle, and the next
    `%copilot` cell continues the same server session."""
    kernel, _ = front_end
    llm = notebook_stack.llm
    llm.reset(
        [
            text("Hi there.", when={"tools": True, "last_message": "^hello$"}),
            text("Greeting", when={"tools": False}),
            text("Hi again.", when={"tools": True, "last_message": "^and again$"}),
        ]
    )
    first = kernel.run("%copilot hello")
    [state] = [
        m["content"]["data"]["state"]
        for m in first
        if m["msg_type"] == "comm_open" and "can_send" in m["content"]["data"].get("state", {})
    ]
    assert state["can_send"] is False
    [saved] = [
        m["content"]["data"][TURN_MIME_TYPE]
        for m in first
        if m["msg_type"] == "update_display_data" and TURN_MIME_TYPE in m["content"]["data"]
    ]
    second = kernel.run("%copilot and again")
    [again] = [
        m["content"]["data"][TURN_MIME_TYPE]
        for m in second
        if m["msg_type"] == "update_display_data" and TURN_MIME_TYPE in m["content"]["data"]
    ]
    assert again["session_id"] == saved["session_id"]
    assert [t["user"] for t in again["turns"]] == ["and again"]
    last = llm.chat_requests[-1].body or {}
    texts = [str(message.get("content")) for message in last["messages"]]
    assert "hello" in texts and "Hi there." in texts, "the second turn saw the first"
    assert llm.remaining == 0


@pytest.mark.lab
@pytest.mark.slow
def test_interrupting_the_kernel_aborts_the_turn_on_the_server(
    notebook_stack: NotebookStack, front_end: tuple[FrontEnd, str]
) -> None:
    """Given a long answer streaming into a cell; when the user interrupts the kernel;
    then the cell ends with KeyboardInterrupt (so "Run All" stops), the widget shows the
    turn as aborted, and the server's turn is over (nothing left running)."""
    from jupyter_gns3_copilot import Copilot

    kernel, project_id = front_end
    notebook_stack.llm.reset(
        [
            text("word " * 60, chunks=60, chunk_delay=0.25, when={"tools": True}),
            text("Long story", when={"tools": False}),
        ]
    )
    parent = kernel.execute("%copilot tell me a long story")
    seen = []
    while True:
        msg = kernel.client.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != parent:
            continue
        seen.append(msg)
        data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
        if data.get("content", {}).get("type") == "ops":
            break
    kernel.manager.interrupt_kernel()
    seen += kernel.messages_until_idle(parent)
    [error] = [m["content"] for m in seen if m["msg_type"] == "error"]
    assert error["ename"] == "KeyboardInterrupt"
    [turn] = widget_turns(seen)
    assert turn["status"] == "aborted"

    with Copilot(server=notebook_stack.server.server_info) as copilot:
        copilot.use(project_id)
        [session] = copilot.sessions()
        assert copilot.abort(session.thread_id)["status"] == "not_running"


@pytest.mark.lab
@pytest.mark.slow
def test_the_copilot_class_works_from_plain_python(
    notebook_stack: NotebookStack, front_end: tuple[FrontEnd, str]
) -> None:
    """Given the real server; when user code drives `Copilot` (no magics, no kernel);
    then every call reaches its route: projects, use, topology, stream, ask, a direct run
    refused by the mode, sessions, rename, pin, history, delete, and a readable error for
    an unknown session."""
    from jupyter_gns3_copilot import Copilot
    from jupyter_gns3_copilot.notebook.errors import ApiError

    _, project_id = front_end
    notebook_stack.llm.reset(
        [
            text("First answer.", when={"tools": True, "last_message": "^one$"}),
            text("Plain Python", when={"tools": False}),
            text("Second answer.", when={"tools": True, "last_message": "^two$"}),
        ]
    )
    with Copilot(server=notebook_stack.server.server_info) as copilot:
        assert "Copilot kernel tests" in [p.name for p in copilot.projects()]
        assert copilot.use("copilot KERNEL tests").project_id == project_id
        assert copilot.topology("text").startswith("Project Copilot kernel tests")
        assert copilot.topology("svg").startswith("<svg")
        kinds = [event.type for event in copilot.stream("one")]
        assert kinds[0] == "heartbeat" and kinds[-1] == "done" and "content" in kinds
        turn = copilot.ask("two")
        assert turn.text == "Second answer." and turn.session_id == copilot.session_id
        assert turn.statistics.llm_calls == 1
        refused = copilot.run("PC1", "ip 10.0.0.1/24", tool="vpcs", mode="teaching")
        assert [call.outcome for call in refused.tool_calls] == ["refused"]
        [session] = copilot.sessions()
        assert session.title == "Plain Python" and session.message_count == 4
        assert copilot.rename("Renamed").title == "Renamed"
        assert copilot.pin().pinned and not copilot.unpin().pinned
        history = copilot.history()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"] * 2
        assert copilot.delete() == session.thread_id
        assert copilot.session_id is None and copilot.sessions() == []
        with pytest.raises(ApiError) as caught:
            copilot.history("no-such-session")
        assert caught.value.status == 404
