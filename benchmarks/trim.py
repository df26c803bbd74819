"""Context preparation cost per model call on a 2,000-message history (goal: <= 30 ms).

The history mixes user questions, assistant answers and assistant tool calls with their
JSON tool results, as a long lab session would. "warm" is what every model call after the
first pays (per-message token counts cached); "cold" is the first call (every message
encoded). Both run `prepare_context` (topology injection, budget, trimming) with a budget
that forces trimming. Prints medians over several repetitions.

Run: `.venv/bin/python benchmarks/trim.py [--messages 2000] [--repeat 20]`
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import time

from _common import parse_args
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from jupyter_gns3_copilot.agent.context import prepare_context
from jupyter_gns3_copilot.agent.tokens import TokenCounter, ensure_offline_encodings

SYSTEM_PROMPT = "You are a GNS3 lab copilot. Current lab:\n{{topology_info}}\n" + (
    "Answer precisely; use tools to inspect devices. " * 40
)
TOPOLOGY = "Project OSPF (opened): 12 nodes, 14 links\nNodes:\n" + "".join(
    f"  R{i}  dynamips  started  127.0.0.1:{5000 + i}\n" for i in range(12)
)
GOAL_MS = 30.0


def build_history(size: int, seed: int = 7) -> list[BaseMessage]:
    """`size` messages: human turns, answers, and tool calls with 1-3 results each."""
    rng = random.Random(seed)
    words = ["ospf", "area", "neighbor", "interface", "ping", "route", "vlan", "mask"]
    messages: list[BaseMessage] = []
    counter = 0

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    while len(messages) < size:
        counter += 1
        messages.append(HumanMessage(text(rng.randint(5, 40)), id=f"h{counter}"))
        if rng.random() < 0.6:
            calls = [
                {
                    "name": "run_show_commands",
                    "args": {
                        "devices": [
                            {
                                "device": f"R{rng.randint(1, 12)}",
                                "commands": ["show ip ospf neighbor", "show ip route"],
                            }
                        ]
                    },
                    "id": f"call_{counter}_{k}",
                }
                for k in range(rng.randint(1, 3))
            ]
            messages.append(AIMessage("", tool_calls=calls, id=f"a{counter}t"))
            for call in calls:
                output = {
                    "device": call["args"]["devices"][0]["device"],
                    "output": text(rng.randint(50, 400)),
                }
                messages.append(
                    ToolMessage(
                        json.dumps(output, indent=2), tool_call_id=call["id"], id=f"t{call['id']}"
                    )
                )
        messages.append(AIMessage(text(rng.randint(20, 200)), id=f"a{counter}"))
    return messages[:size]


def time_once(history: list[BaseMessage], counter: TokenCounter, context_limit: int) -> float:
    start = time.perf_counter()
    prepare_context(
        history,
        system_prompt=SYSTEM_PROMPT,
        topology=TOPOLOGY,
        context_limit=context_limit,
        strategy="balanced",
        counter=counter,
        tool_tokens=1725,
    )
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--context-limit", type=int, default=128, help="thousands of tokens")
    args = parse_args(parser, messages=100, repeat=1)
    logging.disable(logging.INFO)
    ensure_offline_encodings()

    history = build_history(args.messages)
    probe = TokenCounter("cl100k_base")
    total = probe.count_messages(history)
    cold, warm = [], []
    for _ in range(args.repeat):
        counter = TokenCounter("cl100k_base")
        cold.append(time_once(history, counter, args.context_limit))
        warm.extend(time_once(history, counter, args.context_limit) for _ in range(5))
    prepared = prepare_context(
        history,
        system_prompt=SYSTEM_PROMPT,
        topology=TOPOLOGY,
        context_limit=args.context_limit,
        counter=probe,
        tool_tokens=1725,
    )

    print(
        f"history: {len(history)} messages, ~{total} tokens; "
        f"kept {len(prepared.messages)} messages (~{prepared.message_tokens} tokens) "
        f"at {args.context_limit}K balanced"
    )
    print(
        f"cold (counts not cached): median {statistics.median(cold):7.2f} ms "
        f"(min {min(cold):.2f}, max {max(cold):.2f}, n={len(cold)})"
    )
    print(
        f"warm (counts cached):     median {statistics.median(warm):7.2f} ms "
        f"(min {min(warm):.2f}, max {max(warm):.2f}, n={len(warm)})"
    )
    verdict = "meets" if statistics.median(warm) <= GOAL_MS else "MISSES"
    print(f"goal <= {GOAL_MS:.0f} ms per model call: {verdict}")


if __name__ == "__main__":
    main()
