"""A student's lab through a real Jupyter server subprocess (the extension as installed)
on the REAL local GNS3 lab: each student's own values, the same after a restart; an
objective failing, passing once the copilot (the scripted model, a TEST DOUBLE) fixes the
lab, and failing again once the student catches up to the stage's start."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.server import recipe_project

from jupyter_gns3_copilot import Copilot
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.testing.local_stack import JupyterServer, ModelEndpoint, ProjectRecipe
from jupyter_gns3_copilot.testing.scripted_llm import text, tool_call

pytestmark = [pytest.mark.lab, pytest.mark.slow]

SALT = "class-2025-network-labs"
LAB = textwrap.dedent(
    """\
    title: Per-student values
    parameters:
      net: {subnet: {pool: 10.0.0.0/16, prefix: 24}}
      vlan: {int: [10, 99]}
      site: {choice: [north, south, east, west]}
    stages:
      - id: addressing
        title: Addressing
        snapshot: fresh
        objectives:
          - id: pc1
            text: "PC1 has {{ net | host(1) }}/{{ net | prefixlen }} (VLAN {{ vlan }}, {{ site }})"
            check: {kind: address, node: PC1, address: "{{ net | host(1) }}/24"}
    """
)


def server(lab: Any, llm: Any, work: Path, user: str, salt: str = SALT) -> JupyterServer:
    """A Jupyter server whose token requests are `user`'s, with the class salt `salt`."""
    model = ModelEndpoint.scripted_model(llm)
    return JupyterServer(lab, model, work, traits={"owner_user_id": user}, lab_salt=salt)


def objective_text(running: JupyterServer, project: str) -> str:
    with Copilot(server=running.server_info) as copilot:
        copilot.use(project)
        [stage] = copilot.lab()["stages"]
        return str(stage["objectives"][0]["text"])


def test_each_student_gets_their_own_values_and_keeps_them_across_restarts(
    gns3_lab: Any, scripted_llm: Any, tmp_path: Path
) -> None:
    """Given one lab file and one class salt; then alice sees the values the file gives
    her (the same from a second server with a fresh data directory, i.e. after a
    restart), bob sees his own, and another salt gives alice other values."""
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(LAB)
    document = load_lab(LAB)
    expected = {
        (user, salt): document.for_student(user, salt).stages[0].objectives[0].text
        for user in ("alice", "bob")
        for salt in (SALT, "another-class")
    }
    assert len(set(expected.values())) == 4, expected  # the salt below tells them apart
    recipe = ProjectRecipe("Copilot values", {"PC1": None}, start=False, lab_file=lab_file)
    seen = {}
    with recipe_project(gns3_lab, recipe):
        runs = [
            ("alice", SALT, "alice-1"),
            ("bob", SALT, "bob"),
            ("alice", SALT, "alice-2"),
            ("alice", "another-class", "alice-other-salt"),
        ]
        for user, salt, work in runs:
            with server(gns3_lab, scripted_llm, tmp_path / work, user, salt) as running:
                seen[work] = objective_text(running, recipe.name)
    assert seen["alice-1"] == seen["alice-2"] == expected[("alice", SALT)]
    assert seen["bob"] == expected[("bob", SALT)]
    assert seen["alice-other-salt"] == expected[("alice", "another-class")]
    assert seen["alice-1"].startswith("PC1 has 10.0.") and "/24 (VLAN " in seen["alice-1"]


def test_an_objective_fails_passes_once_the_copilot_fixes_it_and_fails_after_catch_up(
    gns3_lab: Any, scripted_llm: Any, tmp_path: Path
) -> None:
    """Given a fresh lab (snapshot `fresh`, PC1 unaddressed); when the student checks, asks
    the copilot in automation mode to address PC1 as the lab says (the scripted model replays
    the student's own address), checks again, then catches up to the stage; then the
    objective fails, passes, and fails again."""
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(LAB)
    values = load_lab(LAB).for_student("alice", SALT)
    address = values.stages[0].objectives[0].check.address  # type: ignore[union-attr]
    scripted_llm.reset(
        [
            tool_call(
                "run_vpcs_commands",
                {"devices": [{"device": "PC1", "commands": [f"ip {address}"]}]},
                when={"tools": True, "last_message": "as my lab says"},
            ),
            text("PC1 is addressed.", when={"tools": True}),
            text("Addressing PC1", when={"tools": False}),
        ]
    )
    recipe = ProjectRecipe("Copilot progress", {"PC1": None}, lab_file=lab_file, snapshot="fresh")
    with (
        recipe_project(gns3_lab, recipe),
        server(gns3_lab, scripted_llm, tmp_path / "server", "alice") as running,
        Copilot(server=running.server_info) as copilot,
    ):
        copilot.use(recipe.name)
        fresh = copilot.check_lab("addressing")
        turn = copilot.ask("Address PC1 as my lab says.", mode="lab")
        fixed = copilot.check_lab("addressing")
        copilot.catch_up("addressing", confirm=True)
        caught_up = copilot.check_lab("addressing")
    assert [r.status for r in fresh.results] == ["fail"]
    assert fresh.results[0].explanation == "PC1 has no IPv4 address."
    assert [call.name for call in turn.tool_calls] == ["run_vpcs_commands"]
    assert fixed.passed and fixed.results[0].explanation == f"PC1 has {address}."
    assert not caught_up.passed
    assert caught_up.results[0].explanation == "PC1 has no IPv4 address.", caught_up.results
    assert scripted_llm.remaining == 0


TWO_STAGES = textwrap.dedent(
    """\
    title: Two stages
    stages:
      - id: addressing
        title: Addressing
        objectives:
          - id: pc1
            text: PC1 has 10.9.9.1/24
            check: {kind: address, node: PC1, address: 10.9.9.1/24}
      - id: running
        title: Running
        objectives:
          - {id: pc1-runs, text: PC1 runs, check: {kind: node_running, node: PC1}}
    """
)


def test_a_restarted_server_has_each_students_latest_results_and_chosen_stage(
    gns3_lab: Any, scripted_llm: Any, tmp_path: Path
) -> None:
    """Given alice's check (PC1 unaddressed: fail) and her chosen stage; when the server
    stops and a new one starts on the same data directory; then her lab shows the same
    statuses and stage, and bob, who never checked, still sees none."""
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text(TWO_STAGES)
    recipe = ProjectRecipe("Copilot kept progress", {"PC1": None}, lab_file=lab_file)

    def statuses(view: dict[str, Any]) -> list[Any]:
        return [o["status"] for stage in view["stages"] for o in stage["objectives"]]

    with recipe_project(gns3_lab, recipe):
        with (
            server(gns3_lab, scripted_llm, tmp_path / "work", "alice") as running,
            Copilot(server=running.server_info) as copilot,
        ):
            copilot.use(recipe.name)
            checked = copilot.check_lab()
            before = copilot.lab_stage("running")
        with (
            server(gns3_lab, scripted_llm, tmp_path / "work", "alice") as running,
            Copilot(server=running.server_info) as copilot,
        ):
            copilot.use(recipe.name)
            after = copilot.lab()
        with (
            server(gns3_lab, scripted_llm, tmp_path / "work", "bob") as running,
            Copilot(server=running.server_info) as copilot,
        ):
            copilot.use(recipe.name)
            bobs = copilot.lab()
    assert {r.id: r.status for r in checked.results} == {"pc1": "fail", "pc1-runs": "pass"}
    assert statuses(before) == ["fail", "pass"] and before["current_stage"] == "running"
    assert statuses(after) == statuses(before)
    assert after["current_stage"] == "running"
    assert statuses(bobs) == [None, None] and bobs["current_stage"] == "addressing"
