"""Session export: the core builder on a recorded history (no lab), the
route through a real Jupyter server, and an exported notebook's cells run by nbclient
against the REAL local GNS3 lab (VPCS consoles); the model is the scripted OpenAI server
(a TEST DOUBLE)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

from jupyter_gns3_copilot.agent.history import ConversationHistory, OpenAIMessage, TurnError
from jupyter_gns3_copilot.notebook.session_routes import attachment_filename
from jupyter_gns3_copilot.server.handlers.chat import content_disposition
from jupyter_gns3_copilot.server.session_export import export_session, to_markdown, to_notebook

PROJECT_ID = "5b0e5b5e-9c1d-4c59-8f43-2f1c8a0b6a11"


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "function": {"name": name, "arguments": json.dumps(arguments)}}


def devices(**commands: list[str]) -> dict[str, Any]:
    return {"devices": [{"device": d, "commands": c} for d, c in commands.items()]}


def result(call_id: str, *entries: tuple[str, str, str]) -> OpenAIMessage:
    content = json.dumps(
        [{"device_name": d, "status": s, "output": o} for d, s, o in entries], indent=2
    )
    return OpenAIMessage(id=f"r-{call_id}", role="tool", tool_call_id=call_id, content=content)


def history(title: str | None = "PC1 address / check") -> ConversationHistory:
    """Two questions; the answers use get_topology, run_vpcs_commands, run_config_commands
    and run_show_commands (one call with a command no `%copilot run` line can carry)."""
    message = OpenAIMessage
    return ConversationHistory(
        thread_id="s-1",
        title=title,
        messages=[
            message(id="u1", role="user", content="Give PC1 an address and ping PC2"),
            message(
                id="a1",
                role="assistant",
                content="Looking at the lab first.",
                tool_calls=[call("c0", "get_topology", {})],
            ),
            message(id="t0", role="tool", tool_call_id="c0", content='{"nodes": []}'),
            message(
                id="a2",
                role="assistant",
                content="",
                tool_calls=[
                    call(
                        "c1", "run_vpcs_commands", devices(PC1=["ip 10.0.0.1/24", "ping 10.0.0.2"])
                    ),
                    call("c2", "run_config_commands", devices(R1=["interface g0/0", "no shut"])),
                ],
            ),
            result("c1", ("PC1", "success", "PC1> ping 10.0.0.2\n84 bytes from 10.0.0.2 ```")),
            result("c2", ("R1", "success", "R1(config-if)#")),
            message(id="a3", role="assistant", content="PC1 reaches **PC2**."),
            message(id="u2", role="user", content="And show R1's routes"),
            message(
                id="a4",
                role="assistant",
                content="",
                tool_calls=[call("c3", "run_show_commands", devices(R1=["show ip route; x"]))],
            ),
            result("c3", ("R1", "failed", "")),
            message(id="a5", role="assistant", content="No routes yet."),
        ],
    )


def test_notebook_has_setup_cell_questions_answers_and_one_run_cell_per_command() -> None:
    """Given a session with text, a non-device tool and three command tools; when exported
    as a notebook; then it is valid nbformat 4, starts with the load/use cell, keeps the
    conversation's order, writes one `%copilot run` cell per VPCS/show command and one per
    device for configuration lines, and keeps a command no run line can carry as a note."""
    notebook = nbformat.from_dict(to_notebook(history(), "OSPF lab", PROJECT_ID))
    nbformat.validate(notebook)
    cells = [(cell.cell_type, cell.source) for cell in notebook.cells[1:]]
    assert cells == [
        ("code", '%load_ext jupyter_gns3_copilot\n%copilot use "OSPF lab"'),
        ("markdown", "**You asked:**\n\nGive PC1 an address and ping PC2"),
        ("markdown", "Looking at the lab first."),
        ("code", "%copilot run --tool vpcs --mode automation PC1: ip 10.0.0.1/24"),
        ("code", "%copilot run --tool vpcs --mode automation PC1: ping 10.0.0.2"),
        ("code", "%copilot run --tool config --mode automation R1: interface g0/0; no shut"),
        ("markdown", "PC1 reaches **PC2**."),
        ("markdown", "**You asked:**\n\nAnd show R1's routes"),
        (
            "markdown",
            "The copilot ran on **R1** (run_show_commands):\n\n```text\nshow ip route; x\n```\n",
        ),
        ("markdown", "No routes yet."),
    ]
    assert notebook.cells[0].source.startswith("# PC1 address / check")
    assert all(cell.outputs == [] for cell in notebook.cells if cell.cell_type == "code")


def test_a_project_name_a_magic_cannot_quote_is_replaced_by_its_id() -> None:
    notebook = to_notebook(history(), 'my "lab"', PROJECT_ID)
    assert notebook["cells"][1]["source"].endswith(f"%copilot use {PROJECT_ID}")


def test_markdown_has_questions_answers_and_commands_with_outputs_fenced() -> None:
    """The Markdown export: headings per speaker, each device's commands and output in
    fenced blocks; an output holding a backtick fence gets a longer fence."""
    markdown = to_markdown(history(), "OSPF lab")
    assert markdown.startswith("# PC1 address / check\n")
    assert "## You\n\nGive PC1 an address and ping PC2\n" in markdown
    assert "## Copilot\n\nPC1 reaches **PC2**.\n" in markdown
    assert (
        "**PC1** (`run_vpcs_commands`, ok):\n\n```text\nip 10.0.0.1/24\nping 10.0.0.2\n```"
        in markdown
    )
    assert "````text\nPC1> ping 10.0.0.2\n84 bytes from 10.0.0.2 ```\n````" in markdown
    assert "**R1** (`run_show_commands`, failed):\n\n```text\nshow ip route; x\n```\n" in markdown
    order = [
        markdown.index(s)
        for s in (
            "Give PC1",
            "Looking",
            "**PC1**",
            "**R1** (`run_c",
            "reaches",
            "show R1",
            "No routes",
        )
    ]
    assert order == sorted(order)


def test_a_turn_that_ended_in_an_error_has_it_after_the_rest_of_the_turn() -> None:
    """The first turn failed after its tool calls: both exports show its error after that
    turn's runs and before the next question."""
    failed = history().model_copy(
        update={
            "turn_errors": [
                TurnError(message_id="u1", error="The model endpoint failed (HTTP 500).")
            ]
        }
    )
    cells = [cell["source"] for cell in to_notebook(failed, "lab", PROJECT_ID)["cells"]]
    at = cells.index("> **Error:** The model endpoint failed (HTTP 500).\n")
    assert cells[at - 1] == "PC1 reaches **PC2**."
    assert cells[at + 1] == "**You asked:**\n\nAnd show R1's routes"
    markdown = to_markdown(failed, "lab")
    assert (
        "PC1 reaches **PC2**.\n\n> **Error:** The model endpoint failed (HTTP 500).\n\n## You"
        in markdown
    )


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("PC1 address / check", "PC1 address _ check.ipynb"),
        ('a:b*c?"d"<e>|f\\g', "a_b_c_d_e_f_g.ipynb"),
        ("..", "copilot-session-s-1.ipynb"),
        (None, "copilot-session-s-1.ipynb"),
        ("Адреса ПК", "Адреса ПК.ipynb"),
    ],
)
def test_file_name_comes_from_the_title_and_survives_the_header(
    title: str | None, name: str
) -> None:
    filename, body = export_session(history(title), "lab", PROJECT_ID, "ipynb")
    assert filename == name
    nbformat.validate(nbformat.reads(body.decode(), as_version=4))
    assert attachment_filename(content_disposition(filename)) == name


def test_an_unknown_format_is_refused_naming_the_formats() -> None:
    with pytest.raises(ValueError, match="ipynb, md"):
        export_session(history(), "lab", PROJECT_ID, "pdf")


# -- through a real server, and the exported cells run against the real lab -----------------


@pytest.mark.lab
@pytest.mark.slow
def test_a_session_exported_by_the_route_runs_again_in_a_notebook(
    gns3_lab: Any, tmp_path: Path
) -> None:
    """Given a real Jupyter server (subprocess) with a session whose model ran `show ip` on
    PC1 (run_show_commands) and PC2 (run_vpcs_commands) on real VPCS; when the session is
    exported; then the notebook is valid, its file name is the session's title, the
    Markdown has the outputs, another format is 400 and an unknown session 404; and when
    nbclient runs the exported notebook in a kernel, every cell runs and the `%copilot
    run` cells show the devices' addresses again."""
    from nbclient import NotebookClient
    from support.notebooks import Executed, device_outputs, tool_items

    from jupyter_gns3_copilot.testing.local_stack import (
        JupyterServer,
        ModelEndpoint,
        ProjectRecipe,
        delete_projects,
        prepare_projects,
    )
    from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text
    from jupyter_gns3_copilot.testing.scripted_llm import tool_calls as tool_replies
    from jupyter_gns3_copilot.testing.scripted_llm_script import ToolCall

    recipe = ProjectRecipe("Copilot export", {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"})
    project_id = prepare_projects(gns3_lab, [recipe])[recipe.name]
    try:
        with (
            ScriptedLLM(models=["scripted-model"]) as llm,
            JupyterServer(gns3_lab, ModelEndpoint.scripted_model(llm), tmp_path / "srv") as server,
            httpx.Client(
                base_url=server.url, headers={"Authorization": f"token {server.token}"}
            ) as http,
        ):
            llm.add(
                tool_replies(
                    ToolCall(name="run_show_commands", arguments=devices(PC1=["show ip"]), id="c1"),
                    ToolCall(name="run_vpcs_commands", arguments=devices(PC2=["show ip"]), id="c2"),
                ),
                text("PC1 is 10.0.0.1 and PC2 is 10.0.0.2.", when={"last_message": "IP/MASK"}),
                text("PC addresses", when={"tools": False}),
            )
            chat = f"copilot/projects/{project_id}/chat"
            turn = http.post(
                f"{chat}/stream",
                json={
                    "message": "Which addresses do the PCs have?",
                    "stream": False,
                    "copilot_mode": "lab_automation_assistant",
                },
                timeout=120,
            )
            assert turn.status_code == 200 and turn.json()["status"] == "done", turn.text
            export = f"{chat}/sessions/{turn.json()['session_id']}/export"

            notebook_reply = http.get(export)
            assert notebook_reply.status_code == 200
            assert notebook_reply.headers["content-type"].startswith("application/x-ipynb+json")
            assert attachment_filename(notebook_reply.headers["content-disposition"]) == (
                "PC addresses.ipynb"
            )
            notebook = nbformat.reads(notebook_reply.text, as_version=4)
            nbformat.validate(notebook)
            code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
            assert code == [
                '%load_ext jupyter_gns3_copilot\n%copilot use "Copilot export"',
                "%copilot run PC1: show ip",
                "%copilot run --tool vpcs --mode automation PC2: show ip",
            ]

            markdown = http.get(export, params={"format": "md"})
            assert markdown.status_code == 200
            assert markdown.headers["content-type"].startswith("text/markdown")
            assert (
                "10.0.0.2/24" in markdown.text and "## Copilot\n\nPC1 is 10.0.0.1" in markdown.text
            )

            refused = http.get(export, params={"format": "pdf"})
            assert refused.status_code == 400
            assert refused.json()["error"]["field"] == "format"
            unknown = http.get(f"{chat}/sessions/no-such-session/export")
            assert unknown.status_code == 404
            assert unknown.json()["error"]["type"] == "SessionNotFound"

            client = NotebookClient(
                notebook,
                kernel_name="python3",
                store_widget_state=True,
                timeout=120,
                resources={"metadata": {"path": str(tmp_path)}},
            )
            client.execute(env={**os.environ, **server.kernel_env()})
    finally:
        delete_projects(gns3_lab, [project_id])
    ran = Executed(notebook)
    assert "Using project 'Copilot export'" in ran.text("%load_ext")
    [pc1] = ran.saved_turns("%copilot run PC1")
    assert "10.0.0.1/24" in device_outputs(tool_items(pc1)[0])["PC1"]
    [pc2] = ran.saved_turns("%copilot run --tool vpcs")
    assert "10.0.0.2/24" in device_outputs(tool_items(pc2)[0])["PC2"]
