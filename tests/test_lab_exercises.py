"""Troubleshooting exercises through the extension's routes, on the example graded lab
(VPCS PCs and the Linux router R1 on the real local GNS3 lab, configured by console as a
student would): refused on an unsolved lab, started with a fault (the student sees what
fails, never the fault; nor does the model), graded by checks, given up with the fault
taken out again; and the random fault each student draws."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.server import (
    TITLE_REPLY,
    TokenUsersIdentityProvider,
    as_user,
    call,
    eventually,
    lab_traits,
    model_traits,
    open_stream,
    recipe_project,
    server_config,
)

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.devices.access import Devices
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.objectives.exercises import draw_fault
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.model import LabFile
from jupyter_gns3_copilot.testing.local_stack import EXAMPLES, NOTEBOOK_PROJECTS
from jupyter_gns3_copilot.testing.scripted_llm import text
from jupyter_gns3_copilot.testing.solved_labs import address_of, graded_lab, solve

SALT = "class"
ALICE = as_user("alice")
GRADED = EXAMPLES / "04-graded-lab.lab.yaml"


def test_each_student_draws_a_fault_and_never_the_same_twice_running() -> None:
    """The random fault is the same for a student and exercise number, spreads over the
    lab's faults across students, and is never the student's last one."""
    lab = load_lab(GRADED.read_text()).lab
    ids = [f.id for f in lab.faults]
    drawn = {draw_fault(lab, f"student{n}", b"salt", 1, None) for n in range(40)}
    assert len(drawn) > 3 and drawn <= set(ids)
    assert draw_fault(lab, "alice", b"salt", 2, None) == draw_fault(lab, "alice", b"salt", 2, None)
    for number in range(1, 20):
        first = draw_fault(lab, "alice", b"salt", number, None)
        assert draw_fault(lab, "alice", b"salt", number, first) != first


@pytest.fixture(scope="module")
def graded_project(gns3_lab: Any) -> Iterator[str]:
    recipe = dataclasses.replace(
        NOTEBOOK_PROJECTS["04-graded-lab"], name=f"pytest-exercises-{uuid.uuid4().hex[:8]}"
    )
    with recipe_project(gns3_lab, recipe) as project_id:
        yield project_id


@pytest.fixture
def jp_server_config(gns3_lab: Any, scripted_llm: Any, tmp_path: Path) -> dict[str, Any]:
    config = server_config(
        tmp_path / "data", **lab_traits(gns3_lab), **model_traits(scripted_llm), lab_salt=SALT
    )
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


async def _on_devices(lab_server: Any, work: Callable[[Devices], Awaitable[None]]) -> None:
    async with (
        GNS3Client(
            lab_server.url, username=lab_server.username, password=lab_server.password
        ) as gns3,
        ConsolePool() as consoles,
    ):
        await work(Devices(gns3=gns3, consoles=consoles))


@pytest.mark.lab
@pytest.mark.slow
async def test_an_exercise_is_refused_started_graded_fixed_and_given_up(
    jp_fetch: Any, gns3_lab: Any, graded_project: str, scripted_llm: Any
) -> None:
    project = ("copilot", "projects", graded_project)
    exercises = (*project, "lab", "exercises")
    lab: LabFile = load_lab(GRADED.read_text()).for_student("alice", SALT)

    async def start(body: dict[str, Any]) -> Any:
        return await call(jp_fetch, *exercises, method="POST", body=body, headers=ALICE)

    async def check(**body: Any) -> dict[str, Any]:
        checked = await call(
            jp_fetch, *project, "lab", "checks", method="POST",
            body={"stream": False, **body}, headers=ALICE,
        )  # fmt: skip
        assert checked.code == 200, checked.body
        return checked.body  # type: ignore[no-any-return]

    # the fresh lab passes nothing yet: no fault can go in
    refused = await start({"fault": "pc1-wrong-gateway"})
    assert refused.code == 409, refused.body
    assert refused.error["message"].startswith("Finish the lab first: ")
    assert "PC1's gateway is R1" in refused.error["message"]
    assert (await start({"fault": "nope"})).code == 404
    assert (await start({"fault": "pc1-wrong-gateway", "random": True})).code == 400
    assert (await start({})).code == 400
    none = await call(jp_fetch, *exercises, "current", headers=ALICE)
    assert none.code == 404

    await _on_devices(gns3_lab, lambda devices: solve(devices, graded_project, graded_lab(lab)))
    started = await start({"fault": "pc1-wrong-gateway"})
    assert started.code == 200, started.body
    fault = lab.require_fault("pc1-wrong-gateway")
    assert [s["id"] for s in started.body["symptom"]] == sorted(fault.breaks)
    assert started.body["active"] is True
    shown = json.dumps(started.body)
    assert fault.id not in shown and fault.description not in shown
    assert (await start({"random": True})).code == 409  # one at a time

    # the copilot is not told the fault either
    scripted_llm.add(text("Let us look at PC1."), text("PC1", when=TITLE_REPLY))
    chat = open_stream(
        jp_fetch, *project, "chat", "stream",
        body={"message": "PC1 cannot reach PC3. Why?"}, headers=ALICE,
    )  # fmt: skip
    await chat.finish()
    prompt = json.dumps(scripted_llm.chat_requests[0].body)
    assert "PC1's gateway is R1" in prompt  # the objectives reach the model
    for each in lab.faults:
        assert each.id not in prompt and each.description not in prompt

    graded = (await check())["exercise"]
    assert graded["fixed"] is False and graded["done"] is False
    assert sorted(graded["still_failing"]) == sorted(fault.breaks)
    assert graded["regressions"] == []

    gateway = address_of(lab, "r1-lan-a").split("/")[0]

    async def fix(devices: Devices) -> None:
        nodes = {n.name: n for n in await devices.nodes(graded_project)}
        target = await devices.console_target(nodes["PC1"])
        [result] = await devices.consoles.run_many(
            [(target, [f"ip {address_of(lab, 'pc1-address')} {gateway}"])]
        )
        assert result.status == "success", result

    await _on_devices(gns3_lab, fix)
    graded = (await check())["exercise"]
    assert graded["fixed"] is True and graded["done"] is True, graded
    assert graded["regressions"] == [] and graded["seconds"] > 0
    assert graded["copilot_calls"] == 1  # the answer (the title counts for nothing)
    current = await call(jp_fetch, *exercises, "current", headers=ALICE)
    assert current.code == 200 and current.body["active"] is False
    assert current.body["grade"]["done"] is True
    assert "exercise" not in await check()  # ended: no more grading

    # another, given up: the fault is told and taken out (PC3 restarts with its saved one)
    again = await start({"fault": "pc3-no-gateway"})
    assert again.code == 200, again.body
    assert [s["id"] for s in again.body["symptom"]] == ["pc3-gateway", "pc3-pc2"]
    gave_up = await call(
        jp_fetch, *exercises, "current", "give-up", method="POST", body={}, headers=ALICE
    )
    assert gave_up.code == 200, gave_up.body
    second = lab.require_fault("pc3-no-gateway")
    assert gave_up.body["description"] == second.description
    assert (gave_up.body["device"], gave_up.body["not_undone"]) == ("PC3", [])

    async def gateway_back() -> bool:
        results = (await check(objectives=["pc3-gateway"]))["results"]
        return bool(results[0]["status"] == "pass")

    await eventually(gateway_back, "PC3's gateway back after the give-up", timeout=120)
    ended = await call(jp_fetch, *exercises, "current", headers=ALICE)
    assert ended.body["active"] is False
    nothing = await call(
        jp_fetch, *exercises, "current", "give-up", method="POST", body={}, headers=ALICE
    )
    assert nothing.code == 404
