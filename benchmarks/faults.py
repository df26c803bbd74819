"""The example labs' faults on real labs: how long applying and verifying each one takes.

Starts a local GNS3 lab (labkit) and, for each example lab with faults (the graded lab:
VPCS and a Linux router; the OSPF lab: three FRR routers and two VPCS), builds its
project, solves it by console (`testing.solved_labs`) and then, fault by fault, applies it
with `apply_fault` (what it breaks checked to pass first, then checked again until it
fails) and takes it out again. Prints each fault's time and outcome, then

    faults: N applied and verified in X s

(the sum over the faults; goals: each fault within 3 s on the VPCS lab and 10 s where
FRR must reconverge). The setup (building, booting, solving) and the undoing are not
counted. A fault whose outcome is not `applied` is reported and makes the run fail.

    .venv/bin/python benchmarks/faults.py [--labs 04-graded-lab,05-ospf-lab] [--faults N]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from _common import gns3_lab, parse_args

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.devices.access import Devices
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.objectives.faults import apply_fault
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.testing.local_stack import (
    EXAMPLES,
    NOTEBOOK_PROJECTS,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.pytest_plugin import ExternalLab
from jupyter_gns3_copilot.testing.solved_labs import SOLUTIONS, UNDO, solve, undo

LABS = ("04-graded-lab", "05-ospf-lab")
GOALS = {"04-graded-lab": 3.0, "05-ospf-lab": 10.0}
"""Seconds one fault may take to apply and verify, per lab (goal, not asserted)."""


async def measure(
    lab_server: LabServer | ExternalLab, project_id: str, notebook: str, limit: int | None
) -> list[tuple[str, str, float]]:
    """(fault, outcome, seconds) for each fault of `notebook`'s lab, solved first."""
    lab = load_lab((EXAMPLES / f"{notebook}.lab.yaml").read_text()).for_student("bench", "x")
    solution = SOLUTIONS[notebook](lab)
    undo_lines = UNDO[notebook](lab) if notebook in UNDO else {}
    timed = []
    async with (
        GNS3Client(
            lab_server.url, username=lab_server.username, password=lab_server.password
        ) as gns3,
        ConsolePool() as consoles,
    ):
        devices = Devices(gns3=gns3, consoles=consoles)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labs", default=",".join(LABS), help="example labs, comma-separated")
    parser.add_argument("--faults", type=int, default=None, help="at most N faults per lab")
    args = parse_args(parser, labs="04-graded-lab", faults=1)
    timed: list[tuple[str, str, str, float]] = []
    with tempfile.TemporaryDirectory() as tmp, gns3_lab(Path(tmp)) as lab_server:
        for notebook in args.labs.split(","):
            recipe = dataclasses.replace(
                NOTEBOOK_PROJECTS[notebook], name=f"bench-faults-{uuid.uuid4().hex[:8]}"
            )
            ids = prepare_projects(lab_server, [recipe])
            try:
                found = asyncio.run(measure(lab_server, ids[recipe.name], notebook, args.faults))
            finally:
                delete_projects(lab_server, ids.values())
            timed += [(notebook, *one) for one in found]
            seconds = [s for *_, s in found]
            print(
                f"{notebook}: median {statistics.median(seconds):.2f} s, "
                f"max {max(seconds):.2f} s per fault (goal {GOALS[notebook]:g} s)"
            )
    failed = [f"{nb} {fault}: {status}" for nb, fault, status, _ in timed if status != "applied"]
    print(f"faults: {len(timed)} applied and verified in {sum(s for *_, s in timed):.1f} s")
    if failed:
        raise SystemExit("not applied: " + "; ".join(failed))


if __name__ == "__main__":
    main()
