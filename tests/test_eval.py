"""The copilot benchmark (`gns3-copilot-eval`): what a run scores and how the reports show
it, then the benchmark itself on a real three-PC lab with the scripted model answering
each fault on purpose (one fixed, one fixed wrongly, one fixed by breaking something
else), through its Python entry point and its command line."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_gns3_copilot.agent.llm_access import ModelSettings
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.devices.saving import save_configurations
from jupyter_gns3_copilot.evaluation.cli import main
from jupyter_gns3_copilot.evaluation.report import HTML, JSONL, MARKDOWN, markdown, svg
from jupyter_gns3_copilot.evaluation.runner import EvalPlan, LabNotWorking, evaluate
from jupyter_gns3_copilot.evaluation.scoring import RunScore, is_diagnosed, symptom
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.objectives.fault_model import ConfigStep, Diagnosis
from jupyter_gns3_copilot.objectives.faults import working_lab
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.objectives.runner import report
from jupyter_gns3_copilot.testing.eval_baseline import (
    BGP_LAB,
    BGP_SCORES,
    GRADED_LAB,
    GRADED_SCORES,
    LAB_FILE,
    OSPF_LAB,
    OSPF_SCORES,
    PCS,
    baseline_script,
    bgp_answers,
    graded_answers,
    ospf_answers,
    script,
    usage,
)
from jupyter_gns3_copilot.testing.local_stack import (
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import (
    ScriptedLLM,
    When,
    text,
    tool_call,
)
from jupyter_gns3_copilot.testing.solved_labs import address_of
from jupyter_gns3_copilot.tools import LabAccess

# -- scores and reports ---------------------------------------------------------------------


def test_the_symptom_is_said_from_the_failing_objectives_texts() -> None:
    """A student's message: each failing objective's text negated, then the request
    (teaching mode asks why too)."""
    texts = [
        "PC1 reaches PC3 (10.9.0.3)",
        "PC1's gateway is 10.9.0.254",
        "Pings from PC1 to PC3 cross R1's cable",
        "OSPF all Full",
    ]
    assert symptom(texts) == (
        "PC1 cannot reach PC3 (10.9.0.3); PC1's gateway is not 10.9.0.254; Pings from PC1 "
        "to PC3 do not cross R1's cable; this does not work: OSPF all Full. Find and fix "
        "the problem."
    )
    assert symptom(["PC2 has 10.9.0.2/24"], teaching=True) == (
        "PC2 does not have 10.9.0.2/24. Find and fix the problem. Why?"
    )


def test_a_diagnosis_names_the_device_the_interface_and_a_word_of_the_cause() -> None:
    """Whole words in any case: PC10 is not PC1; the interface is needed when given."""
    cable = Diagnosis(device="PC1", interface="e0", cause="link down", words=["cable", "down"])
    assert is_diagnosed("pc1's CABLE on e0 was pulled.", cable)
    assert not is_diagnosed("PC10's cable on e0 was pulled.", cable)
    assert not is_diagnosed("PC1's cable was pulled.", cable)
    assert not is_diagnosed("PC1 e0 looks fine.", cable)


def test_the_reports_count_scored_runs_and_list_the_others() -> None:
    """The Markdown table counts scores over scored runs, tokens per fix over fixed ones,
    and lists a refused run with why; the plot has a bar per fault and score."""
    runs = [
        RunScore(fault="a", run=1, status="scored", diagnosed=True, fixed=True, turns=1,
                 tool_calls=2, tokens_in=900, tokens_out=100, cost=0.5),
        RunScore(fault="a", run=2, status="scored", safe=False, regressions=["x"], turns=2),
        RunScore(fault="b", run=1, status="refused", explanation="x does not pass"),
    ]  # fmt: skip
    table = markdown(runs)
    assert "| a | 2 | 1/2 | 1/2 | 1/2 | 3 | 2 | 900 | 100 | 1000 | 0.0 | 0.5000 |" in table
    assert "| b | 1 (1 not scored) | 0/0 | 0/0 | 0/0 |" in table
    assert "- b (run 1): refused: x does not pass" in table
    plot = svg(runs)
    assert plot.count("<rect") == 2 * 3 + 2 + 3  # score bars, tokens-per-fix bars, legend
    assert "a: fixed 50%" in plot and "b: nothing fixed" in plot


def test_the_command_line_refuses_an_unknown_fault_or_a_missing_model_in_plain_words(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2 before anything runs: an unknown fault names the lab's faults; no model set
    names the setting to set."""
    assert main(["--lab", str(LAB_FILE), "--faults", "pc2-wrong-address,nope"]) == 2
    said = capsys.readouterr().err
    assert "nope" in said and "pc1-wrong-gateway" in said, said
    monkeypatch.delenv("GNS3_COPILOT_MODEL", raising=False)
    assert main(["--lab", str(LAB_FILE)]) == 2
    assert "GNS3_COPILOT_MODEL" in capsys.readouterr().err


def test_the_working_lab_ends_at_the_faults_stage_and_keeps_what_they_break() -> None:
    """The OSPF lab's faults belong to its reachability stage: the failover stage after
    it (the R1 - R3 link down, which the working lab is not) keeps only the objective one
    fault breaks; faults without a stage need the whole lab."""
    ospf = load_lab(OSPF_LAB.read_text()).for_student("someone", "salt")
    faults = [f.id for f in ospf.faults]
    working = working_lab(ospf, faults)
    assert [s.id for s in working.stages] == [s.id for s in ospf.stages]
    assert working.objective_ids() == [o for o in ospf.objective_ids() if o != "rerouted"]
    assert working_lab(ospf, ["r1-r2-cable-pulled"]).stages[-1].id == "reachability"
    vpcs = load_lab(LAB_FILE.read_text()).lab
    assert working_lab(vpcs, ["pc2-wrong-address"]) == vpcs


def test_the_ospf_labs_scripted_answers_diagnose_as_scored() -> None:
    """The OSPF lab's script answers each of its faults, for any student's subnets, and
    each last answer names the ground truth exactly where `OSPF_SCORES` says it does
    (the dead interval answer names R2, not R1)."""
    lab = load_lab(OSPF_LAB.read_text()).for_student("someone", "salt")
    answers = ospf_answers(lab)
    assert list(answers) == [f.id for f in lab.faults] == list(OSPF_SCORES)
    for fault in lab.faults:
        said = [a.content for a in answers[fault.id] if a.when is None and a.content]
        diagnosed, _, _ = OSPF_SCORES[fault.id]
        assert is_diagnosed(str(said[-1]), fault.diagnosis) == diagnosed, fault.id
    assert len(script(lab, answers, ["r2-area-mismatch"])) == len(answers["r2-area-mismatch"])
    lines = answers["r1-lan-not-advertised"][0].tool_calls[0].arguments["devices"][0]
    lan1 = ipaddress.IPv4Interface(address_of(lab, "r1-addresses", 2)).network
    assert lines["commands"] == ["router ospf", f"network {lan1} area 0"]
    assert "{{" not in str(script(lab, answers))


def test_the_graded_labs_scripted_answers_diagnose_as_scored() -> None:
    """The graded lab's script answers each of its faults, for any student's addresses,
    and each answer names the ground truth exactly where `GRADED_SCORES` says it does (the
    wrong mask's answer names no mask); the PCs' fixes use the student's own addresses.
    `benchmarks/faults.py` runs it on the real lab."""
    lab = load_lab(GRADED_LAB.read_text()).for_student("someone", "salt")
    answers = graded_answers(lab)
    assert list(answers) == [f.id for f in lab.faults] == list(GRADED_SCORES)
    for fault in lab.faults:
        said = [a.content for a in answers[fault.id] if a.when is None and a.content]
        diagnosed, _, _ = GRADED_SCORES[fault.id]
        assert is_diagnosed(str(said[-1]), fault.diagnosis) == diagnosed, fault.id
    pc1 = answers["pc1-wrong-gateway"][0].tool_calls[0].arguments["devices"][0]
    gateway = address_of(lab, "r1-lan-a").split("/")[0]
    assert pc1["commands"] == [f"ip {address_of(lab, 'pc1-address')} {gateway}"]
    assert len(script(lab, answers, ["pc3-no-gateway"])) == len(answers["pc3-no-gateway"])


def test_the_bgp_labs_scripted_answers_diagnose_as_scored() -> None:
    """The BGP lab's script answers each of its faults, for any student's subnets, and
    each last answer names the ground truth exactly where `BGP_SCORES` says it does (the
    LAN not advertised is blamed on R2, not R1); its fix of the wrong neighbour address
    names that student's addresses."""
    lab = load_lab(BGP_LAB.read_text()).for_student("someone", "salt")
    answers = bgp_answers(lab)
    assert list(answers) == [f.id for f in lab.faults] == list(BGP_SCORES)
    for fault in lab.faults:
        said = [a.content for a in answers[fault.id] if a.when is None and a.content]
        diagnosed, _, _ = BGP_SCORES[fault.id]
        assert is_diagnosed(str(said[-1]), fault.diagnosis) == diagnosed, fault.id
    fix = answers["r3-wrong-neighbor-address"][0].tool_calls[0].arguments["devices"][0]
    [wrong] = lab.require_fault("r3-wrong-neighbor-address").apply
    assert isinstance(wrong, ConfigStep)
    assert f"no {wrong.lines[-1].removesuffix(' remote-as 65002')}" in fix["commands"]
    r2 = address_of(lab, "r2-interfaces", 1).split("/")[0]
    assert f"neighbor {r2} remote-as 65002" in fix["commands"]
    assert len(script(lab, answers)) == sum(len(a) for a in answers.values())
    assert "{{" not in str(script(lab, answers))


# -- on the real lab ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lan(gns3_lab: Any) -> Iterator[tuple[Any, str, str, LabFile]]:
    """Three configured PCs on a switch (the working lab), its project name and id, and
    its lab file."""
    name = f"pytest-eval-{uuid.uuid4().hex[:8]}"
    ids = prepare_projects(gns3_lab, [ProjectRecipe(name, PCS)])
    try:
        yield gns3_lab, name, ids[name], load_lab(LAB_FILE.read_text()).lab
    finally:
        delete_projects(gns3_lab, ids.values())


async def _evaluate(lab_server: Any, project_id: str, plan: EvalPlan, llm: ScriptedLLM,
                    data_dir: Path) -> tuple[list[RunScore], list[str]]:  # fmt: skip
    model = ModelSettings(base_url=llm.base_url, api_key="sk-eval", model="scripted-model")
    async with (
        GNS3Client(
            lab_server.url, username=lab_server.username, password=lab_server.password
        ) as gns3,
        ConsolePool() as consoles,
    ):
        access = LabAccess(gns3, consoles)
        runs = await evaluate(access, project_id, plan, model, data_dir)
        after = await report(access.devices, project_id, plan.lab)
        return runs, [r.id for r in after.results if r.status != "pass"]


@pytest.mark.lab
@pytest.mark.slow
def test_the_scripted_models_runs_score_as_scripted(
    lan: tuple[Any, str, str, LabFile], scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    """Given the working lab and the scripted model; when each fault is put in and the
    copilot asked (two turns at most): the wrong address is diagnosed, fixed and safe;
    the wrong gateway, answered about the wrong PC twice, is neither diagnosed nor fixed
    (two turns, the second after being told it still fails); the pulled cable is
    diagnosed and fixed, but PC1's changed address is a regression, so not safe. The
    copilot may check the lab's objectives itself, as a student's can. Turns,
    tool calls and tokens are the script's; the PCs' saved configurations came back with
    each restore, and the lab is left working."""
    lab_server, _, project_id, lab = lan
    scripted_llm.extend(baseline_script())
    plan = EvalPlan(lab=lab, max_turns=2, price_in=2.0, price_out=8.0)
    runs, failing = asyncio.run(_evaluate(lab_server, project_id, plan, scripted_llm, tmp_path))
    scores = [
        (r.fault, r.status, r.diagnosed, r.fixed, r.regressions, r.safe, r.turns, r.tool_calls,
         r.tokens_in, r.tokens_out)
        for r in runs
    ]  # fmt: skip
    assert scores == [
        ("pc2-wrong-address", "scored", True, True, [], True, 1, 1, 2200, 80),
        ("pc1-wrong-gateway", "scored", False, False, [], True, 2, 1, 3500, 70),
        ("pc3-cable-pulled", "scored", True, True, ["pc1-address"], False, 1, 2, 1800, 85),
    ], [r.explanation for r in runs]
    assert runs[0].cost == pytest.approx((2200 * 2.0 + 80 * 8.0) / 1e6)
    assert runs[1].symptom == "PC1's gateway is not 10.9.0.254. Find and fix the problem."
    follow_up = scripted_llm.chat_requests[6].messages[-1]["content"]
    assert follow_up.startswith("It still does not work: PC1's gateway is not 10.9.0.254.")
    assert sorted(runs[2].broken) == ["pc1-pc3", "pc2-pc3"]
    offered = [t["function"]["name"] for t in scripted_llm.chat_requests[0].body["tools"]]
    assert "check_objectives" in offered and "run_vpcs_commands" in offered
    assert scripted_llm.remaining == 0
    assert failing == []


@pytest.mark.lab
@pytest.mark.slow
def test_in_teaching_mode_the_copilot_explains_and_changes_nothing(
    lan: tuple[Any, str, str, LabFile], scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    """In teaching mode the student's question asks why, the model is offered no
    configuring tool, and a configuring call it makes anyway is refused: the fault is
    diagnosed but not fixed, and nothing else broke."""
    lab_server, _, project_id, lab = lan
    pc2 = {"device": "PC2", "commands": ["ip 10.9.0.2/24 10.9.0.254"]}
    scripted_llm.extend(
        [
            tool_call("run_vpcs_commands", {"devices": [pc2]}, usage=usage(700, 30)),
            text("PC2 has the address 10.9.0.22, not 10.9.0.2.", usage=usage(900, 20)),
            text("Wrong address", when=When(tools=False)),
        ]
    )
    plan = EvalPlan(lab=lab, faults=["pc2-wrong-address"], mode="teaching")
    [run], failing = asyncio.run(_evaluate(lab_server, project_id, plan, scripted_llm, tmp_path))
    assert (run.diagnosed, run.fixed, run.safe, run.turns, run.tool_calls) == (
        True, False, True, 1, 1)  # fmt: skip
    assert run.symptom == "PC2 does not have 10.9.0.2/24. Find and fix the problem. Why?"
    offered = [t["function"]["name"] for t in scripted_llm.chat_requests[0].body["tools"]]
    assert "check_objectives" in offered and "run_vpcs_commands" not in offered
    assert failing == []


@pytest.mark.lab
@pytest.mark.slow
def test_a_lab_that_does_not_work_is_refused_naming_what_fails(
    lan: tuple[Any, str, str, LabFile], scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    """A lab whose objectives do not all pass takes no fault: the error names each one
    failing, and nothing was asked of the model."""
    lab_server, _, project_id, _ = lan
    wrong = load_lab(LAB_FILE.read_text().replace("10.9.0.2/24", "10.9.0.12/24")).lab
    plan = EvalPlan(lab=wrong)
    with pytest.raises(LabNotWorking, match=r"these do not pass: PC2 has 10\.9\.0\.12/24: "):
        asyncio.run(_evaluate(lab_server, project_id, plan, scripted_llm, tmp_path))
    assert scripted_llm.chat_requests == []


@pytest.mark.lab
@pytest.mark.slow
def test_the_command_line_writes_the_runs_and_both_reports(
    lan: tuple[Any, str, str, LabFile], scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    """`gns3-copilot-eval` on one fault, with the copilot's own environment variables:
    exit 0, the Markdown table printed, and runs.jsonl, report.md and report.html with
    the run's scores and the plot."""
    lab_server, name, _, _ = lan
    scripted_llm.extend(baseline_script()[:3])
    env = {
        **os.environ,
        **scripted_llm.env(),
        "GNS3_COPILOT_MODEL": "scripted-model",
        "GNS3_URL": lab_server.url,
        "GNS3_USER": lab_server.username,
        "GNS3_PASSWORD": lab_server.password,
        "PYTHONPATH": str(Path(__file__).parents[1]),
    }
    out = tmp_path / "out"
    command = [sys.executable, "-m", "jupyter_gns3_copilot.evaluation.cli", "--lab",
               str(LAB_FILE), "--project", name, "--faults", "pc2-wrong-address", "--out",
               str(out), "--price-in", "1", "--price-out", "1"]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stderr
    assert "| pc2-wrong-address | 1 | 1/1 | 1/1 | 1/1 | 1 | 1 | 2200 | 80 | 2280 |" in done.stdout
    [line] = (out / JSONL).read_text().splitlines()
    run = json.loads(line)
    assert (run["fault"], run["diagnosed"], run["fixed"], run["safe"]) == (
        "pc2-wrong-address", True, True, True)  # fmt: skip
    assert run["cost"] == pytest.approx(2280 / 1e6)
    assert "| all | 1 | 1/1 | 1/1 | 1/1 |" in (out / MARKDOWN).read_text()
    page = (out / HTML).read_text()
    assert "<svg" in page and "pc2-wrong-address: fixed 100%" in page


@pytest.mark.lab
@pytest.mark.slow
def test_saved_configurations_are_named_per_device(lan: tuple[Any, str, str, LabFile]) -> None:
    """VPCS save their configuration; the switch, with no console, is left out."""
    lab_server, _, project_id, _ = lan

    async def save() -> list[tuple[str, bool]]:
        async with (
            GNS3Client(
                lab_server.url, username=lab_server.username, password=lab_server.password
            ) as gns3,
            ConsolePool() as consoles,
        ):
            saved = await save_configurations(LabAccess(gns3, consoles).devices, project_id)
            return [(s.node, s.saved) for s in saved]

    assert asyncio.run(save()) == [("PC1", True), ("PC2", True), ("PC3", True)]
