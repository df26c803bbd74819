"""The SSE writer of the chat stream: at most one write a frame, merging what queued.

`_EventWriter` is driven here with a stand-in for the tornado handler (whose flush can be
made to wait for the test: a client or connection slower than the stream) and a stand-in
for the event loop's clock and timers that only the test advances: that is what makes
"within a frame", "after a quiet period" and "the frame ends" deterministic without
sleeps. The real handler path is covered by tests/test_server_chat.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from jupyter_gns3_copilot.events import parse_event
from jupyter_gns3_copilot.server.handlers.base import WRITE_INTERVAL, _EventWriter

HEARTBEAT = {"type": "heartbeat", "session_id": "s"}


class SlowHandler:
    """write/flush/client_gone as `EventStreamHandler` has them; a flush returns when the
    test sets `flushed`."""

    def __init__(self, *, flushed: bool = False) -> None:
        self.written: list[str] = []
        self.flushed = asyncio.Event()
        if flushed:
            self.flushed.set()
        self.wrote = asyncio.Event()
        self.client_gone = False
        self._client_gone = asyncio.Event()

    def write(self, chunk: str) -> None:
        self.written.append(chunk)
        self.wrote.set()

    async def flush(self) -> None:
        await self.flushed.wait()

    def events(self, writes: list[str] | None = None) -> list[dict[str, Any]]:
        text = "".join(self.written if writes is None else writes)
        return [json.loads(block[len("data: ") :]) for block in text.split("\n\n") if block]

    async def next_write(self) -> list[dict[str, Any]]:
        """The events of the next write (waited for)."""
        count = len(self.written)
        while len(self.written) == count:
            self.wrote.clear()
            await self.wrote.wait()
        return self.events(self.written[count:])


class FakeClock:
    """`time` and `call_later` of an event loop whose time moves only on `advance`."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[tuple[asyncio.TimerHandle, Callable[[], object]]] = []
        self.scheduled = asyncio.Event()
        """Set when the writer starts waiting for a frame to end."""

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[[], object]) -> asyncio.TimerHandle:
        timer = asyncio.TimerHandle(self.now + delay, callback, (), asyncio.get_running_loop())
        self.timers.append((timer, callback))
        self.scheduled.set()
        return timer

    def waiting(self) -> bool:
        return any(not timer.cancelled() for timer, _ in self.timers)

    def advance(self, seconds: float) -> None:
        """Move the time on, running the timers then due (not cancelled)."""
        self.now += seconds
        due = [(t, c) for t, c in self.timers if t.when() <= self.now and not t.cancelled()]
        self.timers = [entry for entry in self.timers if entry not in due]
        for _, callback in due:
            callback()


def content(text: str, message_id: str = "m1") -> dict[str, Any]:
    return {"type": "content", "content": text, "message_id": message_id, "session_id": "s"}


def tool_call(arguments: str, complete: bool | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": "get_topology", "arguments": arguments}
    if complete:
        function["complete"] = True
    call = {"id": "c1", "type": "function", "function": function}
    return {"type": "tool_call", "tool_call": call, "message_id": "m2", "session_id": "s"}


def writer_for(handler: SlowHandler, clock: FakeClock, interval: float = WRITE_INTERVAL):
    return _EventWriter(handler, parse_event(HEARTBEAT), interval=interval, clock=clock)  # type: ignore[arg-type]


async def test_events_queued_during_a_flush_are_merged_without_losing_anything() -> None:
    handler, clock = SlowHandler(), FakeClock()
    writer = writer_for(handler, clock, interval=0)  # only the slow flush holds events back
    for piece in ("Both ", "PCs ", "are up."):
        writer.send(parse_event(content(piece)))
    writer.send(parse_event(content(" Other message.", message_id="m9")))
    for arguments in ("", '{"a', '{"a":', '{"a": 1}'):
        writer.send(parse_event(tool_call(arguments)))
    writer.send(parse_event(tool_call('{"a": 1}', complete=True)))
    handler.flushed.set()
    await writer.close()

    events = handler.events()
    assert [e["type"] for e in events] == ["heartbeat", "content", "content"] + ["tool_call"] * 2
    assert events[1]["content"] == "Both PCs are up." and events[1]["message_id"] == "m1"
    assert events[2] == content(" Other message.", message_id="m9")
    calls = [e["tool_call"]["function"] for e in events[3:]]
    assert calls == [  # the opening payload, then the complete one holding every fragment
        {"name": "get_topology", "arguments": ""},
        {"name": "get_topology", "arguments": '{"a": 1}', "complete": True},
    ]


async def test_pieces_within_a_frame_go_out_merged_in_one_write_when_it_ends() -> None:
    handler, clock = SlowHandler(flushed=True), FakeClock()
    writer = writer_for(handler, clock)
    pieces = [f"w{i} " for i in range(50)]
    for piece in pieces[:25]:
        writer.send(parse_event(content(piece)))
    await clock.scheduled.wait()  # the heartbeat was just written: the frame is not over
    for piece in pieces[25:]:
        writer.send(parse_event(content(piece)))
    assert handler.events() == [HEARTBEAT]

    clock.advance(WRITE_INTERVAL)
    assert await handler.next_write() == [content("".join(pieces))]
    await writer.close()
    assert len(handler.written) == 2


async def test_an_event_after_a_quiet_period_is_written_at_once() -> None:
    handler, clock = SlowHandler(flushed=True), FakeClock()
    writer = writer_for(handler, clock)
    clock.now += WRITE_INTERVAL * 2  # the heartbeat went out longer than a frame ago
    writer.send(parse_event(content("Hello")))
    assert await handler.next_write() == [content("Hello")]
    assert not clock.timers  # written without waiting for a timer

    writer.send(parse_event(content(" again")))  # within the frame of that write: waits for its end
    await clock.scheduled.wait()
    assert handler.events()[1:] == [content("Hello")]
    clock.now += WRITE_INTERVAL * 5  # a late timer: the frame ended a while ago
    clock.advance(0)
    assert await handler.next_write() == [content(" again")]
    clock.advance(WRITE_INTERVAL * 2)
    writer.send(
        parse_event(
            {
                "type": "tool_start",
                "tool_name": "get_topology",
                "tool_call_id": "c1",
                "session_id": "s",
            }
        )
    )
    assert (await handler.next_write())[0]["type"] == "tool_start"
    await writer.close()


async def test_close_writes_what_is_queued_without_waiting_out_the_frame() -> None:
    handler, clock = SlowHandler(flushed=True), FakeClock()
    writer = writer_for(handler, clock, interval=3600.0)
    writer.send(parse_event(content("The ")))
    await clock.scheduled.wait()
    writer.send(parse_event(content("end.")))
    writer.send(parse_event({"type": "done", "session_id": "s"}))
    await writer.close()  # the clock never moves: close alone ends the frame
    assert handler.events() == [HEARTBEAT, content("The end."), {"type": "done", "session_id": "s"}]
    assert not clock.waiting()  # the frame's timer was cancelled


async def test_a_calls_opening_and_complete_payloads_are_always_sent() -> None:
    handler, clock = SlowHandler(flushed=True), FakeClock()
    writer = writer_for(handler, clock)
    arguments = '{"devices": [' + ", ".join(f'"PC{n}"' for n in range(20)) + "]}"
    writer.send(parse_event(tool_call("")))  # the opening, within the heartbeat's frame
    await clock.scheduled.wait()
    cuts = range(1, len(arguments), 7)
    frames = [list(cuts[i : i + 5]) for i in range(0, len(cuts), 5)]
    for frame in frames:  # fragments in several frames: each frame sends its last payload
        for cut in frame:
            writer.send(parse_event(tool_call(arguments[:cut])))
        clock.scheduled.clear()
        clock.advance(WRITE_INTERVAL)
        await handler.next_write()
        clock.now += WRITE_INTERVAL / 2
        writer.send(parse_event(tool_call(arguments[: frame[-1] + 1])))
        await clock.scheduled.wait()
    writer.send(parse_event(tool_call(arguments)))
    writer.send(parse_event(tool_call(arguments, complete=True)))
    await writer.close()

    calls = [e["tool_call"]["function"] for e in handler.events()[1:]]
    assert calls[0] == {"name": "get_topology", "arguments": ""}
    assert calls[-1] == {"name": "get_topology", "arguments": arguments, "complete": True}
    grown = [call["arguments"] for call in calls]
    assert grown == sorted(grown, key=len) and all(arguments.startswith(a) for a in grown)
    assert len(calls) <= len(frames) * 2 + 2 < len(cuts)  # one per frame, not per fragment
