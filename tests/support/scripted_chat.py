"""Kernel-side driver for the browser tests: plays scripted chat streams into a ChatWidget.

Stands in for the %copilot magics (which feed the widget from the server's SSE stream): the
events are the chat stream's SSE format, parsed with the same models the kernel client uses, and
pushed with small sleeps so the browser sees them arrive live.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jupyter_gns3_copilot.events import parse_event
from jupyter_gns3_copilot.notebook.widget import ChatWidget

PROJECT_ID = "6f1c2a8e-0d4b-4c59-9a43-1b2c3d4e5f60"
SESSION_ID = "d7e76375-6960-419a-9367-211ef64af877"
DEVICE_TOOL = "execute_multiple_device_commands"
ARGUMENTS = json.dumps(
    {"device_names": ["PC1", "PC2", "PC3"], "commands": ["show ip", "ping 10.0.0.3 -c 2"]}
)
INJECTION = '<img src="x" onerror="window.__gns3cInjected = true">'
DEMO_STATS = {
    "title": "PC reachability",
    "input_tokens": 8500,
    "output_tokens": 1200,
    "llm_calls": 2,
}

DEMO_ANSWER = (
    "## Diagnosis\n\n"
    "**PC3 does not answer.** Its console timed out, so I checked the others:\n\n"
    "- `PC1` has `10.0.0.1/24` and its ping to PC3 fails\n"
    "- `PC2` could not run `reload`: the *command policy* blocked it\n\n"
    f"Raw HTML stays text: {INJECTION}\n\n"
    "```\nPC1> ping 10.0.0.3\nhost (10.0.0.3) not reachable\n```\n\n"
    "See [the VPCS docs](https://docs.gns3.com/docs/emulators/vpcs/) and "
    "[this](javascript:alert(1)).\n"
)


def _pc_output(name: str, address: str, lines: int) -> str:
    ping = "\n".join(
        f"84 bytes from 10.0.0.2 icmp_seq={n} ttl=64 time=0.{n}1 ms" for n in range(1, lines + 1)
    )
    return (
        f"{name}> show ip\nNAME        : {name}[1]\nIP/MASK     : {address}/24\n"
        f"GATEWAY     : 10.0.0.254\n\n{name}> ping 10.0.0.3 -c 2\n{ping}"
    )


DEVICE_RESULTS = [
    {
        "device_name": "PC1",
        "status": "success",
        "output": _pc_output("PC1", "10.0.0.1", 2),
        "commands": ["show ip", "ping 10.0.0.3 -c 2"],
    },
    {
        "device_name": "PC2",
        "status": "partial_success",
        "output": _pc_output("PC2", "10.0.0.2", 30),
        "commands": ["show ip"],
        "blocked_commands": [{"command": "reload", "reason": "forbidden"}],
        "blocked_info": "1 of 2 commands were not sent: `reload`: forbidden",
    },
    {
        "device_name": "PC3",
        "status": "failed",
        "output": "",
        "commands": [],
        "error": "Connection timeout: PC3's console did not answer within 10 s",
    },
]
TOPOLOGY = {
    "project": "OSPF lab",
    "status": "opened",
    "nodes": ["PC1", "PC2", "PC3", "SW1"],
    "links": 3,
}


def demo_events(session_id: str = SESSION_ID) -> Iterator[tuple[float, dict[str, Any]]]:
    """(delay before, event) pairs of a turn: text, a device tool call whose arguments
    stream in several steps, progress, per-device results, a second tool, the answer."""

    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "session_id": session_id, **fields}

    def call(call_id: str, name: str, arguments: str, complete: bool = False) -> dict[str, Any]:
        function: dict[str, Any] = {"name": name, "arguments": arguments}
        if complete:
            function["complete"] = True
        return event(
            "tool_call", tool_call={"id": call_id, "type": "function", "function": function}
        )

    for word in ("Let ", "me ", "look ", "at ", "the ", "topology ", "and ", "ask ", "the PCs."):
        yield 0.02, event("content", content=word, message_id="m1")
    yield 0.1, call("call_topo", "get_topology", "", False)
    yield 0.1, call("call_topo", "get_topology", "{}", True)
    yield 0.05, event("tool_start", tool_name="get_topology", tool_call_id="call_topo")
    yield (
        0.2,
        event(
            "tool_end",
            tool_name="get_topology",
            tool_call_id="call_topo",
            tool_output=json.dumps(TOPOLOGY, indent=2),
        ),
    )
    steps = [0, 18, 37, 60, len(ARGUMENTS) - 12, len(ARGUMENTS)]
    for size in steps:
        yield 0.3, call("call_dev", DEVICE_TOOL, ARGUMENTS[:size])
    yield 0.3, call("call_dev", DEVICE_TOOL, ARGUMENTS, True)
    yield 0.1, event("tool_start", tool_name=DEVICE_TOOL, tool_call_id="call_dev")
    for node, message, elapsed in (
        ("PC1", "connected", 0.2),
        ("PC2", "connected", 0.3),
        ("PC3", "waiting for PC3's console", 1.5),
    ):
        yield (
            0.25,
            event(
                "progress",
                tool_name=DEVICE_TOOL,
                tool_call_id="call_dev",
                message=message,
                node=node,
                elapsed=elapsed,
            ),
        )
    yield (
        0.3,
        event(
            "tool_end",
            tool_name=DEVICE_TOOL,
            tool_call_id="call_dev",
            tool_output=json.dumps(DEVICE_RESULTS, indent=2, ensure_ascii=False),
        ),
    )
    for start in range(0, len(DEMO_ANSWER), 9):
        yield 0.01, event("content", content=DEMO_ANSWER[start : start + 9], message_id="m2")
    yield 0.05, event("done")


def followup_events(
    question: str, session_id: str = SESSION_ID
) -> Iterator[tuple[float, dict[str, Any]]]:
    answer = f"You asked: *{question}*. PC2 answers pings; nothing else to change."
    for start in range(0, len(answer), 6):
        yield (
            0.02,
            {"type": "content", "content": answer[start : start + 6], "session_id": session_id},
        )
    yield 0.05, {"type": "done", "session_id": session_id}


class ScriptedChat:
    """Plays scripted turns as the `%copilot` magics do: each turn in a ChatWidget of its
    own, shown in the running cell, without an input box (when the turn ends its output
    becomes the saved answer). `input_box=True` gives the first widget the input box of
    `ChatWidget(on_send=...)` for direct users: messages sent from it get a reply."""

    def __init__(self, project_id: str = PROJECT_ID, *, input_box: bool = False) -> None:
        self.project_id = project_id
        self.widget = self._new_widget(self._on_send if input_box else None)
        self.sent: list[str] = []

    def _new_widget(self, on_send: Any = None) -> ChatWidget:
        return ChatWidget(
            self.project_id, project_name="OSPF lab", session_id=SESSION_ID, on_send=on_send
        )

    def next_widget(self) -> ChatWidget:
        """A new widget for the next cell's turn (same session), shown in that cell."""
        from IPython.display import display

        self.widget = self._new_widget()
        display(self.widget)
        return self.widget

    def play(
        self,
        user: str,
        events: Iterator[tuple[float, dict[str, Any]]],
        stats: dict[str, Any] | None = None,
    ) -> str:
        self.widget.begin_turn(user)
        try:
            for delay, event in events:
                time.sleep(delay)
                self.widget.push(parse_event(event))
        finally:
            status = self.widget.end_turn(stats)
        return status

    def demo_turn(self) -> str:
        return self.play("Why can't PC1 ping PC3?", demo_events(), DEMO_STATS)

    def next_turn(self, question: str) -> str:
        """The conversation continued in the next cell, as a `%copilot` cell continues it."""
        self.next_widget()
        return self._reply(question)

    def long_turn(self, stop_file: str, timeout: float = 90.0) -> str:
        """A turn, in a widget of its own, whose tool runs until `stop_file` appears (what
        the server's abort endpoint does to a real stream): then the stream ends with
        `abort`."""
        self.next_widget()
        self.widget.begin_turn("Ping every PC from every PC, one after the other.")
        try:
            self.widget.push(
                parse_event(
                    {"type": "content", "content": "Starting the pings.", "session_id": SESSION_ID}
                )
            )
            self.widget.push(
                parse_event(
                    {
                        "type": "tool_call",
                        "session_id": SESSION_ID,
                        "tool_call": {
                            "id": "call_long",
                            "type": "function",
                            "function": {
                                "name": DEVICE_TOOL,
                                "arguments": ARGUMENTS,
                                "complete": True,
                            },
                        },
                    }
                )
            )
            self.widget.push(
                parse_event(
                    {
                        "type": "tool_start",
                        "tool_name": DEVICE_TOOL,
                        "tool_call_id": "call_long",
                        "session_id": SESSION_ID,
                    }
                )
            )
            started = time.monotonic()
            while not Path(stop_file).exists():
                elapsed = time.monotonic() - started
                if elapsed > timeout:
                    raise TimeoutError(f"nobody pressed Stop within {timeout:.0f} s")
                self.widget.push(
                    parse_event(
                        {
                            "type": "progress",
                            "tool_name": DEVICE_TOOL,
                            "tool_call_id": "call_long",
                            "message": f"ping round {int(elapsed) + 1}",
                            "node": "PC1",
                            "elapsed": round(elapsed, 1),
                            "session_id": SESSION_ID,
                        }
                    )
                )
                time.sleep(0.3)
            self.widget.push(parse_event({"type": "abort", "session_id": SESSION_ID}))
        finally:
            status = self.widget.end_turn(
                {"input_tokens": 900, "output_tokens": 40, "llm_calls": 1}
            )
        return status

    def _reply(self, text: str) -> str:
        return self.play(
            text, followup_events(text), {"input_tokens": 9100, "output_tokens": 60, "llm_calls": 1}
        )

    def _on_send(self, text: str) -> None:
        self.sent.append(text)
        self._reply(text)
