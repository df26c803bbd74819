"""`make demo`: the copilot in a notebook, on a real GNS3 lab, executed headlessly.

Starts the local GNS3 lab (gns3-server 3.0.6 + VPCS), a chat model (the one named by
`OPENAI_API_KEY` / `OPENAI_BASE_URL` / `GNS3_COPILOT_MODEL`, otherwise the scripted test
model replaying `tests/notebook_scripts/01-getting-started.json`), and a Jupyter server
with the copilot extension; prepares the project "Copilot demo"; executes
`notebooks/01-getting-started.ipynb` with nbclient while printing a transcript of what the
notebook shows, streamed events included (decoded from the chat widget's live messages);
writes the executed notebook and an HTML rendering to build/demo/; stops everything.
"""

from __future__ import annotations

import copy
import os
import shutil
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from jupyter_gns3_copilot.labkit import LabServer
from jupyter_gns3_copilot.notebook.render_text import format_stats
from jupyter_gns3_copilot.notebook.transcript import tool_output_text
from jupyter_gns3_copilot.testing.local_stack import (
    NOTEBOOK_PROJECTS,
    JupyterServer,
    ModelEndpoint,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "01-getting-started"
SCRIPT = ROOT / "tests" / "notebook_scripts" / f"{NOTEBOOK}.json"
OUT_DIR = ROOT / "build" / "demo"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CELL_TIMEOUT = 300


def say(text: str = "") -> None:
    print(text, flush=True)


def banner(text: str) -> None:
    say(f"\n{'=' * 78}\n{text}\n{'=' * 78}")


class WidgetTranscript:
    """Turns the chat widget's live messages (`notebook/widget.py`: begin, ops, turns state) back
    into readable lines: the user's message, the text as it streams, each tool call once
    its arguments are complete, progress, each tool's result per device, the footer."""

    def __init__(self, write: Any) -> None:
        self.write = write
        self.items: dict[tuple[str, int, int], dict[str, Any]] = {}
        self.turns: dict[str, int] = {}
        self.at_line_start = True

    def line(self, text: str) -> None:
        if not self.at_line_start:
            self.write("\n")
        self.write(text + "\n")
        self.at_line_start = True

    def message(self, comm_id: str, data: dict[str, Any]) -> None:
        method = data.get("method")
        if method == "custom":
            self.custom(comm_id, data.get("content") or {})
        elif method == "update" and "turns" in (data.get("state") or {}):
            self.finished(comm_id, data["state"]["turns"])

    def custom(self, comm_id: str, content: dict[str, Any]) -> None:
        if content.get("type") == "begin":
            self.turns[comm_id] = content["turn"]
            if content.get("user"):
                self.line(f"You: {content['user']}")
            self.line("Copilot:")
        elif content.get("type") == "ops":
            for op in content.get("ops", []):
                key = (comm_id, content["turn"], op["index"])
                if op["op"] == "append":
                    self.write(op["text"])
                    self.at_line_start = op["text"].endswith("\n")
                else:
                    self.item(key, op["item"])

    def item(self, key: tuple[str, int, int], item: dict[str, Any]) -> None:
        before = self.items.get(key, {})
        self.items[key] = item
        if item["kind"] == "error":
            self.line(f"Error: {item['text']}")
            return
        if item["kind"] != "tool":
            return
        if item["complete"] and not before.get("complete"):
            self.line(f"-> {item['name']} {item['arguments'] or ''}".rstrip())
        for progress in item["progress"][len(before.get("progress", [])) :]:
            self.line(f"   ... {progress['message']}")
        if item["output"] is not None and before.get("output") is None:
            self.line(tool_output_text(item["name"], item["output"]))

    def finished(self, comm_id: str, turns: list[dict[str, Any]]) -> None:
        if not turns or turns[-1].get("status") == "running":
            return
        turn = turns[-1]
        footer = " · ".join(p for p in (turn["status"], format_stats(turn.get("stats", {}))) if p)
        self.line(f"[{footer}]")


class TranscribingClient(NotebookClient):
    """nbclient that prints each cell and what it shows while the notebook runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started = time.monotonic()
        self.widgets = WidgetTranscript(lambda text: print(text, end="", flush=True))
        self.on_cell_start = self.show_cell

    def show_cell(self, cell: Any, cell_index: int) -> None:
        if cell.cell_type == "markdown":
            heading = next((ln for ln in cell.source.splitlines() if ln.startswith("#")), "")
            if heading:
                banner(heading.lstrip("# "))
            return
        elapsed = time.monotonic() - self.started
        say(f"\n[{elapsed:6.1f} s] In [{cell_index}]:")
        say(textwrap.indent(cell.source, "    "))
        say("")

    def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            print(content["text"], end="", flush=True)
        elif kind in ("display_data", "execute_result"):
            data = content.get("data", {})
            if WIDGET_VIEW not in data and "text/plain" in data:
                text = data["text/plain"]
                if "image/svg+xml" in data:
                    text = "(the topology diagram, SVG)"
                say(text)
        elif kind == "error":
            say(f"{content['ename']}: {content['evalue']}")
        elif kind == "comm_msg":
            self.widgets.message(content.get("comm_id", ""), content.get("data") or {})
        return super().process_message(msg, cell, cell_index)


def without_widget_views(notebook: Any) -> Any:
    """A copy showing each chat as its saved Markdown transcript (renders without the
    widget's JavaScript, e.g. in a static HTML page opened offline)."""
    static = copy.deepcopy(notebook)
    static.metadata.pop("widgets", None)
    for cell in static.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    return static


def write_outputs(notebook: Any) -> tuple[Path, Path]:
    from nbconvert import HTMLExporter

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    executed = OUT_DIR / f"{NOTEBOOK}.ipynb"
    nbformat.write(notebook, executed)
    html, _ = HTMLExporter().from_notebook_node(without_widget_views(notebook))
    page = OUT_DIR / f"{NOTEBOOK}.html"
    page.write_text(html, encoding="utf-8")
    return executed, page


def run_notebook(server: JupyterServer) -> Any:
    notebook = nbformat.read(ROOT / "notebooks" / f"{NOTEBOOK}.ipynb", as_version=4)
    client = TranscribingClient(
        notebook,
        kernel_name="python3",
        store_widget_state=True,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(ROOT / "notebooks")}},
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    try:
        client.execute(env={**env, **server.kernel_env()})
    except CellExecutionError as exc:
        say(f"\nThe notebook stopped at an error:\n{str(exc)[-2000:]}")
    return notebook


def main() -> int:
    real = ModelEndpoint.from_environment()
    banner("GNS3 Copilot demo: notebooks/01-getting-started.ipynb, executed headlessly")
    if real is None:
        say(
            "MODEL: the SCRIPTED test model (OPENAI_API_KEY is not set). Its answers are\n"
            f"replayed from {SCRIPT.relative_to(ROOT)}: no language model is involved.\n"
            "The lab, the consoles, the tool calls and their outputs are real.\n"
            "Set OPENAI_API_KEY (and OPENAI_BASE_URL, GNS3_COPILOT_MODEL) to use a real model."
        )
    else:
        say(f"MODEL: {real.describe()} (from OPENAI_API_KEY / OPENAI_BASE_URL).")

    began = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="copilot-demo-"))
    scripted = None if real else ScriptedLLM(SCRIPT, models=["scripted-model"]).start()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    try:
        model = real or ModelEndpoint.scripted_model(scripted)
        say("\nStarting the local GNS3 lab (the first run installs gns3-server: a minute)...")
        with LabServer(instance_dir=work / "lab") as lab:
            say(f"GNS3 {lab.url} is up ({time.monotonic() - began:.1f} s).")
            recipe = NOTEBOOK_PROJECTS[NOTEBOOK]
            say(f"Preparing the project {recipe.name!r} (two VPCS on a switch, addressed)...")
            prepare_projects(lab, [recipe])
            # The notebook runs headless: nobody is there to approve the copilot's changes.
            server = JupyterServer(
                lab, model, work / "jupyter", traits={"require_approval": "none"}
            )
            try:
                with server:
                    say(f"Jupyter server with the copilot extension: {server.url}")
                    notebook = run_notebook(server)
                    say("\nStopping the Jupyter server and the lab...")
            finally:
                if server.log_path.exists():
                    shutil.copyfile(server.log_path, OUT_DIR / "jupyter-server.log")
    finally:
        if scripted is not None:
            scripted.stop()
        shutil.rmtree(work, ignore_errors=True)
    if scripted is not None and scripted.remaining:
        say(f"Note: {scripted.remaining} scripted replies were not used.")
    executed, page = write_outputs(notebook)
    banner("Done")
    say(f"Executed notebook: {executed.relative_to(ROOT)} (its copilot answers are saved")
    say("                   in it: JupyterLab shows them again with no kernel)")
    say(f"HTML rendering:    {page.relative_to(ROOT)}")
    say(f"Server log:        {(OUT_DIR / 'jupyter-server.log').relative_to(ROOT)}")
    say(f"Everything is stopped ({time.monotonic() - began:.0f} s in all).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
