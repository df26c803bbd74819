"""How long a change waits before the person is asked (goal: `approval_required` within
50 ms of the tool call's complete arguments).

`AgentService.stream_chat` with `require_approval` "changes", against the scripted model
server (TEST DOUBLE of the OpenAI API, its own process) and a real local GNS3 lab holding
the project. Each run is a new session whose model asks to create a VPCS node; the time
measured is from the `tool_call` event carrying the call's complete arguments to the
`approval_required` event, both as the stream's reader sees them. In between: the model
reply's checkpoint committed (`durability="sync"`), the tool node started, the approval
request built and its `interrupt()` checkpointed. Each run is then rejected (nothing is
created) and the model's answer to the decline read to the end. Median, p90 and max over
RUNS runs after one warm-up run, printed.

    .venv/bin/python benchmarks/approval_latency.py [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from _common import gns3_lab, parse_args
from stream_overhead import scripted_server

from jupyter_gns3_copilot.agent.approval import ApprovalDecision
from jupyter_gns3_copilot.agent.approval_policy import ApprovalPolicy
from jupyter_gns3_copilot.agent.llm_access import ModelSettings
from jupyter_gns3_copilot.chat.options import TurnOptions
from jupyter_gns3_copilot.chat.service import AgentService
from jupyter_gns3_copilot.chat.settings import ChatSettings
from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.events import ApprovalRequiredEvent, ErrorEvent, ToolCallEvent
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.testing.scripted_llm import text, tool_call
from jupyter_gns3_copilot.tools import LabAccess

GOAL_MS = 50.0
MODEL = "scripted-model"
CREATE = {"nodes": [{"template": "VPCS", "name": "PC3"}]}


def write_script(path: Path, runs: int) -> None:
    """Per run: the tool call, the answer to the decline, the new session's title."""
    replies = []
    for _ in range(runs):
        replies += [
            tool_call("create_nodes", CREATE, argument_chunks=4),
            text("Not created, as you asked.", when={"last_message": "declined"}),
            text("Add PC3", when={"tools": False}),
        ]
    script = {
        "description": "approval latency",
        "replies": [reply.model_dump(mode="json", exclude_none=True) for reply in replies],
    }
    path.write_text(json.dumps(script))


async def one_run(service: AgentService, settings: ModelSettings) -> float:
    """Seconds from the complete tool call to `approval_required` in one new session."""
    complete = asked = None
    async for event in service.stream_chat(
        "Add PC3",
        user_id="bench",
        llm=settings,
        options=TurnOptions(mode="lab_automation_assistant"),
    ):
        if isinstance(event, ToolCallEvent) and event.tool_call.function.complete:
            complete = time.perf_counter()
        elif isinstance(event, ApprovalRequiredEvent):
            asked = time.perf_counter()
            decision = ApprovalDecision(decision="reject")
            assert service.approvals.decide(event.approval_id, decision)
        elif isinstance(event, ErrorEvent):
            raise RuntimeError(event.error)
    if complete is None or asked is None:
        raise RuntimeError("the run had no complete tool call or no approval request")
    return asked - complete


async def measure(model_url: str, lab: LabServer, runs: int) -> list[float]:
    settings = ModelSettings(
        base_url=model_url, api_key="sk-bench", model=MODEL, max_retries=0, timeout=120
    )
    async with (
        GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3,
        ConsolePool() as pool,
    ):
        project = await gns3.create_project(f"bench-approval-{uuid.uuid4().hex[:6]}")
        service = await AgentService.open(
            project.project_id,
            ChatSettings(
                Path(tempfile.mkdtemp(prefix="bench-approval-")),
                approval=ApprovalPolicy("changes"),
            ),
            lab=LabAccess(gns3, pool),
        )
        try:
            samples = [await one_run(service, settings) for _ in range(runs + 1)]
            nodes = await gns3.list_nodes(project.project_id)
            assert not nodes, "a rejected change was executed"
        finally:
            await service.close()
            await gns3.delete_project(project.project_id)
    return samples[1:]  # the first run warms up imports, connections, tokenizers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="timed runs (median)")
    args = parse_args(parser, runs=1)
    work = Path(tempfile.mkdtemp(prefix="bench-approval-"))
    write_script(work / "script.json", args.runs + 1)
    with (
        scripted_server(work / "script.json") as model_url,
        gns3_lab(work / "lab") as lab,
    ):
        samples = asyncio.run(measure(model_url, lab, args.runs))
    ms = sorted(sample * 1000 for sample in samples)
    median = statistics.median(ms)
    p90 = ms[min(len(ms) - 1, round(0.9 * (len(ms) - 1)))]
    print(
        f"complete tool call -> approval_required: median {median:.1f} ms, "
        f"p90 {p90:.1f} ms, max {ms[-1]:.1f} ms over {len(ms)} runs "
        f"(goal < {GOAL_MS:.0f} ms: {'met' if median < GOAL_MS else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
