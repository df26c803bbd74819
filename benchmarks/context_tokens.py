"""Tokens of one model call on a 5-node lab, in each mode (goal: <= 2,500 in teaching).

Builds the turn's first model request the way the graph does (`chat.turn_context`'s
system prompt and tools, `agent.context` with the lab's topology text, `AgentContext`'s
bound model) and sends it to the scripted model server, which records it; the recorded
body is what is counted, in cl100k_base: the messages with the chat format's framing,
and the tool schemas as sent. "every tool" offers the whole catalogue, whatever the mode
allows, for comparison.

Run: `.venv/bin/python benchmarks/context_tokens.py [--question TEXT]`
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from typing import Any, cast

from _common import parse_args
from langchain_core.messages import HumanMessage

from jupyter_gns3_copilot.agent.agent_context import AgentContext, make_tool_specs
from jupyter_gns3_copilot.agent.context import aprepare_context
from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model
from jupyter_gns3_copilot.agent.prompts import system_prompt
from jupyter_gns3_copilot.agent.tokens import (
    TOKENS_PER_MESSAGE,
    TOKENS_REPLY_PRIMING,
    TokenCounter,
    ensure_offline_encodings,
)
from jupyter_gns3_copilot.gns3 import Link, Node, Project, Topology
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM
from jupyter_gns3_copilot.testing.scripted_llm_script import text
from jupyter_gns3_copilot.tools import TOOLS, ToolContext, ToolSpec
from jupyter_gns3_copilot.tools.modes import LAB_AUTOMATION, TEACHING

GOAL = 2500
QUESTION = "PC1 cannot ping PC3. Why?"


def _node(name: str, node_type: str, ports: int, console: int | None) -> Node:
    """A node as GNS3 returns it."""
    switch = node_type == "ethernet_switch"
    return Node.model_validate(
        {
            "node_id": f"id-{name}",
            "name": name,
            "node_type": node_type,
            "status": "started",
            "console": console,
            "console_host": "127.0.0.1" if console else None,
            "console_type": "telnet" if console else "none",
            "ports": [
                {
                    "name": f"Ethernet{i}" if switch else f"eth{i}",
                    "short_name": f"e{i}",
                    "adapter_number": 0 if switch else i,
                    "port_number": i if switch else 0,
                }
                for i in range(ports)
            ],
        }
    )


def _link(link_id: str, a: Node, a_port: int, b: Node, b_port: int) -> Link:
    ends = [
        {
            "node_id": node.node_id,
            "adapter_number": node.ports[index].adapter_number,
            "port_number": node.ports[index].port_number,
            "label": {"text": node.ports[index].short_name},
        }
        for node, index in ((a, a_port), (b, b_port))
    ]
    return Link.model_validate({"link_id": link_id, "nodes": ends})


def five_node_lab() -> Topology:
    """A router, a switch and three PCs (the router on the switch, the PCs behind it)."""
    router = _node("R1", "qemu", 2, 5000)
    switch = _node("Switch1", "ethernet_switch", 8, None)
    pcs = [_node(f"PC{i}", "vpcs", 1, 5001 + i) for i in range(1, 4)]
    links = [_link("l0", router, 0, switch, 0)]
    links += [_link(f"l{i}", pc, 0, switch, i) for i, pc in enumerate(pcs, start=1)]
    project = Project(project_id="p", name="Five nodes", status="opened")
    return Topology(project, [router, switch, *pcs], links)


class _Lab:
    """The turn's topology source: the same lab on every read."""

    def __init__(self, topology: Topology) -> None:
        self._text = topology.to_text()

    async def text(self) -> str:
        return self._text


async def recorded_request(
    llm: ScriptedLLM, mode: str, specs: list[ToolSpec], topology: Topology, question: str
) -> dict[str, Any]:
    """The body of the first model call of a turn in `mode` offering `specs`."""
    llm.reset([text("ok")])
    settings = ModelSettings(base_url=llm.base_url, model="gpt-4o-mini", api_key="k")
    # No tool runs here: the tool context is never read while the request is built.
    ctx = AgentContext(
        model=make_chat_model(settings),
        settings=settings,
        tools=cast(ToolContext, None),
        specs=specs,
        topology=_Lab(topology),
        system_prompt=system_prompt(mode),
    )
    prepared = await aprepare_context(
        [HumanMessage(question)],
        system_prompt=ctx.system_prompt,
        topology=await ctx.topology.text(),
        context_limit=settings.context_limit,
        model=settings.model,
        tool_tokens=ctx.tool_tokens,
    )
    await ctx.bound_model.ainvoke(prepared.messages)
    (request,) = llm.chat_requests
    return request.body


def count(counter: TokenCounter, body: dict[str, Any]) -> tuple[int, int, int]:
    """Tokens of `body`'s system message, other messages and tool schemas."""
    messages = body["messages"]
    framed = [
        TOKENS_PER_MESSAGE + counter.count_text(str(m.get("content") or "")) for m in messages
    ]
    system = sum(f for m, f in zip(messages, framed, strict=True) if m["role"] == "system")
    tools = counter.count_text(json.dumps(body.get("tools", []), sort_keys=True))
    return system, sum(framed) - system + TOKENS_REPLY_PRIMING, tools


async def measure(question: str) -> dict[str, tuple[int, int, int, int]]:
    """Per case: (tools offered, system tokens, other message tokens, tool tokens)."""
    topology = five_node_lab()
    counter = TokenCounter("cl100k_base")
    cases = {
        "every tool (teaching prompt)": (TEACHING, list(TOOLS.values())),
        "teaching": (TEACHING, make_tool_specs(TEACHING)),
        "lab": (LAB_AUTOMATION, make_tool_specs(LAB_AUTOMATION)),
    }
    figures = {}
    with ScriptedLLM() as llm:
        for label, (mode, specs) in cases.items():
            body = await recorded_request(llm, mode, specs, topology, question)
            figures[label] = (len(body.get("tools", [])), *count(counter, body))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default=QUESTION, help="the user's message")
    args = parse_args(parser)
    logging.disable(logging.INFO)
    ensure_offline_encodings()
    topology = five_node_lab()
    node_tokens = TokenCounter("cl100k_base").count_text(topology.to_text())
    print(f"topology text: {node_tokens} tokens for 5 nodes ({node_tokens / 5:.0f} per node)")
    figures = asyncio.run(measure(args.question))
    for label, (offered, system, others, tools) in figures.items():
        total = system + others + tools
        print(
            f"{label:29s} {offered:2d} tools {tools:5d} tokens, system prompt {system:4d}, "
            f"question {others:3d}: {total:5d} tokens per call"
        )
    teaching, lab = (sum(figures[k][1:]) for k in ("teaching", "lab"))
    verdict = "meets" if teaching <= GOAL else "MISSES"
    print(f"goal <= {GOAL} tokens per call in teaching mode: {verdict}")
    print(f"tokens per call, 5-node lab: teaching {teaching}, lab {lab}")


if __name__ == "__main__":
    main()
