"""`gns3-copilot-eval`: the copilot benchmark on a lab's faults.

::

    gns3-copilot-eval --lab lab.yaml [--project NAME] [--faults a,b] [--runs N]
                      [--mode lab|teaching] [--max-turns N] [--no-objectives]
                      [--student NAME]
                      [--price-in P --price-out P] [--model NAME] [--out DIR]

The project (default: the one named as the lab's title) must be the working lab: every
objective passing. The model and GNS3 are the copilot's own settings, from the same
environment variables: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `GNS3_COPILOT_MODEL`
(`--model` overrides it), `GNS3_URL`, `GNS3_USER`, `GNS3_PASSWORD`, and
`GNS3_COPILOT_LAB_SALT` with `--student` for a lab with per-student parameters. Writes
`runs.jsonl`, `report.md` and `report.html` (and the chats, under `chats/`) into `--out`,
and prints the Markdown table.

Exit status: 0 the benchmark ran, 2 it could not (a lab file or model setting missing or
wrong, an unknown fault or project, GNS3 unreachable, the project not the working lab).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import SecretStr

from ..agent.llm_access import ModelSettings
from ..common_settings import CommonSettings
from ..console import ConsoleError, ConsolePool
from ..gns3 import GNS3Client, GNS3Error
from ..objectives import SALT_ENV
from ..objectives.errors import LabFileError, UnknownSelection
from ..objectives.loader import load_lab
from ..server.llm_config import LLMAdminConfig, ModelNotConfigured, effective_config
from ..tools import LabAccess
from .report import JSONL, markdown, write_reports
from .runner import EVAL_USER, EvalPlan, LabNotWorking, evaluate
from .scoring import RunScore

RAN, COULD_NOT_RUN = 0, 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (module docstring); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        plan = _plan(args)
        model = model_settings(args.model)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / JSONL).write_text("", encoding="utf-8")
        runs = asyncio.run(_evaluate(args, plan, model))
    except (
        LabFileError,
        LabNotWorking,
        UnknownSelection,
        ModelNotConfigured,
        GNS3Error,
        ConsoleError,
        OSError,
        ValueError,
    ) as exc:
        print(f"gns3-copilot-eval: {exc}", file=sys.stderr)
        return COULD_NOT_RUN
    write_reports(runs, out, f"{plan.lab.title}: {model.model} ({args.mode} mode)")
    print(markdown(runs), end="")
    print(f"Reports written to {out}", file=sys.stderr)
    return RAN


def model_settings(model: str | None = None) -> ModelSettings:
    """The copilot's model settings from its environment variables (`model` overriding
    `GNS3_COPILOT_MODEL`); `ModelNotConfigured` says what is missing."""
    settings = CommonSettings()
    admin = LLMAdminConfig(
        base_url=settings.llm_base_url,
        api_key=SecretStr(settings.llm_api_key),
        model=model or settings.llm_model,
    )
    return effective_config(admin).model_settings()


def _plan(args: argparse.Namespace) -> EvalPlan:
    lab_path = Path(args.lab).expanduser()
    document = load_lab(lab_path.read_text(encoding="utf-8"), lab_path.name)
    lab = document.for_student(args.student, os.environ.get(SALT_ENV, ""))
    faults = [f.strip() for f in (args.faults or "").split(",") if f.strip()]
    plan = EvalPlan(
        lab=lab,
        faults=faults,
        runs=args.runs,
        mode=args.mode,
        max_turns=args.max_turns,
        objectives=args.objectives,
        price_in=args.price_in,
        price_out=args.price_out,
    )
    plan.fault_ids()
    return plan


async def _evaluate(
    args: argparse.Namespace, plan: EvalPlan, model: ModelSettings
) -> list[RunScore]:
    settings = CommonSettings()
    out = Path(args.out)
    async with (
        GNS3Client(
            settings.gns3_url, username=settings.gns3_username, password=settings.gns3_password
        ) as gns3,
        ConsolePool() as consoles,
    ):
        project = await gns3.resolve_project(args.project or plan.lab.title)
        await gns3.open_project(project.project_id)
        return await evaluate(
            LabAccess(gns3, consoles),
            project.project_id,
            plan,
            model,
            out / "chats",
            progress=lambda line: print(line, file=sys.stderr, flush=True),
            on_score=lambda score: _append(out / JSONL, score),
        )


def _append(path: Path, score: RunScore) -> None:
    """One run's line added to the JSON lines at once (kept if the benchmark stops)."""
    with path.open("a", encoding="utf-8") as lines:
        lines.write(score.model_dump_json() + "\n")


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {number}")
    return number


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gns3-copilot-eval",
        description="Put each fault of a lab into its working GNS3 project, ask the "
        "copilot to find and fix it, and score the answer on the lab's objectives.",
        epilog="Exit status: 0 the benchmark ran, 2 it could not.",
    )
    parser.add_argument("--lab", required=True, help="the lab file (lab.yaml) with faults")
    parser.add_argument("--project", help="the GNS3 project (default: the lab's title)")
    parser.add_argument("--faults", help="comma-separated fault ids (default: all)")
    parser.add_argument("--runs", type=_positive, default=1, help="runs per fault")
    parser.add_argument(
        "--mode", choices=("lab", "teaching"), default="lab", help="the copilot's mode"
    )
    parser.add_argument(
        "--max-turns",
        type=_positive,
        default=1,
        help="messages per run: while the fault is not fixed, the copilot is told so",
    )
    parser.add_argument(
        "--no-objectives",
        dest="objectives",
        action="store_false",
        help="do not give the copilot the lab's objectives (a project with no lab file)",
    )
    parser.add_argument(
        "--student",
        default=EVAL_USER,
        help=f"whose parameter values the project holds, with ${SALT_ENV}",
    )
    parser.add_argument("--model", help="the model (default: $GNS3_COPILOT_MODEL)")
    parser.add_argument("--price-in", type=float, help="price per million input tokens")
    parser.add_argument("--price-out", type=float, help="price per million output tokens")
    parser.add_argument("--out", default="copilot-eval", help="where the reports go")
    return parser


if __name__ == "__main__":
    sys.exit(main())
