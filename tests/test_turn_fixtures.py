"""The shared turn fixtures (`tests/fixtures/turns/*.json`) and the real turns they come from.

Every fixture is `{"name", "user", "events", "turn"}`; the Python reducer must turn
`events` into exactly `turn` (the TypeScript reducer's tests read the same files). Some
are written by hand; the `recorded_*` ones are recorded from REAL turns here: a real
Jupyter server, the real GNS3 lab with VPCS, and the scripted model server (a TEST DOUBLE
of the OpenAI API). Those tests also check the enriched events (`tool_end`'s summary,
outcome and note; `done`'s statistics and title) as a student's turn produces them.

Record again with `GNS3_COPILOT_RECORD_TURNS=1 pytest tests/test_turn_fixtures.py`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support.agent import tool_call_runs
from support.server import (
    TITLE_REPLY,
    add_pcs,
    call,
    copilot_app,
    kinds,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
    wait_until_console_busy,
)

from jupyter_gns3_copilot.testing.scripted_llm import error, text
from jupyter_gns3_copilot.testing.scripted_llm import tool_call as tool_reply
from jupyter_gns3_copilot.turns import reduce_turn

FIXTURES = Path(__file__).parent / "fixtures" / "turns"
RECORD = os.environ.get("GNS3_COPILOT_RECORD_TURNS") == "1"
LAB_MODE = "lab_automation_assistant"
TEACHING_MODE = "teaching_assistant"


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


@pytest.mark.parametrize("path", fixture_files(), ids=lambda path: path.stem)
def test_every_shared_fixture_reduces_to_its_turn(path: Path) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    assert set(fixture) >= {"name", "user", "events", "turn"}, path
    assert reduce_turn(fixture["user"], fixture["events"]) == fixture["turn"]


def test_the_real_turns_are_recorded_as_fixtures() -> None:
    names = {path.stem for path in fixture_files()}
    assert {
        "recorded_show_on_two_vpcs",
        "recorded_failed_ping",
        "recorded_teaching_refusal",
        "recorded_aborted_turn",
        "recorded_model_error",
    } <= names


# -- real turns ---------------------------------------------------------------------------------


@pytest.fixture
def jp_server_config(gns3_lab, scripted_llm, tmp_path: Path) -> dict[str, Any]:
    return server_config(
        tmp_path / "copilot-data", **lab_traits(gns3_lab), **model_traits(scripted_llm)
    )


def chat_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, "chat", *rest)


async def real_turn(jp_fetch: Any, project: Any, user: str, mode: str) -> list[dict[str, Any]]:
    stream = open_stream(
        jp_fetch, *chat_path(project, "stream"), body={"message": user, "copilot_mode": mode}
    )
    return await stream.finish()


def recorded(name: str, user: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The turn of `events`; written as fixture `name` when recording. Otherwise the
    stored fixture must have the same shape (event kinds, item kinds, outcomes)."""
    turn = reduce_turn(user, events)
    path = FIXTURES / f"{name}.json"
    fixture = {"name": name, "user": user, "events": events, "turn": turn}
    if RECORD:
        FIXTURES.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n", "utf-8")
    else:
        stored = json.loads(path.read_text(encoding="utf-8"))
        # How many growing tool_call / content events a turn gets depends on timing
        # (coalescing, the relay's merging): runs of them count as one.
        runs = ("tool_call", "content")
        assert tool_call_runs(kinds(stored["events"]), runs) == tool_call_runs(kinds(events), runs)
        assert shape(stored["turn"]) == shape(turn)
    return turn


def shape(turn: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (turn["status"],),
        *((item["kind"], item.get("outcome"), item.get("summary")) for item in turn["items"]),
    ]


def tools(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in turn["items"] if item["kind"] == "tool"]


@pytest.mark.lab
@pytest.mark.slow
async def test_a_show_command_on_two_vpcs(jp_fetch, gns3_project, scripted_llm) -> None:
    """Given two stopped VPCS; when the model starts them and runs `show ip` on both; then
    the tool cards say "started PC1, PC2" and "ran `show ip` on PC1, PC2 · 2 ok", and
    `done` carries this turn's statistics and the new title."""
    await add_pcs(gns3_project, "PC1", "PC2")
    show = {"devices": [{"device": name, "commands": ["show ip"]} for name in ("PC1", "PC2")]}
    scripted_llm.add(
        tool_reply(
            "start_nodes",
            {"nodes": ["PC1", "PC2"]},
            id="call_start",
            usage={"prompt_tokens": 500, "completion_tokens": 20},
        ),
        tool_reply(
            "run_show_commands",
            show,
            id="call_show",
            usage={"prompt_tokens": 700, "completion_tokens": 40},
        ),
        text(
            "Both PCs are up and have no address yet.",
            usage={"prompt_tokens": 900, "completion_tokens": 12},
        ),
        text("PC addresses", when=TITLE_REPLY),
    )
    user = "Start PC1 and PC2 and show their addresses"
    events = await real_turn(jp_fetch, gns3_project, user, TEACHING_MODE)
    turn = recorded("recorded_show_on_two_vpcs", user, events)

    start, show_card = tools(turn)
    assert (start["summary"], start["outcome"]) == ("started PC1, PC2", "ok")
    assert (show_card["summary"], show_card["outcome"]) == (
        "ran `show ip` on PC1, PC2 · 2 ok",
        "ok",
    )
    assert json.loads(show_card["output"])[0]["device_name"] == "PC1", "the model's text stays"
    assert turn["status"] == "done"
    done = events[-1]
    assert done["title"] == "PC addresses"
    stats = done["statistics"]
    assert (stats["input_tokens"], stats["output_tokens"], stats["llm_calls"]) == (2100, 72, 3)
    [session] = (await call(jp_fetch, *chat_path(gns3_project, "sessions"))).body
    assert (session["input_tokens"], session["output_tokens"]) == (2100, 72)
    assert session["message_count"] == stats["message_count"]
    assert {k: turn["stats"][k] for k in ("input_tokens", "output_tokens", "llm_calls")} == {
        "input_tokens": 2100,
        "output_tokens": 72,
        "llm_calls": 3,
    }


@pytest.mark.lab
@pytest.mark.slow
async def test_a_failed_ping_is_a_failed_check(jp_fetch, gns3_project, scripted_llm) -> None:
    """Given a started VPCS; when the model pings an absent host from it; then the command
    was delivered ("success" for the console) but the card's outcome is `failed`."""
    await add_pcs(gns3_project, "PC1", start=True)
    ping = {"devices": [{"device": "PC1", "commands": ["ip 10.0.0.1/24", "ping 10.0.0.99 -c 1"]}]}
    scripted_llm.add(
        tool_reply("run_vpcs_commands", ping, id="call_ping"),
        text("PC1 cannot reach 10.0.0.99."),
        text("Ping check", when=TITLE_REPLY),
    )
    user = "Can PC1 reach 10.0.0.99?"
    events = await real_turn(jp_fetch, gns3_project, user, LAB_MODE)
    turn = recorded("recorded_failed_ping", user, events)

    [card] = tools(turn)
    [device] = json.loads(card["output"])
    assert device["status"] == "success" and "not reachable" in device["output"]
    assert card["outcome"] == "failed"
    assert device["outcome"] == "failed"
    assert [check["problem"] for check in device["checks"]] == ["address not reachable"]
    assert card["summary"] == (
        "ran `ip 10.0.0.1/24`; `ping 10.0.0.99 -c 1` on PC1 · 1 failed · "
        "PC1: host (10.0.0.99) not reachable"
    )


@pytest.mark.lab
@pytest.mark.slow
async def test_a_teaching_mode_refusal_is_a_note_for_the_student(
    jp_fetch, gns3_project, scripted_llm
) -> None:
    """Given teaching mode; when the model tries to set PC2's address; then nothing is
    sent, the card's outcome is `refused` with a friendly note, and the policy's text for
    the model stays in the tool output only."""
    await add_pcs(gns3_project, "PC2", start=True)
    change = {"devices": [{"device": "PC2", "commands": ["ip 10.0.0.2/24"]}]}
    scripted_llm.add(
        tool_reply("run_vpcs_commands", change, id="call_ip"),
        text("Type `ip 10.0.0.2/24` in PC2's console."),
        text("Address PC2", when=TITLE_REPLY),
    )
    user = "Give PC2 the address 10.0.0.2/24"
    events = await real_turn(jp_fetch, gns3_project, user, TEACHING_MODE)
    turn = recorded("recorded_teaching_refusal", user, events)

    [card] = tools(turn)
    assert card["outcome"] == "refused"
    note = (
        "Teaching mode: I can't change PC2's address; here is how you would do it: "
        "on PC2's console, type `ip 10.0.0.2/24`."
    )
    assert card["note"] == note
    assert card["summary"] == "not run: teaching mode · `ip 10.0.0.2/24` on PC2"
    refusal = json.loads(card["output"])
    assert refusal["status"] == "refused" and "Explain to the user" in refusal["error"]
    assert "teaching_assistant" not in card["note"] and "Explain" not in card["note"]

    history = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", events[-1]["session_id"], "history")
    )
    [stored] = [m for m in history.body["messages"] if m["role"] == "tool"]
    assert stored["metadata"]["reading"] == {
        "summary": card["summary"],
        "outcome": "refused",
        "note": note,
    }, "read back from the history, the note names the turn's mode"


@pytest.mark.lab
@pytest.mark.slow
async def test_an_aborted_turn(jp_fetch, jp_serverapp, gns3_project, scripted_llm) -> None:
    """Given a tool that pings for 30 s; when the user aborts it; then the card's check
    failed and its summary says the device was stopped, the turn is `aborted`, and `done`
    still counts the model call."""
    await add_pcs(gns3_project, "PC1", start=True)
    ping = {"devices": [{"device": "PC1", "commands": ["ip 10.0.0.1/24", "ping 10.0.0.99 -c 30"]}]}
    scripted_llm.add(
        tool_reply("run_vpcs_commands", ping, id="call_ping"),
        text("Ping", when=TITLE_REPLY),
    )
    user = "Ping 10.0.0.99 from PC1 for a while"
    stream = open_stream(
        jp_fetch,
        *chat_path(gns3_project, "stream"),
        body={"message": user, "copilot_mode": LAB_MODE},
    )
    started = await stream.until("tool_start")
    session_id = started[-1]["session_id"]
    # Aborted once the tool is on PC1's console: an abort right at tool_start can land
    # before the tool reached the device (the summary then names no device).
    await wait_until_console_busy(copilot_app(jp_serverapp), gns3_project, "PC1")
    abort = await call(
        jp_fetch, *chat_path(gns3_project, "sessions", session_id, "abort"), method="POST"
    )
    assert abort.code == 200
    events = await stream.finish(timeout=30)
    turn = recorded("recorded_aborted_turn", user, events)

    assert turn["status"] == "aborted"
    [card] = tools(turn)
    assert card["state"] == "done" and card["outcome"] == "failed"
    assert card["summary"] == "ran `ip 10.0.0.1/24`; `ping 10.0.0.99 -c 30` on PC1 · 1 stopped"
    assert events[-1]["statistics"]["llm_calls"] == 1


@pytest.mark.lab
async def test_a_model_error(jp_fetch, gns3_project, scripted_llm) -> None:
    """Given a model endpoint refusing the key; then the turn is an error with the readable
    message, and `done` still carries the turn's (empty-handed) statistics."""
    scripted_llm.add(error(401))
    user = "hi"
    events = await real_turn(jp_fetch, gns3_project, user, TEACHING_MODE)
    turn = recorded("recorded_model_error", user, events)

    assert turn["status"] == "error"
    [item] = turn["items"]
    assert item["kind"] == "error" and "API key" in item["text"]
    assert events[-1]["type"] == "done" and events[-1]["statistics"]["output_tokens"] == 0
