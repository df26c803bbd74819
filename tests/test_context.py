"""Context window: offline tiktoken, budgets, topology injection, trimming."""

from __future__ import annotations

import hashlib
import logging
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from jupyter_gns3_copilot.agent import tokens
from jupyter_gns3_copilot.agent.context import (
    NO_TOPOLOGY_INFO,
    TOPOLOGY_PLACEHOLDER,
    aprepare_context,
    input_budget,
    message_units,
    prepare_context,
    render_system_prompt,
    resolve_strategy,
    trim_budget,
    trim_messages,
)
from jupyter_gns3_copilot.agent.tokens import (
    OFFLINE_ENCODINGS,
    TokenCounter,
    encoding_name_for_model,
    ensure_offline_encodings,
    get_encoding,
    materialize_encodings,
    text_token_bound,
)
from jupyter_gns3_copilot.gns3 import Node, Project, Topology

LOGGER = "jupyter_gns3_copilot.agent.context"
TEMPLATE = "You are a GNS3 copilot.\nLab:\n{{topology_info}}\nBe brief."
TOOL = {
    "type": "function",
    "function": {
        "name": "get_topology",
        "description": "The lab's nodes and links.",
        "parameters": {"type": "object", "properties": {}},
    },
}


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter("cl100k_base")


# --- tiktoken offline ---------------------------------------------------------------


def test_cache_file_names_are_tiktokens_sha1_of_the_url() -> None:
    assert OFFLINE_ENCODINGS["cl100k_base"].cache_name == "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    assert OFFLINE_ENCODINGS["o200k_base"].cache_name == "fb374d419588a4632f3f557e76b4b70aebbca790"


def test_encodings_load_from_a_fresh_cache_dir_without_network(tmp_path: Path) -> None:
    """A new process pointed at an empty directory, with any download sent to a dead proxy."""
    cache = tmp_path / "tiktoken"
    script = (
        "from jupyter_gns3_copilot.agent.tokens import get_encoding\n"
        "print(get_encoding('cl100k_base').encode('hello world'))\n"
        "print(len(get_encoding('o200k_base').encode('hello world')))\n"
    )
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(cache),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[15339, 1917]", "2"]
    for enc in OFFLINE_ENCODINGS.values():
        data = (cache / enc.cache_name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == enc.sha256
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_encodings_keep_no_python_copy_of_their_ranks_and_still_round_trip() -> None:
    """The ranks live in tiktoken's Rust core; the Python copy (tens of MB) is dropped."""
    for name in OFFLINE_ENCODINGS:
        encoding = get_encoding(name)
        assert encoding._mergeable_ranks == {}
        text = "R1(config-if)# ip address 10.0.0.1 255.255.255.0"
        assert encoding.decode(encoding.encode(text)) == text
    assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]


def test_a_corrupt_cache_file_is_replaced(tmp_path: Path) -> None:
    materialize_encodings(tmp_path)
    target = tmp_path / OFFLINE_ENCODINGS["cl100k_base"].cache_name
    target.write_bytes(b"garbage")
    materialize_encodings(tmp_path)
    assert (
        hashlib.sha256(target.read_bytes()).hexdigest() == OFFLINE_ENCODINGS["cl100k_base"].sha256
    )


def test_a_configured_cache_dir_with_valid_files_is_used_as_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    materialize_encodings(tmp_path)
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    monkeypatch.setattr(tokens, "_ready_dir", None)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert ensure_offline_encodings() == tmp_path
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before


def test_a_configured_empty_cache_dir_is_filled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "_ready_dir", None)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    assert ensure_offline_encodings() == tmp_path / "empty"
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path / "empty")
    assert len(list((tmp_path / "empty").iterdir())) == 2


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-5-nano", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("openai/gpt-4o", "o200k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("deepseek-chat", "cl100k_base"),
        ("qwen2.5:7b", "cl100k_base"),
        (None, "cl100k_base"),
    ],
)
def test_encoding_follows_the_model_family(model: str | None, encoding: str) -> None:
    assert encoding_name_for_model(model) == encoding


# --- counting and its cache -----------------------------------------------------------


def test_counts_are_cached_by_message_id_and_content(counter: TokenCounter) -> None:
    counter.clear_cache()
    message = HumanMessage("show ip ospf neighbor on R1 please", id="m1")
    first = counter.count_message(message)
    assert (counter.hits, counter.misses) == (0, 1)
    assert (
        counter.count_message(HumanMessage("show ip ospf neighbor on R1 please", id="m1")) == first
    )
    assert (counter.hits, counter.misses) == (1, 1)
    assert counter.count_message(HumanMessage("something else entirely", id="m1")) != first
    assert counter.misses == 2


def test_tool_calls_are_counted_and_part_of_the_key(counter: TokenCounter) -> None:
    bare = AIMessage("", id="a1")
    call = AIMessage("", id="a1", tool_calls=[{"name": "get_topology", "args": {}, "id": "c1"}])
    longer = AIMessage(
        "",
        id="a1",
        tool_calls=[{"name": "get_topology", "args": {"detail": "all of it"}, "id": "c1"}],
    )
    assert counter.count_message(bare) < counter.count_message(call) < counter.count_message(longer)


def test_tool_definitions_are_counted(counter: TokenCounter) -> None:
    assert counter.count_tools([]) == 0
    assert 10 < counter.count_tools([TOOL]) < counter.count_tools([TOOL, TOOL])


# --- the upper bound that spares building the encoding ---------------------------------

VARIED_TEXTS = [
    "",
    " ",
    "hello world",
    "R1(config-if)# ip address 10.0.0.1 255.255.255.0\r\n" * 20,
    "PC1> show ip\n\nNAME        : PC1[1]\nIP/MASK     : 192.168.1.1/24\n",
    "<|endoftext|><|fim_prefix|> special markers as plain text",
    "Ça coûte 3 € ; naïve façade, Straße, ÆØÅ",
    "Привет, мир! Γειά σου κόσμε",
    "路由器配置：接口 GigabitEthernet0/0 已启用。日本語のテキスト、한국어 텍스트",
    "مرحبا بالعالم — שלום עולם",
    "emoji 😀👍🏽🇫🇷👨‍👩‍👧‍👦 and astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "e\u0301 a\u0308 combining marks \u200b zero width \ufeff",
    "\t\t    \n\n\n     trailing spaces     ",
    "1234567890" * 30,
    "\ud800 lone \udfff surrogates \ud83d",
]


def random_text(rng: random.Random) -> str:
    """Runs drawn from ASCII, Latin, Cyrillic, CJK, emoji, whitespace, surrogates, anything."""
    ranges = [
        (0x20, 0x7E),
        (0x00, 0xFF),
        (0x400, 0x4FF),
        (0x4E00, 0x9FFF),
        (0x1F300, 0x1FAFF),
        (0xD800, 0xDFFF),
        (0x00, 0x10FFFF),
    ]
    parts = []
    for _ in range(rng.randint(1, 12)):
        low, high = rng.choice(ranges)
        parts.append("".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 40))))
        parts.append(rng.choice(["", " ", "\n", "\t", "  "]))
    return "".join(parts)


@pytest.mark.parametrize("name", sorted(OFFLINE_ENCODINGS))
def test_utf8_bytes_bound_the_tokens_of_any_text(name: str) -> None:
    """Byte-level BPE: no text has more tokens than UTF-8 bytes (tiktoken itself checks)."""
    encoding = get_encoding(name)
    rng = random.Random(2026)
    texts = VARIED_TEXTS + [random_text(rng) for _ in range(400)]
    for text in texts:
        assert len(encoding.encode_ordinary(text)) <= text_token_bound(text), repr(text)
    assert text_token_bound("é€😀") == 2 + 3 + 4


def test_message_and_tool_bounds_are_upper_bounds(counter: TokenCounter) -> None:
    rng = random.Random(11)
    history = random_history(rng, 80)
    history += [HumanMessage(random_text(rng), name="student") for _ in range(40)]
    for message in history:
        assert counter.count_message(message) <= counter.bound_message(message)
    assert counter.count_messages(history) <= counter.bound_messages(history)
    cost = counter.tools_cost([TOOL, TOOL])
    assert cost.exact() == counter.count_tools([TOOL, TOOL]) <= cost.bound


def test_a_conversation_well_inside_the_window_builds_no_encoding() -> None:
    """Nothing is counted: the figures are upper bounds, everything is kept."""
    fresh = TokenCounter("o200k_base")
    history = random_history(random.Random(3), 60)
    tools = fresh.tools_cost([TOOL])
    prepared = prepare_context(
        history,
        system_prompt=TEMPLATE,
        topology=lab_topology(),
        context_limit=128,
        counter=fresh,
        tool_tokens=tools,
    )
    assert not fresh.loaded and not prepared.exact
    assert prepared.messages[1:] == history and not prepared.trimmed

    exact = TokenCounter("o200k_base")
    assert prepared.system_tokens >= exact.count_message(prepared.messages[0])
    assert prepared.message_tokens >= exact.count_messages(prepared.messages)
    assert prepared.tool_tokens == tools.bound >= exact.count_tools([TOOL])
    assert prepared.message_tokens <= prepared.trim_budget


def test_the_bound_never_changes_what_is_kept(counter: TokenCounter) -> None:
    """Over random histories and windows: the same messages as exact trimming, counted
    exactly (building the encoding) exactly when the bound could not settle it."""
    rng = random.Random(77)
    paths = set()
    for _ in range(80):
        history = random_history(rng, rng.randint(1, 40))
        limit = rng.randint(1, 12)
        fresh = TokenCounter("cl100k_base")
        lazy = prepare_context(
            history,
            system_prompt=TEMPLATE,
            topology="PC1 e0 <-> PC2 e0",
            context_limit=limit,
            counter=fresh,
            tool_tokens=fresh.tools_cost([TOOL]),
        )
        counted = prepare_context(
            history,
            system_prompt=TEMPLATE,
            topology="PC1 e0 <-> PC2 e0",
            context_limit=limit,
            counter=counter,
            tools=[TOOL],
        )
        assert counted.exact
        assert lazy.messages == counted.messages
        assert lazy.exact == fresh.loaded
        if lazy.exact:
            assert lazy.model_dump() == counted.model_dump()
        paths.add(lazy.exact)
    assert paths == {True, False}, "both the bound and the exact path were exercised"


async def test_aprepare_builds_the_encoding_in_a_worker_thread_when_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built_on: list[threading.Thread] = []
    real_get_encoding = tokens.get_encoding

    def recording_get_encoding(name: str) -> object:  # spy: the real build, recorded
        built_on.append(threading.current_thread())
        return real_get_encoding(name)

    monkeypatch.setattr(tokens, "get_encoding", recording_get_encoding)
    fresh = TokenCounter("cl100k_base")
    short = await aprepare_context(
        [HumanMessage("hi")], system_prompt=TEMPLATE, topology=None, context_limit=8, counter=fresh
    )
    assert not short.exact and not fresh.loaded and built_on == []

    history = random_history(random.Random(5), 400)
    prepared = await aprepare_context(
        history, system_prompt=TEMPLATE, topology=None, context_limit=4, counter=fresh
    )
    assert prepared.exact and prepared.trimmed and fresh.loaded
    assert len(built_on) == 1 and built_on[0] is not threading.current_thread()
    assert prepared.message_tokens == fresh.count_messages(prepared.messages)


# --- budgets --------------------------------------------------------------------------


def test_budgets_per_strategy() -> None:
    assert input_budget(128, "conservative") == 76_800
    assert input_budget(128, "balanced") == 96_000
    assert input_budget(128, "aggressive") == 108_800
    assert trim_budget(128, "balanced", 1725) == 94_275


def test_invalid_strategy_falls_back_to_balanced_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert resolve_strategy("turbo") == "balanced"
    assert "Invalid context_strategy 'turbo'" in caplog.text
    assert resolve_strategy(None) == "balanced"


@pytest.mark.parametrize("limit", [None, 0, -5, 1.5, "128", True])
def test_missing_or_invalid_context_limit_raises(limit: object) -> None:
    with pytest.raises(ValueError, match="context_limit"):
        input_budget(limit, "balanced")  # type: ignore[arg-type]


# --- topology in the system prompt ------------------------------------------------------


def lab_topology() -> Topology:
    project = Project(project_id="p1", name="OSPF lab", status="opened")
    nodes = [
        Node(node_id=f"n{i}", name=name, node_type="vpcs", status="started")
        for i, name in enumerate(["PC2", "PC1", "R1"])
    ]
    return Topology(project, nodes)


def test_topology_replaces_the_placeholder_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    topology = lab_topology()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        prompt = render_system_prompt(TEMPLATE, topology)
    assert prompt == TEMPLATE.replace(TOPOLOGY_PLACEHOLDER, topology.to_text())
    assert (
        f"✓ Topology injected: {len(topology.to_text())} chars, nodes: ['PC1', 'PC2', 'R1']"
        in caplog.text
    )


def test_no_topology_injects_the_placeholder_text(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        prompt = render_system_prompt(TEMPLATE, None)
    assert NO_TOPOLOGY_INFO in prompt and TOPOLOGY_PLACEHOLDER not in prompt
    assert "✗ Topology data is None, injecting placeholder" in caplog.text


def test_template_without_placeholder_is_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert render_system_prompt("No slot here.", "PC1 e0 <-> PC2 e0") == "No slot here."
    assert "no {{topology_info}} placeholder" in caplog.text


# --- trimming ---------------------------------------------------------------------------


def random_history(rng: random.Random, size: int) -> list[BaseMessage]:
    """Human turns, plain answers and tool-call rounds with 1-3 results each."""
    messages: list[BaseMessage] = []
    turn = 0
    while len(messages) < size:
        turn += 1
        messages.append(HumanMessage("question " * rng.randint(1, 30), id=f"h{turn}"))
        for _ in range(rng.randint(0, 3)):
            calls = [
                {
                    "name": "run_show_commands",
                    "args": {"n": k},
                    "id": f"c{turn}-{len(messages)}-{k}",
                }
                for k in range(rng.randint(1, 3))
            ]
            messages.append(AIMessage("thinking " * rng.randint(0, 5), tool_calls=calls))
            messages.extend(
                ToolMessage("output " * rng.randint(1, 80), tool_call_id=c["id"]) for c in calls
            )
        messages.append(AIMessage("answer " * rng.randint(1, 60), id=f"a{turn}"))
    return messages


def assert_tool_pairs_intact(messages: list[BaseMessage]) -> None:
    """Every tool result follows its call, and every call has all its results."""
    pending: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in pending, "tool result without its call"
            pending.discard(message.tool_call_id)
        else:
            assert not pending, "tool call without its result"
            if isinstance(message, AIMessage):
                pending = {call["id"] for call in message.tool_calls}
    assert not pending


def test_trimming_never_separates_tool_calls_from_results(counter: TokenCounter) -> None:
    rng = random.Random(20260)
    system = SystemMessage("system prompt " * 20)
    for _ in range(300):
        history = random_history(rng, rng.randint(1, 60))
        budget = rng.randint(0, counter.count_messages([system, *history]) + 50)
        kept = trim_messages([system, *history], budget, counter)

        assert kept[0] is system
        tail = kept[1:]
        assert tail == history[len(history) - len(tail) :], "kept messages are the newest"
        assert_tool_pairs_intact(tail)
        if tail:
            assert counter.count_messages(kept) <= budget
        if len(tail) < len(history):
            # Maximal: the next older unit would not have fit.
            start = len(history) - len(tail)
            unit_start = next(s for s, e in message_units(history) if e == start)
            assert counter.count_messages([system, *history[unit_start:]]) > budget


def test_units_group_a_call_with_its_results() -> None:
    history = [
        HumanMessage("hi"),
        AIMessage(
            "",
            tool_calls=[{"name": "a", "args": {}, "id": "1"}, {"name": "b", "args": {}, "id": "2"}],
        ),
        ToolMessage("r1", tool_call_id="1"),
        ToolMessage("r2", tool_call_id="2"),
        AIMessage("done"),
    ]
    assert message_units(history) == [(0, 1), (1, 4), (4, 5)]


def test_a_tool_round_is_dropped_whole_when_it_does_not_fit(counter: TokenCounter) -> None:
    system = SystemMessage("sys")
    call = AIMessage("", tool_calls=[{"name": "get_topology", "args": {}, "id": "c1"}])
    result = ToolMessage("x " * 500, tool_call_id="c1")
    answer = AIMessage("The lab has two PCs.")
    history = [HumanMessage("what is in my lab?"), call, result, answer]
    budget = counter.count_messages([system, result, answer])  # room for the result, not the call
    assert trim_messages([system, *history], budget, counter) == [system, answer]


# --- prepare_context: its log lines and edge cases ----------------------------------------


@pytest.mark.parametrize("built", [True, False], ids=["counted", "bounded"])
def test_prepare_adds_the_system_message_and_logs_context_ready(
    built: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Counted (the encoding is built): the log line with `~`; bounded: `≤`."""
    counter = TokenCounter("cl100k_base")
    if built:
        counter.count_text("build it")
    with caplog.at_level(logging.INFO, logger=LOGGER):
        prepared = prepare_context(
            [HumanMessage("hello")],
            system_prompt=TEMPLATE,
            topology=lab_topology(),
            context_limit=128,
            strategy="conservative",
            counter=counter,
            tool_tokens=1725,
        )
    assert [m.type for m in prepared.messages] == ["system", "human"]
    assert lab_topology().to_text() in prepared.messages[0].content
    assert not prepared.trimmed and prepared.newest_kept
    assert prepared.exact is built
    total = prepared.message_tokens + 1725
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "Calling pre_hook to prepare 1 messages"
    if built:
        usage = f"~{prepared.message_tokens} tokens + 1725 tools = {total} / 128K"
        share = f"({total / 128_000:.1%})"
    else:
        usage = f"≤{prepared.message_tokens} tokens + ≤1725 tools = ≤{total} / 128K"
        share = f"(≤{total / 128_000:.1%})"
    assert f"Context ready: 2 msgs, {usage} {share}, strategy=conservative" in lines
    assert lines[-1] == "Messages prepared: 1 → 2"


def test_prepare_trims_and_logs_it(counter: TokenCounter, caplog: pytest.LogCaptureFixture) -> None:
    history = random_history(random.Random(5), 400)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        prepared = prepare_context(
            history,
            system_prompt=TEMPLATE,
            topology="PC1 e0 <-> PC2 e0",
            context_limit=4,
            counter=counter,
        )
    assert prepared.trimmed and prepared.messages[-1] is history[-1]
    assert prepared.exact and counter.loaded
    assert prepared.message_tokens <= prepared.trim_budget == 3000
    assert_tool_pairs_intact(prepared.messages[1:])
    assert any(
        r.getMessage().startswith(
            f"Messages trimmed: {len(history)} → {len(prepared.messages)} msgs."
        )
        for r in caplog.records
    )


def test_prepare_replaces_a_leading_system_message(counter: TokenCounter) -> None:
    prepared = prepare_context(
        [SystemMessage("old"), HumanMessage("hi")],
        system_prompt=TEMPLATE,
        topology=None,
        context_limit=8,
        counter=counter,
    )
    assert len(prepared.messages) == 2 and "old" not in prepared.messages[0].content


def test_system_and_tools_over_budget_logs_an_error_and_keeps_only_the_system(
    counter: TokenCounter, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        prepared = prepare_context(
            [HumanMessage("hello")],
            system_prompt=TEMPLATE,
            topology=None,
            context_limit=1,
            counter=counter,
            tool_tokens=900,
        )
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert errors and "exceed the input budget" in errors[0].getMessage()
    assert "conservative" in errors[0].getMessage()
    assert [m.type for m in prepared.messages] == ["system"]
    assert not prepared.newest_kept


def test_little_room_for_history_warns(
    counter: TokenCounter, caplog: pytest.LogCaptureFixture
) -> None:
    big_template = "rules " * 600 + TOPOLOGY_PLACEHOLDER  # ~600 of 750 tokens
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        prepare_context(
            [HumanMessage("hi")],
            system_prompt=big_template,
            topology="x",
            context_limit=1,
            counter=counter,
        )
    assert "minimal room for conversation history" in caplog.text


def test_trim_failure_returns_untrimmed(
    counter: TokenCounter, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    history = [HumanMessage("hi"), AIMessage("hello")]

    def broken(*args: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr("jupyter_gns3_copilot.agent.context._trim", broken)
    with caplog.at_level(logging.ERROR, logger=LOGGER):
        prepared = prepare_context(
            history, system_prompt=TEMPLATE, topology=None, context_limit=8, counter=counter
        )
    assert prepared.messages[1:] == history
    assert "trim_messages failed" in caplog.text


def test_repeated_calls_hit_the_cache(counter: TokenCounter) -> None:
    history = random_history(random.Random(9), 200)
    prepare_context(
        history, system_prompt=TEMPLATE, topology="t", context_limit=128, counter=counter
    )
    misses = counter.misses
    prepare_context(
        history, system_prompt=TEMPLATE, topology="t", context_limit=128, counter=counter
    )
    assert counter.misses == misses
