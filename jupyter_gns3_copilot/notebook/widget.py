"""The notebook chat widget: a copilot conversation that streams live and survives saving.

Python API (what the `%copilot` magics call; stable)::

    chat = ChatWidget(project_id, project_name="OSPF lab")  # on_send=...: an input box
    display(chat)
    chat.begin_turn("why can't PC1 ping PC3?")
    for event in stream:                 # ChatEvent models (or their dicts), in order
        chat.push(event)
    chat.end_turn({"input_tokens": 8500, "output_tokens": 1200, "llm_calls": 2})

`on_send(text)` is called when the user sends a message from the widget's input box (only
once the kernel is idle: a running cell blocks browser messages); without it there is no
input box. The magics pass none: their widget's output becomes the saved answer when the
turn ends, so the next cell (or the saved answer's sidebar button) continues instead. A
widget with `on_send` stays the live widget between turns (its input box is the way to
continue); its output keeps the Markdown and plain-text transcripts for front ends
without its state.
The **Stop** button does
not go through the kernel: the browser POSTs the server's
`copilot/projects/{project_id}/chat/sessions/{session_id}/abort` itself (a direct run's,
`direct_run`: `copilot/projects/{project_id}/runs/{run_id}/abort`), so the widget must
know the session or run id, which the first event of a turn carries (as `session_id`).

Two channels carry a conversation to the browser:
- live: `push` reduces each event into operations on the current turn's items (see
  `TurnBuilder`), or `follow` takes the operations of a reduction made elsewhere (the
  magics': the kernel's `TurnRecorder`, so each event is reduced once); operations are
  batched (`FLUSH_INTERVAL` seconds or `MAX_BATCH_OPS` operations, consecutive text
  merged) and sent as one custom message
  `{"type": "ops", "turn": i, "batch": n, "ops": [...]}`. `begin_turn` sends
  `{"type": "begin", "turn": i, "user": text}` first. Operations are
  `{"op": "append", "index": k, "text": str}` (grow text item k, creating it) and
  `{"op": "item", "index": k, "item": Item}` (create or replace item k).
- state: the synced `turns` list (reassigned, never mutated in place) holds every finished
  turn, plus the running one as `{"status": "running", "items": []}`: what the browser
  reconciles its live rendering with when a turn ends.

The events are reduced by the shared turn model (`turns.TurnBuilder`). A displayed widget
is shown under a display id: while a turn runs its output is the live widget view (with a
text/plain and text/markdown transcript for front ends without widgets); when no turn runs
and it has no `on_send`, the output is replaced by `saved_bundle()`: the `TurnBundle`
under `TURN_MIME_TYPE` (rendered by the labextension with no kernel and no widget state)
and the transcripts. A saved notebook of the magics therefore needs no widget state.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from ..events import ChatEvent, parse_event
from ..turns import (
    TURN_MIME_TYPE,
    ErrorItem,
    Op,
    TurnBuilder,
    TurnBundle,
    TurnRecord,
    TurnStats,
    TurnStatus,
    turn_bundle,
)
from .render_text import render_markdown, render_plain

__all__ = ["ChatWidget"]

_STATIC = Path(__file__).parent.parent / "static"

FLUSH_INTERVAL = 0.04
"""Seconds an operation may wait in the batch before it is sent."""
MAX_BATCH_OPS = 64
"""Operations (after merging) that make a batch go out at once."""


class OpBatcher:
    """Collects operations and hands them to `send` in batches, thread-safely.

    A batch goes out when it holds `max_ops` operations, when an operation arrives and the
    oldest pending one is `interval` seconds old, or when a timer fires `interval` seconds
    after the first operation (so the last words before a long silent tool run still show).
    Text appends to the same item merge; a newer snapshot of an item replaces the pending
    one. `flush()` sends what is pending now.
    """

    def __init__(
        self,
        send: Callable[[list[Op]], None],
        *,
        interval: float = FLUSH_INTERVAL,
        max_ops: int = MAX_BATCH_OPS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._send = send
        self._interval = interval
        self._max_ops = max_ops
        self._clock = clock
        self._lock = threading.RLock()
        self._pending: list[Op] = []
        self._since: float | None = None
        self._timer: threading.Timer | None = None

    def add(self, ops: list[Op]) -> None:
        if not ops:
            return
        with self._lock:
            for op in ops:
                self._merge(op)
            if self._since is None:
                self._since = self._clock()
                self._timer = threading.Timer(self._interval, self.flush)
                self._timer.daemon = True
                self._timer.start()
            due = self._clock() - self._since >= self._interval
            if due or len(self._pending) >= self._max_ops:
                self.flush()

    def flush(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            pending, self._pending, self._since = self._pending, [], None
            if pending:
                self._send(pending)

    def _merge(self, op: Op) -> None:
        for index in range(len(self._pending) - 1, -1, -1):
            prev = self._pending[index]
            if prev["index"] != op["index"]:
                continue
            if op["op"] == "append" and prev["op"] == "append":
                self._pending[index] = {**prev, "text": prev["text"] + op["text"]}
                return
            if op["op"] == "item" and prev["op"] == "item":
                self._pending[index] = op
                return
            break
        self._pending.append(op)


def _summary(stats: Mapping[str, Any], elapsed: float) -> TurnStats:
    """The footer fields of `stats` (unknown keys ignored); elapsed defaults to measured."""
    summary = TurnStats(elapsed=round(float(stats.get("elapsed", elapsed)), 3))
    if stats.get("title"):
        summary["title"] = str(stats["title"])
    for key in ("input_tokens", "output_tokens", "llm_calls"):
        if stats.get(key) is not None:
            summary[key] = int(stats[key])
    return summary


class ChatWidget(anywidget.AnyWidget):
    """A copilot conversation in a notebook output: live while it streams, kept when saved.

    Call `begin_turn`, then `push` each event, then `end_turn` (also after an exception:
    a turn that never got `done`, `error` or `abort` ends as "interrupted").
    `set_session` and `show_error` may be called at any time. Thread-safe for `push` from
    one producer; batches are also sent from a timer thread.
    """

    _esm = _STATIC / "widget.js"
    _css = _STATIC / "widget.css"

    project_id = traitlets.Unicode("").tag(sync=True)
    project_name = traitlets.Unicode("").tag(sync=True)
    session_id = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    turns = traitlets.List(traitlets.Dict()).tag(sync=True)
    can_send = traitlets.Bool(False).tag(sync=True)
    instance_id = traitlets.Unicode("").tag(sync=True)  # keys the browser's live-turn store
    direct_run = traitlets.Bool(False).tag(sync=True)
    mode = traitlets.Unicode(None, allow_none=True).tag(sync=True)
    """The copilot mode id of the turns shown (the header and the saved bundle name it as
    people say it; None: the default, not named)."""
    """Commands run without the model (`%copilot run`): tool cards show opened, and the
    saved bundle names no session (the session id only names the run, for Stop)."""

    def __init__(
        self,
        project_id: str,
        project_name: str | None = None,
        session_id: str | None = None,
        on_send: Callable[[str], None] | None = None,
        *,
        title: str | None = None,
        mode: str | None = None,
        direct_run: bool = False,
    ) -> None:
        super().__init__(
            project_id=project_id,
            project_name=project_name or "",
            session_id=session_id or "",
            title=title or "",
            instance_id=uuid.uuid4().hex,
            direct_run=direct_run,
            mode=mode,
        )
        self._builder: TurnBuilder | None = None
        self._user = ""
        """The running turn's message (the reducer `follow` takes may name it otherwise)."""
        self._turn_started = 0.0
        self._batch_number = 0
        self._batcher = OpBatcher(self._send_ops)
        self._display_id = f"gns3-copilot-chat-{self.model_id}"
        self._displayed = False
        self._on_send: Callable[[str], None] | None = None
        self.on_send = on_send
        self.on_msg(self._handle_browser_message)

    @property
    def on_send(self) -> Callable[[str], None] | None:
        """Called with the text the user sends from the input box (hidden while None)."""
        return self._on_send

    @on_send.setter
    def on_send(self, callback: Callable[[str], None] | None) -> None:
        self._on_send = callback
        self.can_send = callback is not None
        self._refresh_displays()

    @property
    def running(self) -> bool:
        """Whether a turn has begun and not ended."""
        return self._builder is not None

    def begin_turn(self, user_message: str) -> None:
        """Start a turn with the user's message (ends a turn left running as interrupted)."""
        if self._builder is not None:
            self.end_turn()
        self._builder = TurnBuilder(user_message)
        self._user = user_message
        self._turn_started = time.monotonic()
        self._batch_number = 0  # nothing is pending: the previous turn's end flushed
        self.turns = [*self.turns, dict(self._builder.turn())]
        self._refresh_displays()
        self.send({"type": "begin", "turn": len(self.turns) - 1, "user": user_message})

    def push(self, event: ChatEvent | Mapping[str, Any]) -> None:
        """Render one stream event (a `ChatEvent` or its dict; a dict is validated).

        Starts a turn without a user message if none is running. The first event that
        carries a new session id makes it the widget's session (the Stop button needs it).
        """
        if isinstance(event, Mapping):
            event = parse_event(dict(event))
        builder = self._running_turn(event)
        self._batcher.add(builder.apply(event))

    def follow(self, event: ChatEvent, ops: list[Op], reducer: TurnBuilder) -> None:
        """Render one event of a turn that `reducer` reduces (`turns.TurnFollower`): the
        operations `ops` it gave go to the browser, the event is not reduced again (the
        magics' turns: the kernel's `TurnRecorder` reduces). As `push` otherwise; the
        running turn takes `reducer` as its own at its first event (it must show nothing
        else yet), and keeps its user message.
        """
        builder = self._running_turn(event)
        if builder is not reducer:
            if builder.items or builder.stats or builder.status() != "running":
                raise RuntimeError("follow() in a turn that shows events of its own.")
            self._builder = reducer
        self._batcher.add(ops)

    def _running_turn(self, event: ChatEvent) -> TurnBuilder:
        """The running turn's reducer (a turn begun without a message if none runs), with
        the session `event` names taken."""
        if event.session_id and event.session_id != self.session_id:
            self.session_id = event.session_id
        if self._builder is None:
            self.begin_turn("")
        assert self._builder is not None
        return self._builder

    def end_turn(self, stats: Mapping[str, Any] | None = None) -> TurnStatus:
        """Finish the running turn; returns its status.

        Its footer is what `done` said (title, input_tokens, output_tokens, llm_calls,
        elapsed), overridden by `stats`; elapsed is measured when neither says. A displayed
        widget without `on_send` then becomes the saved bundle (`saved_bundle`); one with
        it stays live, with its input box.
        """
        builder = self._builder
        if builder is None:
            raise RuntimeError("end_turn() without a running turn: call begin_turn() first.")
        self._batcher.flush()
        self._builder = None
        builder.finish()
        turn = builder.turn()
        turn["user"] = self._user
        turn["stats"] = _summary(
            {**turn["stats"], **(stats or {})}, time.monotonic() - self._turn_started
        )
        if turn["stats"].get("title"):
            self.title = turn["stats"]["title"]
        self.turns = [*self.turns[:-1], dict(turn)]
        self._refresh_displays()
        return turn["status"]

    def set_session(self, session_id: str, title: str | None = None) -> None:
        """Continue in this session (its title shows in the header when given)."""
        self.session_id = session_id
        if title is not None:
            self.title = title

    def show_error(self, text: str) -> None:
        """Show an error: in the running turn, or as a turn of its own."""
        if self._builder is not None:
            self._batcher.add(self._builder.error(text))
            return
        error = ErrorItem(kind="error", text=text)
        turn = TurnRecord(user="", status="error", items=[error], stats={})
        self.turns = [*self.turns, dict(turn)]
        self._refresh_displays()

    def flush(self) -> None:
        """Send the pending live operations now."""
        self._batcher.flush()

    def transcript_markdown(self) -> str:
        """The conversation as Markdown (what nbconvert shows without widget state)."""
        return render_markdown(
            self.turns, project=self.project_name, title=self.title, mode=self.mode
        )

    def transcript_text(self) -> str:
        """The conversation as plain text (what terminal IPython shows)."""
        return render_plain(self.turns, project=self.project_name, title=self.title, mode=self.mode)

    def bundle(self) -> TurnBundle:
        """The turns shown, with their project and session (`turns.TurnBundle`)."""
        return turn_bundle(
            [TurnRecord(**turn) for turn in self.turns],  # type: ignore[typeddict-item]
            project_id=self.project_id,
            project_name=self.project_name,
            session_id=self.session_id,
            mode=self.mode,
            direct_run=self.direct_run,
        )

    def saved_bundle(self) -> dict[str, Any]:
        """What a finished output holds: the `TurnBundle` (rendered by the labextension
        without a kernel or widget state) and the Markdown / plain-text transcript."""
        return {
            TURN_MIME_TYPE: self.bundle(),
            "text/markdown": self.transcript_markdown(),
            "text/plain": self.transcript_text(),
        }

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        bundle = super()._repr_mimebundle_(**kwargs)
        assert bundle is not None  # anywidget gives none only to a widget without a view
        data, metadata = bundle
        data["text/plain"] = self.transcript_text()
        data["text/markdown"] = self.transcript_markdown()
        return data, metadata

    def _ipython_display_(self) -> None:
        # Displayed under a display id: while a turn runs (or while it takes messages from
        # its input box) the output is the live widget view; otherwise it is replaced by
        # the saved bundle (`_refresh_displays`).
        from IPython.display import display

        data, metadata = self._repr_mimebundle_()
        display(data, metadata=metadata, raw=True, display_id=self._display_id)
        self._displayed = True

    def _refresh_displays(self) -> None:
        if not self._displayed or not _in_kernel():
            return
        from IPython.display import update_display

        metadata: dict[str, Any] = {}
        if self._builder is None and self._on_send is None:
            data = self.saved_bundle()
        else:
            data, metadata = self._repr_mimebundle_()
        update_display(data, metadata=metadata, raw=True, display_id=self._display_id)

    def _send_ops(self, ops: list[Op]) -> None:
        # Runs under the batcher's lock (caller thread or timer thread).
        turn = len(self.turns) - 1
        self.send({"type": "ops", "turn": turn, "batch": self._batch_number, "ops": ops})
        self._batch_number += 1

    def _handle_browser_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "send":
            return
        text = str(content.get("text", "")).strip()
        if not text:
            return
        if self._on_send is None:
            self.show_error("This conversation cannot be continued from here.")
            return
        turns_before = len(self.turns)
        try:
            self._on_send(text)
        except Exception as exc:
            # Shown once: in the turn still running, or as an error turn unless the turn
            # that on_send ran already ended showing an error.
            message = f"Could not send the message: {exc}"
            if self._builder is not None:
                self.show_error(message)
                self.end_turn()
            elif len(self.turns) == turns_before or self.turns[-1]["status"] != "error":
                self.show_error(message)


def _in_kernel() -> bool:
    """Whether we run in a Jupyter kernel (where display updates reach a front end)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and shell.__class__.__name__ == "ZMQInteractiveShell"
