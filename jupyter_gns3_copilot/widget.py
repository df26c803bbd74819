"""The notebook chat widget: a copilot conversation that streams live and survives saving.

Python API (what the `%copilot` magics call; stable)::

    chat = ChatWidget(project_id, project_name="OSPF lab", on_send=continue_conversation)
    display(chat)
    chat.begin_turn("why can't PC1 ping PC3?")
    for event in stream:                 # ChatEvent models (or their dicts), in order
        chat.push(event)
    chat.end_turn({"input_tokens": 8500, "output_tokens": 1200, "llm_calls": 2})

`on_send(text)` is called when the user sends a message from the widget's input box (only
once the kernel is idle: a running cell blocks browser messages). The **Stop** button does
not go through the kernel: the browser POSTs the server's
`copilot/projects/{project_id}/chat/sessions/{session_id}/abort` itself, so the widget
must know the session id, which the first event of a turn carries.

Two channels carry a conversation to the browser:
- live: `push` reduces each event into operations on the current turn's items (see
  `TurnBuilder`); operations are batched (`FLUSH_INTERVAL` seconds or `MAX_BATCH_OPS`
  operations, consecutive text merged) and sent as one custom message
  `{"type": "ops", "turn": i, "batch": n, "ops": [...]}`. `begin_turn` sends
  `{"type": "begin", "turn": i, "user": text}` first. Operations are
  `{"op": "append", "index": k, "text": str}` (grow text item k, creating it) and
  `{"op": "item", "index": k, "item": Item}` (create or replace item k).
- state: the synced `turns` list (reassigned, never mutated in place) holds every finished
  turn, plus the running one as `{"status": "running", "items": []}`. It is what a saved
  notebook re-renders and what the browser reconciles its live rendering with when a turn
  ends. Custom messages are not saved; the state is.

Where widgets cannot render (terminal IPython, nbconvert without widget state), the display
carries a text/plain and text/markdown transcript (`render_text`), refreshed at each turn's
end.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypedDict

import anywidget
import traitlets

from .events import (
    AbortEvent,
    ChatEvent,
    ContentEvent,
    DoneEvent,
    ErrorEvent,
    HeartbeatEvent,
    ProgressEvent,
    ToolCallEvent,
    ToolEndEvent,
    ToolStartEvent,
    parse_event,
)
from .render_text import render_markdown, render_plain

__all__ = ["ChatWidget", "TurnBuilder"]

_STATIC = Path(__file__).parent / "static"

FLUSH_INTERVAL = 0.04
"""Seconds an operation may wait in the batch before it is sent."""
MAX_BATCH_OPS = 64
"""Operations (after merging) that make a batch go out at once."""
MAX_PROGRESS_LINES = 50
"""Progress lines kept per tool call (the oldest are dropped)."""

TurnStatus = Literal["running", "done", "aborted", "error", "interrupted"]
ToolState = Literal["arguments", "ready", "running", "done", "stopped"]


class TextItem(TypedDict):
    """Assistant text (Markdown), grown by content events."""

    kind: Literal["text"]
    text: str


class ProgressLine(TypedDict):
    message: str
    elapsed: float | None
    node: str | None


class ToolItem(TypedDict):
    """One tool call: `arguments` is the JSON text accumulated so far; `output` is the
    tool's result as sent by the server (a JSON string for structured results), None until
    the tool ends. `state` goes arguments -> ready (arguments complete) -> running -> done,
    or ends as stopped when the turn ends first (aborted, failed, interrupted)."""

    kind: Literal["tool"]
    id: str
    name: str
    arguments: str
    complete: bool
    state: ToolState
    progress: list[ProgressLine]
    output: str | None


class ErrorItem(TypedDict):
    kind: Literal["error"]
    text: str


Item = TextItem | ToolItem | ErrorItem


class TurnSummary(TypedDict, total=False):
    """A turn's footer: the session title, tokens, model calls and elapsed seconds."""

    title: str
    input_tokens: int
    output_tokens: int
    llm_calls: int
    elapsed: float


class Turn(TypedDict):
    """One exchange: the user's message, what the copilot streamed back, how it ended.

    `user` is empty for turns that did not start from a message (e.g. an error shown
    before any turn). `status` is `running` until `end_turn`.
    """

    user: str
    status: TurnStatus
    items: list[Item]
    stats: TurnSummary


Op = dict[str, Any]


class TurnBuilder:
    """Reduces one turn's chat events into its items, returning the browser operations.

    Pure (no widget, no I/O): `apply(event)` updates `items` and returns the operations
    that bring a rendering of the previous items up to date. `status()` is the turn's
    outcome: aborted > error > done; `interrupted` when no terminal event came.
    """

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.aborted = False
        self.failed = False
        self.finished = False

    def status(self) -> TurnStatus:
        if self.aborted:
            return "aborted"
        if self.failed:
            return "error"
        return "done" if self.finished else "interrupted"

    def apply(self, event: ChatEvent) -> list[Op]:
        if isinstance(event, ContentEvent):
            return self._content(event.content)
        if isinstance(event, ToolCallEvent):
            call = event.tool_call
            index = self._tool_index(call.id, call.function.name)
            tool = self._tool(index)
            tool["name"] = call.function.name or tool["name"]
            tool["arguments"] = call.function.arguments
            tool["complete"] = bool(call.function.complete)
            if tool["state"] == "arguments" and tool["complete"]:
                tool["state"] = "ready"
            return [self._item_op(index)]
        if isinstance(event, ToolStartEvent):
            index = self._tool_index(event.tool_call_id, event.tool_name)
            tool = self._tool(index)
            tool["complete"] = True
            tool["state"] = "running"
            return [self._item_op(index)]
        if isinstance(event, ProgressEvent):
            index = self._tool_index(event.tool_call_id, event.tool_name)
            tool = self._tool(index)
            line = ProgressLine(message=event.message, elapsed=event.elapsed, node=event.node)
            tool["progress"] = [*tool["progress"], line][-MAX_PROGRESS_LINES:]
            if tool["state"] != "done":
                tool["state"] = "running"
            return [self._item_op(index)]
        if isinstance(event, ToolEndEvent):
            index = self._tool_index(event.tool_call_id, event.tool_name)
            tool = self._tool(index)
            tool["complete"] = True
            tool["state"] = "done"
            tool["output"] = event.tool_output
            return [self._item_op(index)]
        if isinstance(event, ErrorEvent):
            self.failed = True
            return self._add(ErrorItem(kind="error", text=event.error))
        if isinstance(event, AbortEvent):
            self.aborted = True
        elif isinstance(event, DoneEvent):
            self.finished = True
        else:
            assert isinstance(event, HeartbeatEvent)
        return []

    def finish(self) -> TurnStatus:
        """End the turn: tool calls still unfinished are marked stopped; returns the status."""
        for item in self.items:
            if item["kind"] == "tool" and item["state"] != "done":
                item["state"] = "stopped"
        return self.status()

    def error(self, text: str) -> list[Op]:
        """Add an error that did not come from the stream (e.g. the server is unreachable)."""
        self.failed = True
        return self._add(ErrorItem(kind="error", text=text))

    def _content(self, text: str) -> list[Op]:
        if not text:
            return []
        if self.items and self.items[-1]["kind"] == "text":
            last = self.items[-1]
            assert last["kind"] == "text"
            last["text"] += text
        else:
            self.items.append(TextItem(kind="text", text=text))
        return [{"op": "append", "index": len(self.items) - 1, "text": text}]

    def _add(self, item: Item) -> list[Op]:
        self.items.append(item)
        return [self._item_op(len(self.items) - 1)]

    def _item_op(self, index: int) -> Op:
        # A copy: the batch may hold it while later events change the item.
        return {"op": "item", "index": index, "item": _copy_item(self.items[index])}

    def _tool(self, index: int) -> ToolItem:
        item = self.items[index]
        assert item["kind"] == "tool"
        return item

    def _tool_index(self, call_id: str | None, name: str) -> int:
        """The item of this tool call: by id; without an id, the latest unfinished call of
        that tool; otherwise a new card (a tool run directly, without a model)."""
        for index in range(len(self.items) - 1, -1, -1):
            item = self.items[index]
            if item["kind"] != "tool":
                continue
            if call_id and item["id"] == call_id:
                return index
            if not call_id and item["name"] == name and item["state"] != "done":
                return index
        self.items.append(
            ToolItem(
                kind="tool",
                id=call_id or "",
                name=name,
                arguments="",
                complete=False,
                state="arguments",
                progress=[],
                output=None,
            )
        )
        return len(self.items) - 1


def _copy_item(item: Item) -> Item:
    if item["kind"] == "tool":
        return {**item, "progress": list(item["progress"])}
    return {**item}  # type: ignore[return-value]


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


def _summary(stats: Mapping[str, Any] | None, elapsed: float) -> TurnSummary:
    """The footer fields of `stats` (unknown keys ignored); elapsed defaults to measured."""
    stats = stats or {}
    summary = TurnSummary(elapsed=round(float(stats.get("elapsed", elapsed)), 3))
    if stats.get("title"):
        summary["title"] = str(stats["title"])
    for key in ("input_tokens", "output_tokens", "llm_calls"):
        if stats.get(key) is not None:
            summary[key] = int(stats[key])  # type: ignore[literal-required]
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

    def __init__(
        self,
        project_id: str,
        project_name: str | None = None,
        session_id: str | None = None,
        on_send: Callable[[str], None] | None = None,
        *,
        title: str | None = None,
    ) -> None:
        super().__init__(
            project_id=project_id,
            project_name=project_name or "",
            session_id=session_id or "",
            title=title or "",
            instance_id=uuid.uuid4().hex,
        )
        self._on_send: Callable[[str], None] | None = None
        self.on_send = on_send
        self._builder: TurnBuilder | None = None
        self._turn_started = 0.0
        self._batch_number = 0
        self._batcher = OpBatcher(self._send_ops)
        self._display_id = f"gns3-copilot-chat-{self.model_id}"
        self._displayed = False
        self.on_msg(self._handle_browser_message)

    @property
    def on_send(self) -> Callable[[str], None] | None:
        """Called with the text the user sends from the input box (hidden while None)."""
        return self._on_send

    @on_send.setter
    def on_send(self, callback: Callable[[str], None] | None) -> None:
        self._on_send = callback
        self.can_send = callback is not None

    @property
    def running(self) -> bool:
        """Whether a turn has begun and not ended."""
        return self._builder is not None

    def begin_turn(self, user_message: str) -> None:
        """Start a turn with the user's message (ends a turn left running as interrupted)."""
        if self._builder is not None:
            self.end_turn()
        self._builder = TurnBuilder()
        self._turn_started = time.monotonic()
        self._batch_number = 0  # nothing is pending: the previous turn's end flushed
        turn = Turn(user=user_message, status="running", items=[], stats={})
        self.turns = [*self.turns, turn]
        self.send({"type": "begin", "turn": len(self.turns) - 1, "user": user_message})

    def push(self, event: ChatEvent | Mapping[str, Any]) -> None:
        """Render one stream event (a `ChatEvent` or its dict; a dict is validated).

        Starts a turn without a user message if none is running. The first event that
        carries a new session id makes it the widget's session (the Stop button needs it).
        """
        if isinstance(event, Mapping):
            event = parse_event(dict(event))
        if event.session_id and event.session_id != self.session_id:
            self.session_id = event.session_id
        if self._builder is None:
            self.begin_turn("")
        assert self._builder is not None
        self._batcher.add(self._builder.apply(event))

    def end_turn(self, stats: Mapping[str, Any] | None = None) -> TurnStatus:
        """Finish the running turn: its footer gets `stats` (title, input_tokens,
        output_tokens, llm_calls, elapsed seconds; measured if absent); returns its status.
        """
        builder = self._builder
        if builder is None:
            raise RuntimeError("end_turn() without a running turn: call begin_turn() first.")
        self._batcher.flush()
        self._builder = None
        summary = _summary(stats, time.monotonic() - self._turn_started)
        if summary.get("title"):
            self.title = summary["title"]
        running = self.turns[-1]
        status = builder.finish()
        turn = Turn(user=running["user"], status=status, items=builder.items, stats=summary)
        self.turns = [*self.turns[:-1], turn]
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
        turn = Turn(user="", status="error", items=[ErrorItem(kind="error", text=text)], stats={})
        self.turns = [*self.turns, turn]
        self._refresh_displays()

    def flush(self) -> None:
        """Send the pending live operations now."""
        self._batcher.flush()

    def transcript_markdown(self) -> str:
        """The conversation as Markdown (what nbconvert shows without widget state)."""
        return render_markdown(self.turns, project=self.project_name, title=self.title)

    def transcript_text(self) -> str:
        """The conversation as plain text (what terminal IPython shows)."""
        return render_plain(self.turns, project=self.project_name, title=self.title)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        data, metadata = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = self.transcript_text()
        data["text/markdown"] = self.transcript_markdown()
        return data, metadata

    def _ipython_display_(self) -> None:
        # Displayed under a display id, so `end_turn` can refresh the text fallback saved
        # in the notebook (the widget view itself is re-rendered from the same state).
        from IPython.display import display

        data, metadata = self._repr_mimebundle_()
        display(data, metadata=metadata, raw=True, display_id=self._display_id)
        self._displayed = True

    def _refresh_displays(self) -> None:
        if not self._displayed or not _in_kernel():
            return
        from IPython.display import update_display

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
