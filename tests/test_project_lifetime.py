"""The copilot and GNS3's auto-close of projects, on the real GNS3 lab.

GNS3 closes a project whose `auto_close` is on (its default) a few seconds after the last
client listening to the project's notifications leaves, stopping its nodes. The copilot
listens to none: it reads the topology once per turn (docs/performance.md, "Reading the
lab once per turn"). So a lab it served stays open when its service closes, as when the
Jupyter server stops or is culled (a student's lab is not closed under them), and a lab
whose last GNS3 client left is closed as GNS3 intends, however many turns the copilot
served on it and while its service is still open (a lab nobody uses is not kept open for
ever).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.agent import collect, copilot
from websockets.asyncio.client import connect

from jupyter_gns3_copilot.agent.llm_access import ModelSettings
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text, tool_call

pytestmark = pytest.mark.lab

AUTO_CLOSE_WAIT = 10.0
"""Seconds to watch a project after its last listener left: GNS3 waits 5 s, then closes."""


async def project_status(gns3_http: httpx.Client, project_id: str) -> str:
    reply = await asyncio.to_thread(gns3_http.get, f"/v3/projects/{project_id}")
    reply.raise_for_status()
    return str(reply.json()["status"])


async def status_after_wait(gns3_http: httpx.Client, project_id: str) -> str:
    """The project's status once it closed, or after `AUTO_CLOSE_WAIT` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + AUTO_CLOSE_WAIT
    while (status := await project_status(gns3_http, project_id)) != "closed":
        if loop.time() > deadline:
            break
        await asyncio.sleep(0.5)
    return status


async def served_turn(service: Any, llm: ScriptedLLM, settings: ModelSettings) -> None:
    """One turn that reads the lab (the prompt's topology and `get_topology`)."""
    llm.add(
        tool_call("get_topology", {}),
        text("Your lab is empty."),
        text("Lab", when={"tools": False}),
    )
    events = await collect(service.stream_chat("What is in my lab?", user_id="u", llm=settings))
    assert events[-1]["type"] == "done" and not [e for e in events if e["type"] == "error"]


async def test_a_lab_the_copilot_served_stays_open_when_the_copilot_stops(
    gns3_project: Any,
    gns3_http: httpx.Client,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    project_id = gns3_project.project_id
    reply = (await asyncio.to_thread(gns3_http.get, f"/v3/projects/{project_id}")).json()
    assert reply["auto_close"] is True and reply["status"] == "opened"
    async with copilot(gns3_project, tmp_path) as service:
        await served_turn(service, scripted_llm, scripted_model_settings)
    assert await status_after_wait(gns3_http, project_id) == "opened"


async def test_a_lab_whose_last_gns3_client_left_is_closed_while_the_copilot_runs(
    gns3_project: Any,
    gns3_http: httpx.Client,
    scripted_llm: ScriptedLLM,
    scripted_model_settings: ModelSettings,
    tmp_path: Path,
) -> None:
    project_id = gns3_project.project_id
    async with copilot(gns3_project, tmp_path) as service:
        # A GNS3 client (as the web UI does) listens to the project, then leaves.
        url = gns3_project.url.replace("http", "ws", 1)
        async with connect(
            f"{url}/v3/projects/{project_id}/notifications/ws?token={gns3_project.token}"
        ) as listener:
            await served_turn(service, scripted_llm, scripted_model_settings)
            await listener.recv()  # GNS3 sends every listener something within 5 s
        await served_turn(service, scripted_llm, scripted_model_settings)
        assert await status_after_wait(gns3_http, project_id) == "closed"
