"""The agent and the chat service run directly, against the scripted model:
`agent_context` / `run_turn` (the graph with its tool context), `copilot` / `collect` (an
`AgentService` and a turn's events), and the checks of a tool call's streamed events
(`tool_call_runs`, `assert_tool_call_contract`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from jupyter_gns3_copilot.agent.agent_context import AgentContext, make_tool_specs
from jupyter_gns3_copilot.agent.limits import TurnLimits
from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model
from jupyter_gns3_copilot.agent.prompts import system_prompt
from jupyter_gns3_copilot.agent.state import turn_input, user_message
from jupyter_gns3_copilot.agent.topology_source import TopologySource
from jupyter_gns3_copilot.chat.service import AgentService
from jupyter_gns3_copilot.chat.settings import ChatSettings
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.events import ChatEvent, parse_event
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM
from jupyter_gns3_copilot.tools import LabAccess, ToolContext

UNREACHABLE_GNS3 = "http://127.0.0.1:9"
"""A GNS3 URL where nothing listens: tools and topology fail fast and say so."""


PROJECT_ID = "a0f46d81-e564-443c-b321-2cdebe80e321"


def tool_call_runs(kinds: list[str], of: tuple[str, ...] = ("tool_call",)) -> list[str]:
    """Event kinds with each run of consecutive `tool_call` events (and other kinds `of`)
    as one: how many growing-arguments events a call gets depends on how fast its
    fragments arrive (and, over HTTP, content pieces are merged while the client lags)."""
    return [k for i, k in enumerate(kinds) if k not in of or kinds[i - 1 : i] != [k]]


def assert_tool_call_contract(calls: list[dict[str, Any]], name: str, arguments: Any) -> None:
    """One call's `tool_call` payloads: opening with empty arguments, arguments that only
    grow, and last the full arguments with `complete: true`."""
    assert calls[0]["function"] == {"name": name, "arguments": ""}
    sent = [call["function"]["arguments"] for call in calls]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(sent))
    assert [call["function"].get("complete") for call in calls[:-1]] == [None] * (len(calls) - 1)
    assert calls[-1]["function"]["complete"] is True
    assert json.loads(calls[-1]["function"]["arguments"]) == arguments


@contextlib.asynccontextmanager
async def agent_context(
    llm: ScriptedLLM,
    *,
    gns3_url: str = UNREACHABLE_GNS3,
    project_id: str = PROJECT_ID,
    token: str | None = None,
    mode: str = "lab_automation_assistant",
    title_llm: ScriptedLLM | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    temperature: float | None = None,
    context_limit: int | None = None,
) -> AsyncIterator[AgentContext]:
    settings = ModelSettings(
        base_url=llm.base_url, api_key="sk-graph-test", model="scripted-model", max_retries=0
    )
    if context_limit is not None:
        settings = settings.model_copy(update={"context_limit": context_limit})
    abort = asyncio.Event()
    async with (
        GNS3Client(gns3_url, token=token, timeout=5, transport=transport) as gns3,
        ConsolePool() as pool,
    ):
        title_model = None
        if title_llm is not None:
            title_model = make_chat_model(
                settings.model_copy(update={"base_url": title_llm.base_url}), streaming=False
            )
        context = AgentContext(
            model=make_chat_model(settings, temperature=temperature),
            settings=settings,
            tools=ToolContext(
                gns3=gns3, project_id=project_id, consoles=pool, mode=mode, abort=abort
            ),
            specs=make_tool_specs(mode),
            topology=TopologySource(lambda: gns3.get_topology(project_id)),
            system_prompt=system_prompt(mode),
            abort=abort,
            title_model=title_model,
        )
        try:
            yield context
        finally:
            context.topology.close()


async def run_turn(
    graph: Any,
    context: AgentContext,
    message: str,
    *,
    thread: str = "t1",
    limits: TurnLimits | None = None,
) -> list[tuple[str, Any]]:
    limits = limits or TurnLimits()
    config = {"configurable": {"thread_id": thread}, "recursion_limit": limits.recursion_limit}
    inputs = turn_input(user_message(message, f"{thread}-{message}"), thread, limits)
    return [
        item
        async for item in graph.astream(
            inputs, config, context=context, stream_mode=["custom", "updates"]
        )
    ]


def custom(items: list[tuple[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [data for mode, data in items if mode == "custom" and data["type"] == kind]


USER = "student1"


@contextlib.asynccontextmanager
async def copilot(
    project: Any, data_dir: Path, transport: httpx.AsyncBaseTransport | None = None, **options: Any
) -> AsyncIterator[AgentService]:
    """An AgentService for `project`, with a real GNS3 client (through `transport` if given)
    and console pool; `options` are its `ChatSettings` besides `data_dir`."""
    async with (
        GNS3Client(
            project.url,
            username=project.username,
            password=project.password,
            token=project.token,
            transport=transport,
        ) as gns3,
        ConsolePool() as pool,
    ):
        service = await AgentService.open(
            project.project_id, ChatSettings(data_dir, **options), lab=LabAccess(gns3, pool)
        )
        try:
            yield service
        finally:
            await service.close()


def wire(event: ChatEvent) -> dict[str, Any]:
    """The event as the server sends it (its JSON object), checked to parse back into the
    same event with the shared event models."""
    sent = json.loads(event.model_dump_json(exclude_none=True))
    assert parse_event(sent) == event
    return sent


async def collect(events: AsyncIterator[ChatEvent]) -> list[dict[str, Any]]:
    """The stream's events as the server sends them (`wire`)."""
    return [wire(event) async for event in events]
