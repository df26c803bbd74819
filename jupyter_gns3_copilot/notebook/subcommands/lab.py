"""`%copilot` subcommands of the lab's objectives: lab (show, attach, stage), check,
catch-up, exercise (start, status, give-up)."""

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
        return {
            "lab": self.lab,
            "check": self.check,
            "catch-up": self.catch_up,
            "exercise": self.exercise,
        }

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
        if report.report.exercise is not None:
            print(exercise_grade_text(report.report.exercise))
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

    def exercise(self, tail: str, argv: list[str]) -> Any:
        """`%copilot exercise start [FAULT|--random]`, `%copilot exercise` (how it stands),
        `%copilot exercise give-up`."""
        options, words = self.context.options(argv, tail)
        api = self.context.api
        action = words[0].lower() if words else "status"
        if action == "start" and len(words) <= 2:
            if len(words) == 2 and options.random:
                raise UsageError("Name a fault or give --random, not both.")
            view = api.start_exercise(words[1] if len(words) == 2 else None)
            print(exercise_text(view, started=True))
            return None
        if action == "status" and len(words) <= 1:
            try:
                view = api.exercise()
            except ApiError as exc:
                if exc.status != 404:
                    raise
                print("No exercise yet: start one with `%copilot exercise start --random`.")
                return None
            print(exercise_text(view, started=False))
            return None
        if action == "give-up" and len(words) == 1:
            answer = api.give_up()
            where = f" ({answer['interface']})" if answer.get("interface") else ""
            text = (
                f"The fault: {answer['description']}\n"
                f"A diagnosis names {answer['device']}{where}: {answer['cause']}.\n"
                "The fault was taken out: the devices it changed are restarting with the "
                "configuration saved when the exercise started (check again in a few seconds)."
            )
            if answer["not_undone"]:
                text += "\nStill to undo by hand: " + "; ".join(answer["not_undone"]) + "."
            print(text)
            return None
        raise UsageError(
            "Use `%copilot exercise start [FAULT|--random]`, `%copilot exercise` or "
            "`%copilot exercise give-up`."
        )


def exercise_text(view: dict[str, Any], *, started: bool) -> str:
    """An exercise (`ExerciseView`) as the student reads it."""
    failing = "\n".join(f"  - {o['text']}" for o in view["symptom"])
    if started:
        return (
            "Exercise started: something in your lab is broken. These objectives fail now:\n"
            f"{failing}\nFind and fix the problem, then run `%copilot check`."
        )
    head = "Exercise going" if view["active"] else "Last exercise (ended)"
    text = f"{head}, started {view['started_at']}. What failed:\n{failing}"
    if view.get("grade"):
        text += "\n" + exercise_grade_text(view["grade"])
    return text


def exercise_grade_text(grade: Any) -> str:
    """An exercise's grade (`ExerciseGrade`, or its JSON) in a sentence or two."""
    data = grade if isinstance(grade, dict) else grade.model_dump()
    minutes = f"{data['seconds'] / 60:.1f} min"
    calls = f"{data['copilot_calls']} copilot model calls"
    if data["done"]:
        return f"Exercise solved: fixed with no regressions in {minutes} ({calls})."
    parts = []
    if data["still_failing"]:
        parts.append("still failing: " + ", ".join(data["still_failing"]))
    if data["regressions"]:
        parts.append("broken since the exercise began: " + ", ".join(data["regressions"]))
    return f"Exercise not solved yet ({'; '.join(parts)}); {minutes} so far ({calls})."
