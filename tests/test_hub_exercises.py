"""Troubleshooting exercises in a class's hub: a student's real Jupyter server in hub mode
(pytest-jupyter) asks the hub service's real routes (`support.hub_mode.hub_service`, its
lab routes and dashboard on 127.0.0.1), which apply, grade and record the exercise in the
student's copy of a template on the real gns3-server 3.0.6 (VPCS PCs) through its own
access; the real SQLite grade and usage stores.

The stand-ins are `support.hub_mode`'s: a token table for JupyterHub's identity of the
student's server, a test header naming the instructor on the dashboard. What the student
types into their devices is typed from the test over telnet, as their terminal would.

What is proved: the student's server and the student never receive a fault (the lab
view says exercises are offered, the exercise says what fails); refusals come back as
local mode's (an unsolved lab, an unknown fault, one going already, none to give up);
a check through the student's server grades the exercise, which ends fixed, recorded
with the copilot's turns and model calls of the gateway's records; a random one given up
is told and undone, even after the service forgot what it kept in memory; the dashboard's
Lab progress page and API show both.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.dashboard import LAB, TEST_USER_HEADER, host, make_template, type_into
from support.hub_mode import HUB_TOKEN, PREFIX, hub_service, student_server_config
from support.server import call, parse_sse

from jupyter_gns3_copilot.hub.runtime import HubRuntime
from jupyter_gns3_copilot.hub.usage import ModelCall
from jupyter_gns3_copilot.labkit.ports import free_tcp_port

pytestmark = [pytest.mark.lab, pytest.mark.hub]

FAULTS = """\
faults:
  - id: pc2-address-cleared
    description: PC2 lost its address, so PC1 cannot reach it.
    stage: reach
    breaks: [pc2-address, pc1-pc2]
    apply:
      - {kind: config, node: PC2, lines: ["clear ip"]}
    diagnosis: {device: PC2, cause: no address, words: [address]}
  - id: cable-pulled
    description: The cable between PC1 and PC2 is down.
    stage: reach
    breaks: [pc1-pc2]
    apply:
      - {kind: link_down, link: PC1 e0 - PC2 e0}
    diagnosis: {device: PC1, interface: e0, cause: link down, words: [link, cable]}
"""
FAULTED = LAB + FAULTS


@pytest.fixture
def service_port() -> int:
    return free_tcp_port()


@pytest.fixture
def jp_server_config(
    monkeypatch: pytest.MonkeyPatch, service_port: int, tmp_path: Path
) -> dict[str, Any]:
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", HUB_TOKEN)
    return student_server_config(tmp_path, service_port)


def check_summary(reply: Any) -> dict[str, Any]:
    """The summary of a check streamed by the student's server."""
    assert reply.code == 200, reply.body
    [summary] = [e["summary"] for e in parse_sse(reply.body)[0] if e["type"] == "check_summary"]
    return summary  # type: ignore[no-any-return]


async def test_a_students_exercise_is_applied_graded_recorded_and_shown_by_the_service(
    jp_fetch: Any, gns3_lab: Any, service_port: int, tmp_path: Path
) -> None:
    async with hub_service(
        service_port, gns3_lab, tmp_path / "hub", labs=True, dashboard=True
    ) as runtime:
        assert runtime.labs is not None
        admin = runtime.accounts.admin
        name = f"{service_port}-faulted"
        template = await make_template(admin, name, FAULTED)
        try:
            copy = (await runtime.accounts.assign_lab(name, ["alice"]))["alice"].project_id
            service = f"http://127.0.0.1:{service_port}{PREFIX}"
            await _exercises(jp_fetch, runtime, service, name, copy)
        finally:
            await admin.delete_project(template)


async def _exercises(
    jp_fetch: Any, runtime: HubRuntime, service: str, name: str, copy: str
) -> None:
    assert runtime.labs is not None
    admin = runtime.accounts.admin
    lab = ("copilot", "projects", copy, "lab")
    exercises = (*lab, "exercises")

    async def start(body: dict[str, Any]) -> Any:
        return await call(jp_fetch, *exercises, method="POST", body=body)

    # Her lab offers exercises and never says which; none started yet.
    view = await call(jp_fetch, *lab)
    assert view.code == 200, view.body
    assert view.body["exercises"] is True
    for secret in ("pc2-address-cleared", "cable-pulled", "lost its address", "clear ip"):
        assert secret not in json.dumps(view.body)
    assert (await call(jp_fetch, *exercises, "current")).code == 404

    # Opened and started, but not solved: the service refuses, as local mode words it.
    assert (await call(jp_fetch, "copilot", "projects", copy, "open", method="POST")).code == 200
    await admin.start_all(copy)
    refused = await start({"fault": "pc2-address-cleared"})
    assert refused.code == 409, refused.body
    assert refused.error["type"] == "ExerciseRefused"
    assert refused.error["message"].startswith("Finish the lab first: ")
    unknown = await start({"fault": "no-such-fault"})
    assert unknown.code == 404 and unknown.error["type"] == "UnknownFault", unknown.body
    assert (await start({})).code == 400

    # She solves it; the exercise starts: the symptom, never the fault.
    await type_into(admin, copy, "PC1", f"ip {host(view.body, 'pc1-address')}")
    await type_into(admin, copy, "PC2", f"ip {host(view.body, 'pc2-address')}")
    started = await start({"fault": "pc2-address-cleared"})
    assert started.code == 200, started.body
    assert [s["id"] for s in started.body["symptom"]] == ["pc1-pc2", "pc2-address"]
    assert started.body["active"] is True
    for secret in ("pc2-address-cleared", "lost its address", "clear ip", "fault"):
        assert secret not in json.dumps(started.body)
    assert (await start({"random": True})).code == 409  # one at a time
    going = await call(jp_fetch, *exercises, "current")
    assert going.code == 200 and going.body["active"] is True

    # Her check through her server: the symptom seen, the exercise graded, not fixed.
    summary = check_summary(await call(jp_fetch, *lab, "checks", method="POST", body={}))
    assert summary["exercise"]["fixed"] is False and summary["exercise"]["done"] is False
    assert sorted(summary["exercise"]["still_failing"]) == ["pc1-pc2", "pc2-address"]

    # A copilot turn meanwhile (as the gateway records it); she fixes PC2 and checks.
    now = datetime.now(timezone.utc)
    await runtime.store.record(
        ModelCall(
            user="alice",
            model="scripted-model",
            started_at=now,
            ended_at=now + timedelta(seconds=1),
            status="ok",
            turn_id="turn-1",
        )
    )
    await type_into(admin, copy, "PC2", f"ip {host(view.body, 'pc2-address')}")
    summary = check_summary(await call(jp_fetch, *lab, "checks", method="POST", body={}))
    grade = summary["exercise"]
    assert (grade["fixed"], grade["done"], grade["regressions"]) == (True, True, []), grade
    assert grade["copilot_calls"] == 1
    ended = await call(jp_fetch, *exercises, "current")
    assert ended.body["active"] is False and ended.body["grade"]["done"] is True
    [fixed] = await runtime.labs.grades.exercises(name)
    assert (fixed.user, fixed.fault, fixed.how, fixed.fixed) == (
        "alice",
        "pc2-address-cleared",
        "fixed",
        True,
    )
    assert (fixed.copilot_turns, fixed.copilot_calls, fixed.regressions) == (1, 1, [])
    assert fixed.seconds is not None and fixed.seconds > 0

    # A random one: another fault than her last; given up, it is told and undone.
    again = await start({"random": True})
    assert again.code == 200, again.body
    assert [s["id"] for s in again.body["symptom"]] == ["pc1-pc2"]
    # The service forgets what it kept in memory (as when it restarts): the exercise goes
    # on, read back from the grade store.
    await runtime.labs.labs.progress.drop(copy)
    still = await call(jp_fetch, *exercises, "current")
    assert still.code == 200 and still.body["active"] is True, still.body
    gave_up = await call(jp_fetch, *exercises, "current", "give-up", method="POST", body={})
    assert gave_up.code == 200, gave_up.body
    assert gave_up.body["description"] == "The cable between PC1 and PC2 is down."
    assert (gave_up.body["device"], gave_up.body["not_undone"]) == ("PC1", [])
    summary = check_summary(await call(jp_fetch, *lab, "checks", method="POST", body={}))
    assert summary["passed"] is True and summary.get("exercise") is None
    nothing = await call(jp_fetch, *exercises, "current", "give-up", method="POST", body={})
    assert nothing.code == 404 and nothing.error["type"] == "NoExercise", nothing.body
    recorded = await runtime.labs.grades.exercises(name, "alice")
    assert [(e.fault, e.how, e.number) for e in recorded] == [
        ("pc2-address-cleared", "fixed", 1),
        ("cable-pulled", "given up", 2),
    ]

    # The instructor's Lab progress: both exercises, the faults in her words.
    ines = {TEST_USER_HEADER: "ines"}
    async with httpx.AsyncClient(base_url=service, headers=ines, trust_env=False) as dashboard:
        grids = (await dashboard.get("api/grades", params={"lab": name})).json()["labs"]
        [grid] = grids
        assert [(e["user"], e["how"], e["description"]) for e in grid["exercises"]] == [
            ("alice", "fixed", "PC2 lost its address, so PC1 cannot reach it."),
            ("alice", "given up", "The cable between PC1 and PC2 is down."),
        ]
        page = await dashboard.get("grades")
        assert page.status_code == 200, page.text
        assert "Troubleshooting exercises" in page.text
        fixed_row = re.search(
            r'data-fault="pc2-address-cleared" data-outcome="fixed">(.*?)</tr>', page.text, re.S
        )
        assert fixed_row, page.text
        assert "PC2 lost its address" in fixed_row.group(1)
        assert "1 turn, 1 model call" in fixed_row.group(1)
        assert 'data-fault="cable-pulled" data-outcome="given up"' in page.text
        assert "gave up" in page.text
        # Students may not read it.
        alice = {TEST_USER_HEADER: "alice"}
        assert (await dashboard.get("api/grades", headers=alice)).status_code == 403
