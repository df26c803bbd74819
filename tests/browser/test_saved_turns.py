"""Saved copilot answers in a real browser: a notebook whose cell output holds a finished
turn bundle (`application/vnd.gns3-copilot.turns+json` plus the Markdown and plain-text
fallbacks), opened in JupyterLab 4 and Notebook 7 without any widget state and without
running a cell, renders through the labextension's MIME renderer: the answers, the tool
cards (one line, opening onto the device tables), the refusal note; readable in the dark
theme.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from support import jupyter_ui

from jupyter_gns3_copilot.notebook.render_text import render_markdown, render_plain

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "turns"
TURN_MIME = "application/vnd.gns3-copilot.turns+json"
SHOWN = ["answer_with_stats", "failed_ping", "teaching_refusal", "error_midway"]


def _bundle() -> dict[str, Any]:
    turns = [json.loads((FIXTURES / f"{name}.json").read_text())["turn"] for name in SHOWN]
    return {
        "version": 1,
        "project_id": "6f1c2a8e",
        "project_name": "OSPF lab",
        "session_id": "3f2c9a10-5b7e-4c1d-9a8e-1d2c3b4a5f60",
        "mode": "teaching",
        "turns": turns,
    }


def write_saved_notebook(path: Path) -> None:
    """A notebook as a finished `%copilot` cell leaves it: the bundle and its fallbacks."""
    bundle = _bundle()
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%copilot can PC1 reach 10.0.0.9?", execution_count=1)
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                TURN_MIME: bundle,
                "text/markdown": render_markdown(bundle["turns"], project="OSPF lab", title=""),
                "text/plain": render_plain(bundle["turns"], project="OSPF lab", title=""),
            },
        )
    ]
    notebook.cells = [cell]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, path)


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_a_saved_notebook_renders_its_answers_without_widget_state(
    jupyter_server: Any, page: Any, screenshots: Path, ui: str
) -> None:
    name = f"saved-{ui}.ipynb"
    write_saved_notebook(jupyter_server.root_dir / name)
    page.goto(jupyter_ui.notebook_url(jupyter_server.url, jupyter_server.token, name, ui))
    saved = page.locator(".jp-gns3-copilot-saved")
    saved.wait_for()
    jupyter_ui.set_theme(page, dark=False)

    assert saved.count() == 1
    # The renderer won over the Markdown fallback.
    assert page.locator(".jp-OutputArea-output .jp-RenderedMarkdown").count() == 0
    turns = saved.locator(".jp-gns3-copilot-turn")
    assert turns.count() == len(SHOWN)
    assert turns.nth(0).locator(".gns3c-md strong").inner_text() == "VLAN"
    assert "VLAN basics" in turns.nth(0).locator(".gns3c-footer").inner_text()

    ping = turns.nth(1).locator(".gns3c-tool")
    head = ping.locator(".gns3c-tool-head")
    assert head.locator(".gns3c-tool-title").inner_text() == (
        "ran ping 10.0.0.9 -c 2 on PC1 · 1 failed check"
    )
    assert ping.locator(".gns3c-badge").inner_text() == "failed"
    assert head.get_attribute("aria-expanded") == "false"
    head.click()
    assert "not reachable" in ping.locator(".gns3c-devices pre").inner_text()
    assert turns.nth(1).locator(".gns3c-md").last.inner_text() == "PC1 cannot reach 10.0.0.9."

    refusal = turns.nth(2).locator(".gns3c-tool")
    refusal.locator(".gns3c-tool-head").click()
    assert refusal.locator(".gns3c-refusal").inner_text().startswith("Teaching mode:")
    assert "Explain to the user" not in saved.inner_text()
    assert "HTTP 401" in turns.nth(3).locator(".gns3c-error").inner_text()
    footer = saved.locator(".gns3c-saved-footer")
    assert footer.locator("span").first.inner_text() == (
        "GNS3 Copilot · OSPF lab · session 3f2c9a10 · Teaching mode · saved answer"
    )
    assert footer.locator("button.gns3c-continue").inner_text() == (
        "Continue in the Copilot sidebar"
    )
    jupyter_ui.assert_readable(page, ".jp-gns3-copilot-saved", "light", at_least=12)

    jupyter_ui.set_theme(page, dark=True)
    jupyter_ui.assert_readable(page, ".jp-gns3-copilot-saved", "dark", at_least=12)
    jupyter_ui.screenshot(page, saved, screenshots / f"saved-{ui}-dark.png")
    jupyter_ui.set_theme(page, dark=False)
    assert [e for e in page.page_errors if "gns3" in e.lower()] == []
