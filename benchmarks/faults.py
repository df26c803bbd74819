"""The example labs' faults on real labs: how long applying and verifying each one takes.

Starts a local GNS3 lab (labkit) and, for each example lab with faults (the graded lab:
VPCS and a Linux router; the OSPF and BGP labs: three FRR routers and two VPCS), builds its
project, solves it by console (`testing.solved_labs`) and then, fault by fault, applies it
with `apply_fault` (what it breaks checked to pass first, then checked again until it
fails) and takes it out again. Prints each fault's time and outcome, then

    faults: N applied and verified in X s

(the sum over the faults; goals: each fault within 3 s on the VPCS lab and 10 s where
FRR must reconverge). The setup (building, booting, solving) and the undoing are not
counted. A fault whose outcome is not `applied` is reported and makes the run fail.

Then the copilot benchmark's scripted baseline (`testing.eval_baseline`: three VPCS, three
faults, the scripted model fixing one, fixing one wrongly, fixing one with a regression)
runs through `evaluation.evaluate`, every restore and check included:

    eval (scripted): F faults, fixed A, regressions B in X s

(goal: the whole scripted eval within 300 s; A and B exactly as scripted: 2 and 1). Each
example lab is in the eval too, when it is measured: once its faults are timed, the
scripted model answers them on the same project (`testing.eval_baseline`: on the graded
lab `graded_answers`, every fault fixed, the wrong mask without naming it; on the OSPF lab
`ospf_answers`, six fixed, one fixed on the wrong router, one fix moving PC1 to another
address; on the BGP lab `bgp_answers`, two fixed, one fixed on the wrong router, one fix
moving PC2 to another address), and its Markdown table follows (its reports in
`--eval-out DIR`/<lab> when given)

    eval (scripted, 04-graded-lab): F faults, fixed A, regressions B in X s (as scripted)

    .venv/bin/python benchmarks/faults.py [--labs 04-graded-lab,05-ospf-lab,06-bgp-lab]
        [--faults N]
        [--no-eval] [--eval-out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import gns3_lab, parse_args

from jupyter_gns3_copilot.agent.llm_access import ModelSettings
from jupyter_gns3_copilot.evaluation.report import markdown, write_reports
from jupyter_gns3_copilot.evaluation.runner import EvalPlan, evaluate
from jupyter_gns3_copilot.evaluation.scoring import RunScore
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.objectives.faults import apply_fault
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.testing.eval_baseline import (
    BGP_SCORES,
    GRADED_SCORES,
    OSPF_SCORES,
    PCS,
    baseline_script,
    bgp_answers,
    graded_answers,
    ospf_answers,
    script,
)
from jupyter_gns3_copilot.testing.eval_baseline import LAB_FILE as BASELINE_LAB
from jupyter_gns3_copilot.testing.local_stack import (
    EXAMPLES,
    NOTEBOOK_PROJECTS,
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.pytest_plugin import ExternalLab
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM
from jupyter_gns3_copilot.testing.solved_labs import SOLUTIONS, UNDO, admin_access, solve, undo

LABS = ("04-graded-lab", "05-ospf-lab", "06-bgp-lab")
GOALS = {"04-graded-lab": 3.0, "05-ospf-lab": 10.0, "06-bgp-lab": 10.0}
"""Seconds one fault may take to apply and verify, per lab (goal, not asserted)."""
EVALS: dict[
    str, tuple[Callable[[LabFile], dict[str, list[Any]]], dict[str, tuple[bool, bool, bool]]]
] = {
    "04-graded-lab": (graded_answers, GRADED_SCORES),
    "05-ospf-lab": (ospf_answers, OSPF_SCORES),
    "06-bgp-lab": (bgp_answers, BGP_SCORES),
}
"""The example labs' scripted answers and the scores they must get, per lab."""


async def measure(
    lab_server: LabServer | ExternalLab, project_id: str, notebook: str, limit: int | None
) -> list[tuple[str, str, float]]:
    """(fault, outcome, seconds) for each fault of `notebook`'s lab, solved first."""
    lab = _lab(notebook)
    solution = SOLUTIONS[notebook](lab)
    undo_lines = UNDO[notebook](lab) if notebook in UNDO else {}
    timed = []
    async with admin_access(lab_server) as access:
        devices = access.devices
        await solve(devices, project_id, solution)
        for fault in lab.faults[:limit]:
            began = time.monotonic()
            outcome = await apply_fault(devices, project_id, lab, fault.id)
            seconds = time.monotonic() - began
            timed.append((fault.id, outcome.status, seconds))
            print(f"  {notebook} {fault.id}: {outcome.status} in {seconds:.2f} s", flush=True)
            if outcome.status != "applied":
                print(f"    {outcome.explanation}")
            await undo(devices, project_id, fault, solution, undo_lines.get(fault.id))
    return timed


async def scripted_eval(
    lab_server: LabServer | ExternalLab, project_id: str, plan: EvalPlan, script: list[Any]
) -> list[RunScore]:
    """The scripted model's runs of `plan`, answering with `script`, on the working lab
    `project_id`."""
    with ScriptedLLM(models=["scripted-model"]) as llm, tempfile.TemporaryDirectory() as data:
        llm.extend(script)
        model = ModelSettings(base_url=llm.base_url, api_key="sk-bench", model="scripted-model")
        async with admin_access(lab_server) as access:
            return await evaluate(access, project_id, plan, model, Path(data), progress=_progress)


def lab_eval(
    lab_server: LabServer | ExternalLab,
    project_id: str,
    notebook: str,
    limit: int | None,
    out: Path | None,
) -> None:
    """An example lab's scripted eval (module docstring) on its solved project, printed, and
    its reports written into `out` when given (as `gns3-copilot-eval --out` writes them)."""
    answers, scores = EVALS[notebook]
    lab = _lab(notebook)
    faults = [f.id for f in lab.faults[:limit]]
    plan = EvalPlan(lab=lab, faults=faults, max_turns=2)
    began = time.monotonic()
    runs = asyncio.run(
        scripted_eval(lab_server, project_id, plan, script(lab, answers(lab), faults))
    )
    seconds = time.monotonic() - began
    print(markdown(runs), end="")
    if out is not None:
        write_reports(runs, out, f"{lab.title}: the scripted model (lab mode)")
    got = {r.fault: (r.diagnosed, r.fixed, r.safe) for r in runs}
    scripted = got == {f: scores[f] for f in faults}
    print(
        f"eval (scripted, {notebook}): {len(runs)} faults, fixed {sum(r.fixed for r in runs)}, "
        f"regressions {sum(bool(r.regressions) for r in runs)} in {seconds:.1f} s "
        f"({'as scripted' if scripted else 'NOT as scripted'})"
    )
    if not scripted:
        raise SystemExit(f"the {notebook} eval did not score as scripted: {got}")


def _progress(line: str) -> None:
    print(f"  {line}", flush=True)


def _lab(notebook: str) -> LabFile:
    """The example lab of `notebook` as the benchmark's student has it."""
    return load_lab((EXAMPLES / f"{notebook}.lab.yaml").read_text()).for_student("bench", "x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labs", default=",".join(LABS), help="example labs, comma-separated")
    parser.add_argument("--faults", type=int, default=None, help="at most N faults per lab")
    parser.add_argument(
        "--no-eval", dest="eval", action="store_false", help="skip the scripted eval"
    )
    parser.add_argument(
        "--eval-out", type=Path, help="where the example labs' evals write their reports"
    )
    args = parse_args(parser, labs="04-graded-lab", faults=1, eval=False)
    timed: list[tuple[str, str, str, float]] = []
    with gns3_lab() as lab_server:
        for notebook in args.labs.split(","):
            recipe = dataclasses.replace(
                NOTEBOOK_PROJECTS[notebook], name=f"bench-faults-{uuid.uuid4().hex[:8]}"
            )
            ids = prepare_projects(lab_server, [recipe])
            try:
                found = asyncio.run(measure(lab_server, ids[recipe.name], notebook, args.faults))
                if notebook in EVALS and args.eval:
                    out = args.eval_out and args.eval_out / notebook
                    lab_eval(lab_server, ids[recipe.name], notebook, args.faults, out)
            finally:
                delete_projects(lab_server, ids.values())
            timed += [(notebook, *one) for one in found]
            seconds = [s for *_, s in found]
            print(
                f"{notebook}: median {statistics.median(seconds):.2f} s, "
                f"max {max(seconds):.2f} s per fault (goal {GOALS[notebook]:g} s)"
            )
        failed = [f"{nb} {f}: {status}" for nb, f, status, _ in timed if status != "applied"]
        print(f"faults: {len(timed)} applied and verified in {sum(s for *_, s in timed):.1f} s")
        if failed:
            raise SystemExit("not applied: " + "; ".join(failed))
        if not args.eval:
            return
        ids = prepare_projects(
            lab_server, [ProjectRecipe(f"bench-eval-{uuid.uuid4().hex[:8]}", PCS)]
        )
        began = time.monotonic()
        try:
            plan = EvalPlan(lab=load_lab(BASELINE_LAB.read_text()).lab, max_turns=2)
            project_id = next(iter(ids.values()))
            runs = asyncio.run(scripted_eval(lab_server, project_id, plan, baseline_script()))
        finally:
            delete_projects(lab_server, ids.values())
        fixed = sum(r.fixed for r in runs)
        regressions = sum(bool(r.regressions) for r in runs)
        print(
            f"eval (scripted): {len(runs)} faults, fixed {fixed}, regressions {regressions} "
            f"in {time.monotonic() - began:.1f} s"
        )


if __name__ == "__main__":
    main()
