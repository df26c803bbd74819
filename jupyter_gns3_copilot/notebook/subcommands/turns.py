"""A `%copilot` turn shown as it runs: in a chat widget, or as text (`--quiet`, a terminal).

A chat turn (`chat`) and a direct run without the model (`direct`, `tool`) both return
the `Turn`, marked as shown by the running cell.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from collections.abc import Callable
from typing import Any

from IPython.core.error import StdinNotImplementedError
from IPython.display import display

from ...events import AbortEvent, ApprovalRequiredEvent
from ..errors import CopilotError
from ..models import ProjectInfo
from ..options import copilot_mode, turn_options
from ..transcript import TextStream
from ..turn import Turn
from ..turn_reading import EventCallback
from .context import MagicContext

RUN_DECISION_HINT = "Answer y to approve it, anything else to reject it (nothing changes)."
"""How a direct run's change is decided with text output: on the console (the run ends
when its cell is interrupted)."""
TurnRunner = Callable[[Callable[[], None] | None, EventCallback], Turn]
"""Runs a turn given its `on_open` and `on_event` callbacks (`Copilot.ask` / `run`)."""


class TurnOutput:
    """Runs the magics' turns and shows them (widget or text)."""

    def __init__(self, context: MagicContext) -> None:
        self.context = context

    def chat(self, message: str, options: Namespace) -> Turn:
        """Send `message` with the cell's `options`; the turn, shown as it streams."""
        copilot = self.context.api
        project = copilot.current_project()
        session_id = copilot.next_session(options.session, new=options.new)
        choices = turn_options(
            mode=options.mode,
            max_iterations=options.max_iterations,
            max_tool_calls=options.max_tool_calls,
            max_execution_time_seconds=options.max_time,
            temperature=options.temperature,
        )
        copilot.chat_request(message, session_id=session_id)  # refuses an empty message

        def ask(on_open: Callable[[], None] | None, on_event: EventCallback) -> Turn:
            return copilot.ask(
                message,
                session=session_id,
                project_id=project.project_id,
                on_open=on_open,
                on_event=on_event,
                options=choices,
            )

        if options.quiet or not self.context.widgets:
            turn = self._text_turn(ask, copilot_mode(options.mode))
        else:
            widget = self._widget(project, session_id, options.mode)
            turn = self._widget_turn(widget, message, ask)
        self.context.shown_in_this_cell(turn)
        return turn

    def tool(self, tool: str, arguments: dict[str, Any], message: str, options: Namespace) -> Turn:
        """Run `tool` with `arguments` now, without the model (`direct`)."""
        copilot = self.context.api

        def run(on_open: Callable[[], None] | None, on_event: EventCallback) -> Turn:
            return copilot.run_tool(
                tool,
                arguments,
                mode=options.mode,
                message=message,
                on_open=on_open,
                on_event=on_event,
            )

        return self.direct(message, options, run)

    def direct(self, message: str, options: Namespace, run: TurnRunner) -> Turn:
        """A direct run (no model) shown as a turn: in a widget of its own, or as text."""
        project = self.context.api.current_project()
        if options.quiet or not self.context.widgets:
            turn = self._text_turn(
                run, copilot_mode(options.mode), decide=self._decide_on_the_console
            )
        else:
            widget = self._widget(project, None, options.mode, direct_run=True)
            turn = self._widget_turn(widget, message, run)
        self.context.shown_in_this_cell(turn)
        return turn

    def _widget(
        self,
        project: ProjectInfo,
        session_id: str | None,
        mode: str | None,
        *,
        direct_run: bool = False,
    ) -> Any:
        from ..widget import ChatWidget

        return ChatWidget(
            project.project_id,
            project_name=project.name,
            session_id=session_id,
            mode=copilot_mode(mode),
            direct_run=direct_run,
        )

    def _widget_turn(self, widget: Any, message: str, run: TurnRunner) -> Turn:
        """Run a turn into `widget`; the widget is displayed and the turn begun once the
        server accepts the request, so a refusal shows only as the cell's error."""
        begun = False
        copilot = self.context.api

        def on_open() -> None:
            nonlocal begun
            display(widget)
            widget.begin_turn(message)
            begun = True

        try:
            turn = run(on_open, widget)  # follows the one reduction (`turns.TurnFollower`)
        except KeyboardInterrupt:
            if begun:
                if copilot.waiting_approval is None:
                    widget.push(AbortEvent(session_id=widget.session_id))
                widget.end_turn()
            if copilot.waiting_approval is not None:
                print(
                    "The change still waits for your approval: run `%copilot approve "
                    "[comment]` or `%copilot reject [comment]`."
                )
            raise
        except CopilotError as exc:
            if begun:
                widget.show_error(str(exc))
                widget.end_turn()
            raise
        widget.end_turn()
        return turn

    def _text_turn(
        self,
        run: TurnRunner,
        mode: str | None,
        decide: Callable[[ApprovalRequiredEvent], None] | None = None,
    ) -> Turn:
        """Run a turn with text output; `mode`: the mode id the cell named (its footer
        names it); `decide` takes a change the turn waits for (a direct run cannot be
        interrupted to decide in another cell: it would end)."""
        if decide is None:
            printer = TextStream(sys.stdout.write, flush=sys.stdout.flush, mode=mode)
        else:
            printer = TextStream(
                sys.stdout.write,
                flush=sys.stdout.flush,
                decision_hint=RUN_DECISION_HINT,
                decide=decide,
                mode=mode,
            )
        turn = run(None, printer)
        printer.finish(turn)
        return turn

    def _decide_on_the_console(self, event: ApprovalRequiredEvent) -> None:
        """Ask on the console whether to make the change a direct run waits for; without
        a console to ask on, it is rejected (nothing changes)."""
        try:
            answer = input("Approve this change? [y/N] ")
        except (EOFError, StdinNotImplementedError):
            answer = ""
            print(
                "(no console to answer on: rejected; run it without --quiet in a notebook "
                "to decide with the buttons)"
            )
        copilot = self.context.api
        decide = copilot.approve if answer.strip().lower() in ("y", "yes") else copilot.reject
        decide(session=event.session_id)
