"""Every benchmark in benchmarks/ runs once at its smallest size (`--smoke`), so that one
which broke (a name it imports moved, an API it calls changed) fails `make test`. No figure
is checked: these runs say nothing about speed. Those measuring on GNS3 use the test run's
lab (`gns3_lab`, handed over as GNS3_COPILOT_TEST_LAB_*), so no benchmark starts its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
TIMEOUT = 240.0
NEEDS = {
    "classroom_load": pytest.mark.hub,
    "hub_restart": pytest.mark.hub,
    "hub_restart_tokens": pytest.mark.hub,
    "render_cost": pytest.mark.browser,
}
"""Benchmarks needing more than GNS3 (all are marked `slow`; those using `gns3_lab`, `lab`)."""


def benchmarks() -> list[pytest.ParameterSet]:
    """Each `benchmarks/*.py` but the shared `_*.py`, with the markers of what it needs."""
    cases = []
    for path in sorted(BENCHMARKS.glob("[!_]*.py")):
        marks = [pytest.mark.slow]
        if "gns3_lab(" in path.read_text():
            marks.append(pytest.mark.lab)
        if path.stem in NEEDS:
            marks.append(NEEDS[path.stem])
        cases.append(pytest.param(path, marks=marks, id=path.stem))
    return cases


@pytest.mark.parametrize("benchmark", benchmarks())
def test_the_benchmark_runs_at_its_smallest_size(
    benchmark: Path, request: pytest.FixtureRequest
) -> None:
    env = dict(os.environ)
    if request.node.get_closest_marker("lab"):
        lab = request.getfixturevalue("gns3_lab")
        env.update(
            GNS3_COPILOT_TEST_LAB_URL=lab.url,
            GNS3_COPILOT_TEST_LAB_USER=lab.username,
            GNS3_COPILOT_TEST_LAB_PASSWORD=lab.password,
        )
    done = subprocess.run(
        [sys.executable, str(benchmark), "--smoke"],
        cwd=BENCHMARKS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, (
        f"{benchmark.name} --smoke failed (exit {done.returncode}):\n"
        f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
