"""The runtime context of one turn (`agent.agent_context.AgentContext`): the model, the tools
of the turn's mode, the system prompt, the approvals, and the lab objectives when the
user has some."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..agent.prompts import system_prompt
from ..tools import ToolContext
from ..tools.modes import TEACHING

if TYPE_CHECKING:
    from ..agent.agent_context import AgentContext
    from ..agent.llm_access import ModelSettings
    from ..agent.topology_source import TopologySource
    from ..objectives.hints import TurnObjectives
    from .settings import ChatSettings


async def agent_context(
    tools: ToolContext,
    *,
    llm: ModelSettings,
    title_llm: ModelSettings | None,
    mode: str,
    temperature: float | None,
    abort: asyncio.Event,
    topology: TopologySource,
    turn_id: str,
    objectives: TurnObjectives | None,
    settings: ChatSettings,
) -> AgentContext:
    """The context of a turn (or of its resumption after an approval) run with `tools`,
    which look devices up in the turn's `topology` read, with the chat's `settings` (its
    prompt template, approval policy and timeout). With `objectives`, the tool
    context reaches them, the model is offered `check_objectives`, and in teaching mode
    it reads the current stage and a `nudge` stage holds configuration lines back."""
    # LangGraph and the model client are imported when the first service opens.
    from ..agent.agent_context import AgentContext, make_tool_specs
    from ..agent.llm_access import shared_chat_model

    prompt = system_prompt(mode, settings.system_prompt)
    tools.read_nodes = topology.nodes
    hold_back = None
    if objectives is not None:
        tools.objectives = objectives
        if mode == TEACHING:
            prompt += objectives.prompt()
            hold_back = objectives.hold_back()
    return AgentContext(
        model=await shared_chat_model(llm, temperature=temperature),
        settings=llm,
        tools=tools,
        specs=make_tool_specs(mode, objectives=objectives is not None),
        topology=topology,
        system_prompt=prompt,
        hold_back=hold_back,
        abort=abort,
        title_model=(
            await shared_chat_model(title_llm, streaming=False) if title_llm is not None else None
        ),
        turn_id=turn_id,
        approval=settings.approval,
        approval_timeout=settings.approval_timeout,
        temperature=temperature,
    )
