"""The copilot's LangGraph graph, with the per-turn limits (`limits.TurnLimits`): its
routing and assembly, the title and abort nodes. `llm_call` is `agent.model_node`'s,
`tool_node` `agent.tool_node`'s; the runtime context `agent.agent_context`'s, the turn's
topology read `agent.topology_source`'s.

```
START -> llm_call -(should_continue)-> tool_node | title_generator_node
                                       | abort_handler_node | END
tool_node -(recursion_limit_continue)-> llm_call | END
title_generator_node -> END;  abort_handler_node -> END
```

- `llm_call` puts the lab topology in the system prompt (fetched once per turn, again
  after a tool that changed the lab), trims the history to the model's context budget
  (`context.aprepare_context`) and streams the reply of the model bound to the mode's
  tool schemas. An abort stops the reply where it is: the text so far is kept; its tool
  calls are kept only if the reply was complete (its finish reason arrived), and then
  get `{"status": "aborted"}` results from abort_handler_node.
- `tool_node` runs the requested tools through `tools.execute_tool`, which enforces the
  mode where the tool runs. Results become ToolMessages holding JSON text
  (`json.dumps(..., ensure_ascii=False, indent=2)`), in the order of the calls. Read-only
  calls of one reply run concurrently; a reply containing a call that changes the lab runs
  its calls one after the other, in order. Calls beyond `max_tool_calls` get the
  tool-limit message; when no model call is left to read results (`remaining_steps` < 1,
  e.g. `max_iterations=1`), nothing runs and every call gets a "not executed" result.
  Before anything runs, each call the turn's approval policy names waits for a person
  (`agent.approval`): with `changes`, every call that would change the lab or a device's
  configuration (`tools.changes`: a command tool whose lines include one that is no
  diagnostic); one `interrupt()` per call, in order, its plan naming the configuring
  lines; a declined or timed-out call gets the declined result instead of running.
- `title_generator_node` names the conversation once, after its first complete answer.
- `abort_handler_node` answers pending tool calls with `{"status": "aborted"}`.

Routing: `should_continue` checks, in order, the abort flag (pending tool calls ->
abort_handler_node, else END), tool calls (-> tool_node), a missing title
(-> title_generator_node), else END. `recursion_limit_continue` ends on abort or when
no model call is left in the turn, else goes back to llm_call.

Everything a turn needs that must not be persisted (model clients holding the API key, the
tool context holding the GNS3 client, the abort flag) is in `AgentContext`, passed as
LangGraph's runtime context (`graph.astream(..., context=...)`), never in the state.

Nodes report to the stream through LangGraph's custom stream writer, as dicts with a
`type` (the service turns them into SSE events): `llm_start` (a model call begins; what
the statistics count), `tool_start`, `progress`, `tool_end` (with the exact ToolMessage
content) and `iteration_limit` (with a message for the user).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime, get_runtime

from .agent_context import AgentContext
from .history import (
    content_text,
    last_ai,
    placeholder_results,
    requested_calls,
    unanswered_tool_calls,
)
from .limits import DEFAULT_MAX_ITERATIONS, MIN_REMAINING_STEPS
from .model_node import llm_call
from .prompts import ABORTED_RESULT, TITLE_PROMPT, clean_title, fallback_title, title_request
from .state import AgentState, stamp
from .tool_node import tool_node

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph


log = logging.getLogger(__name__)

LLM_CALL = "llm_call"
TOOL_NODE = "tool_node"
TITLE_NODE = "title_generator_node"
ABORT_NODE = "abort_handler_node"

TITLE_TIMEOUT = 30.0
"""Seconds the title model may take before the fallback title is used."""

if TYPE_CHECKING:
    CopilotGraph: TypeAlias = CompiledStateGraph[AgentState, AgentContext, AgentState, AgentState]
    """The compiled copilot graph (`build_graph`)."""


# -- title and abort -----------------------------------------------------------------------


def _first_exchange(messages: Sequence[BaseMessage]) -> tuple[str, str]:
    """The first user message's text and the first answer text after it."""
    user = next((m for m in messages if isinstance(m, HumanMessage)), None)
    user_text = content_text(user.content) if user is not None else ""
    answer = next(
        (
            content_text(m.content)
            for m in messages
            if isinstance(m, AIMessage) and content_text(m.content).strip()
        ),
        "",
    )
    return user_text, answer


async def title_generator_node(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Name the conversation (<= 40 characters; the user's first 30 if the model fails).

    The title model's call is tagged `nostream`, reports no `llm_start`, and so appears
    neither in the stream nor in the statistics.
    """
    ctx = runtime.context
    user_text, answer = _first_exchange(state.get("messages", []))
    model = ctx.title_model or ctx.model
    request = [SystemMessage(content=TITLE_PROMPT), HumanMessage(title_request(user_text, answer))]
    title = ""
    try:
        reply = await asyncio.wait_for(
            model.ainvoke(request, {"tags": ["nostream"], "run_name": "title"}), TITLE_TIMEOUT
        )
        title = clean_title(content_text(reply.content))
    except Exception as exc:
        log.warning("Title generation failed, using the first message: %s", exc)
    if ctx.hold_back is not None and ctx.hold_back.shows_configuration(title):
        title = ""  # the student's own words instead
    return {"conversation_title": title or fallback_title(user_text)}


def aborted_results(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """`{"status": "aborted"}` results for the last reply's unanswered tool calls."""
    return placeholder_results(unanswered_tool_calls(messages), ABORTED_RESULT, metadata=stamp())


async def abort_handler_node(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """Answer the pending tool calls with placeholders so the history stays valid."""
    results = aborted_results(state.get("messages", []))
    for message in results:
        runtime.stream_writer(
            {
                "type": "tool_end",
                "tool_name": message.name,
                "tool_call_id": message.tool_call_id,
                "tool_output": message.content,
            }
        )
    return {"messages": results, "abort": True}


# -- routing and assembly --------------------------------------------------------------------


def _aborted() -> bool:
    """Whether the running turn's abort flag is set.

    Outside a run (a state update through `aupdate_state`) there is no runtime context,
    hence no flag.
    """
    runtime = get_runtime(AgentContext)
    context = runtime.context if runtime is not None else None
    return context is not None and context.abort.is_set()


def should_continue(state: AgentState) -> str:
    """After llm_call: abort, then tools, then the title, else the end."""
    messages = state.get("messages", [])
    last = last_ai(messages)
    if _aborted():
        return ABORT_NODE if unanswered_tool_calls(messages) else END
    if last is not None and requested_calls(last):
        return TOOL_NODE
    if not state.get("conversation_title") and last is not None:
        return TITLE_NODE
    return END


def recursion_limit_continue(state: AgentState) -> str:
    """After tool_node: end on abort or when the turn has no model call left."""
    if _aborted():
        return END
    if state.get("remaining_steps", DEFAULT_MAX_ITERATIONS) < MIN_REMAINING_STEPS:
        return END
    return LLM_CALL


def build_graph(checkpointer: BaseCheckpointSaver[str] | None = None) -> CopilotGraph:
    """The compiled copilot graph, persisting to `checkpointer`."""
    graph = StateGraph(AgentState, context_schema=AgentContext)
    # These two nodes take both `runtime` and `config` (LangGraph passes each by its
    # parameter name); LangGraph's add_node overloads type one or the other, not both.
    graph.add_node(LLM_CALL, llm_call)  # type: ignore[call-overload]
    graph.add_node(TOOL_NODE, tool_node)  # type: ignore[call-overload]
    graph.add_node(TITLE_NODE, title_generator_node)
    graph.add_node(ABORT_NODE, abort_handler_node)
    graph.add_edge(START, LLM_CALL)
    graph.add_conditional_edges(LLM_CALL, should_continue, [TOOL_NODE, TITLE_NODE, ABORT_NODE, END])
    graph.add_conditional_edges(TOOL_NODE, recursion_limit_continue, [LLM_CALL, END])
    graph.add_edge(TITLE_NODE, END)
    graph.add_edge(ABORT_NODE, END)
    return graph.compile(checkpointer=checkpointer)
