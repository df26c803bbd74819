"""The project store with a minimal graph (`echo_graph`, answering with the user's
text) to write checkpoints through `run_turn`; `PROJECT`, the project id used."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from jupyter_gns3_copilot.store import ProjectStore

PROJECT = "a0f46d81-e564-443c-b321-2cdebe80e321"


def echo_graph(store: ProjectStore):  # type: ignore[no-untyped-def]
    """A one-node graph checkpointed by the store's saver."""

    def reply(state: MessagesState) -> dict[str, list[AIMessage]]:
        return {"messages": [AIMessage(f"echo {len(state['messages'])}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("reply", reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=store.checkpointer)


async def run_turn(store: ProjectStore, thread_id: str, text: str = "hello") -> None:
    graph = echo_graph(store)
    config = {"configurable": {"thread_id": thread_id}}
    await graph.ainvoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[arg-type]
