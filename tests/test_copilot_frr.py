"""The copilot drives FRR routers: what the model is told about their dialect, against
the REAL local GNS3 lab (the lab kit's "FRR router" template) and the scripted model
server (a TEST DOUBLE of the OpenAI API)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.agent import USER, collect, copilot

from jupyter_gns3_copilot.agent.device_notes import HEADER
from jupyter_gns3_copilot.agent.llm_access import ModelSettings
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.labkit.frr import FRR_TEMPLATE
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text

pytestmark = pytest.mark.lab

TITLE_REPLY = {"tools": False}


def skip_without_frr(lab: Any) -> None:
    problem = getattr(lab, "router_problems", {}).get(FRR_TEMPLATE)
    if problem:
        pytest.skip(problem)


async def test_the_model_is_told_frr_differs_from_ios_when_the_lab_has_an_frr_router(
    gns3_lab: Any,
    gns3_project: Any,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    """Given a project with PC1 only, the system prompt carries no dialect notes; once R1
    (FRR router, not even started) is added, the next turn's system prompt names R1 as
    `frr` with the notes from the FRR skills: CIDR addresses, `router ospf` without a
    number, `show interface brief`."""
    skip_without_frr(gns3_lab)
    pid = gns3_project.project_id
    scripted_llm.add(
        text("Hello.", when={"last_message": "hello"}),
        text("Again.", when={"last_message": "again"}),
        text("Chat", when=TITLE_REPLY),
    )
    async with GNS3Client(gns3_project.url, token=gns3_project.token) as gns3:
        await gns3.create_node_from_template(pid, "VPCS", "PC1")
        async with copilot(gns3_project, tmp_path) as service:
            await collect(service.stream_chat("hello", user_id=USER, llm=scripted_model_settings))
            await gns3.create_node_from_template(pid, FRR_TEMPLATE, "R1", x=200)
            await collect(service.stream_chat("again", user_id=USER, llm=scripted_model_settings))
    prompts = {
        r.messages[-1]["content"]: r.messages[0]["content"]
        for r in scripted_llm.chat_requests
        if r.body.get("tools")
    }
    assert "PC1" in prompts["hello"] and HEADER not in prompts["hello"]
    assert "ip address" not in prompts["hello"]
    notes = prompts["again"].split(HEADER, 1)[1]
    frr_line = next(line for line in notes.splitlines() if line.startswith("- frr (R1):"))
    assert "`ip address 10.0.0.1/24`" in frr_line
    assert "`router ospf` without a process number" in frr_line
    assert "`show interface brief`, not `show ip interface brief`" in frr_line
    assert "vpcs" not in notes
