"""The turn model: one turn's chat events reduced into what every view shows.

The one Python reducer (`TurnBuilder`). The TypeScript one (`labextension/src/turn/`)
mirrors it field for field; both are checked against the shared fixtures in
`tests/fixtures/turns/` (`{"name", "user", "events", "turn"}`: `turn` is what reducing
`events` gives). The chat widget, the kernel's `Turn`, the text transcript and the
`stream: false` summary are all derived from it; a finished cell output saves the turns
as a `TurnBundle` under `TURN_MIME_TYPE`.

Rules (`TurnBuilder.apply`):
- `content` grows the last item when it is text, else starts a text item (empty content
  is ignored);
- `tool_call`, `tool_start`, `progress`, `tool_end` update the tool item of their call id
  (without an id: the latest unfinished call of that tool; otherwise a new item). State
  goes arguments -> ready (arguments complete) -> running (started or progress) -> done
  (ended); `finish()` marks calls still unfinished `stopped`. Progress keeps the last
  `MAX_PROGRESS_LINES` lines. `tool_end` sets `output`, `summary`, `outcome`, `note`
  (None when the event has none);
- `approval_required` adds an approval item (`state` pending); `approval_resolved` sets
  the state of the item with that `approval_id` to the decision, and its comment;
- `error` adds an error item; `abort`, `done` mark the end; `done`'s `statistics`
  (`input_tokens`, `output_tokens`, `llm_calls`, `elapsed`) and `title` go to `stats`;
- status: aborted > error > done; `interrupted` when no terminal event came.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from copy import copy
from typing import Literal, Protocol, get_args, runtime_checkable

# typing_extensions' TypedDict (typing's on Python 3.12+): pydantic exports its JSON Schema
# (`wire_schema.py`) on every supported Python.
from typing_extensions import TypedDict

from .events import (
    AbortEvent,
    ApprovalRequiredEvent,
    ApprovalResolvedEvent,
    ChatEvent,
    ContentEvent,
    DoneEvent,
    ErrorEvent,
    HeartbeatEvent,
    ProgressEvent,
    ToolCallEvent,
    ToolEndEvent,
    ToolOutcome,
    ToolStartEvent,
    parse_event,
)

__all__ = [
    "TURN_MIME_TYPE",
    "ApprovalItem",
    "ErrorItem",
    "Item",
    "Op",
    "ProgressLine",
    "TextItem",
    "ToolItem",
    "TurnBuilder",
    "TurnBundle",
    "TurnFollower",
    "TurnRecord",
    "TurnStats",
    "reduce_turn",
    "turn_bundle",
]

TURN_MIME_TYPE = "application/vnd.gns3-copilot.turns+json"
"""The MIME type of a finished cell output: a `TurnBundle` as JSON."""
MAX_PROGRESS_LINES = 50
"""Progress lines kept per tool call (the oldest are dropped)."""
StatKey = Literal["input_tokens", "output_tokens", "llm_calls"]
STAT_KEYS: tuple[StatKey, ...] = get_args(StatKey)

TurnStatus = Literal["running", "done", "aborted", "error", "interrupted"]
ToolState = Literal["arguments", "ready", "running", "done", "stopped"]
ApprovalState = Literal["pending", "approve", "reject", "timeout"]


class TextItem(TypedDict):
    """Assistant text (Markdown), grown by content events."""

    kind: Literal["text"]
    text: str


class ProgressLine(TypedDict):
    message: str
    elapsed: float | None
    node: str | None


class ToolItem(TypedDict):
    """One tool call: `arguments` is the JSON text accumulated so far; `output` the tool's
    result as the server sent it (None until it ends); `summary`, `outcome` and `note` the
    server's reading of that result (`tools/outcomes.py`)."""

    kind: Literal["tool"]
    id: str
    name: str
    arguments: str
    complete: bool
    state: ToolState
    progress: list[ProgressLine]
    output: str | None
    summary: str | None
    outcome: ToolOutcome | None
    note: str | None


class ErrorItem(TypedDict):
    kind: Literal["error"]
    text: str


class ApprovalItem(TypedDict):
    """A change waiting for the student's decision, then the decision."""

    kind: Literal["approval"]
    approval_id: str
    tool_call_id: str
    tool_name: str
    summary: str
    state: ApprovalState
    comment: str | None


Item = TextItem | ToolItem | ErrorItem | ApprovalItem


class TurnStats(TypedDict, total=False):
    """A turn's footer: the session title, tokens, model calls and elapsed seconds."""

    title: str
    input_tokens: int
    output_tokens: int
    llm_calls: int
    elapsed: float


class TurnRecord(TypedDict):
    """One exchange: the user's message, what the copilot streamed back, how it ended.

    A record, as the reducer builds it and a saved bundle holds it; not the kernel's
    `Turn` (what `Copilot.ask` returns, which keeps one as `Turn.record`) nor the chat
    engine's `RunningTurn` (a turn's bookkeeping on the server while it runs).

    `user` is empty for turns that did not start from a message (e.g. an error shown
    before any turn). `status` is `running` until the turn ends.
    """

    user: str
    status: TurnStatus
    items: list[Item]
    stats: TurnStats


class _BundleFields(TypedDict):
    version: Literal[1]
    project_id: str
    project_name: str | None
    session_id: str | None
    mode: str | None
    turns: list[TurnRecord]


class TurnBundle(_BundleFields, total=False):
    """What one finished cell output holds: the project, the session and its turns.

    `direct_run` (present only when true): the turns ran commands without the model
    (`%copilot run`); they belong to no conversation (`session_id` is None, so no front
    end offers to continue one) and their device output is the answer.
    """

    direct_run: bool


class AppendOp(TypedDict):
    """A browser operation: grow text item `index` by `text` (creating it)."""

    op: Literal["append"]
    index: int
    text: str


class ItemOp(TypedDict):
    """A browser operation: create or replace item `index`."""

    op: Literal["item"]
    index: int
    item: Item


Op = AppendOp | ItemOp
"""A browser operation (what the widget sends in its `ops` messages)."""


class TurnBuilder:
    """Reduces one turn's chat events into its items (module docstring for the rules).

    Pure (no widget, no I/O): `apply(event)` updates the turn and returns the operations
    that bring a rendering of the previous items up to date; `finish()` ends it;
    `turn()` is a snapshot as a `TurnRecord`.
    """

    def __init__(self, user: str = "") -> None:
        self.user = user
        self.items: list[Item] = []
        self.stats: TurnStats = {}
        self.aborted = False
        self.failed = False
        self.finished = False
        self.ended = False

    def status(self) -> TurnStatus:
        if self.aborted:
            return "aborted"
        if self.failed:
            return "error"
        if self.finished:
            return "done"
        return "interrupted" if self.ended else "running"

    def turn(self) -> TurnRecord:
        """The turn so far (a copy: later events do not change it)."""
        return TurnRecord(
            user=self.user,
            status=self.status(),
            items=[_copy_item(item) for item in self.items],
            stats=TurnStats(**self.stats),
        )

    def apply(self, event: ChatEvent | Mapping[str, object]) -> list[Op]:
        """Take one event (a `ChatEvent` or its dict) into account."""
        if isinstance(event, Mapping):
            event = parse_event(dict(event))
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
            tool["summary"] = event.summary
            tool["outcome"] = event.outcome
            tool["note"] = event.note
            return [self._item_op(index)]
        if isinstance(event, ApprovalRequiredEvent):
            return self._add(
                ApprovalItem(
                    kind="approval",
                    approval_id=event.approval_id,
                    tool_call_id=event.tool_call_id,
                    tool_name=event.tool_name,
                    summary=event.summary,
                    state="pending",
                    comment=None,
                )
            )
        if isinstance(event, ApprovalResolvedEvent):
            return self._resolve(event)
        if isinstance(event, ErrorEvent):
            return self.error(event.error)
        if isinstance(event, AbortEvent):
            self.aborted = True
        elif isinstance(event, DoneEvent):
            self.finished = True
            self._done_stats(event)
        else:
            assert isinstance(event, HeartbeatEvent)
        return []

    def finish(self) -> TurnStatus:
        """End the turn: tool calls still unfinished are marked stopped; returns the status."""
        self.ended = True
        for item in self.items:
            if item["kind"] == "tool" and item["state"] != "done":
                item["state"] = "stopped"
        return self.status()

    def error(self, text: str) -> list[Op]:
        """Add an error (from the stream, or one that did not come from it)."""
        self.failed = True
        return self._add(ErrorItem(kind="error", text=text))

    def _done_stats(self, event: DoneEvent) -> None:
        statistics = event.statistics or {}
        for key in STAT_KEYS:
            if statistics.get(key) is not None:
                self.stats[key] = int(statistics[key])
        if statistics.get("elapsed") is not None:
            self.stats["elapsed"] = float(statistics["elapsed"])
        if event.title:
            self.stats["title"] = event.title

    def _resolve(self, event: ApprovalResolvedEvent) -> list[Op]:
        for index, item in enumerate(self.items):
            if item["kind"] == "approval" and item["approval_id"] == event.approval_id:
                item["state"] = event.decision
                item["comment"] = event.comment
                return [self._item_op(index)]
        return []

    def _content(self, text: str) -> list[Op]:
        if not text:
            return []
        last = self.items[-1] if self.items else None
        if last is not None and last["kind"] == "text":
            last["text"] += text
        else:
            self.items.append(TextItem(kind="text", text=text))
        return [{"op": "append", "index": len(self.items) - 1, "text": text}]

    def _add(self, item: Item) -> list[Op]:
        self.items.append(item)
        return [self._item_op(len(self.items) - 1)]

    def _item_op(self, index: int) -> Op:
        # A copy: a batch may hold it while later events change the item.
        return {"op": "item", "index": index, "item": _copy_item(self.items[index])}

    def _tool(self, index: int) -> ToolItem:
        item = self.items[index]
        assert item["kind"] == "tool"
        return item

    def _tool_index(self, call_id: str | None, name: str) -> int:
        """The item of this tool call: by id; without an id, the latest unfinished call of
        that tool; otherwise a new item (e.g. a tool run directly, without a model)."""
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
                summary=None,
                outcome=None,
                note=None,
            )
        )
        return len(self.items) - 1


@runtime_checkable
class TurnFollower(Protocol):
    """Shows a turn that another `TurnBuilder` reduces, so that each event is reduced once
    per process (in the kernel, the `TurnRecorder` reduces; the chat widget and the text
    transcript follow).

    `follow` is called with each event in order (heartbeats included), the operations
    that reducing it gave and the reducer itself (whose `turn()` is the follower's turn).
    """

    def follow(self, event: ChatEvent, ops: list[Op], reducer: TurnBuilder) -> None: ...


def _copy_item(item: Item) -> Item:
    if item["kind"] == "tool":
        return {**item, "progress": [ProgressLine(**line) for line in item["progress"]]}
    return copy(item)


def reduce_turn(user: str, events: Iterable[ChatEvent | Mapping[str, object]]) -> TurnRecord:
    """The finished `TurnRecord` of `events` (the whole stream of one turn)."""
    builder = TurnBuilder(user)
    for event in events:
        builder.apply(event)
    builder.finish()
    return builder.turn()


def turn_bundle(
    turns: list[TurnRecord],
    *,
    project_id: str,
    project_name: str | None = None,
    session_id: str | None = None,
    mode: str | None = None,
    direct_run: bool = False,
) -> TurnBundle:
    """What a finished cell output saves under `TURN_MIME_TYPE` (a direct run's names no
    session: the id its stream had only named the run)."""
    bundle = TurnBundle(
        version=1,
        project_id=project_id,
        project_name=project_name or None,
        session_id=None if direct_run else session_id or None,
        mode=mode,
        turns=turns,
    )
    if direct_run:
        bundle["direct_run"] = True
    return bundle
