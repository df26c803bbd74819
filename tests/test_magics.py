"""The `%copilot` magics in a real IPython shell: option parsing, messages vs subcommands,
questions ending in "?", the requests each magic makes, text output where widgets cannot
render, one-line errors, and the help.

The copilot API is played by the tiny HTTP server of `test_notebook_api_client` (a TEST DOUBLE
that answers scripted routes and records requests); the real server, kernel and widget
are exercised end to end by `test_notebooks`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.tiny_server import TinyServer, json_route, send, sse_route

from jupyter_gns3_copilot.events import sse_message
from jupyter_gns3_copilot.notebook.errors import NoProject, ProjectNotFound, UsageError
from jupyter_gns3_copilot.notebook.subcommands import context as magic_context
from jupyter_gns3_copilot.notebook.subcommands.parsing import (
    keep_question_marks,
    split_leading_options,
    split_options,
)
from jupyter_gns3_copilot.notebook.turn import Turn

PROJECT_ID = "0b0b0b0b-1111-2222-3333-444444444444"
BASE = "/a%40b/copilot"
PROJECT = f"{BASE}/projects/{PROJECT_ID}"

# -- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "argv", "rest"),
    [
        ("why can't PC1 ping PC3?", [], "why can't PC1 ping PC3?"),
        ("--new --mode lab build it", ["--new", "--mode", "lab"], "build it"),
        ("--temperature=0.5 --quiet hi -c 3", ["--temperature=0.5", "--quiet"], "hi -c 3"),
        ('--session "a b" hello', ["--session", "a b"], "hello"),
        ("-- --new is an option?", [], "--new is an option?"),
        ("--max-tool-calls 3", ["--max-tool-calls", "3"], ""),
    ],
)
def test_leading_options_are_split_from_the_message(line: str, argv: list[str], rest: str) -> None:
    assert split_leading_options(line) == (argv, rest)


@pytest.mark.parametrize(
    ("line", "problem"), [("--bogus hi", "Unknown option --bogus"), ("--mode", "needs a value")]
)
def test_bad_options_are_usage_errors(line: str, problem: str) -> None:
    with pytest.raises(UsageError, match=problem):
        split_leading_options(line)


def test_subcommand_options_may_come_anywhere() -> None:
    assert split_options('PC1, PC2 --tool vpcs "R 1"') == (
        ["--tool", "vpcs"],
        ["PC1,", "PC2", "R 1"],
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "%copilot why can't PC1 ping PC3?",
            "get_ipython().run_line_magic('copilot', \"why can't PC1 ping PC3?\")",
        ),
        (
            "turn = %copilot is PC1 up?\n",
            "turn = get_ipython().run_line_magic('copilot', 'is PC1 up?')\n",
        ),
        ("%copilot?", "%copilot?"),
        ("%copilot use lab", "%copilot use lab"),
        ("print('why?')", "print('why?')"),
    ],
)
def test_a_copilot_line_ending_in_a_question_mark_stays_a_question(
    line: str, expected: str
) -> None:
    assert keep_question_marks([line]) == [expected]


# -- the magics in a shell ----------------------------------------------------------------


class CopilotDouble:
    """Routes of the copilot API on a `TinyServer` for one project "Demo lab": every chat
    turn answers "Hello." and costs 100/10 tokens and one model call; direct runs answer
    per device."""

    def __init__(self, server: TinyServer) -> None:
        self.server = server
        self.turns: dict[str, int] = {}
        project = {"project_id": PROJECT_ID, "name": "Demo lab", "status": "closed"}
        routes = server.routes
        routes[("GET", f"{BASE}/projects")] = json_route(200, [project])
        routes[("POST", f"{PROJECT}/open")] = json_route(200, {**project, "status": "opened"})
        routes[("POST", f"{PROJECT}/chat/stream")] = self.chat
        routes[("GET", f"{PROJECT}/chat/sessions")] = self.sessions
        routes[("GET", f"{BASE}/llm-config")] = json_route(200, CONFIG_VIEW)
        routes[("PUT", f"{BASE}/llm-config")] = json_route(200, CONFIG_VIEW)
        routes[("GET", f"{PROJECT}/topology")] = self.topology
        for tool in ("run_show_commands", "run_vpcs_commands"):
            routes[("POST", f"{PROJECT}/tools/{tool}")] = self.tool_run

    def chat(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        session_id = json.loads(body)["session_id"]
        self.turns[session_id] = self.turns.get(session_id, 0) + 1
        sse_route(
            [
                message("content", session_id, content="Hello.", message_id="m1"),
                message(
                    "done",
                    session_id,
                    statistics={"input_tokens": 100, "output_tokens": 10, "llm_calls": 1},
                    title="Greeting",
                ),
            ]
        )(handler, body)

    def sessions(self, handler: BaseHTTPRequestHandler, _body: bytes) -> None:
        listed = [
            {
                "thread_id": sid,
                "title": "Greeting",
                "input_tokens": 100 * n,
                "output_tokens": 10 * n,
                "llm_calls_count": n,
                "message_count": 2 * n,
            }
            for sid, n in self.turns.items()
        ]
        send(handler, 200, json.dumps(listed), "application/json")

    def topology(self, handler: BaseHTTPRequestHandler, _body: bytes) -> None:
        if "format=svg" in handler.path:
            send(handler, 200, "<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml")
        else:
            send(handler, 200, "Project Demo lab: 2 nodes", "text/plain")

    def tool_run(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        request = json.loads(body)
        run_id, tool = request["run_id"], handler.path.rsplit("/", 1)[-1]
        entries = [
            {
                "device_name": d["device"],
                "status": "success",
                "output": "\n".join(d["commands"]),
                "commands": d["commands"],
            }
            for d in request["arguments"]["devices"]
        ]
        sse_route(
            [
                message("tool_start", run_id, tool_name=tool, tool_call_id="direct_1"),
                message(
                    "tool_end",
                    run_id,
                    tool_name=tool,
                    tool_call_id="direct_1",
                    tool_output=json.dumps(entries),
                ),
                message("done", run_id),
            ]
        )(handler, body)

    def bodies(self, method: str, path: str) -> list[Any]:
        return [
            json.loads(r["body"]) if r["body"] else None
            for r in self.server.requests
            if r["method"] == method and r["path"].split("?")[0] == path
        ]


CONFIG_VIEW = {
    "provider": "",
    "base_url": "http://llm.local/v1",
    "model": "m1",
    "title_model": "",
    "temperature": None,
    "context_limit": 32,
    "context_strategy": "balanced",
    "copilot_mode": "teaching_assistant",
    "api_key_set": True,
    "api_key_source": "admin",
    "sources": {"model": "admin"},
    "user_settings": [],
    "ignored": [],
    "configured": True,
    "missing": [],
    "allowed_modes": ["teaching_assistant", "lab_automation_assistant"],
    "allowed_base_urls": [],
}


def message(kind: str, session_id: str, **fields: Any) -> str:
    return sse_message({"type": kind, "session_id": session_id, **fields})


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[CopilotDouble]:
    server = TinyServer().start()
    monkeypatch.setenv("GNS3_COPILOT_SERVER_URL", server.url)
    monkeypatch.setenv("GNS3_COPILOT_SERVER_TOKEN", "kernel-token")
    for name in ("JUPYTERHUB_SERVICE_URL", "JUPYTERHUB_SERVICE_PREFIX"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield CopilotDouble(server)
    finally:
        server.stop()


@pytest.fixture
def shell(api: CopilotDouble) -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "jupyter_gns3_copilot")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "jupyter_gns3_copilot")
        ip.user_ns.pop("turn", None)


def run(shell: InteractiveShell, source: str) -> Any:
    """Run a cell; its result (raising what it raised)."""
    result = shell.run_cell(source, store_history=True)
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result


def test_a_message_streams_as_text_outside_a_kernel_and_returns_the_turn(
    shell: InteractiveShell, api: CopilotDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    """Given a project in use; when a bare `%copilot` question ends in "?"; then the whole
    question is sent, the answer is printed as text (no widget outside a kernel), the
    Turn is returned without being displayed a second time, and its statistics are the
    ones `done` carries (no session listing before or after the turn)."""
    run(shell, '%copilot use "Demo lab"')
    assert "Using project 'Demo lab' (opened" in capsys.readouterr().out
    turn = run(shell, "%copilot why can't PC1 ping PC3?")
    out = capsys.readouterr().out
    [body] = api.bodies("POST", f"{PROJECT}/chat/stream")
    assert body["message"] == "why can't PC1 ping PC3?"
    assert "Hello." in out and "[done" in out
    assert "Turn done" not in out, "the magic's own output is the turn's display"
    assert isinstance(turn, Turn) and turn.text == "Hello."
    stats = turn.statistics
    assert (stats.input_tokens, stats.output_tokens, stats.llm_calls) == (100, 10, 1)
    assert stats.title == "Greeting"

    run(shell, "turn = %copilot and now?")
    assert shell.user_ns["turn"].statistics.input_tokens == 100
    assert api.bodies("GET", f"{PROJECT}/chat/sessions") == []
    second = api.bodies("POST", f"{PROJECT}/chat/stream")[1]
    assert second["session_id"] == body["session_id"], "the conversation continues"
    capsys.readouterr()
    run(shell, "turn")
    assert "Turn done · session" in capsys.readouterr().out


@pytest.mark.parametrize("in_a_widget", [False, True], ids=["text", "widget"])
def test_a_turn_reduces_each_event_once(
    shell: InteractiveShell,
    api: CopilotDouble,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    in_a_widget: bool,
) -> None:
    """The kernel reduces each event of a turn once (its `TurnRecorder`); the widget or
    the text output shows what that reduction made of it. (Which output a real kernel
    gets is decided by the shell's class: faked here to take the widget's way.)"""
    if in_a_widget:
        monkeypatch.setattr(magic_context, "in_kernel", lambda _shell: True)
    run(shell, "%copilot use Demo lab")
    reduced = request.getfixturevalue("reductions")
    turn = run(shell, "%copilot why can't PC1 ping PC3?")
    assert turn.text == "Hello." and turn.record["items"]
    assert reduced == turn.events


def test_options_shape_the_request(shell: InteractiveShell, api: CopilotDouble) -> None:
    run(shell, "%copilot use Demo lab")
    run(shell, "%copilot hi")
    run(
        shell,
        "%copilot --new --mode lab --max-iterations 5 --max-tool-calls 2 --max-time 90 "
        "--temperature 0.3 --quiet build it",
    )
    run(shell, "%copilot --session s1 hello")
    run(shell, "%%copilot --quiet\nfirst line\nsecond line")
    first, new, named, cell = api.bodies("POST", f"{PROJECT}/chat/stream")
    assert new["session_id"] != first["session_id"]
    assert {key: new[key] for key in new if key not in ("session_id",)} == {
        "message": "build it",
        "copilot_mode": "lab_automation_assistant",
        "max_iterations": 5,
        "max_tool_calls": 2,
        "max_execution_time_seconds": 90,
        "temperature": 0.3,
    }
    assert named["session_id"] == "s1"
    assert cell == {"message": "first line\nsecond line", "session_id": "s1"}


def test_the_automation_word_and_its_old_word_lab_select_the_same_mode(
    shell: InteractiveShell, api: CopilotDouble
) -> None:
    """Given `--mode automation`, then `--mode lab` (the old word, in older notebooks) and
    `--mode teaching`; then the first two send the automation mode's id, the last the
    teaching mode's."""
    run(shell, "%copilot use Demo lab")
    run(shell, "%copilot --mode automation build it")
    run(shell, "%copilot --mode lab build it")
    run(shell, "%copilot --mode teaching why")
    sent = [body["copilot_mode"] for body in api.bodies("POST", f"{PROJECT}/chat/stream")]
    assert sent == ["lab_automation_assistant", "lab_automation_assistant", "teaching_assistant"]


@pytest.mark.parametrize(
    "line",
    [
        "%copilot show me the topology",
        "%copilot run a ping test",
        "%copilot status of PC1",
        "%copilot connect PC1 to SW1",
        "%copilot use",
    ],
)
def test_lines_that_only_start_like_a_subcommand_are_messages(
    shell: InteractiveShell, line: str
) -> None:
    expected: type[Exception] = UsageError if line.endswith("use") else NoProject
    with pytest.raises(expected):
        run(shell, line)


@pytest.mark.parametrize(
    ("line", "suggestion"),
    [
        ("%copilot show topolgy", "show topology"),
        ("%copilot sesions --limit 5", "sessions"),
        ("%copilot satus", "status"),
        ("%copilot histroy", "history"),
    ],
)
def test_a_mistyped_subcommand_is_suggested_and_nothing_is_sent(
    shell: InteractiveShell, api: CopilotDouble, line: str, suggestion: str
) -> None:
    """Given a project in use; when a short line is a typo of a subcommand; then the magic
    suggests the subcommand (and how to ask it anyway) and sends nothing to the model."""
    run(shell, '%copilot use "Demo lab"')
    with pytest.raises(UsageError, match=f"Did you mean `%copilot {suggestion}`"):
        run(shell, line)
    assert api.bodies("POST", f"{PROJECT}/chat/stream") == []


@pytest.mark.parametrize(
    "line",
    [
        "%copilot show topolgy?",
        "%copilot why does PC1 not reach PC2",
        "%copilot hello",
        "%copilot topology",
        "%copilot ask show topolgy",
    ],
)
def test_questions_that_look_a_little_like_subcommands_go_to_the_model(
    shell: InteractiveShell, api: CopilotDouble, line: str
) -> None:
    run(shell, '%copilot use "Demo lab"')
    run(shell, line)
    assert len(api.bodies("POST", f"{PROJECT}/chat/stream")) == 1


def test_run_sends_commands_to_devices_without_the_model(
    shell: InteractiveShell, api: CopilotDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    run(shell, "%copilot use Demo lab")
    turn = run(shell, "%copilot run PC1, PC2: show ip; show arp")
    [body] = api.bodies("POST", f"{PROJECT}/tools/run_show_commands")
    assert body["arguments"] == {
        "devices": [
            {"device": "PC1", "commands": ["show ip", "show arp"]},
            {"device": "PC2", "commands": ["show ip", "show arp"]},
        ]
    }
    assert turn.tool_results["PC2"].output == "show ip\nshow arp"
    assert "<- PC1: ok" in capsys.readouterr().out
    run(shell, "%copilot run --tool vpcs --mode lab PC1: ip 10.0.0.1/24")
    [vpcs] = api.bodies("POST", f"{PROJECT}/tools/run_vpcs_commands")
    assert vpcs["copilot_mode"] == "lab_automation_assistant"


def test_an_interrupted_run_or_check_is_stopped_on_its_run_route(
    shell: InteractiveShell, api: CopilotDouble
) -> None:
    """Given `%copilot run` (`Copilot.run`) and `%copilot check` (`run_checks`); when the
    kernel is interrupted mid-stream; then the kernel POSTs the run route's abort of the
    `run_id` its request named (a run is no chat session)."""
    from jupyter_gns3_copilot.notebook.lab_checks import run_checks

    api.server.routes[("POST", f"{PROJECT}/lab/checks")] = sse_route([])
    run(shell, "%copilot use Demo lab")
    copilot = shell.magics_manager.registry["CopilotMagics"].api

    def interrupt(*_: Any) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copilot.run("PC1", "show ip", on_event=interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_checks(copilot.client, PROJECT_ID, {"stage": None}, on_open=interrupt)
    [tool_run] = api.bodies("POST", f"{PROJECT}/tools/run_show_commands")
    [check] = api.bodies("POST", f"{PROJECT}/lab/checks")
    assert "session_id" not in tool_run and "session_id" not in check
    aborted = [r["path"] for r in api.server.requests if r["path"].endswith("/abort")]
    assert aborted == [
        f"{PROJECT}/runs/{tool_run['run_id']}/abort",
        f"{PROJECT}/runs/{check['run_id']}/abort",
    ]


def test_a_direct_runs_approval_is_listed_and_decided_on_its_run_routes(
    shell: InteractiveShell, api: CopilotDouble
) -> None:
    """Given a direct run waiting for an approval; when the kernel lists and approves it
    (as the event callback of `Copilot.run` or the magic's console question does), then
    it uses the run's routes, not the chat session's."""
    run(shell, "%copilot use Demo lab")
    copilot = shell.magics_manager.registry["CopilotMagics"].api
    waiting = {"approval_id": "a1", "summary": "on PC1: ip 10.0.0.1/24"}
    taken = {"status": "ok", "approval_id": "a1", "decision": "approve"}
    call = {"tool_name": "run_vpcs_commands", "tool_call_id": "c1", "tool_input": {}}
    routes = api.server.routes

    def tool_run(handler: BaseHTTPRequestHandler, body: bytes) -> None:
        run_id = json.loads(body)["run_id"]
        routes[("GET", f"{PROJECT}/runs/{run_id}/approvals")] = json_route(200, [waiting])
        routes[("POST", f"{PROJECT}/runs/{run_id}/approvals/a1")] = json_route(200, taken)
        asked = message("approval_required", run_id, **waiting, **call)
        sse_route([asked, message("done", run_id)])(handler, body)

    routes[("POST", f"{PROJECT}/tools/run_vpcs_commands")] = tool_run
    answers: list[Any] = []

    def approve(event: Any) -> None:
        if event.type == "approval_required":
            answers.append(copilot.approve(session=event.session_id))

    copilot.run("PC1", "ip 10.0.0.1/24", tool="vpcs", mode="lab", on_event=approve)
    assert answers == [taken]
    [body] = api.bodies("POST", f"{PROJECT}/tools/run_vpcs_commands")
    run_routes = f"{PROJECT}/runs/{body['run_id']}/approvals"
    assert [r["path"] for r in api.server.requests if "/approvals" in r["path"]] == [
        run_routes,
        f"{run_routes}/a1",
    ]


def test_informational_subcommands(
    shell: InteractiveShell, api: CopilotDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    projects = run(shell, "%copilot projects")
    assert [p.name for p in projects] == ["Demo lab"]
    assert "| Demo lab | closed |" in projects._repr_markdown_()
    run(shell, "%copilot use 0b0b0b0b")
    run(shell, "%copilot show topology")
    assert "Project Demo lab: 2 nodes" in capsys.readouterr().out
    run(shell, "%copilot config")
    out = capsys.readouterr().out
    assert "model: m1  [admin]" in out and "api_key: set  [admin]" in out
    run(shell, "%copilot config temperature=0.5 model=m2 title_model=default")
    assert api.bodies("PUT", f"{BASE}/llm-config") == [
        {"temperature": 0.5, "model": "m2", "title_model": None}
    ]
    run(shell, "%copilot --session s1 hi")
    sessions = run(shell, "%copilot sessions")
    assert [s.thread_id for s in sessions] == ["s1"]
    assert re.search(r"\*\s+s1\s+Greeting", repr(sessions))


def test_session_subcommands_act_on_the_current_conversation(
    shell: InteractiveShell, api: CopilotDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    session = f"{PROJECT}/chat/sessions/s1"
    routes = api.server.routes
    entry = {"thread_id": "s1", "title": "Renamed", "pinned": True}
    routes[("PATCH", session)] = json_route(200, entry)
    routes[("PUT", f"{session}/pin")] = json_route(200, entry)
    routes[("DELETE", f"{session}/pin")] = json_route(200, {**entry, "pinned": False})
    routes[("POST", f"{session}/abort")] = json_route(
        200, {"status": "not_running", "session_id": "s1"}
    )
    routes[("GET", f"{session}/history")] = json_route(
        200,
        {
            "thread_id": "s1",
            "title": "Renamed",
            "messages": [
                {"id": "1", "role": "user", "content": "hi"},
                {"id": "2", "role": "assistant", "content": "Hello."},
            ],
        },
    )
    routes[("DELETE", session)] = lambda h, _b: (h.send_response(204), h.end_headers())
    run(shell, "%copilot use Demo lab")
    run(shell, "%copilot --session s1 hi")
    capsys.readouterr()
    for line in ("rename Bob's lab", "pin", "unpin", "abort", "history", "delete"):
        run(shell, f"%copilot {line}")
    out = capsys.readouterr().out
    assert api.bodies("PATCH", session) == [{"title": "Bob's lab"}]
    assert "Conversation s1 pinned." in out and "Conversation s1 unpinned." in out
    assert "Nothing is running in conversation s1." in out
    assert "You: hi" in out and "Copilot: Hello." in out
    assert "Conversation s1 deleted" in out
    with pytest.raises(NoProject, match="No conversation yet"):
        run(shell, "%copilot history")


def test_connect_checks_the_extension_with_the_token(
    shell: InteractiveShell, api: CopilotDouble, capsys: pytest.CaptureFixture[str]
) -> None:
    run(shell, f"%copilot connect {api.server.url} --token other-token")
    assert "Connected to http://127.0.0.1:" in capsys.readouterr().out
    assert api.server.requests[-1]["headers"]["Authorization"] == "token other-token"


def test_expected_errors_show_as_one_line(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    result = shell.run_cell("%copilot use Nowhere", store_history=True)
    assert isinstance(result.error_in_exec, ProjectNotFound)
    out = capsys.readouterr().out
    assert "ProjectNotFound" in out and "No GNS3 project named 'Nowhere'" in out
    assert "Traceback" not in out and len(out.strip().splitlines()) == 1


def test_help_lists_every_subcommand_and_option(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = shell.find_line_magic("copilot").__doc__
    for word in (
        "use <project name or id>",
        "show topology",
        "run <device>: <command>",
        "--max-iterations",
        "--quiet",
        "--session",
        "connect [URL]",
    ):
        assert word in doc
    run(shell, "%copilot")
    assert "%copilot <message>" in capsys.readouterr().out
    run(shell, "%copilot --help")
    assert "show topology" in capsys.readouterr().out
    with pytest.raises(UsageError, match="cell body"):
        run(shell, "%%copilot hello\nbody")


def test_status_text_says_when_the_context_limit_is_a_guess() -> None:
    """Given a status report whose model's context limit is a guess, the text names the fix."""
    from jupyter_gns3_copilot.notebook.reports import status_text

    note = "The context limit of 'class-alias' is a guess (32K); set context_limit."
    model = {"model": "class-alias", "base_url": "http://gw/v1", "configured": True}
    guessed = {**model, "context": {"limit": 32, "source": "guess", "guessed": True, "note": note}}
    known = {**model, "context": {"limit": 128, "source": "model_family", "guessed": False}}

    assert note in status_text({"model": guessed}, "http://jupyter/")
    assert "context" not in status_text({"model": known}, "http://jupyter/")


def test_history_text_ends_a_failed_turn_with_its_error() -> None:
    from jupyter_gns3_copilot.notebook.transcript import history_text

    history = {
        "thread_id": "s1",
        "title": "PCs",
        "messages": [
            {"id": "u1", "role": "user", "content": "Is PC1 up?"},
            {"id": "u2", "role": "user", "content": "And PC2?"},
            {"id": "a2", "role": "assistant", "content": "Yes."},
        ],
        "turn_errors": [{"message_id": "u1", "error": "The endpoint failed (HTTP 500)."}],
    }
    assert history_text(history).splitlines()[1:] == [
        "",
        "You: Is PC1 up?",
        "Error: The endpoint failed (HTTP 500).",
        "",
        "You: And PC2?",
        "",
        "Copilot: Yes.",
    ]


def test_export_writes_the_conversation_and_never_overwrites_without_force(
    shell: InteractiveShell,
    api: CopilotDouble,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`%copilot export` saves the route's file under the name it suggests (only its last
    part: the server never picks the directory), refuses to replace a file unless
    `--force`, takes `--format md` and a path, and refuses an unknown format locally."""
    export = f"{PROJECT}/chat/sessions/s1/export"

    def route(handler: BaseHTTPRequestHandler, _body: bytes) -> None:
        fmt = "md" if "format=md" in handler.path else "ipynb"
        data = f"{fmt} of s1".encode()
        handler.send_response(200)
        handler.send_header(
            "Content-Disposition",
            f"attachment; filename=\"x.{fmt}\"; filename*=UTF-8''..%2FLab%20%C3%A9.{fmt}",
        )
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    api.server.routes[("GET", export)] = route
    monkeypatch.chdir(tmp_path)
    run(shell, "%copilot use Demo lab")
    run(shell, "%copilot --session s1 hi")
    capsys.readouterr()

    run(shell, "%copilot export")
    assert (tmp_path / "Lab é.ipynb").read_text() == "ipynb of s1"
    assert "Conversation exported to Lab é.ipynb." in capsys.readouterr().out
    (tmp_path / "Lab é.ipynb").write_text("my edits")
    with pytest.raises(UsageError, match=r"exists: .* --force"):
        run(shell, "%copilot export")
    assert (tmp_path / "Lab é.ipynb").read_text() == "my edits"
    run(shell, "%copilot export --force")
    assert (tmp_path / "Lab é.ipynb").read_text() == "ipynb of s1"
    run(shell, "%copilot export --format md notes.md")
    assert (tmp_path / "notes.md").read_text() == "md of s1"
    (tmp_path / "out").mkdir()
    run(shell, "%copilot export out")
    assert (tmp_path / "out" / "Lab é.ipynb").read_text() == "ipynb of s1"
    with pytest.raises(UsageError, match="ipynb or md"):
        run(shell, "%copilot export --format pdf")
    assert [
        r["path"].split("?")[1] for r in api.server.requests if r["path"].startswith(export)
    ] == ["format=ipynb"] * 3 + ["format=md", "format=ipynb"]
