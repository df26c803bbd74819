"""Every benchmark in benchmarks/ runs once at its smallest size (`--smoke`), so that one
which broke (a name it imports moved, an API it calls changed) fails `make test`. No figure
is checked: these runs say nothing about speed. Those measuring on GNS3 use the test run's
lab (`gns3_lab`, handed over as GNS3_COPILOT_TEST_LAB_*), so no benchmark starts its own.
"""

from __future__ import annotations

import ipaddress
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


def test_the_routing_profile_asks_what_the_routed_triangle_is_built_with() -> None:
    """`lab_checks.py --profile routing` is only smoke-run at its VPCS size: its 20
    objectives load as a lab file, and each names the triangle's own nodes, router ids,
    addresses and next hops, and routes only to networks the router is not on."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import lab_checks
    finally:
        sys.path.remove(str(BENCHMARKS))
    from jupyter_gns3_copilot.testing.routed_lab import PCS, ROUTERS, TRIANGLE

    lab = lab_checks.routing_lab()
    checks = [o.check for s in lab.stages for o in s.objectives]
    assert len(checks) == 20
    kinds = [c.kind for c in checks if c is not None]
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "ospf_neighbor": 6,
        "route": 6,
        "address": 4,
        "reachable": 4,
    }
    addresses = {
        (router, interface): address
        for router, found in TRIANGLE.interfaces.items()
        for interface, address in found.items()
    }
    addresses |= {(pc, None): address for pc, (address, _) in TRIANGLE.pcs.items()}
    hosts = {address.split("/")[0] for address in addresses.values()}
    for check in checks:
        assert check is not None
        node = getattr(check, "node", None) or getattr(check, "source", None)
        assert node in (*ROUTERS, *PCS), check
        if check.kind == "ospf_neighbor":
            assert check.neighbor in (None, *(TRIANGLE.router_id(r) for r in ROUTERS))
            assert check.interface in (None, *TRIANGLE.interfaces[node])
        elif check.kind == "route":
            own = {ipaddress.ip_interface(a).network for a in TRIANGLE.interfaces[node].values()}
            assert ipaddress.ip_network(check.prefix) not in own, check
            assert check.via in (None, *hosts), check
        elif check.kind == "address":
            assert addresses[(node, check.interface)] == check.address, check
        else:
            assert check.to in PCS and check.address in (None, *hosts), check
