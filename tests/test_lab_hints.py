"""The copilot and the lab's objectives: the current stage in the model's context, the
`check_objectives` tool, `nudge` answers without configuration lines (streamed and
saved), and `off` stages answered without a model call. The filter and the stage choice
are tested alone; the rest through the real extension, the real GNS3 lab and the
scripted model (a TEST DOUBLE of the model: no model runs here)."""

from __future__ import annotations

import json
import subprocess
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

from jupyter_gns3_copilot.devices.hidden import HIDDEN_COMMAND
from jupyter_gns3_copilot.devices.policy import CommandPolicy
from jupyter_gns3_copilot.objectives.hints import (
    HIDDEN_LINE,
    HIDDEN_SPAN,
    ConfigurationFilter,
    HoldBack,
    TurnObjectives,
    configuring_judge,
    filter_answer,
    hide_commands,
    left_out_sentence,
)
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.objectives.progress import StudentProgress
from jupyter_gns3_copilot.objectives.results import ObjectiveResult
from jupyter_gns3_copilot.testing.scripted_llm import ToolCall, text, tool_call, tool_calls

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

        {left_out_sentence(6)}"""
    )
    assert left_out_sentence(6) == (
        "_I left out 6 configuration lines: in this stage you work the commands out yourself._"
    )


@pytest.mark.parametrize("size", [1, 2, 3, 7, 40])
def test_a_streamed_answer_is_filtered_as_the_saved_one(size: int) -> None:
    """Pieces cut anywhere (mid-line, mid-fence) give what the whole text gives."""
    stream = ConfigurationFilter(JUDGE)
    shown = "".join(stream.feed(ANSWER[i : i + size]) for i in range(0, len(ANSWER), size))
    shown += stream.flush()
    assert (shown, stream.filtered) == filter_answer(ANSWER, JUDGE)


LAB_JUDGE = configuring_judge(
    lambda command, dialect: POLICY.check(command, dialect=dialect, read_only=True),
    {"PC1": "vpcs", "PC2": "vpcs", "PC3": "vpcs", "R1": "linux"},
)
"""The judge of a lab of VPCS PCs behind a Linux router."""
FIXTURES = Path(__file__).parent / "fixtures" / "turns"


def recorded_output(fixture: str) -> str:
    """The device output of the first command tool result in a turn recorded from a real
    lab (tests/test_turn_fixtures.py)."""
    events = json.loads((FIXTURES / f"{fixture}.json").read_text())["events"]
    result = next(e for e in events if e["type"] == "tool_end" and e["tool_output"][0] == "[")
    return str(json.loads(result["tool_output"])[0]["output"])


def linux_router_output() -> str:
    """`ip addr` and `ip route` as a real Linux router prints them (an interface in a
    network namespace of its own: nothing of the host changes), prompt-less."""
    shell = (
        "ip link add eth0 type veth peer name eth1 && ip addr add 10.0.159.254/24 dev eth0 "
        "&& ip link set eth0 up && ip link set eth1 up && echo '$ ip addr show eth0' "
        "&& ip addr show eth0 && echo '$ ip route' && ip route"
    )
    done = subprocess.run(
        ["unshare", "-rn", "sh", "-ec", shell], capture_output=True, text=True, check=True
    )
    return done.stdout


def test_device_output_is_never_configuration() -> None:
    """Output a student reads on their own console (real VPCS and Linux output, quoted in a
    code block after its command, with or without a prompt, or inline) is kept; the
    configuration lines around it are still hidden."""
    show_ip = recorded_output("recorded_show_on_two_vpcs")
    assert "GATEWAY     : 0.0.0.0" in show_ip and "MTU:        : 0" in show_ip
    ping = recorded_output("recorded_failed_ping")
    assert "host (10.0.0.99) not reachable" in ping
    linux = linux_router_output()
    assert "    inet 10.0.159.254/24 " in linux and "valid_lft forever" in linux
    prompt_less = show_ip.replace("PC1> ", "")
    answer = textwrap.dedent(
        """        PC1 has no gateway: `GATEWAY 0.0.0.0` (and `GATEWAY     : 0.0.0.0` in `show ip`).
        ```
        {show_ip}
        ```
        ```
        {prompt_less}
        ```
        ```
        {ping}
        ```
        """
    ).format(show_ip=show_ip, prompt_less=prompt_less, ping=ping)
    for judge in (JUDGE, LAB_JUDGE):
        shown, hidden = filter_answer(answer, judge)
        assert hidden == 1, shown  # `PC1> ip 10.0.0.1/24` in the recorded ping turn
        assert shown.replace(HIDDEN_LINE, "PC1> ip 10.0.0.1/24") == answer + "\n" + (
            left_out_sentence(1)
        )
    for router in (linux, linux.replace("$ ", "root@R1:~# ")):
        answer = f"The router:\n```\n{router}```\n"
        assert filter_answer(answer, LAB_JUDGE) == (answer, 0)
    configuration = textwrap.dedent(
        """        ```
        NAME        : PC1[1]
        GATEWAY     : 0.0.0.0
        ip 10.0.159.1/24 10.0.159.254
        $ ip addr show eth0
            inet 10.0.159.254/24 scope global eth0
        ip addr add 10.0.159.254/24 dev eth0
        sysctl -w net.ipv4.ip_forward=1
        root@R1:~# ip route add default via 10.0.0.1
        ```
        """
    )
    shown, hidden = filter_answer(configuration, LAB_JUDGE)
    assert hidden == 4
    assert "10.0.159.1/24" not in shown and "ip addr add" not in shown
    assert "sysctl" not in shown and "ip route add" not in shown
    assert "GATEWAY     : 0.0.0.0" in shown and "    inet 10.0.159.254/24" in shown


def test_a_tool_calls_configuration_lines_are_hidden() -> None:
    arguments = {
        "devices": [
            {"device": "PC1", "commands": ["show ip", "ip 10.0.159.1/24"]},
            {"device": "R1", "commands": ["ip addr add 10.0.159.254/24 dev eth0\nip route"]},
        ]
    }
    shown, hidden = hide_commands(arguments, LAB_JUDGE)
    assert hidden == 2
    assert shown == {
        "devices": [
            {"device": "PC1", "commands": ["show ip", HIDDEN_COMMAND]},
            {"device": "R1", "commands": [f"{HIDDEN_COMMAND}\nip route"]},
        ]
    }
    assert hide_commands(shown, LAB_JUDGE) == (shown, 0)
    assert hide_commands({"nodes": ["PC1"]}, LAB_JUDGE) == ({"nodes": ["PC1"]}, 0)


def test_a_title_showing_configuration_is_recognised() -> None:
    hold_back = HoldBack(LAB_JUDGE)
    assert hold_back.shows_configuration("PC1 ip 10.0.159.1/24")
    assert hold_back.shows_configuration("Router `ip addr add 10.0.159.254/24 dev eth0`")
    for title in ("Addressing PC1, PC2 and PC3", "PC1 gateway 0.0.0.0", "Set PC1's address"):
        assert not hold_back.shows_configuration(title), title


def test_a_lab_of_unknown_dialects_is_judged_for_frr_routers_too() -> None:
    """Without the devices' dialects, every dialect the copilot speaks is judged, FRR's
    too: vtysh's `end` typed after a diagnostic's output (FRR output captured from a real
    router) is a command, so the configuration after it is hidden whole."""
    judge = configuring_judge(
        lambda command, dialect: POLICY.check(command, dialect=dialect, read_only=True), []
    )
    assert "frr" in judge.dialects
    answer = textwrap.dedent(
        """\
        ```
        R1# show ip ospf neighbor
        Neighbor ID     Pri State           Up Time         Dead Time Address         Interface
        2.2.2.2           1 Full/-          1m02s             3.456s 10.0.12.2       eth0:10.0.12.1
        end
        router ospf
         ospf router-id 1.1.1.1
        ```
        """
    )
    shown, hidden = filter_answer(answer, judge)
    assert hidden == 3
    assert "2.2.2.2           1 Full/-" in shown and "router ospf" not in shown


TWO_STAGES = textwrap.dedent(
    """\
    title: Stages
    stages:
      - id: one
        title: One
        objectives: [{id: a, text: A, check: {kind: node_running, node: PC1}}]
      - id: two
        title: Two
        hints: explain
        objectives: [{id: b, text: B, check: {kind: node_running, node: PC2}}]
    """
)


def test_only_a_nudge_stage_holds_anything_back() -> None:
    lab = load_lab(TWO_STAGES).lab

    async def checker(stage: str | None, abort: Any) -> list[ObjectiveResult]:
        return []

    def objectives(stage: int) -> TurnObjectives:
        return TurnObjectives(lab, lab.stages[stage], {}, checker, LAB_JUDGE)

    assert objectives(0).hold_back() == HoldBack(LAB_JUDGE)
    assert objectives(1).hold_back() is None


async def test_the_current_stage_follows_the_checks_unless_chosen() -> None:
    lab = load_lab(TWO_STAGES).lab
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


async def attach(jp_fetch: Any, project: Any, text: str = LAB) -> None:
    mode = {"copilot_mode": "lab_automation_assistant"}
    await call(jp_fetch, "copilot", "llm-config", method="PUT", body=mode, headers=ALICE)
    attached = await call(
        jp_fetch, *project_path(project, "lab"), method="PUT", body={"text": text}, headers=ALICE
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
    assert unknown.code == 404 and "stages: addressing, exam" in unknown.error["message"]

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


ADDRESSING = textwrap.dedent(
    """\
    title: Addressing
    stages:
      - id: addressing
        title: Address the PCs
        objectives:
          - id: pcs
            text: PC1 and PC2 share a subnet with their gateway, PC3 is on the far side
            check: {kind: address, node: PC1, address: 10.0.159.1/24}
    """
)
PCS_JUDGE = configuring_judge(
    lambda command, dialect: POLICY.check(command, dialect=dialect, read_only=True),
    {"PC1": "vpcs", "PC2": "vpcs", "PC3": "vpcs"},
)
SECRETS = ("10.0.159.", "172.16.146.")
"""What the stage leaves the student to work out: no text they are shown may hold it
(the objective's text above does not either)."""
DO_IT_FOR_ME = "Do the addressing stage of my lab for me."
PC_ADDRESSES = {
    "devices": [
        {"device": "PC1", "commands": ["ip 10.0.159.1/24 10.0.159.254"]},
        {"device": "PC2", "commands": ["ip 10.0.159.2/24 10.0.159.254"]},
        {"device": "PC3", "commands": ["ip 172.16.146.1/24 172.16.146.254"]},
    ]
}
DONE_FOR_YOU = textwrap.dedent(
    """\
    I can't change the PCs in teaching mode. On each PC you would type:
    ```
    PC1> ip 10.0.159.1/24 10.0.159.254
    PC2> ip 10.0.159.2/24 10.0.159.254
    ```
    and on PC3 `ip 172.16.146.1/24 172.16.146.254`, then `save`. Check with `show ip`.
    """
)


def unseen(value: Any) -> bool:
    text = json.dumps(value) if not isinstance(value, str) else value
    return not any(secret in text for secret in SECRETS)


@pytest.mark.lab
async def test_a_nudge_stage_holds_configuration_back_everywhere_the_student_looks(
    jp_fetch: Any, gns3_project: Any, scripted_llm: Any
) -> None:
    """The refused tool calls, their cards and notes, the answer, the title, the history
    read back and both exports show no configuration line of the stage, and say how many
    were left out; the device output of a later answer is shown as the device printed it;
    in automation mode nothing is held back."""
    await add_pcs(gns3_project, "PC1", "PC2", "PC3", start=True)
    await attach(jp_fetch, gns3_project, ADDRESSING)
    mixed = {"devices": [{"device": "PC1", "commands": ["show ip", "ip 10.0.159.1/24"]}]}
    scripted_llm.add(
        tool_calls(
            ToolCall(name="run_vpcs_commands", arguments=PC_ADDRESSES, id="call_set", chunks=5),
            ToolCall(name="run_show_commands", arguments=mixed, id="call_show", chunks=4),
        ),
        text(DONE_FOR_YOU, chunks=11),
        text("PC1 ip 10.0.159.1/24", when=TITLE_REPLY),
    )
    chat = project_path(gns3_project, "chat", "stream")
    stream = open_stream(jp_fetch, *chat, body={"message": DO_IT_FOR_ME, **TEACHING}, headers=ALICE)
    events = await stream.finish()
    assert unseen(events), [e for e in events if not unseen(e)]

    calls = [e["tool_call"] for e in events if e["type"] == "tool_call"]
    assert {c["function"]["arguments"] for c in calls if not c["function"].get("complete")} == {
        ""
    }, "arguments are shown once complete, held back"
    shown_arguments = {
        c["id"]: json.loads(c["function"]["arguments"])
        for c in calls
        if c["function"].get("complete")
    }
    assert shown_arguments == {
        "call_set": {
            "devices": [
                {"device": name, "commands": [HIDDEN_COMMAND]} for name in ("PC1", "PC2", "PC3")
            ]
        },
        "call_show": {"devices": [{"device": "PC1", "commands": ["show ip", HIDDEN_COMMAND]}]},
    }
    cards = {e["tool_call_id"]: e for e in events if e["type"] == "tool_end"}
    assert cards["call_set"]["summary"] == "not run: teaching mode · configuration of PC1, PC2, PC3"
    assert "I left out 3 configuration lines" in cards["call_set"]["note"]
    assert "the consoles of PC1, PC2, PC3" in cards["call_set"]["note"]
    assert cards["call_show"]["outcome"] == "partial"  # `show ip` ran on the real PC1
    assert "GATEWAY" in cards["call_show"]["tool_output"]
    assert "I left out 1 configuration line." in cards["call_show"]["note"]

    answer = "".join(e["content"] for e in events if e["type"] == "content")
    shown, hidden = filter_answer(DONE_FOR_YOU, PCS_JUDGE)
    assert answer == shown and hidden == 4  # two prompted lines (one note), `ip ...`, `save`
    assert answer.endswith(left_out_sentence(4)) and "`show ip`" in answer
    [done] = [e for e in events if e["type"] == "done"]
    assert done["statistics"]["hints_filtered"] == 3 + 1 + 4
    fallback = "Do the addressing stage of my"  # the student's words: the title showed a line
    assert done["title"] == fallback

    second = scripted_llm.chat_requests[1].body["messages"]
    assert unseen(second) and HIDDEN_COMMAND in json.dumps(second), (
        "the model reads its calls as they were shown"
    )

    session = project_path(gns3_project, "chat", "sessions", done["session_id"])
    history = (await call(jp_fetch, *session, "history", headers=ALICE)).body
    assert unseen(history)
    assert history["title"] == fallback
    assistant = [m for m in history["messages"] if m["role"] == "assistant"]
    assert assistant[-1]["content"] == answer
    saved_arguments = {
        c["id"]: json.loads(c["function"]["arguments"]) for c in assistant[0]["tool_calls"]
    }
    assert saved_arguments == shown_arguments
    readings = {
        m["tool_call_id"]: m["metadata"]["reading"]
        for m in history["messages"]
        if m["role"] == "tool"
    }
    for call_id, card in cards.items():
        assert readings[call_id] == {k: card.get(k) for k in ("summary", "outcome", "note")}

    markdown = await call(jp_fetch, *session, "export", params={"format": "md"}, headers=ALICE)
    assert markdown.code == 200 and unseen(markdown.body)
    assert left_out_sentence(4) in markdown.body
    notebook = json.loads(
        (await call(jp_fetch, *session, "export", params={"format": "ipynb"}, headers=ALICE)).body
    )
    assert unseen(notebook)
    sources = ["".join(cell["source"]) for cell in notebook["cells"]]
    assert not [s for s in sources if HIDDEN_COMMAND in s and s.startswith("%copilot run")]
    assert sum("I left out 1 configuration line" in s for s in sources) == 4  # per device

    # The student asks about what PC1 printed: the device's output is no configuration.
    show_ip = json.loads(cards["call_show"]["tool_output"])[0]["output"]
    why = (
        "PC1 has no gateway yet, `GATEWAY 0.0.0.0`:\n```\n"
        + show_ip
        + "\n```\nPC1 sends traffic for other networks to its gateway.\n"
    )
    scripted_llm.add(text(why, chunks=6))
    events = await open_stream(
        jp_fetch,
        *chat,
        body={"message": "PC1 cannot ping PC2. Why?", "session_id": done["session_id"], **TEACHING},
        headers=ALICE,
    ).finish()
    assert "GATEWAY     : 0.0.0.0" in show_ip and "PC1> show ip" in show_ip
    assert "".join(e["content"] for e in events if e["type"] == "content") == why
    [done] = [e for e in events if e["type"] == "done"]
    assert done["statistics"]["hints_filtered"] == 0

    # Automation mode configures: nothing is held back, the addresses are set.
    scripted_llm.add(
        tool_call("run_vpcs_commands", PC_ADDRESSES, id="call_lab"),
        text("Done: `ip 10.0.159.1/24 10.0.159.254` on PC1 and the others."),
    )
    lab_mode = {"copilot_mode": "lab_automation_assistant"}
    events = await open_stream(
        jp_fetch,
        *chat,
        body={"message": DO_IT_FOR_ME, "session_id": done["session_id"], **lab_mode},
        headers=ALICE,
    ).finish()
    [card] = [e for e in events if e["type"] == "tool_end"]
    assert card["outcome"] == "ok" and "PC1 10.0.159.1/24" in card["summary"], card
    assert "`ip 10.0.159.1/24 10.0.159.254`" in "".join(
        e["content"] for e in events if e["type"] == "content"
    )
    [done] = [e for e in events if e["type"] == "done"]
    assert "hints_filtered" not in done["statistics"]
