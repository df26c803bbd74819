"""`%copilot` subcommands of the lab's objectives: lab (show, attach, stage), check,
catch-up."""

from __future__ import annotations

from typing import Any

from IPython.display import display

from ..errors import ApiError, UsageError
from ..lab_report import Checklist, checklist_markdown, lab_markdown
from .context import NOT_A_SUBCOMMAND, MagicContext, Subcommand


class LabCommands:
    """The subcommands of the project's lab and its objectives."""

    def __init__(self, context: MagicContext) -> None:
        self.context = context

    def handlers(self) -> dict[str, Subcommand]:
        """Each subcommand's word and handler."""
        return {"lab": self.lab, "check": self.check, "catch-up": self.catch_up}

    def lab(self, tail: str, argv: list[str]) -> Any:
        """`%copilot lab` shows the lab; `%copilot lab attach PATH [--mode automation]` attaches
        a file (in automation mode: `--mode`, else the `copilot_mode` setting)."""
        options, words = self.context.options(argv, tail)
        api = self.context.api
        if not words:
            text = lab_markdown(api.lab())
            if self.context.widgets:
                # text/plain too: a plain-text front end (a console, nbconvert's text
                # output) shows the list, not the display object's repr.
                display({"text/markdown": text, "text/plain": text}, raw=True)
            else:
                print(text)
            return None
        if words[0].lower() == "stage" and len(words) == 2:
            stage = None if words[1].lower() == "auto" else words[1]
            lab = api.lab_stage(stage)
            current = next(s for s in lab["stages"] if s["id"] == lab["current_stage"])
            how = "your choice" if stage else "the first stage your checks have not passed"
            print(f"Working on stage {current['id']} ({current['title']}): {how}.")
            return None
        if words[0].lower() == "attach" and len(words) == 2:
            try:
                lab = api.attach_lab(words[1], mode=options.mode)
            except ApiError as exc:
                if exc.type != "ModeNotAllowed":
                    raise
                raise UsageError(
                    "Attaching a lab file needs automation mode: add `--mode automation` "
                    f"(`%copilot lab attach {words[1]} --mode automation`), or switch your mode "
                    "with `%copilot config copilot_mode=automation`."
                ) from None
            count = sum(len(stage["objectives"]) for stage in lab["stages"])
            print(
                f"Attached {words[1]} to {api.current_project().name}: "
                f"{len(lab['stages'])} stages, {count} objectives."
            )
            return None
        return NOT_A_SUBCOMMAND

    def check(self, tail: str, argv: list[str]) -> Any:
        """`%copilot check [STAGE]`: a checklist that fills in, shown once the checks
        begin (an unknown stage is only an error); returns the `LabReport`, which shows
        nothing more in this cell."""
        _, words = self.context.options(argv, tail)
        if len(words) > 1:
            return NOT_A_SUBCOMMAND
        stage = words[0] if words else None
        api = self.context.api
        if not self.context.widgets:
            report = api.check_lab(stage)
            print(checklist_markdown(report.results, [], report.report))
        else:
            lab = api.lab()
            stages = [s for s in lab["stages"] if stage in (None, s["id"])]
            title = lab["title"] + (f" · {stages[0]['title']}" if stage and stages else "")
            shown: list[Checklist] = []

            def on_open() -> None:
                shown.append(Checklist(title, stages))

            report = api.check_lab(
                stage, on_open=on_open, on_result=lambda result: shown[0].add(result)
            )
            shown[0].finish(report.report)
        self.context.shown_in_this_cell(report)
        return report

    def catch_up(self, tail: str, argv: list[str]) -> Any:
        """`%copilot catch-up STAGE [--confirm]`: restore the stage's snapshot."""
        options, words = self.context.options(argv, tail)
        if len(words) != 1:
            raise UsageError(
                "Name the stage: `%copilot catch-up <stage>` (`%copilot lab` lists them)."
            )
        stage = words[0]
        api = self.context.api
        if not options.confirm:
            try:
                api.catch_up(stage)
            except ApiError as exc:
                if exc.type != "ConfirmationNeeded":
                    raise
                what = str(exc).split(" Send {")[0]
                print(f"{what}\nTo do it: %copilot catch-up {stage} --confirm")
                return None
        done = api.catch_up(stage, confirm=True)
        print(
            f"Caught up to stage {done['stage']}: restored snapshot {done['snapshot']!r}. "
            "The nodes are starting again: once they are up (a few seconds), check again "
            f"with `%copilot check {done['stage']}`."
        )
        return None
