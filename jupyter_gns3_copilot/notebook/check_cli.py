"""`gns3-copilot-check`: check a project's lab objectives from a shell or a CI job.

::

    gns3-copilot-check --project "OSPF lab" [--stage addressing] [--lab lab.yaml] [--json]
                       [--server http://127.0.0.1:8888/ --token T]

It talks to a Jupyter server's copilot API, found as the magics find theirs (a JupyterLab
terminal has the variables the extension publishes), or given with `--server` and
`--token` (`GNS3_COPILOT_SERVER_TOKEN` is read when `--token` is not given). `--lab`
checks against a local lab file instead of the project's own (nothing is attached).
Prints a checklist, or with `--json` the checks route's report.

Exit status: 0 every objective checked passed, 1 one did not, 2 the checks could not run
(unknown project or stage, an invalid lab file, the server unreachable).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..server.kernel_env import SERVER_TOKEN_ENV
from .copilot import Copilot
from .discovery import discover, explicit_server
from .errors import CopilotError
from .lab_report import LabReport, checklist_markdown

PASSED, NOT_PASSED, COULD_NOT_RUN = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (module docstring); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        report = _check(args)
    except (CopilotError, OSError) as exc:
        print(f"gns3-copilot-check: {exc}", file=sys.stderr)
        return COULD_NOT_RUN
    if args.json:
        print(report.report.model_dump_json(indent=2))
    else:
        print(checklist_markdown(report.results, [], report.report).replace("**", ""))
    return PASSED if report.passed else NOT_PASSED


def _check(args: argparse.Namespace) -> LabReport:
    server = (
        explicit_server(args.server, args.token or os.environ.get(SERVER_TOKEN_ENV))
        if args.server
        else discover()
    )
    with Copilot(server=server, notebook="") as copilot:
        copilot.use(args.project)
        if args.lab is None:
            return copilot.check_lab(args.stage)
        text = Path(args.lab).expanduser().read_text(encoding="utf-8")
        return copilot.check_lab(args.stage, lab=text, source=Path(args.lab).name)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gns3-copilot-check",
        description="Check a GNS3 project's lab objectives on its devices.",
        epilog="Exit status: 0 all passed, 1 one did not, 2 the checks could not run.",
    )
    parser.add_argument("--project", required=True, help="the GNS3 project, by name or id")
    parser.add_argument("--stage", help="check this stage only")
    parser.add_argument("--lab", help="a local lab.yaml to check against (not attached)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--server", help="the Jupyter server's URL (default: found)")
    parser.add_argument("--token", help=f"its token (default: ${SERVER_TOKEN_ENV})")
    return parser


if __name__ == "__main__":
    sys.exit(main())
