"""What the benchmarks share (not a benchmark itself): `parse_args`, their command line
with `--smoke`, and `gns3_lab`, the GNS3 lab they measure on."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.testing.pytest_plugin import ExternalLab, external_lab


def parse_args(parser: argparse.ArgumentParser, **smallest: Any) -> argparse.Namespace:
    """`parser`'s arguments plus `--smoke`: one quick pass with `smallest` as the defaults
    (a flag given still wins), which checks that the benchmark runs; its figures mean
    nothing. `make test` runs every benchmark so (tests/test_benchmarks.py)."""
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one quick pass at the smallest size: checks that the benchmark runs",
    )
    args = parser.parse_args()
    if args.smoke:
        unknown = sorted(set(smallest) - set(vars(args)))
        if unknown:
            raise ValueError(f"--smoke sets arguments the parser does not have: {unknown}")
        parser.set_defaults(**smallest)
        args = parser.parse_args()
    return args


@contextlib.contextmanager
def gns3_lab(
    instance_dir: Path | None = None, computes: int = 0
) -> Iterator[LabServer | ExternalLab]:
    """A new local GNS3 lab in `instance_dir` (a temporary folder, removed afterwards, when
    None) with `computes` extra computes, stopped afterwards; without computes, the running
    one that GNS3_COPILOT_TEST_LAB_URL (with _USER and _PASSWORD) names, as for the tests,
    if set (the test run's lab has none)."""
    external = external_lab() if computes == 0 else None
    if external is not None:
        yield external
        return
    with contextlib.ExitStack() as stack:
        if instance_dir is None:
            temporary = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-lab-"))
            instance_dir = Path(temporary)
        yield stack.enter_context(LabServer(instance_dir=instance_dir, computes=computes))
