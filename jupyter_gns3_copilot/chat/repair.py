"""History repair: a thread's tool calls left without a result answered (so the history
stays valid for the model API), and the errors a turn ended with kept in its state.

A running turn's calls are never touched here: the engine repairs after an interrupted
or failed run, and before a session's first turn in this process (a crash may have left
calls unanswered); a history read shows the same repair without writing it
(`agent.history.with_placeholder_results`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..agent.prompts import ABORTED_RESULT, INTERRUPTED_RESULT

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from ..agent.graph import CopilotGraph
    from .running_turn import RunningTurn

log = logging.getLogger(__name__)


async def answer_unanswered_calls(
    graph: CopilotGraph, config: RunnableConfig, turn: RunningTurn, *, interrupted: bool
) -> None:
    """Answer the thread's unanswered tool calls: the result the turn saw, else the
    aborted placeholder (`interrupted`: this turn was stopped) or the interrupted one (a
    turn before it was). The messages added are counted in the turn's statistics."""
    # LangChain and LangGraph are imported on first use, not when the server loads.
    from ..agent.graph import ABORT_NODE
    from ..agent.history import placeholder_results, unanswered_tool_calls
    from ..agent.state import stamp

    snapshot = await graph.aget_state(config)
    pending = unanswered_tool_calls(snapshot.values.get("messages", []))
    if not pending:
        return
    log.warning(
        "Session %s: %d tool call(s) without a result (%s); adding placeholder results",
        turn.session_id,
        len(pending),
        "turn interrupted" if interrupted else "found at turn start",
    )
    results = placeholder_results(
        pending,
        ABORTED_RESULT if interrupted else INTERRUPTED_RESULT,
        known=turn.tool_results,
        metadata=stamp(),
    )
    await graph.aupdate_state(config, {"messages": results}, as_node=ABORT_NODE)
    turn.count(results)


async def count_left_messages(
    graph: CopilotGraph, config: RunnableConfig, turn: RunningTurn
) -> None:
    """Count every message the turn left in the history after its user message (a run
    that stopped early streamed some of them unread)."""
    snapshot = await graph.aget_state(config)
    messages = snapshot.values.get("messages", [])
    start = next(
        (i for i, m in enumerate(messages) if m.id == turn.user_message_id),
        len(messages),
    )
    turn.count(messages[start + 1 :])


async def keep_turn_errors(graph: CopilotGraph, config: RunnableConfig, turn: RunningTurn) -> None:
    """Keep the errors the turn ended with in its thread's state (`turn_errors`, under
    its user message), so a read of the history shows them; not if the user message
    never reached the history."""
    # LangChain and LangGraph are imported on first use, not when the server loads.
    from ..agent.graph import ABORT_NODE
    from ..agent.state import now_iso

    snapshot = await graph.aget_state(config)
    messages = (snapshot.values or {}).get("messages", [])
    if not any(message.id == turn.user_message_id for message in messages):
        return
    errors = [{"error": text, "created_at": now_iso()} for text in turn.errors]
    await graph.aupdate_state(
        config, {"turn_errors": {turn.user_message_id: errors}}, as_node=ABORT_NODE
    )
