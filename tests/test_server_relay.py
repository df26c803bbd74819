"""The SSE writer of the chat stream coalesces what a lagging client has not been sent yet.

`_EventWriter` is driven here with a stand-in for the tornado handler whose flush waits
for the test: that is what makes "a flush in progress while events arrive" (a client or
connection slower than the stream) deterministic. The real handler path is covered by
tests/test_server_chat.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from jupyter_gns3_copilot.server.handlers.base import _EventWriter


class SlowHandler:
    """write/flush/client_gone as `EventStreamHandler` has them; a flush returns when the
    test sets `flushed`."""

    def __init__(self) -> None:
        self.written: list[str] = []
        self.flushed = asyncio.Event()
        self.wrote = asyncio.Event()
        self.client_gone = False
        self._client_gone = asyncio.Event()

    def write(self, chunk: str) -> None:
        self.written.append(chunk)
        self.wrote.set()

    async def flush(self) -> None:
        await self.flushed.wait()

    def events(self) -> list[dict[str, Any]]:
        text = "".join(self.written)
        return [json.loads(block[len("data: ") :]) for block in text.split("\n\n") if block]


def content(text: str, message_id: str = "m1") -> dict[str, Any]:
    return {"type": "content", "content": text, "message_id": message_id, "session_id": "s"}


def tool_call(arguments: str, complete: bool | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": "get_topology", "arguments": arguments}
    if complete:
        function["complete"] = True
    call = {"id": "c1", "type": "function", "function": function}
    return {"type": "tool_call", "tool_call": call, "message_id": "m2", "session_id": "s"}


async def test_events_queued_during_a_flush_are_merged_without_losing_anything() -> None:
    handler = SlowHandler()
    writer = _EventWriter(handler, {"type": "heartbeat", "session_id": "s"})  # type: ignore[arg-type]
    for piece in ("Both ", "PCs ", "are up."):
        writer.send(content(piece))
    writer.send(content(" Other message.", message_id="m9"))
    for arguments in ("", '{"a', '{"a":', '{"a": 1}'):
        writer.send(tool_call(arguments))
    writer.send(tool_call('{"a": 1}', complete=True))
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


async def test_a_client_keeping_up_gets_every_event_as_sent() -> None:
    handler = SlowHandler()
    handler.flushed.set()
    writer = _EventWriter(handler, {"type": "heartbeat", "session_id": "s"})  # type: ignore[arg-type]
    sent = [content("a"), content("b"), tool_call(""), tool_call('{"a"'), tool_call("{}", True)]
    for event in sent:
        handler.wrote.clear()
        writer.send(event)
        await handler.wrote.wait()  # written before the next one comes
    await writer.close()
    assert handler.events()[1:] == sent
