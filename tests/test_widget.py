"""The chat widget's Python side: reducing events into turns, batching what goes to the
browser, the synced state a saved notebook keeps, and the text/Markdown fallback.

No browser here (tests/browser/ has those): outside a kernel the widget's comm is a dummy,
and `send` is replaced by a recorder to see the custom messages.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pydantic
import pytest

from jupyter_gns3_copilot.events import parse_event
from jupyter_gns3_copilot.mode_labels import mode_label
from jupyter_gns3_copilot.notebook.render_text import (
    device_results,
    format_stats,
    render_markdown,
    render_plain,
)
from jupyter_gns3_copilot.notebook.reports import status_text
from jupyter_gns3_copilot.notebook.transcript import TextStream
from jupyter_gns3_copilot.notebook.turn import TurnRecorder
from jupyter_gns3_copilot.notebook.widget import ChatWidget, OpBatcher
from jupyter_gns3_copilot.turns import MAX_PROGRESS_LINES, TURN_MIME_TYPE, TurnBuilder

SESSION = "sess-1"
DEVICES = [
    {
        "device_name": "PC1",
        "status": "success",
        "output": "PC1> show ip\nIP/MASK : 10.0.0.1/24",
        "commands": ["show ip"],
    },
    {
        "device_name": "PC3",
        "status": "failed",
        "output": "",
        "error": "Connection timeout",
        "commands": ["show ip"],
    },
]


def event(kind: str, **fields: Any) -> Any:
    return parse_event({"type": kind, "session_id": SESSION, **fields})


def tool_call(arguments: str, complete: bool = False, call_id: str = "c1") -> Any:
    function: dict[str, Any] = {"name": "execute_multiple_device_commands", "arguments": arguments}
    if complete:
        function["complete"] = True
    return event("tool_call", tool_call={"id": call_id, "type": "function", "function": function})


def turn_events() -> list[Any]:
    arguments = '{"device_names": ["PC1", "PC3"], "commands": ["show ip"]}'
    return [
        event("content", content="Let me "),
        event("content", content="check."),
        tool_call(""),
        tool_call(arguments[:20]),
        tool_call(arguments, complete=True),
        event("tool_start", tool_name="execute_multiple_device_commands", tool_call_id="c1"),
        event(
            "progress",
            tool_name="execute_multiple_device_commands",
            tool_call_id="c1",
            message="waiting for PC3's console",
            node="PC3",
            elapsed=1.5,
        ),
        event(
            "tool_end",
            tool_name="execute_multiple_device_commands",
            tool_call_id="c1",
            tool_output=json.dumps(DEVICES),
        ),
        event("content", content="PC3 is down."),
        event("done"),
    ]


class Recorder:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, content: dict[str, Any], buffers: Any = None) -> None:
        self.messages.append(json.loads(json.dumps(content)))  # as the browser gets it

    def ops(self) -> list[dict[str, Any]]:
        return [op for m in self.messages if m["type"] == "ops" for op in m["ops"]]


def make_widget(**kwargs: Any) -> tuple[ChatWidget, Recorder]:
    widget = ChatWidget("proj-1", project_name="OSPF lab", **kwargs)
    recorder = Recorder()
    widget.send = recorder  # type: ignore[method-assign]
    return widget, recorder


def replay(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the browser builds from the operations (as widget.js applies them)."""
    items: list[dict[str, Any]] = []
    for op in ops:
        while len(items) <= op["index"]:
            items.append({})
        if op["op"] == "append":
            current = items[op["index"]]
            items[op["index"]] = {"kind": "text", "text": current.get("text", "") + op["text"]}
        else:
            items[op["index"]] = op["item"]
    return items


# --- TurnBuilder: events -> items --------------------------------------------------------


def test_builder_turns_a_stream_into_text_tool_and_text_items() -> None:
    builder = TurnBuilder()
    ops = [op for e in turn_events() for op in builder.apply(e)]

    assert [item["kind"] for item in builder.items] == ["text", "tool", "text"]
    assert builder.items[0] == {"kind": "text", "text": "Let me check."}
    tool = builder.items[1]
    assert tool["state"] == "done" and tool["complete"] is True
    assert json.loads(tool["arguments"])["device_names"] == ["PC1", "PC3"]
    assert tool["progress"] == [
        {"message": "waiting for PC3's console", "elapsed": 1.5, "node": "PC3"}
    ]
    assert json.loads(tool["output"] or "") == DEVICES
    assert builder.status() == "done"
    assert replay(ops) == builder.items


def test_builder_tool_states_follow_the_arguments_and_the_run() -> None:
    builder = TurnBuilder()
    states = []
    for e in turn_events()[2:8]:
        builder.apply(e)
        states.append(builder.items[0]["state"])
    assert states == ["arguments", "arguments", "ready", "running", "running", "done"]


def test_builder_matches_tool_results_without_ids_by_tool_name() -> None:
    builder = TurnBuilder()
    builder.apply(tool_call("{}", complete=True, call_id="c9"))
    builder.apply(
        parse_event(
            {
                "type": "tool_end",
                "session_id": SESSION,
                "tool_name": "execute_multiple_device_commands",
                "tool_output": "[]",
            }
        )
    )
    assert len(builder.items) == 1 and builder.items[0]["output"] == "[]"


def test_builder_gives_a_card_to_a_tool_run_without_a_model() -> None:
    builder = TurnBuilder()
    builder.apply(event("progress", tool_name="run_command", message="connecting", node="PC1"))
    builder.apply(event("tool_end", tool_name="run_command", tool_output="ok"))
    assert len(builder.items) == 1
    assert builder.items[0]["name"] == "run_command" and builder.items[0]["state"] == "done"


def test_builder_keeps_the_latest_progress_lines() -> None:
    builder = TurnBuilder()
    for n in range(MAX_PROGRESS_LINES + 5):
        builder.apply(event("progress", tool_name="t", tool_call_id="c1", message=f"line {n}"))
    progress = builder.items[0]["progress"]
    assert len(progress) == MAX_PROGRESS_LINES and progress[-1]["message"] == "line 54"


@pytest.mark.parametrize(
    ("kinds", "status"),
    [
        (["done"], "done"),
        (["error", "done"], "error"),
        (["error", "abort"], "aborted"),
        ([], "interrupted"),
    ],
)
def test_builder_status_comes_from_the_terminal_events(kinds: list[str], status: str) -> None:
    builder = TurnBuilder()
    for kind in kinds:
        builder.apply(event(kind, error="boom") if kind == "error" else event(kind))
    assert builder.finish() == status


def test_finishing_an_aborted_turn_marks_running_tools_stopped() -> None:
    builder = TurnBuilder()
    builder.apply(tool_call("{}", complete=True))
    builder.apply(
        event("tool_start", tool_name="execute_multiple_device_commands", tool_call_id="c1")
    )
    builder.apply(event("abort"))
    assert builder.finish() == "aborted"
    assert builder.items[0]["state"] == "stopped"


def test_heartbeats_render_nothing() -> None:
    assert TurnBuilder().apply(event("heartbeat")) == []


# --- OpBatcher: what goes over the comm ----------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_batcher_merges_text_and_keeps_the_latest_item_snapshot() -> None:
    sent: list[list[dict[str, Any]]] = []
    clock = FakeClock()
    batcher = OpBatcher(sent.append, interval=60.0, max_ops=100, clock=clock)
    builder = TurnBuilder()
    for n in range(2000):
        batcher.add(builder.apply(event("content", content=f"{n} ")))
    for size in range(1, 6):
        batcher.add(builder.apply(tool_call('{"a": 1}'[:size])))
    assert sent == []
    batcher.flush()
    assert len(sent) == 1
    assert len(sent[0]) == 2
    assert sent[0][0]["text"] == "".join(f"{n} " for n in range(2000))
    assert sent[0][1]["item"]["arguments"] == '{"a":'


def test_batcher_sends_when_the_batch_is_old_or_full() -> None:
    sent: list[list[dict[str, Any]]] = []
    clock = FakeClock()
    batcher = OpBatcher(sent.append, interval=60.0, max_ops=3, clock=clock)
    batcher.add([{"op": "item", "index": i, "item": {}} for i in range(3)])
    assert len(sent) == 1  # full
    batcher.add([{"op": "item", "index": 3, "item": {}}])
    clock.now = 61.0
    batcher.add([{"op": "item", "index": 4, "item": {}}])
    assert len(sent) == 2 and [op["index"] for op in sent[1]] == [3, 4]  # old
    batcher.flush()


def test_batcher_timer_sends_the_last_words_before_a_silence() -> None:
    arrived = threading.Event()
    batcher = OpBatcher(lambda ops: arrived.set(), interval=0.01)
    batcher.add([{"op": "append", "index": 0, "text": "last words"}])
    assert arrived.wait(timeout=10), "the timer never flushed the pending batch"


# --- ChatWidget ------------------------------------------------------------------------------


def test_widget_streams_a_turn_and_keeps_it_in_state() -> None:
    widget, recorder = make_widget()
    widget.begin_turn("Why can't PC1 ping PC3?")
    assert widget.turns == [
        {"user": "Why can't PC1 ping PC3?", "status": "running", "items": [], "stats": {}}
    ]
    for e in turn_events():
        widget.push(e)
    status = widget.end_turn(
        {
            "title": "PC reachability",
            "input_tokens": 8500,
            "output_tokens": 1200,
            "llm_calls": 2,
            "elapsed": 4.25,
            "unknown": "ignored",
        }
    )

    assert status == "done"
    assert widget.session_id == SESSION and widget.title == "PC reachability"
    begin, *batches = recorder.messages
    assert begin == {"type": "begin", "turn": 0, "user": "Why can't PC1 ping PC3?"}
    assert [m["batch"] for m in batches] == list(range(len(batches)))
    assert {m["turn"] for m in batches} == {0}
    (turn,) = widget.turns
    assert turn["status"] == "done"
    assert turn["stats"] == {
        "title": "PC reachability",
        "input_tokens": 8500,
        "output_tokens": 1200,
        "llm_calls": 2,
        "elapsed": 4.25,
    }
    assert replay(recorder.ops()) == turn["items"]
    assert not widget.running


def test_widget_measures_elapsed_time_when_not_given() -> None:
    widget, _ = make_widget()
    widget.begin_turn("hi")
    widget.push(event("done"))
    widget.end_turn()
    assert widget.turns[0]["stats"]["elapsed"] >= 0


def test_widget_accepts_event_dicts_and_rejects_malformed_ones() -> None:
    widget, _ = make_widget()
    widget.begin_turn("hi")
    widget.push({"type": "content", "content": "hello", "session_id": SESSION})
    with pytest.raises(pydantic.ValidationError):
        widget.push({"type": "content", "session_id": SESSION})
    widget.end_turn()
    assert widget.turns[0]["items"] == [{"kind": "text", "text": "hello"}]


def test_events_without_a_turn_start_one() -> None:
    widget, _ = make_widget()
    widget.push(event("content", content="direct"))
    assert widget.running
    widget.end_turn()
    assert widget.turns[0]["user"] == "" and widget.turns[0]["status"] == "interrupted"


def test_a_new_turn_ends_one_left_running_as_interrupted() -> None:
    widget, _ = make_widget()
    widget.begin_turn("first")
    widget.push(event("content", content="partial"))
    widget.begin_turn("second")
    assert [t["status"] for t in widget.turns] == ["interrupted", "running"]
    assert widget.turns[0]["items"] == [{"kind": "text", "text": "partial"}]


def test_end_turn_without_a_turn_says_what_to_do() -> None:
    widget, _ = make_widget()
    with pytest.raises(RuntimeError, match="begin_turn"):
        widget.end_turn()


def test_errors_show_in_the_running_turn_or_as_their_own() -> None:
    widget, _ = make_widget()
    widget.show_error("The Jupyter server is not reachable.")
    widget.begin_turn("hi")
    widget.show_error("Stream cut.")
    widget.end_turn()
    assert [t["status"] for t in widget.turns] == ["error", "error"]
    assert widget.turns[0]["items"] == [
        {"kind": "error", "text": "The Jupyter server is not reachable."}
    ]
    assert widget.turns[1]["items"] == [{"kind": "error", "text": "Stream cut."}]


def test_set_session_names_the_session_for_the_stop_button() -> None:
    widget, _ = make_widget()
    widget.set_session("sess-9", "OSPF troubleshooting")
    assert (widget.session_id, widget.title) == ("sess-9", "OSPF troubleshooting")


def test_messages_from_the_input_box_reach_on_send() -> None:
    received: list[str] = []
    widget, _ = make_widget(on_send=received.append)
    assert widget.can_send
    widget._handle_browser_message(widget, {"type": "send", "text": "  and PC2?  "}, [])
    widget._handle_browser_message(widget, {"type": "send", "text": "   "}, [])
    widget._handle_browser_message(widget, {"type": "other"}, [])
    assert received == ["and PC2?"]


def test_a_failing_on_send_shows_an_error_and_ends_its_turn() -> None:
    def on_send(text: str) -> None:
        widget.begin_turn(text)
        raise ConnectionError("server gone")

    widget, _ = make_widget(on_send=on_send)
    widget._handle_browser_message(widget, {"type": "send", "text": "hi"}, [])
    assert not widget.running
    assert widget.turns[-1]["status"] == "error"
    assert "server gone" in widget.turns[-1]["items"][-1]["text"]


def test_an_error_on_send_already_showed_is_not_shown_twice() -> None:
    def on_send(text: str) -> None:
        widget.begin_turn(text)
        widget.show_error("Model not configured")
        widget.end_turn()
        raise ConnectionError("Model not configured")

    widget, _ = make_widget(on_send=on_send)
    widget._handle_browser_message(widget, {"type": "send", "text": "hi"}, [])
    assert len(widget.turns) == 1 and widget.turns[0]["status"] == "error"


def test_a_refused_message_shows_as_an_error_turn() -> None:
    def on_send(text: str) -> None:
        raise ConnectionError("the server refused: 409 project closed")

    widget, _ = make_widget(on_send=on_send)
    widget._handle_browser_message(widget, {"type": "send", "text": "hi"}, [])
    assert widget.turns == [
        {
            "user": "",
            "status": "error",
            "stats": {},
            "items": [
                {
                    "kind": "error",
                    "text": "Could not send the message: the server refused: 409 project closed",
                }
            ],
        }
    ]


def test_without_on_send_the_input_box_is_hidden() -> None:
    widget, _ = make_widget()
    assert not widget.can_send
    widget.on_send = print
    assert widget.can_send


def test_the_display_carries_a_text_and_markdown_transcript() -> None:
    widget, _ = make_widget()
    widget.begin_turn("Why can't PC1 ping PC3?")
    for e in turn_events():
        widget.push(e)
    widget.end_turn({"llm_calls": 1})
    data, _metadata = widget._repr_mimebundle_()
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == widget.model_id
    assert "You: Why can't PC1 ping PC3?" in data["text/plain"]
    assert "| PC3 | failed | Connection timeout |" in data["text/markdown"]


def test_a_finished_turn_is_saved_as_a_turn_bundle_with_its_done_statistics() -> None:
    """The output a finished turn leaves: the TurnBundle (no widget view) and transcripts;
    the footer comes from `done` (statistics and title), elapsed as the server measured."""
    widget, _ = make_widget()
    widget.mode = "teaching_assistant"
    widget.begin_turn("Why can't PC1 ping PC3?")
    for e in turn_events()[:-1]:
        widget.push(e)
    widget.push(
        event(
            "done",
            statistics={"input_tokens": 900, "output_tokens": 40, "llm_calls": 2, "elapsed": 3.5},
            title="PC3 check",
        )
    )
    widget.end_turn()
    saved = widget.saved_bundle()
    assert set(saved) == {TURN_MIME_TYPE, "text/markdown", "text/plain"}
    bundle = saved[TURN_MIME_TYPE]
    assert {k: bundle[k] for k in ("version", "project_id", "session_id", "mode")} == {
        "version": 1,
        "project_id": widget.project_id,
        "session_id": widget.session_id,
        "mode": "teaching_assistant",
    }
    [turn] = bundle["turns"]
    assert turn["stats"] == {
        "title": "PC3 check",
        "input_tokens": 900,
        "output_tokens": 40,
        "llm_calls": 2,
        "elapsed": 3.5,
    }
    assert turn == widget.turns[0] and turn["status"] == "done"
    assert json.loads(json.dumps(bundle)) == bundle, "JSON as saved in the notebook"
    assert widget.title == "PC3 check"
    for transcript in (saved["text/plain"], saved["text/markdown"]):
        assert "GNS3 Copilot · project OSPF lab · PC3 check · Teaching mode" in transcript
        assert "teaching_assistant" not in transcript


def test_a_direct_runs_saved_bundle_names_no_session_to_continue() -> None:
    """A `%copilot run` widget keeps the run's id while it streams (Stop needs it) but its
    saved bundle names no conversation, and says it was a direct run."""
    widget, _ = make_widget(direct_run=True)
    widget.begin_turn("run PC1: show ip")
    widget.push(
        event("tool_start", tool_name="run_show_commands", tool_call_id="", session_id="run-1")
    )
    assert widget.session_id == "run-1" and widget.direct_run
    widget.push(event("done", session_id="run-1"))
    widget.end_turn()
    bundle = widget.saved_bundle()[TURN_MIME_TYPE]
    assert bundle["session_id"] is None and bundle["direct_run"] is True
    chat, _ = make_widget(session_id="s1")
    assert "direct_run" not in chat.bundle() and chat.bundle()["session_id"] == "s1"


# --- one reduction in the kernel: the widget and the text output follow the TurnRecorder ----


def one_op_batches(widget: ChatWidget) -> None:
    """Each event's operations sent as they come (batches that do not depend on timing)."""
    widget._batcher = OpBatcher(widget._send_ops, max_ops=1)


def test_a_widget_following_the_kernels_reduction_shows_what_pushing_shows(
    request: pytest.FixtureRequest,
) -> None:
    """The magics' widget follows the `TurnRecorder`'s reducer: each event is reduced
    once, and the browser gets the same messages, the saved output the same bundle, as
    from a widget that reduces the events itself. The widget keeps its own message for
    the turn (a direct run's recorder words it otherwise)."""
    done = event(
        "done",
        statistics={"input_tokens": 900, "output_tokens": 40, "llm_calls": 2},
        title="PC3 check",
    )
    events = [*turn_events()[:2], event("heartbeat"), *turn_events()[2:-1], done]
    pushed, pushed_sent = make_widget()
    followed, followed_sent = make_widget()
    for widget in (pushed, followed):
        one_op_batches(widget)
        widget.begin_turn("Why can't PC1 ping PC3?")
    for e in events:
        pushed.push(e)

    reduced = request.getfixturevalue("reductions")  # counted from here
    recorder = TurnRecorder("why can't PC1 ping PC3", SESSION)
    for e in events:
        followed.follow(e, recorder.add(e), recorder.builder)
    assert reduced == [e for e in events if e.type != "heartbeat"]
    turn = recorder.finish()
    for widget in (pushed, followed):
        widget.end_turn({"elapsed": 2.5})

    assert followed_sent.messages == pushed_sent.messages
    assert followed.saved_bundle() == pushed.saved_bundle()
    assert followed.turns[0]["user"] == "Why can't PC1 ping PC3?"
    assert turn.record["user"] == "why can't PC1 ping PC3" and turn.status == "done"
    assert turn.record["items"] == followed.turns[0]["items"]


def test_a_turn_left_waiting_for_an_approval_is_aborted_for_the_kernel_only() -> None:
    """Interrupting a cell whose turn waits for an approval leaves the turn waiting on the
    server: the kernel's `Turn` says aborted (the cell stopped), the widget following the
    same reducer shows it interrupted, not stopped by the user."""
    widget, _ = make_widget()
    widget.begin_turn("add PC3")
    recorder = TurnRecorder("add PC3", SESSION)
    waiting = event(
        "approval_required",
        approval_id="a1",
        tool_call_id="c1",
        tool_name="create_nodes",
        summary="create PC3 (VPCS)",
    )
    widget.follow(waiting, recorder.add(waiting), recorder.builder)
    assert recorder.finish(aborted=True).status == "aborted"
    assert widget.end_turn() == "interrupted"


@pytest.mark.parametrize(
    "own", [event("content", content="mine"), event("abort")], ids=["content", "abort"]
)
def test_a_widget_cannot_follow_into_a_turn_showing_events_of_its_own(own: Any) -> None:
    widget, _ = make_widget()
    widget.push(own)
    recorder = TurnRecorder("hi", SESSION)
    other = event("content", content="theirs")
    with pytest.raises(RuntimeError, match="events of its own"):
        widget.follow(other, recorder.add(other), recorder.builder)


def test_the_text_output_following_the_kernels_reduction_writes_what_it_writes_alone(
    request: pytest.FixtureRequest,
) -> None:
    alone: list[str] = []
    printer = TextStream(alone.append)
    for e in turn_events():
        printer(e)
    reduced = request.getfixturevalue("reductions")  # counted from here
    followed: list[str] = []
    follower, recorder = TextStream(followed.append), TurnRecorder("Why?", SESSION)
    for e in turn_events():
        follower.follow(e, recorder.add(e), recorder.builder)
    assert followed == alone and "<- PC3: failed (Connection timeout)" in "".join(followed)
    assert reduced == turn_events()


# --- render_text ----------------------------------------------------------------------------


def finished_turn(**overrides: Any) -> dict[str, Any]:
    builder = TurnBuilder()
    for e in turn_events():
        builder.apply(e)
    turn = {
        "user": "Why?",
        "status": builder.finish(),
        "items": builder.items,
        "stats": {
            "title": "PC reachability",
            "input_tokens": 8500,
            "output_tokens": 1200,
            "llm_calls": 2,
            "elapsed": 4.25,
        },
    }
    return {**turn, **overrides}


def test_plain_transcript_lists_devices_with_their_output() -> None:
    text = render_plain([finished_turn()], project="OSPF lab")
    assert text.splitlines()[0] == "GNS3 Copilot · project OSPF lab"
    assert "You: Why?" in text
    assert "    PC1: ok\n      | PC1> show ip\n      | IP/MASK : 10.0.0.1/24" in text
    assert "    PC3: failed - Connection timeout" in text
    assert "[PC reachability · 8,500 in / 1,200 out tokens · 2 model calls · 4.2 s]" in text


def test_every_view_names_the_mode_as_people_say_it_and_the_wire_keeps_the_id() -> None:
    """The mode id stays in the widget's state and the saved bundle; the live header (the
    `mode` trait the browser names), the transcripts, the text output's footer and
    `%copilot status` say "Automation mode" / "Teaching mode", as the docs do; the old
    word "lab" still reads as the automation mode."""
    for mode, words, label in (
        ("lab_automation_assistant", ("automation", "lab"), "Automation mode"),
        ("teaching_assistant", ("teaching",), "Teaching mode"),
    ):
        assert {mode_label(name) for name in (mode, *words)} == {label}
        widget, _ = make_widget(mode=mode)
        assert widget.get_state()["mode"] == mode and widget.bundle()["mode"] == mode
        for text in (widget.transcript_text(), widget.transcript_markdown()):
            assert text.splitlines()[0].strip("*").endswith(f" · {label}") and mode not in text
        report = {"model": {"model": "m", "base_url": "u", "copilot_mode": mode}}
        assert f"Model: m at u (no key), {label} - NOT configured" in status_text(report, "s")
        written: list[str] = []
        printer, recorder = TextStream(written.append, mode=mode), TurnRecorder("Why?", SESSION)
        for e in turn_events():
            printer.follow(e, recorder.add(e), recorder.builder)
        printer.finish(recorder.finish())
        assert written[-1].startswith(f"[done · {label} · ")
    assert mode_label("expert") == "expert"
    assert make_widget()[0].get_state()["mode"] is None
    assert render_plain([]).splitlines()[0] == "GNS3 Copilot"


def test_markdown_transcript_is_safe_to_render_as_html() -> None:
    turn = finished_turn(user="<script>alert(1)</script>")
    turn["items"] = [
        *turn["items"],
        {
            "kind": "text",
            "text": "Use `<b>` or\n```\n<i>x</i>\n```\nbut <img src=x onerror=alert(1)> is text.",
        },
    ]
    markdown = render_markdown([turn])
    assert "<script>" not in markdown and "&lt;script&gt;" in markdown
    assert "<img" not in markdown and "&lt;img src=x" in markdown
    assert "`<b>`" in markdown and "```\n<i>x</i>\n```" in markdown  # code stays literal


def test_markdown_fences_outlast_backticks_in_outputs() -> None:
    devices = [{"device_name": "R1", "status": "success", "output": "a ```` b"}]
    turn = finished_turn()
    turn["items"][1] = {**turn["items"][1], "output": json.dumps(devices)}
    assert "`````\na ```` b\n`````" in render_markdown([turn])


def test_transcripts_show_summaries_notes_and_approvals_not_the_models_refusal() -> None:
    fixtures = Path(__file__).parent / "fixtures" / "turns"
    turns = [
        json.loads((fixtures / f"{name}.json").read_text(encoding="utf-8"))["turn"]
        for name in ("recorded_teaching_refusal", "approval_approve_then_reject")
    ]
    for text in (render_markdown(turns), render_plain(turns)):
        assert "Teaching mode: I can't change PC2's address" in text
        assert "Explain to the user" not in text, "the text written for the model stays out"
        assert "set PC2's address to 10.0.0.2/24: approved (go ahead)" in text
        assert "on PC2 · 1 ok" in text


def test_long_outputs_are_clipped_in_transcripts() -> None:
    devices = [
        {
            "device_name": "R1",
            "status": "success",
            "output": "\n".join(f"line {n}" for n in range(100)),
        }
    ]
    turn = finished_turn()
    turn["items"][1] = {**turn["items"][1], "output": json.dumps(devices)}
    text = render_plain([turn])
    assert "line 59" in text and "line 60" not in text and "(40 more lines)" in text


def test_transcripts_say_how_a_turn_ended() -> None:
    aborted = finished_turn(status="aborted")
    aborted["items"][1] = {**aborted["items"][1], "state": "stopped", "output": None}
    text = render_plain([aborted])
    assert "(stopped by the user)" in text and "(stopped before a result)" in text
    assert "*(stopped by the user)*" in render_markdown([aborted])


def test_empty_conversations_say_so() -> None:
    assert "(no messages yet)" in render_plain([])
    assert "*No messages yet.*" in render_markdown([], title="t")


def test_device_results_are_recognised_only_in_their_shape() -> None:
    assert device_results(json.dumps(DEVICES)) == DEVICES
    assert device_results(json.dumps({"device_name": "R1", "status": "success"})) is None
    assert device_results(json.dumps([{"name": "R1"}])) is None
    assert device_results("plain text") is None
    assert device_results(None) is None


def test_stats_format_like_the_widget_footer() -> None:
    assert format_stats({"llm_calls": 1, "elapsed": 75}) == "1 model call · 1 min 15 s"
    assert format_stats({"output_tokens": 5}) == "0 in / 5 out tokens"
    # A call cut short (or an endpoint without usage) reports nothing: not a real zero.
    stopped = {"input_tokens": 0, "output_tokens": 0, "llm_calls": 1}
    assert format_stats(stopped) == "tokens not reported · 1 model call"
    assert format_stats({**stopped, "llm_calls": 0}) == "0 in / 0 out tokens · 0 model calls"
    assert format_stats({}) == ""
