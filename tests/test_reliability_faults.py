"""Reliability: the fault matrix and aborts at random points.

Each fault is injected into a real chat turn through a real Jupyter server (pytest-jupyter,
in-process) on the local GNS3 lab: GNS3 down, slow or cut off mid-tool (through a TCP
proxy on 127.0.0.1 started here, between the copilot and the lab); the model answering
429, 500, an HTML page, refusing connections, cutting its stream, or hanging (the
scripted OpenAI-compatible server, a TEST DOUBLE: no model runs here); a console closed
mid-command (the real VPCS node stopped while it pings). For each: the turn ends, bounded
in time, with a clear message and no traceback text, the server logs no traceback, and
the NEXT turn of the same session works on the strict scripted model (which refuses a
history with unanswered tool calls, like the real API).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.server import (
    TITLE_REPLY,
    add_pcs,
    call,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
)

from jupyter_gns3_copilot.testing.scripted_llm import error, html_page, text, tool_call

pytestmark = [pytest.mark.reliability, pytest.mark.lab]

GNS3_TIMEOUT = 2.0
"""The copilot's `gns3_timeout` in these tests (seconds per GNS3 request)."""
LLM_TIMEOUT = 2.0
"""The copilot's `llm_timeout` in these tests (seconds for each part of an answer)."""
TURN_TIMEOUT = 60.0
"""No turn here may take longer (every wait is bounded)."""
LAB_MODE = "lab_automation_assistant"


# -- a TCP proxy that injects faults between the copilot and GNS3 ------------------------------


class FaultProxy:
    """A TCP proxy on 127.0.0.1 to `target` ("host:port") in a background thread.

    Faults: `down()` stops listening (connections refused) and `up()` listens again on
    the same port; `fault(pattern, action)` acts on each HTTP request whose request line
    ("POST /v3/... HTTP/1.1") matches `pattern`: "cut" closes the connection without an
    answer, "stall" never forwards it (the client times out). `clear()` removes it.
    """

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.port = 0
        self.rule: tuple[re.Pattern[str], str] | None = None
        self.faults_hit = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    def start(self) -> FaultProxy:
        self._thread.start()
        self.up()
        return self

    def up(self) -> None:
        async def listen() -> None:
            self._server = await asyncio.start_server(
                self._handle, "127.0.0.1", self.port, reuse_address=True
            )
            self.port = self._server.sockets[0].getsockname()[1]

        self._run(listen())

    def down(self) -> None:
        """Stop listening and drop every open connection."""

        async def close() -> None:
            if self._server is not None:
                self._server.close()
                await self._server.wait_closed()
                self._server = None
            for writer in list(self._writers):
                writer.transport.abort()

        self._run(close())

    def fault(self, pattern: str, action: str) -> None:
        self.rule = (re.compile(pattern), action)

    def clear(self) -> None:
        self.rule = None

    def stop(self) -> None:
        self.down()

        async def cancel_handlers() -> None:
            handlers = asyncio.all_tasks() - {asyncio.current_task()}
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        self._run(cancel_handlers())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}

        async def to_server() -> None:
            while data := await reader.read(65536):
                line = data.split(b"\r\n", 1)[0].decode("latin-1")
                rule = self.rule
                if rule is not None and rule[0].search(line):
                    self.faults_hit += 1
                    if rule[1] == "cut":
                        writer.transport.abort()
                        up_writer.transport.abort()
                        return
                    await asyncio.Event().wait()  # "stall": never forwarded
                up_writer.write(data)
                await up_writer.drain()

        async def to_client() -> None:
            while data := await up_reader.read(65536):
                writer.write(data)
                await writer.drain()

        try:
            await asyncio.gather(to_server(), to_client())
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            for stream in (writer, up_writer):
                self._writers.discard(stream)
                stream.transport.abort()


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture
def gns3_proxy(gns3_lab: Any) -> Iterator[FaultProxy]:
    proxy = FaultProxy(urlsplit(gns3_lab.url).netloc).start()
    yield proxy
    proxy.stop()


class LogRecords(logging.Handler):
    """Every log record of the server and the copilot during a test."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[str]:
        return [
            self.format(record)
            for record in self.records
            if record.exc_info or "Traceback" in record.getMessage()
        ]


@pytest.fixture
def server_log() -> Iterator[LogRecords]:
    handler = LogRecords()
    loggers = [
        logging.getLogger(name) for name in ("", "ServerApp", "tornado", "jupyter_gns3_copilot")
    ]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)


@pytest.fixture
def jp_server_config(gns3_lab, gns3_proxy, scripted_llm, tmp_path: Path) -> dict[str, Any]:
    return server_config(
        tmp_path / "copilot-data",
        **{**lab_traits(gns3_lab), "gns3_url": gns3_proxy.url},
        **model_traits(scripted_llm, llm_timeout=LLM_TIMEOUT),
        gns3_timeout=GNS3_TIMEOUT,
    )


def chat_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "chat", *rest)


async def next_turn_works(jp_fetch: Any, project: Any, session_id: str, llm: Any) -> None:
    """A text turn on the session is answered by the strict model."""
    llm.add(text("Still here.", when={"last_message": "^are you there"}))
    reply = await call(
        jp_fetch,
        *chat_path(project, "stream"),
        method="POST",
        body={"message": "are you there?", "session_id": session_id, "stream": False},
    )
    assert reply.code == 200, reply.body
    assert (reply.body["status"], reply.body["message"]) == ("done", "Still here."), reply.body
    rejected = [r for r in llm.chat_requests if r.status == 400]
    assert rejected == [], "the strict model refused a history"


def assert_clear(message: str) -> None:
    assert message.strip(), "an empty error message"
    assert "Traceback" not in message and 'File "' not in message, message


# -- the fault matrix ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFault:
    """A model failure on the turn's second model call (after a real tool ran)."""

    name: str
    reply: Callable[[], Any]
    expect: str
    """A regex the error event's text must match."""
    during_stream: Callable[[Any], None] | None = None
    """Done to the model server once the failing answer has started streaming."""


def _cut(llm: Any) -> None:
    llm.stop()  # closes the connection in the middle of the answer
    llm.start()  # same port: the next turn reaches it


MODEL_FAULTS = [
    ModelFault("429", lambda: error(429), r"(?i)rate|429|too many"),
    ModelFault("500", lambda: error(500), r"(?i)500|server error|internal"),
    ModelFault("html", lambda: html_page(502), r"(?i)502|html|gateway"),
    ModelFault(
        "stream-cut",
        lambda: text(["The lab ", "has ", "no nodes ", "yet."], chunk_delay=0.3),
        r"(?i)connection|broke|incomplete|closed|try again",
        during_stream=_cut,
    ),
    ModelFault(
        "stream-hang",
        lambda: text(["The lab ", "has ", "no nodes."], chunk_delay=LLM_TIMEOUT * 5),
        r"(?i)time|did not answer|within",
    ),
]


@pytest.mark.parametrize("fault", MODEL_FAULTS, ids=lambda fault: fault.name)
async def test_a_model_fault_ends_the_turn_with_a_clear_error_and_the_next_turn_works(
    jp_fetch, gns3_project, scripted_llm, server_log: LogRecords, fault: ModelFault
) -> None:
    """Given a turn whose tool ran on the real lab; when the model's next answer fails
    (fault); then the turn ends with one clear error event then done, within bounds, no
    traceback is logged, and the session's next turn works on the strict model."""
    scripted_llm.add(
        tool_call("get_topology", {}, id="call_topology"),
        fault.reply(),
        text("Topology check", when=TITLE_REPLY),
    )
    stream = open_stream(jp_fetch, *chat_path(gns3_project, "stream"), body={"message": "Look"})
    ended = await stream.until("tool_end", timeout=TURN_TIMEOUT)
    session_id = ended[-1]["session_id"]
    if fault.during_stream is not None:
        await stream.until("content", timeout=TURN_TIMEOUT)
        fault.during_stream(scripted_llm)
    events = await stream.finish(timeout=TURN_TIMEOUT)

    assert kinds(events)[-2:] == ["error", "done"], kinds(events)
    assert_clear(events[-2]["error"])
    assert re.search(fault.expect, events[-2]["error"]), events[-2]["error"]
    await next_turn_works(jp_fetch, gns3_project, session_id, scripted_llm)
    assert server_log.tracebacks() == []


async def test_a_model_refusing_connections_gives_a_clear_error_and_the_next_turn_works(
    jp_fetch, gns3_project, scripted_llm, server_log: LogRecords
) -> None:
    """Given a model endpoint that refuses connections; then the turn ends with a clear
    error naming the connection problem; once it is back, the next turn works."""
    scripted_llm.add(text("Lab check", when=TITLE_REPLY))
    scripted_llm.stop()
    try:
        first = await call(
            jp_fetch,
            *chat_path(gns3_project, "stream"),
            method="POST",
            body={"message": "Look", "stream": False},
        )
    finally:
        scripted_llm.start()
    assert first.code == 200 and first.body["status"] == "error", first.body
    [message] = first.body["errors"]
    assert_clear(message)
    assert re.search(r"(?i)connect|reach", message), message
    await next_turn_works(jp_fetch, gns3_project, first.body["session_id"], scripted_llm)
    assert server_log.tracebacks() == []


async def test_gns3_down_refuses_the_turn_clearly_and_the_next_turn_works(
    jp_fetch, gns3_project, gns3_proxy: FaultProxy, scripted_llm, server_log: LogRecords
) -> None:
    """Given GNS3 not answering at all (connections refused); then the turn is refused
    before it starts with 502 and a JSON error naming the GNS3 URL; once GNS3 is back the
    next turn works."""
    scripted_llm.add(text("Hello.", when={"last_message": "^hi"}), text("Hi", when=TITLE_REPLY))
    opened = await call(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        method="POST",
        body={"message": "hi", "stream": False},
    )
    assert opened.code == 200 and opened.body["status"] == "done", opened.body
    gns3_proxy.down()
    try:
        refused = await call(
            jp_fetch,
            *chat_path(gns3_project, "stream"),
            method="POST",
            body={"message": "again", "session_id": opened.body["session_id"]},
        )
    finally:
        gns3_proxy.up()
    assert refused.code == 502, refused.body
    assert_clear(refused.error["message"])
    assert gns3_proxy.url in refused.error["message"] or refused.error.get("url") == gns3_proxy.url
    await next_turn_works(jp_fetch, gns3_project, opened.body["session_id"], scripted_llm)
    assert server_log.tracebacks() == []


@pytest.mark.parametrize(
    ("action", "expect"),
    [("stall", r"(?i)within|time"), ("cut", r"(?i)connection|reach|closed|disconnect")],
    ids=["gns3-slow", "gns3-cut-mid-tool"],
)
async def test_gns3_slow_or_cut_mid_tool_gives_a_clear_tool_error_and_the_next_turn_works(
    jp_fetch,
    gns3_project,
    gns3_proxy: FaultProxy,
    scripted_llm,
    server_log: LogRecords,
    action: str,
    expect: str,
) -> None:
    """Given a turn whose tool starts a node; when GNS3 does not answer that request
    within `gns3_timeout` (stall) or the connection is cut; then the tool's result is a
    clear error (the copilot reports tool failures as results, so the model can explain),
    the turn ends, no traceback is logged, and the next turn works."""
    await add_pcs(gns3_project, "PC1")
    gns3_proxy.fault(r"^POST /v3/projects/\S+/nodes/\S+/start ", action)
    scripted_llm.add(
        tool_call("start_nodes", {"nodes": ["PC1"]}, id="call_start"),
        text("GNS3 did not start PC1."),
        text("Start", when=TITLE_REPLY),
    )
    stream = open_stream(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        body={"message": "Start PC1", "copilot_mode": LAB_MODE},
    )
    events = await stream.finish(timeout=TURN_TIMEOUT)
    gns3_proxy.clear()

    assert gns3_proxy.faults_hit >= 1
    assert kinds(events)[-2:] == ["content", "done"], kinds(events)
    [ended] = [event for event in events if event["type"] == "tool_end"]
    assert_clear(ended["tool_output"])
    assert re.search(expect, ended["tool_output"]), ended["tool_output"]
    await next_turn_works(jp_fetch, gns3_project, events[-1]["session_id"], scripted_llm)
    assert server_log.tracebacks() == []


def console_connected(port: int) -> bool:
    """Whether a TCP connection to 127.0.0.1:`port` is established (a console in use)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[2] == f"0100007F:{port:04X}" and fields[3] == "01":
            return True
    return False


async def until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll `condition` (nothing to wait on but the kernel's socket table) until true."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "the condition did not become true in time"
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_a_console_closed_mid_command_gives_a_clear_result_and_the_next_turn_works(
    jp_fetch, gns3_project, gns3_http, scripted_llm, server_log: LogRecords
) -> None:
    """Given a tool keeping a real VPCS busy for 20 s; when the node is stopped while the
    copilot's console connection is open; then the tool's result says at once that the
    console closed the connection, the turn ends, no traceback is logged, and the next
    turn works."""
    await add_pcs(gns3_project, "PC1", start=True)
    [node] = gns3_http.get(f"/v3/projects/{gns3_project.project_id}/nodes").json()
    scripted_llm.add(
        tool_call(
            "run_vpcs_commands",
            {"devices": [{"device": "PC1", "commands": ["sleep 20"]}]},
            id="call_sleep",
        ),
        text("PC1 went away."),
        text("Sleep", when=TITLE_REPLY),
    )
    stream = open_stream(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        body={"message": "Keep PC1 busy", "copilot_mode": LAB_MODE},
    )
    await stream.until("tool_start", timeout=TURN_TIMEOUT)
    await until(lambda: console_connected(node["console"]))
    stopped = gns3_http.post(f"/v3/projects/{gns3_project.project_id}/nodes/{node['node_id']}/stop")
    assert stopped.status_code in (200, 204), stopped.text
    events = await stream.finish(timeout=TURN_TIMEOUT)

    assert kinds(events)[-2:] == ["content", "done"], kinds(events)
    [ended] = [event for event in events if event["type"] == "tool_end"]
    [result] = json.loads(ended["tool_output"])
    assert_clear(ended["tool_output"])
    assert result["status"] == "failed" and "closed the connection" in result["error"], result
    await next_turn_works(jp_fetch, gns3_project, events[-1]["session_id"], scripted_llm)
    assert server_log.tracebacks() == []


# -- aborts at random points ----------------------------------------------------------------------

ABORTS = 10
ABORT_SEED = 8


@pytest.mark.slow
async def test_aborts_at_random_points_always_end_and_leave_a_valid_history(
    jp_fetch, gns3_project, scripted_llm, server_log: LogRecords
) -> None:
    """Given turns that ping from a real VPCS (a model call, a tool, a model call); when
    each is aborted after a seeded-random delay (before, during or after the tool); then
    every one ends (abort or done last), the history has every tool call answered, and
    the next turn works on the strict model."""
    await add_pcs(gns3_project, "PC1", start=True)
    ping = {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.99 -c 2"]}]}
    delays = random.Random(ABORT_SEED)
    session_id: str | None = None
    endings: list[str] = []
    for turn in range(ABORTS):
        scripted_llm.reset(
            [
                tool_call("run_vpcs_commands", ping, id=f"call_{turn}", chunk_delay=0.05),
                text(["Pinged ", "and ", "done."], chunk_delay=0.1),
                text("Pings", when=TITLE_REPLY),
            ]
        )
        body: dict[str, Any] = {"message": f"ping {turn}", "copilot_mode": LAB_MODE}
        if session_id is not None:
            body["session_id"] = session_id
        stream = open_stream(jp_fetch, *chat_path(gns3_project, "stream"), body=body)
        [opening] = await stream.until("heartbeat", timeout=TURN_TIMEOUT)
        session_id = opening["session_id"]
        # The fault injected: an abort at a random moment of the turn (not a synchronisation).
        await asyncio.sleep(delays.uniform(0.0, 4.0))
        await call(
            jp_fetch, *chat_path(gns3_project, "sessions", session_id, "abort"), method="POST"
        )
        events = await stream.finish(timeout=TURN_TIMEOUT)
        endings.append(kinds(events)[-2] if len(events) > 1 else "?")
        assert kinds(events)[-2:] in (["abort", "done"], ["content", "done"]), kinds(events)
        assert "error" not in kinds(events), events
        history = await call(jp_fetch, *chat_path(gns3_project, "sessions", session_id, "history"))
        assert_pairs(history.body["messages"])

    assert "abort" in endings, endings
    scripted_llm.reset()
    await next_turn_works(jp_fetch, gns3_project, session_id, scripted_llm)
    assert server_log.tracebacks() == []
    print(f"\naborts: {ABORTS} at random points, turns ended by: {endings}")


def assert_pairs(messages: list[dict[str, Any]]) -> None:
    """Every assistant tool call is answered by the tool messages right after it."""
    index = 0
    while index < len(messages):
        calls = {asked["id"] for asked in messages[index].get("tool_calls") or []}
        index += 1
        answered = set()
        while index < len(messages) and messages[index]["role"] == "tool":
            answered.add(messages[index]["tool_call_id"])
            index += 1
        assert answered == calls, (calls, answered, [m["role"] for m in messages])
