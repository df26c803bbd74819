"""The hub's model gateway on a real tornado server on 127.0.0.1, in front of
the scripted model server (TEST DOUBLE of the OpenAI API, a real HTTP server) as its
upstream, with the real SQLite usage store.

The one stand-in is `token_authenticator`: it stands for JupyterHub's `HubAuth` (a token ->
hub user and groups lookup that needs a running hub); the real hub path is tested with the
hub service. Clients are the copilot's own `make_chat_model` (langchain-openai over the
openai client) and plain httpx.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web
from langchain_core.messages import AIMessageChunk, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import SecretStr
from support.agent import agent_context, run_turn
from tornado.httputil import HTTPServerRequest

from jupyter_gns3_copilot.agent.graph import build_graph
from jupyter_gns3_copilot.agent.llm_access import TURN_HEADER, ModelSettings, make_chat_model
from jupyter_gns3_copilot.agent.llm_errors import ModelCallError, describe_model_error
from jupyter_gns3_copilot.agent.llm_retries import ModelRetries
from jupyter_gns3_copilot.hub.budgets import BudgetPolicy
from jupyter_gns3_copilot.hub.caller import Caller
from jupyter_gns3_copilot.hub.gateway import ModelGateway, UpstreamSettings, bearer_token
from jupyter_gns3_copilot.hub.gateway_handlers import gateway_routes
from jupyter_gns3_copilot.hub.metering import CallMeter, StreamRelay
from jupyter_gns3_copilot.hub.usage import ModelCall, SqliteUsageStore
from jupyter_gns3_copilot.testing.scripted_llm import (
    ScriptedLLM,
    broken_stream,
    error,
    html_page,
    text,
    tool_call,
)

MODEL = "scripted-model"
UPSTREAM_KEY = "sk-upstream-real-key-QwXyZtRsPv"
PREFIX = "/services/copilot"
ALICE = Caller(name="alice", groups=frozenset({"students"}))
BOB = Caller(name="bob", groups=frozenset({"students"}))
TOM = Caller(name="tom", groups=frozenset({"students", "tas"}))
CAROL = Caller(name="carol", groups=frozenset({"students"}))
HUB_TOKENS = {
    "hub-token-alice": ALICE,
    "hub-token-bob": BOB,
    "hub-token-tom": TOM,
    "sk-graph-test": CAROL,  # the key `agent_context` gives the copilot's graph
}
POLICY = BudgetPolicy(group_daily_tokens={"students": 100, "tas": None}, max_concurrent_calls=1)
BUDGET_LINE = (
    "Your copilot budget for today is used up: {used} of 100 tokens; it resets at 00:00 UTC."
)


async def token_authenticator(request: HTTPServerRequest) -> Caller | None:
    """STAND-IN for `jupyterhub.services.auth.HubAuth`: a fixed token -> caller table."""
    return HUB_TOKENS.get(bearer_token(request) or "")


class WatchedStore(SqliteUsageStore):
    """The real SQLite store; each recorded call is also put on a queue to wait on."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.recorded: asyncio.Queue[ModelCall] = asyncio.Queue()

    async def record(self, call: ModelCall) -> None:
        await super().record(call)
        self.recorded.put_nowait(call)


class Clock:
    """The gateway's UTC clock, moved by the test."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Hub:
    base_url: str
    """The gateway's OpenAI base URL (`.../v1`)."""
    gateway: ModelGateway
    store: WatchedStore

    def settings(self, token: str, **fields: Any) -> ModelSettings:
        defaults = {"max_retries": 0, "timeout": 30}
        return ModelSettings(
            base_url=self.base_url, api_key=token, model=MODEL, **defaults | fields
        )

    def client(self, token: str | None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=30, trust_env=False
        )

    async def next_record(self, user: str) -> ModelCall:
        """The next call recorded for `user` (others' records are skipped)."""
        while True:
            call = await asyncio.wait_for(self.store.recorded.get(), 30)
            if call.user == user:
                return call


@asynccontextmanager
async def gateway_server(
    upstream: ScriptedLLM,
    data_dir: Path,
    *,
    policy: BudgetPolicy = POLICY,
    models: tuple[str, ...] | None = None,
    clock: Callable[[], datetime] | None = None,
) -> AsyncIterator[Hub]:
    """The gateway's handlers on a tornado HTTP server on 127.0.0.1 (a free port)."""
    store = await WatchedStore.open(data_dir)
    settings = UpstreamSettings(base_url=upstream.base_url, api_key=UPSTREAM_KEY, models=models)
    extra = {"clock": clock} if clock else {}
    gateway = ModelGateway(settings, policy, store, token_authenticator, **extra)
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server = tornado.httpserver.HTTPServer(tornado.web.Application(gateway_routes(gateway, PREFIX)))
    server.add_sockets(sockets)
    port = sockets[0].getsockname()[1]
    try:
        yield Hub(f"http://127.0.0.1:{port}{PREFIX}/v1", gateway, store)
    finally:
        server.stop()
        await server.close_all_connections()
        await gateway.aclose()
        await store.close()


@pytest.fixture
def upstream(make_scripted_llm: Callable[..., ScriptedLLM]) -> ScriptedLLM:
    """The scripted model server, requiring the real (upstream) key."""
    return make_scripted_llm(api_key=UPSTREAM_KEY)


def chat_body(stream: bool = False, **fields: Any) -> dict[str, Any]:
    return {
        "model": MODEL,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": stream,
        **fields,
    }


async def sse_data(response: httpx.Response) -> list[Any]:
    return [
        json.loads(line[6:]) if line != "data: [DONE]" else "[DONE]"
        async for line in response.aiter_lines()
        if line.startswith("data: ")
    ]


def seen(chunks: list[AIMessageChunk]) -> list[tuple[Any, ...]]:
    """What a client sees of a stream: content and tool-call fragments, chunk by chunk."""
    return [
        (
            chunk.content,
            [(c["name"], c["args"], c["id"], c["index"]) for c in chunk.tool_call_chunks],
            chunk.response_metadata.get("finish_reason"),
        )
        for chunk in chunks
    ]


# -- streaming through the gateway ----------------------------------------------------------


async def test_the_copilots_model_streams_the_same_through_the_gateway_and_usage_is_recorded(
    upstream: ScriptedLLM, tmp_path: Path
) -> None:
    answer = text(
        "Ping works from PC1 to PC2.", chunks=6, usage={"prompt_tokens": 40, "completion_tokens": 9}
    )
    calling = tool_call(
        "run_vpcs_commands",
        {"devices": [{"device": "PC1", "commands": ["ping 10.0.0.2"]}]},
        id="call_fixed_1",
        argument_chunks=4,
        usage={"prompt_tokens": 30, "completion_tokens": 12},
    )
    upstream.add(answer, calling, answer, calling)
    direct = ModelSettings(
        base_url=upstream.base_url, api_key=UPSTREAM_KEY, model=MODEL, max_retries=0
    )
    async with gateway_server(upstream, tmp_path, policy=BudgetPolicy()) as hub:
        results = []
        for settings in (direct, hub.settings("hub-token-alice")):
            model = make_chat_model(settings)
            text_chunks = [c async for c in model.astream([HumanMessage("ping?")])]
            tool_chunks = [c async for c in model.astream([HumanMessage("ping?")])]
            results.append((text_chunks, tool_chunks))
        (direct_text, direct_tool), (hub_text, hub_tool) = results
        assert seen(hub_text) == seen(direct_text)
        assert seen(hub_tool) == seen(direct_tool)
        merged = sum(hub_tool[1:], hub_tool[0])
        assert merged.tool_calls[0]["args"] == {
            "devices": [{"device": "PC1", "commands": ["ping 10.0.0.2"]}]
        }
        assert merged.usage_metadata is not None and merged.usage_metadata["total_tokens"] == 42
        first, second = await hub.next_record("alice"), await hub.next_record("alice")
    assert (first.prompt_tokens, first.completion_tokens, first.status) == (40, 9, "ok")
    assert (second.prompt_tokens, second.completion_tokens) == (30, 12)
    assert first.usage_reported and first.groups == {"students"}
    through_gateway = upstream.chat_requests[2:]
    for request in through_gateway:
        assert request.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
        assert request.body["stream_options"] == {"include_usage": True}
        assert "hub-token" not in json.dumps(request.headers)


async def test_a_non_streamed_call_and_the_model_list(
    upstream: ScriptedLLM, tmp_path: Path
) -> None:
    upstream.add(text("A title", usage={"prompt_tokens": 11, "completion_tokens": 2}))
    async with gateway_server(upstream, tmp_path, models=(MODEL, "gpt-4o-mini")) as hub:
        model = make_chat_model(hub.settings("hub-token-bob"), streaming=False)
        reply = await model.ainvoke("Name this chat")
        assert reply.content == "A title"
        call = await hub.next_record("bob")
        assert (call.prompt_tokens, call.completion_tokens, call.usage_reported) == (11, 2, True)
        async with hub.client("hub-token-bob") as client:
            listed = await client.get("/models")
            not_offered = await client.post(
                "/chat/completions", json={**chat_body(), "model": "gpt-5"}
            )
        assert [m["id"] for m in listed.json()["data"]] == [MODEL, "gpt-4o-mini"]
        assert not_offered.status_code == 404
        assert not_offered.json()["error"]["code"] == "model_not_found"
        assert "use one of: scripted-model, gpt-4o-mini" in not_offered.json()["error"]["message"]
        refused = await hub.next_record("bob")
        assert (refused.status, refused.detail, refused.model) == (
            "refused",
            "model not allowed",
            "gpt-5",
        )
    assert len(upstream.chat_requests) == 1


async def test_the_usage_chunk_reaches_only_clients_that_ask_for_it(
    upstream: ScriptedLLM, tmp_path: Path
) -> None:
    usage = {"prompt_tokens": 5, "completion_tokens": 3}
    upstream.add(text("one two", chunks=2, usage=usage), text("one two", chunks=2, usage=usage))
    async with gateway_server(upstream, tmp_path) as hub, hub.client("hub-token-alice") as client:
        async with client.stream("POST", "/chat/completions", json=chat_body(True)) as plain:
            plain_events = await sse_data(plain)
        asked = chat_body(True, stream_options={"include_usage": True})
        async with client.stream(
            "POST", "/chat/completions", json=asked, headers={TURN_HEADER: "turn-7"}
        ) as answered:
            asked_events = await sse_data(answered)
        records = [await hub.next_record("alice"), await hub.next_record("alice")]
        usage_rows = await hub.store.user_usage(records[0].day)
    assert plain.headers["content-type"].startswith("text/event-stream")
    assert [e for e in plain_events if e != "[DONE]" and not e["choices"]] == []
    assert plain_events[-1] == "[DONE]"
    assert asked_events[-2]["choices"] == [] and asked_events[-2]["usage"]["total_tokens"] == 8
    assert [(r.prompt_tokens, r.completion_tokens) for r in records] == [(5, 3), (5, 3)]
    assert [(r.turn_id) for r in records] == [None, "turn-7"]
    assert (usage_rows[0].tokens_today, usage_rows[0].calls_today, usage_rows[0].turns_today) == (
        16,
        2,
        1,
    )


# -- budgets -------------------------------------------------------------------------------


async def test_over_budget_is_refused_with_one_readable_line_and_others_are_unaffected(
    upstream: ScriptedLLM, tmp_path: Path
) -> None:
    upstream.add(
        text("first", usage={"prompt_tokens": 80, "completion_tokens": 30}),
        text("for bob", usage={"prompt_tokens": 10, "completion_tokens": 1}),
        text("for tom", usage={"prompt_tokens": 500, "completion_tokens": 1}),
        text("tom again"),
    )
    async with gateway_server(upstream, tmp_path) as hub:
        alice = hub.settings("hub-token-alice", max_retries=2)
        assert (await make_chat_model(alice).ainvoke("hi")).content == "first"
        with pytest.raises(Exception) as raised:
            await make_chat_model(alice).ainvoke("hi again")
        shown = describe_model_error(raised.value, alice)
        assert str(shown) == BUDGET_LINE.format(used=110)
        assert (shown.kind, shown.status) == ("refused", 429)
        assert raised.value.response.headers["x-should-retry"] == "false"  # type: ignore[attr-defined]
        assert ModelRetries(alice).next_delay(raised.value) is None
        assert (
            await make_chat_model(hub.settings("hub-token-bob")).ainvoke("hi")
        ).content == "for bob"
        tom = make_chat_model(hub.settings("hub-token-tom"))  # a TA: unlimited
        assert (await tom.ainvoke("hi")).content == "for tom"
        assert (await tom.ainvoke("hi")).content == "tom again"
        await hub.store.set_override("user", "alice", 1_000)  # the dashboard raises her budget
        upstream.add(text("raised"))
        assert (await make_chat_model(alice).ainvoke("hi")).content == "raised"
        records = [await hub.next_record("alice") for _ in range(3)]
    assert [r.status for r in records] == ["ok", "refused", "ok"]
    assert records[1].detail == "copilot_budget_exceeded"
    assert len(upstream.chat_requests) == 5  # the refused call never reached the upstream


async def test_the_copilots_turn_ends_with_the_budget_line_and_no_retry(
    upstream: ScriptedLLM, tmp_path: Path
) -> None:
    async with gateway_server(upstream, tmp_path) as hub:
        await hub.store.set_override("user", "carol", 0)
        graph = build_graph(InMemorySaver())
        async with agent_context(hub) as context:  # type: ignore[arg-type]  # has .base_url
            context.settings = context.settings.model_copy(update={"max_retries": 2})
            with pytest.raises(ModelCallError) as raised:
                await run_turn(graph, context, "Is PC1 up?")
    assert (
        str(raised.value)
        == "Your copilot budget for today is used up: 0 of 0 tokens; it resets at 00:00 UTC."
    )
    assert raised.value.kind == "refused"
    assert upstream.requests == []


async def test_the_course_cap_refuses_everyone(upstream: ScriptedLLM, tmp_path: Path) -> None:
    upstream.add(text("big", usage={"prompt_tokens": 900, "completion_tokens": 100}))
    policy = BudgetPolicy(group_daily_tokens={"tas": None}, course_daily_tokens=1_000)
    async with gateway_server(upstream, tmp_path, policy=policy) as hub:
        await make_chat_model(hub.settings("hub-token-tom")).ainvoke("hi")
        with pytest.raises(Exception) as raised:
            await make_chat_model(hub.settings("hub-token-bob")).ainvoke("hi")
    assert str(describe_model_error(raised.value)) == (
        "The course's copilot budget for today is used up: 1,000 of 1,000 tokens; it resets at "
        "00:00 UTC."
    )


async def test_budgets_reset_at_midnight_utc(upstream: ScriptedLLM, tmp_path: Path) -> None:
    clock = Clock(datetime(2026, 3, 2, 23, 59, 0, tzinfo=timezone.utc))
    upstream.add(
        text("late", usage={"prompt_tokens": 100, "completion_tokens": 5}),
        text("new day", usage={"prompt_tokens": 10, "completion_tokens": 5}),
    )
    async with gateway_server(upstream, tmp_path, clock=clock) as hub:
        alice = make_chat_model(hub.settings("hub-token-alice"))
        await alice.ainvoke("hi")
        clock.now += timedelta(seconds=59, microseconds=999_999)  # 23:59:59.999999
        with pytest.raises(Exception) as raised:
            await alice.ainvoke("hi")
        assert str(describe_model_error(raised.value)) == BUDGET_LINE.format(used=105)
        clock.now += timedelta(microseconds=1)  # 00:00:00 UTC
        assert (await alice.ainvoke("hi")).content == "new day"
        days = [(await hub.next_record("alice")).day for _ in range(3)]
        assert [str(day) for day in days] == ["2026-03-02", "2026-03-02", "2026-03-03"]
        assert await hub.store.tokens_used(days[2], "alice") == 15


async def test_concurrency_cap_per_student(upstream: ScriptedLLM, tmp_path: Path) -> None:
    slow = text("x" * 200, chunks=200, chunk_delay=0.05)  # 10 s unless cut short
    upstream.add(slow, text("bob meanwhile"), text("alice later"))
    async with gateway_server(upstream, tmp_path) as hub, hub.client("hub-token-alice") as alice:
        async with alice.stream("POST", "/chat/completions", json=chat_body(True)) as running:
            lines = running.aiter_lines()
            assert (await anext(lines)).startswith("data: ")  # the call is in flight
            await lines.aclose()
            second = await alice.post("/chat/completions", json=chat_body())
            bob = make_chat_model(hub.settings("hub-token-bob"))
            assert (await bob.ainvoke("hi")).content == "bob meanwhile"
        assert second.status_code == 429
        assert second.headers["x-should-retry"] == "false"
        assert second.json()["error"] == {
            "message": "Too many copilot calls at once: 1 call is already running, the most "
            "allowed per student; wait for one to finish and try again.",
            "type": "copilot_refusal",
            "param": None,
            "code": "copilot_too_many_calls",
        }
        statuses = [(await hub.next_record("alice")).status for _ in range(2)]
        assert statuses == ["refused", "error"]  # the second one, then the one that was cut
        later = await alice.post("/chat/completions", json=chat_body())
        assert later.json()["choices"][0]["message"]["content"] == "alice later"


async def test_a_client_leaving_midway_cancels_the_upstream_and_its_use_is_counted(
    upstream: ScriptedLLM, tmp_path: Path
) -> None:
    upstream.add(text(["word "] * 200, chunk_delay=0.05))
    async with gateway_server(upstream, tmp_path) as hub, hub.client("hub-token-alice") as alice:
        async with alice.stream("POST", "/chat/completions", json=chat_body(True)) as response:
            pieces = 0
            async for line in response.aiter_lines():
                pieces += '"content":"word "' in line
                if pieces == 3:
                    break
        call = await hub.next_record("alice")
    assert (call.status, call.usage_reported) == ("error", False)
    assert call.detail == "the client left before the end of the answer"
    # Estimated with tiktoken: the prompt "hi" and at least the 3 pieces read.
    assert call.prompt_tokens > 0 and 3 <= call.completion_tokens < 200
    for _ in range(500):  # the scripted server notices between two of its pieces
        if upstream.chat_requests[0].disconnected:
            break
        await asyncio.sleep(0.01)
    assert upstream.chat_requests[0].disconnected


async def test_a_client_leaving_before_the_answer_begins_cancels_the_upstream_request(
    upstream: ScriptedLLM, tmp_path: Path
) -> None:
    upstream.add(text("too late", first_byte_delay=120))
    async with gateway_server(upstream, tmp_path) as hub, hub.client("hub-token-alice") as alice:
        waiting = asyncio.ensure_future(alice.post("/chat/completions", json=chat_body(True)))
        for _ in range(1000):  # until the upstream has the request (another thread)
            if upstream.chat_requests:
                break
            await asyncio.sleep(0.01)
        waiting.cancel()  # the client closes its connection
        # Recorded only once the gateway gave up on the upstream: it did at once, not
        # after the upstream's 120 s.
        call = await hub.next_record("alice")
    assert (call.status, call.detail) == ("error", "the client left before the end of the answer")
    assert call.prompt_tokens > 0 and call.completion_tokens == 0 and not call.usage_reported
    assert hub.gateway.in_flight == {}


# -- authentication, errors, secrets ----------------------------------------------------------


async def test_unknown_or_absent_hub_tokens_get_401(upstream: ScriptedLLM, tmp_path: Path) -> None:
    async with gateway_server(upstream, tmp_path) as hub:
        for token in (None, "hub-token-mallory"):
            async with hub.client(token) as client:
                chat = await client.post("/chat/completions", json=chat_body())
                models = await client.get("/models")
            for reply in (chat, models):
                assert reply.status_code == 401
                assert reply.json()["error"]["code"] == "invalid_api_key"
                assert "JUPYTERHUB_API_TOKEN" in reply.json()["error"]["message"]
        with pytest.raises(Exception) as raised:
            await make_chat_model(hub.settings("hub-token-mallory")).ainvoke("hi")
        assert describe_model_error(raised.value).kind == "auth"
        assert hub.store.recorded.empty()
    assert upstream.requests == []


async def test_bad_requests_get_openai_style_400(upstream: ScriptedLLM, tmp_path: Path) -> None:
    async with gateway_server(upstream, tmp_path) as hub, hub.client("hub-token-alice") as client:
        not_json = await client.post("/chat/completions", content=b"{nope")
        no_messages = await client.post("/chat/completions", json={"model": MODEL})
        wrong_verb = await client.delete("/chat/completions")
    assert not_json.status_code == 400
    assert not_json.json()["error"]["message"] == "The request body must be a JSON object."
    assert no_messages.status_code == 400
    assert "messages: Field required" in no_messages.json()["error"]["message"]
    assert wrong_verb.status_code == 405 and "error" in wrong_verb.json()
    assert upstream.requests == []


async def test_upstream_errors_pass_through_once_without_the_key(
    upstream: ScriptedLLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    upstream.add(
        error(429, headers={"retry-after": "7"}),
        error(401, "Incorrect API key provided: sk-upst****RsPv."),
        error(400, f"Bad request made with key {UPSTREAM_KEY}."),
        html_page(502),
        text(f"the key is {UPSTREAM_KEY}", chunks=1),
        text(f"the key is {UPSTREAM_KEY}"),
        broken_stream("half an ans", message=f"upstream died ({UPSTREAM_KEY})"),
    )
    async with gateway_server(upstream, tmp_path, policy=BudgetPolicy()) as hub:
        settings = hub.settings("hub-token-alice", max_retries=2)
        failures = []
        for _ in range(2):
            with pytest.raises(Exception) as raised:
                await make_chat_model(settings).ainvoke("hi")
            failures.append(raised.value)
        async with hub.client("hub-token-alice") as client:
            echoed = await client.post("/chat/completions", json=chat_body())
            web_page = await client.post("/chat/completions", json=chat_body())
            async with client.stream("POST", "/chat/completions", json=chat_body(True)) as stream:
                streamed = await sse_data(stream)
            whole = await client.post("/chat/completions", json=chat_body())
            async with client.stream("POST", "/chat/completions", json=chat_body(True)) as broken:
                cut = await sse_data(broken)
        records = [await hub.next_record("alice") for _ in range(7)]
        exported = await hub.store.export_csv()
    limited, refused_upstream = failures
    assert limited.response.headers["retry-after"] == "7"  # type: ignore[attr-defined]
    assert ModelRetries(settings).next_delay(limited) == 7.0  # the copilot retries, once
    assert describe_model_error(refused_upstream).kind == "upstream_auth"
    assert [r.status_code for r in (echoed, web_page, whole)] == [400, 502, 200]
    assert "[hidden]" in echoed.json()["error"]["message"]
    assert "tell the course staff" in web_page.json()["error"]["message"]
    assert "[hidden]" in streamed[1]["choices"][0]["delta"]["content"]
    assert "[hidden]" in whole.json()["choices"][0]["message"]["content"]
    assert cut[-1]["error"]["message"].endswith("([hidden])")
    assert [r.status for r in records] == ["error"] * 4 + ["ok", "ok", "error"]
    assert records[0].detail == (
        "upstream HTTP 429: Rate limit reached for requests. Please try again later."
    )
    texts = [str(f) for f in failures] + [echoed.text, web_page.text, whole.text]
    texts += [json.dumps(streamed), json.dumps(cut), exported, caplog.text]
    texts += [r.model_dump_json() for r in records]
    for shown in texts:
        assert UPSTREAM_KEY not in shown and "RsPv" not in shown
    assert len(upstream.chat_requests) == 7  # nothing retried by the gateway


async def test_an_unreachable_upstream_is_a_502_for_the_copilot_to_retry(
    make_scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    upstream = make_scripted_llm(api_key=UPSTREAM_KEY)
    async with gateway_server(upstream, tmp_path) as hub:
        upstream.stop()
        async with hub.client("hub-token-alice") as client:
            reply = await client.post("/chat/completions", json=chat_body())
            models = await client.get("/models")
        call = await hub.next_record("alice")
    assert reply.status_code == models.status_code == 502
    assert "cannot be reached" in reply.json()["error"]["message"]
    assert (call.status, call.detail) == ("error", "upstream cannot be reached (ConnectError)")


def test_the_relay_cuts_at_event_boundaries_however_the_bytes_arrive() -> None:
    """Events split across network reads, CRLF boundaries, the key split across reads."""
    relay = StreamRelay(SecretStr(UPSTREAM_KEY), strip_usage=True)
    key = UPSTREAM_KEY.encode()
    usage = b'data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2}}\r\n\r\n'
    stream = (
        b'data: {"choices":[{"delta":{"content":"a ' + key + b'"}}]}\r\n\r\n'
        b'data: {"choices":[{"delta":{"content":"b"}}]}\n\n' + usage + b"data: [DONE]\n\n"
    )
    out = []
    for cut in range(0, len(stream), 7):  # 7-byte reads: events and the key cut anywhere
        out.append(relay.feed(stream[cut : cut + 7]))
    out.append(relay.feed(b"", final=True))
    blocks = [block for block in out if block]
    assert all(block.endswith((b"\n\n", b"\r\n\r\n")) for block in blocks)
    relayed = b"".join(blocks)
    assert key not in relayed and relayed.count(b"[hidden]") == 1
    assert b'"usage"' not in relayed  # not asked for by this client
    assert relayed.endswith(b"data: [DONE]\n\n")
    meter_usage = _usage_of(relay)
    assert meter_usage == (4, 2)


def _usage_of(relay: StreamRelay) -> tuple[int, int] | None:
    meter = CallMeter(ALICE, MODEL, datetime.now(timezone.utc), None)
    relay.settle(meter)
    return meter.usage
