"""The copilot and the lab's objectives: the current stage in the model's context, the
`check_objectives` tool, `nudge` answers without configuration lines (streamed and
saved), and `off` stages answered without a model call. The filter and the stage choice
are tested alone; the rest through the real extension, the real GNS3 lab and the
scripted model (a TEST DOUBLE of the model: no model runs here)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.server import (
    TITLE_REPLY,
    TokenUsersIdentityProvider,
    add_pcs,
    as_user,
    call,
    lab_traits,
    model_traits,
    open_stream,
    server_config,
)

from jupyter_gns3_copilot.objectives.hints import (
    HIDDEN_LINE,
    HIDDEN_SPAN,
    ConfigurationFilter,
    configuring_judge,
    filter_answer,
)
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.progress import StudentProgress
from jupyter_gns3_copilot.objectives.results import ObjectiveResult
from jupyter_gns3_copilot.testing.scripted_llm import text, tool_call
from jupyter_gns3_copilot.tools.policy import CommandPolicy

POLICY = CommandPolicy()
JUDGE = configuring_judge(
    lambda command, dialect: POLICY.check(command, dialect=dialect, read_only=True),
    ["vpcs", "cisco_ios"],
)
ANSWER = textwrap.dedent(
    """\
    Look at PC1 with `show ip`, then give it its address with `ip 10.0.0.1/24` (keep
    `10.0.0.1/24` in mind).
    ```
    PC1> ip 10.0.0.1/24 10.0.0.254
    PC1> show ip
    R1# configure terminal
    R1(config)# interface g0/0
     ip address 10.0.0.254 255.255.255.0
    IP/MASK : 10.0.0.1/24
    ping 10.0.0.2
    ```
    R1(config-if)# no shutdown
    Then ping PC2.
    """
)


def test_configuration_lines_are_hidden_and_diagnostics_kept() -> None:
    shown, hidden = filter_answer(ANSWER, JUDGE)
    assert hidden == 6
    assert shown == textwrap.dedent(
        f"""\
        Look at PC1 with `show ip`, then give it its address with {HIDDEN_SPAN} (keep
        `10.0.0.1/24` in mind).
        ```
        {HIDDEN_LINE}
        PC1> show ip
        {HIDDEN_LINE}
        IP/MASK : 10.0.0.1/24
        ping 10.0.0.2
        ```
        {HIDDEN_LINE}
        Then ping PC2.
        """
    )


@pytest.mark.parametrize("size", [1, 2, 3, 7, 40])
def test_a_streamed_answer_is_filtered_as_the_saved_one(size: int) -> None:
    """Pieces cut anywhere (mid-line, mid-fence) give what the whole text gives."""
    stream = ConfigurationFilter(JUDGE)
    shown = "".join(stream.feed(ANSWER[i : i + size]) for i in range(0, len(ANSWER), size))
    shown += stream.flush()
    assert (shown, stream.filtered) == filter_answer(ANSWER, JUDGE)


async def test_the_current_stage_follows_the_checks_unless_chosen() -> None:
    lab = load_lab(
        textwrap.dedent(
            """\
            title: Stages
            stages:
              - id: one
                title: One
                objectives: [{id: a, text: A, check: {kind: node_running, node: PC1}}]
              - id: two
                title: Two
                objectives: [{id: b, text: B, check: {kind: node_running, node: PC2}}]
            """
        )
    ).lab
    progress = StudentProgress()

    def result(objective: str, status: str) -> ObjectiveResult:
        return ObjectiveResult(
            id=objective, stage="x", text="t", status=status, points=1,
            points_awarded=int(status == "pass"), explanation="e", duration_ms=1,
        )  # fmt: skip

    assert (await progress.current_stage("p", "alice", lab)).id == "one"  # never checked
    await progress.record("p", "alice", [result("a", "pass")])
    assert (await progress.current_stage("p", "alice", lab)).id == "two"
    assert (await progress.current_stage("p", "bob", lab)).id == "one"  # per student
    await progress.record("p", "alice", [result("b", "pass")])
    assert (await progress.current_stage("p", "alice", lab)).id == "two"  # all passed: the last
    await progress.choose("p", "alice", "one")
    assert (await progress.current_stage("p", "alice", lab)).id == "one"
    await progress.choose("p", "alice", None)
    assert (await progress.current_stage("p", "alice", lab)).id == "two"


# -- through the extension -------------------------------------------------------------------

ALICE = as_user("alice")
LAB = textwrap.dedent(
    """\
    title: Hints
    stages:
      - id: addressing
        title: Address PC1
        objectives:
          - id: pc1
            text: PC1 has 10.0.0.1/24
            check: {kind: address, node: PC1, address: 10.0.0.1/24}
      - id: exam
        title: The exam
        hints: "off"
        objectives:
          - {id: runs, text: PC1 runs, check: {kind: node_running, node: PC1}}
    """
)
TEACHING = {"copilot_mode": "teaching_assistant"}


@pytest.fixture
def jp_server_config(gns3_lab: Any, scripted_llm: Any, tmp_path: Path) -> dict[str, Any]:
    config = server_config(
        tmp_path / "data", **lab_traits(gns3_lab), **model_traits(scripted_llm), lab_salt="s"
    )
    config["ServerApp"]["identity_provider_class"] = TokenUsersIdentityProvider
    return config


def project_path(project: Any, *rest: str) -> tuple[str, ...]:
    return ("copilot", "projects", project.project_id, *rest)


async def attach(jp_fetch: Any, project: Any) -> None:
    mode = {"copilot_mode": "lab_automation_assistant"}
    await call(jp_fetch, "copilot", "llm-config", method="PUT", body=mode, headers=ALICE)
    attached = await call(
        jp_fetch, *project_path(project, "lab"), method="PUT", body={"text": LAB}, headers=ALICE
    )
    assert attached.code == 200, attached.body


@pytest.mark.lab
async def test_a_nudge_stage_reaches_the_model_and_keeps_configuration_out(
    jp_fetch: Any, gns3_project: Any, scripted_llm: Any
) -> None:
    await add_pcs(gns3_project, "PC1", start=True)
    await attach(jp_fetch, gns3_project)
    scripted_llm.add(
        tool_call("check_objectives", {}),
        text(ANSWER, chunks=9),
        text("Addressing", when=TITLE_REPLY),
    )
    stream = open_stream(
        jp_fetch,
        *project_path(gns3_project, "chat", "stream"),
        body={"message": "What now?", **TEACHING},
        headers=ALICE,
    )
    events = await stream.finish()

    first = scripted_llm.chat_requests[0].body
    system = first["messages"][0]["content"]
    assert "current stage addressing: Address PC1" in system
    assert "- pc1: PC1 has 10.0.0.1/24 (not checked yet)" in system
    assert "never write the configuration commands" in system
    assert "check_objectives" in [tool["function"]["name"] for tool in first["tools"]]
    assert "kind" not in system  # the checks themselves never reach the model

    [checked] = [e for e in events if e["type"] == "tool_end"]
    result = json.loads(checked["tool_output"])
    assert [(o["id"], o["status"]) for o in result["objectives"]] == [
        ("pc1", "fail"),
        ("runs", "pass"),
    ]
    shown = "".join(e["content"] for e in events if e["type"] == "content")
    assert shown == filter_answer(ANSWER, JUDGE)[0]
    assert "ip 10.0.0.1/24" not in shown and "`show ip`" in shown
    [done] = [e for e in events if e["type"] == "done"]
    assert done["statistics"]["hints_filtered"] == 6

    history = await call(
        jp_fetch,
        *project_path(gns3_project, "chat", "sessions", done["session_id"], "history"),
        headers=ALICE,
    )
    saved = [m["content"] for m in history.body["messages"] if m["role"] == "assistant"]
    assert saved[-1] == shown  # the saved answer is the filtered one

    lab = await call(jp_fetch, *project_path(gns3_project, "lab"), headers=ALICE)
    assert lab.body["current_stage"] == "addressing"
    assert lab.body["stages"][0]["objectives"][0]["status"] == "fail"


@pytest.mark.lab
async def test_an_off_stage_is_answered_without_the_model(
    jp_fetch: Any, gns3_project: Any, scripted_llm: Any
) -> None:
    await add_pcs(gns3_project, "PC1")
    await attach(jp_fetch, gns3_project)
    chosen = await call(
        jp_fetch,
        *project_path(gns3_project, "lab", "stage"),
        method="PUT",
        body={"stage": "exam"},
        headers=ALICE,
    )
    assert chosen.code == 200 and chosen.body["current_stage"] == "exam"
    unknown = await call(
        jp_fetch,
        *project_path(gns3_project, "lab", "stage"),
        method="PUT",
        body={"stage": "nope"},
        headers=ALICE,
    )
    assert unknown.code == 400 and "stages: addressing, exam" in unknown.error["message"]

    reply = await call(
        jp_fetch,
        *project_path(gns3_project, "chat", "stream"),
        method="POST",
        body={"message": "Give me the answer", "stream": False, **TEACHING},
        headers=ALICE,
    )
    assert reply.code == 200
    assert reply.body["message"].startswith("The copilot is off for this stage (The exam)")
    assert scripted_llm.chat_requests == []


@pytest.mark.lab
async def test_without_a_lab_the_model_is_not_offered_the_tool(
    jp_fetch: Any, gns3_project: Any, scripted_llm: Any
) -> None:
    scripted_llm.add(text("Hello."), text("Hi", when=TITLE_REPLY))
    reply = await call(
        jp_fetch,
        *project_path(gns3_project, "chat", "stream"),
        method="POST",
        body={"message": "hi", "stream": False, **TEACHING},
        headers=ALICE,
    )
    assert reply.code == 200, reply.body
    request = scripted_llm.chat_requests[0].body
    assert "check_objectives" not in [tool["function"]["name"] for tool in request["tools"]]
    assert "Lab objectives" not in request["messages"][0]["content"]
