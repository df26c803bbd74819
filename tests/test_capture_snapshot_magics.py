"""`%copilot capture ...` and `%copilot snapshot ...`: a student's packet capture and lab
snapshots without the model, through the direct tool-run route (so the same mode, command
policy and approvals as the model's calls), in a real IPython shell against a real Jupyter
server subprocess and the REAL local GNS3 lab (VPCS behind the lab kit's switch).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.server import recipe_project, server_magics_shell

from jupyter_gns3_copilot.notebook.errors import UsageError
from jupyter_gns3_copilot.notebook.subcommands.parsing import link_ends
from jupyter_gns3_copilot.notebook.turn import Turn
from jupyter_gns3_copilot.testing.local_stack import ProjectRecipe


@pytest.mark.parametrize(
    ("words", "link"),
    [
        (["PC1", "e0", "-", "Switch1", "e0"], ("PC1", "e0", "Switch1", "e0")),
        (["PC1", "e0", "<->", "Switch1", "e0"], ("PC1", "e0", "Switch1", "e0")),
        (["R 1", "g0/0", "R2", "g0/1"], ("R 1", "g0/0", "R2", "g0/1")),
        (["PC1:e0", "Switch1:e0"], ("PC1", "e0", "Switch1", "e0")),
        (["PC1", "e0"], None),
        (["PC1", "e0", "Switch1"], None),
    ],
)
def test_a_link_is_named_by_both_ends(words: list[str], link: tuple[str, ...] | None) -> None:
    found = link_ends(words)
    expected = dict(zip(("a", "a_port", "b", "b_port"), link, strict=True)) if link else None
    assert found == expected


@pytest.fixture
def project(gns3_lab: Any) -> Iterator[str]:
    recipe = ProjectRecipe(
        "Copilot capture magics", {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"}
    )
    with recipe_project(gns3_lab, recipe) as project_id:
        yield project_id


@pytest.fixture
def shell(
    gns3_lab: Any, scripted_llm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InteractiveShell]:
    with server_magics_shell(gns3_lab, scripted_llm, tmp_path, monkeypatch) as ip:
        yield ip


def run(shell: InteractiveShell, line: str) -> Turn:
    result = shell.run_cell(line, store_history=True)
    assert result.error_in_exec is None, result.error_in_exec
    assert isinstance(result.result, Turn), result.result
    return result.result


def result_of(turn: Turn) -> Any:
    [call] = turn.tool_calls
    return call


@pytest.mark.lab
@pytest.mark.slow
def test_a_student_captures_and_snapshots_without_the_model(
    shell: InteractiveShell, project: str, scripted_llm: Any
) -> None:
    """Given two addressed, started PCs on a switch, in teaching mode; when the student
    starts a capture on PC1's link, pings, shows the capture (filtered), stops it, and
    (the PCs stopped) creates and lists a snapshot; then each is a direct run with its
    card, the capture holds the ICMP exchange, and the model is never called; restoring
    the snapshot is refused in teaching mode (a refused card: nothing restored), and runs
    in automation mode."""
    shell.run_cell(f"%copilot use {project}")
    link = "PC1 e0 - Switch1 e0"

    started = result_of(run(shell, f"%copilot capture start {link}"))
    assert (started.name, started.outcome) == ("start_capture", "ok")
    assert started.output["link"] == "PC1 e0 <-> Switch1 e0"
    run(shell, "%copilot run PC1: ping 10.0.0.2 -c 2")
    shown = result_of(run(shell, f'%copilot capture show {link} --filter "icmp" --limit 10'))
    assert shown.name == "analyze_capture" and shown.outcome == "ok"
    assert shown.arguments == {
        "link": {"a": "PC1", "a_port": "e0", "b": "Switch1", "b_port": "e0"},
        "display_filter": "icmp",
        "limit": 10,
    }
    assert shown.output["matched"] == 4 and set(shown.output["protocols"]) == {"ICMP"}
    stopped = result_of(run(shell, f"%copilot capture stop {link}"))
    assert (stopped.name, stopped.outcome) == ("stop_capture", "ok")

    # GNS3 snapshots a stopped project only
    copilot = shell.magics_manager.registry["CopilotMagics"].api
    halted = copilot.run_tool("stop_nodes", {"nodes": ["PC1", "PC2"]}, mode="lab")
    assert result_of(halted).outcome == "ok"
    created = result_of(run(shell, '%copilot snapshot create "before the change"'))
    assert created.output["snapshot"]["name"] == "before the change"
    listed = result_of(run(shell, "%copilot snapshot list"))
    assert [s["name"] for s in listed.output["snapshots"]] == ["before the change"]

    refused = result_of(run(shell, "%copilot snapshot restore before the change"))
    assert refused.outcome == "refused" and refused.output["status"] == "refused"
    restored = result_of(run(shell, "%copilot snapshot restore before the change --mode lab"))
    assert restored.outcome == "ok" and restored.output["snapshot"]["name"] == "before the change"
    assert scripted_llm.requests == []

    with pytest.raises(UsageError, match="both ends"):
        shell.run_line_magic("copilot", "capture start PC1 e0")
    with pytest.raises(UsageError, match="Name the snapshot"):
        shell.run_line_magic("copilot", "snapshot create")
    with pytest.raises(UsageError, match="--stop goes with `%copilot snapshot create"):
        shell.run_line_magic("copilot", "snapshot restore before the change --stop")
