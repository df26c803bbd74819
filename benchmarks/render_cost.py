"""What the front end costs: the widget's render work per streamed event, and the time from
opening a saved notebook to all its copilot outputs rendered.

In Debian's chromium driven by Playwright, with this checkout's build (make frontend):

- per event: the widget bundle (static/widget.js + widget.css) on a stub page with a
  stand-in anywidget model (no kernel), playing a turn as the kernel sends it: a begin,
  then one ops batch per event (answer text in 8-character pieces, a tool call whose
  arguments grow, its progress lines, its result). Timed in the page: the synchronous
  handling of each batch (reduce + DOM update), then a forced layout; p50/p95/max, and
  the same for the tool card opened (its body re-rendered on each change).
- saved notebook: `jupyter lab` on 127.0.0.1 with this checkout's labextension (a
  JUPYTER_PATH entry searched first); a notebook of TURNS cells, each holding a saved turn
  bundle (the shared fixtures' turns), notebook windowing off so every cell renders on
  open; from `page.goto` to TURNS rendered outputs, median of RUNS page loads (after one
  warm-up load), and the same loads' time to the first cell for comparison.

    python benchmarks/render_cost.py [--turns 50] [--runs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
from _common import parse_args

REPO = Path(__file__).resolve().parents[1]
STATIC = REPO / "jupyter_gns3_copilot" / "static"
FIXTURES = REPO / "tests" / "fixtures" / "turns"
CHROMIUM = os.environ.get("GNS3_COPILOT_CHROMIUM", "/usr/bin/chromium")
ORIGIN = "http://render.bench"
TURN_MIME = "application/vnd.gns3-copilot.turns+json"

PAGE = """<!doctype html><html><head><meta charset="utf-8">
<link rel="stylesheet" href="/widget.css"></head><body><div id="host"></div>
<script type="module">
import widget from "/widget.js";
class Model {
  constructor(state) { this.state = state; this.handlers = {}; }
  get(key) { return this.state[key]; }
  set(key, value) { this.state[key] = value; this.trigger("change:" + key); }
  on(name, callback) { (this.handlers[name] = this.handlers[name] || []).push(callback); }
  off() {}
  trigger(name, ...args) { for (const c of this.handlers[name] || []) c(...args); }
  send() {}
}
window.play = (batches, openCard) => {
  const model = new Model({project_id: "p", project_name: "Bench", session_id: "s",
    title: "", turns: [], can_send: true, instance_id: "bench-" + Math.random()});
  widget.initialize({model});
  const el = document.createElement("div");
  document.getElementById("host").replaceChildren(el);
  widget.render({model, el});
  model.trigger("msg:custom", {type: "begin", turn: 0, user: "Why can't PC1 ping PC3?"});
  const times = [];
  batches.forEach((ops, batch) => {
    const start = performance.now();
    model.trigger("msg:custom", {type: "ops", turn: 0, batch, ops});
    void el.getBoundingClientRect().height;  // the layout the browser does before paint
    times.push(performance.now() - start);
    if (openCard && batch === 0) el.querySelector(".gns3c-tool-head")?.click();
  });
  return times;
};
window.ready = true;
</script></body></html>"""


def stream_batches() -> list[list[dict[str, Any]]]:
    """One ops batch per streamed event of a typical turn (~300 events)."""
    answer = (
        "## Diagnosis\n\n**PC3 does not answer.** Its console timed out:\n\n"
        "- `PC1` has `10.0.0.1/24` and its ping to PC3 fails\n"
        "- `PC2` could not run `reload`\n\n"
    ) * 6
    arguments = json.dumps(
        {
            "devices": [
                {"device": f"PC{n}", "commands": ["show ip", "ping 10.0.0.3 -c 2"]}
                for n in range(1, 4)
            ]
        }
    )
    tool: dict[str, Any] = {
        "kind": "tool",
        "id": "c1",
        "name": "run_vpcs_commands",
        "arguments": "",
        "complete": False,
        "state": "arguments",
        "progress": [],
        "output": None,
        "summary": None,
        "outcome": None,
        "note": None,
    }
    batches: list[list[dict[str, Any]]] = [[{"op": "item", "index": 0, "item": {**tool}}]]
    for size in range(8, len(arguments) + 8, 8):
        tool = {**tool, "arguments": arguments[:size]}
        batches.append([{"op": "item", "index": 0, "item": tool}])
    tool = {**tool, "complete": True, "state": "running"}
    for n in range(40):
        line = {
            "message": f"PC{n % 3 + 1}> ping 10.0.0.3\n84 bytes from 10.0.0.3 seq={n}",
            "elapsed": n / 4,
            "node": f"PC{n % 3 + 1}",
        }
        tool = {**tool, "progress": [*tool["progress"], line]}
        batches.append([{"op": "item", "index": 0, "item": tool}])
    results = [
        {
            "device_name": f"PC{n}",
            "status": "success",
            "commands": [],
            "output": "\n".join(f"line {i}" for i in range(30)),
        }
        for n in range(1, 4)
    ]
    tool = {
        **tool,
        "state": "done",
        "output": json.dumps(results),
        "outcome": "ok",
        "summary": "ran `show ip`, `ping 10.0.0.3 -c 2` on PC1, PC2, PC3 · 3 ok",
    }
    batches.append([{"op": "item", "index": 0, "item": tool}])
    for start in range(0, len(answer), 8):
        batches.append([{"op": "append", "index": 1, "text": answer[start : start + 8]}])
    return batches


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (
        f"{len(times)} events: p50 {statistics.median(times):.2f} ms, "
        f"p95 {p95:.2f} ms, max {max(times):.2f} ms, mean {statistics.fmean(times):.2f} ms"
    )


def per_event(context: Any) -> None:
    page = context.new_page()

    def serve(route: Any, request: Any) -> None:
        path = request.url[len(ORIGIN) :]
        if path == "/":
            route.fulfill(body=PAGE, content_type="text/html")
        elif path in ("/widget.js", "/widget.css"):
            kind = "text/javascript" if path.endswith(".js") else "text/css"
            route.fulfill(body=(STATIC / path[1:]).read_text(), content_type=kind)
        else:
            route.fulfill(status=404)

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    page.wait_for_function("() => window.ready === true")
    batches = stream_batches()
    page.evaluate("(b) => window.play(b, false)", batches)  # warm-up (JIT, fonts)
    for open_card in (False, True):
        times = page.evaluate("([b, o]) => window.play(b, o)", [batches, open_card])
        label = "tool card open  " if open_card else "tool card closed"
        print(f"widget, per streamed event, {label}: {summary(times)}")
    page.close()


def saved_notebook(path: Path, turns: int) -> None:
    fixtures = [json.loads(p.read_text())["turn"] for p in sorted(FIXTURES.glob("*.json"))]
    notebook = nbformat.v4.new_notebook()
    for n in range(turns):
        turn = fixtures[n % len(fixtures)]
        bundle = {
            "version": 1,
            "project_id": "p",
            "project_name": "Bench",
            "session_id": "s",
            "mode": "teaching",
            "turns": [turn],
        }
        cell = nbformat.v4.new_code_cell(f"%copilot question {n}", execution_count=n + 1)
        cell.outputs = [
            nbformat.v4.new_output(
                "display_data",
                data={
                    TURN_MIME: bundle,
                    "text/markdown": f"question {n}",
                    "text/plain": f"question {n}",
                },
            )
        ]
        notebook.cells.append(cell)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, path)


@contextlib.contextmanager
def jupyter_lab(work: Path) -> Iterator[tuple[str, str]]:
    built = REPO / "jupyter_gns3_copilot" / "labextension"
    if not (built / "package.json").exists():
        sys.exit(f"the front end is not built ({built}): run make frontend")
    labext = work / "jupyter-path" / "labextensions"
    labext.mkdir(parents=True)
    (labext / "jupyter-gns3-copilot").symlink_to(built)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = secrets.token_hex(16)
    root = work / "notebooks"
    root.mkdir()
    # Every cell rendered on open (no windowing): "all outputs rendered" means all of them.
    settings = work / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    settings /= "tracker.jupyterlab-settings"
    settings.write_text(json.dumps({"windowingMode": "none"}))
    env = {
        **os.environ,
        "JUPYTER_PATH": str(work / "jupyter-path"),
        "JUPYTERLAB_SETTINGS_DIR": str(work / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(work / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--allow-root",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
    ]
    with (work / "server.log").open("wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}api/status?token={token}").status_code == 200:
                    break
            time.sleep(0.25)
        else:
            sys.exit(f"jupyter lab did not start: {(work / 'server.log').read_text()}")
        yield url, token
    finally:
        with contextlib.suppress(httpx.HTTPError):
            for kernel in httpx.get(f"{url}api/kernels?token={token}").json():
                httpx.delete(f"{url}api/kernels/{kernel['id']}?token={token}")
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:  # a loaded machine: do not leave it running
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)


def open_saved(context: Any, turns: int, runs: int) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="gns3c-render-") as tmp,
        jupyter_lab(Path(tmp)) as (url, token),
    ):
        saved_notebook(Path(tmp) / "notebooks" / "saved.ipynb", turns)
        first_cell, all_outputs = [], []
        for _ in range(runs + 1):  # the first load warms the server's and browser's caches
            page = context.new_page()
            start = time.perf_counter()
            page.goto(f"{url}lab/tree/saved.ipynb?token={token}")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            cell = time.perf_counter() - start
            page.wait_for_function(
                "(n) => document.querySelectorAll('.jp-gns3-copilot-saved').length >= n",
                arg=turns,
                timeout=120_000,
                polling="raf",
            )
            total = time.perf_counter() - start
            first_cell.append(cell)
            all_outputs.append(total)
            page.close()
        print(
            f"saved notebook of {turns} copilot outputs, JupyterLab, median of {runs}: "
            f"first cell {statistics.median(first_cell[1:]) * 1000:.0f} ms, "
            f"all outputs rendered {statistics.median(all_outputs[1:]) * 1000:.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parse_args(parser, turns=2, runs=1)
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="gns3c-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
            viewport={"width": 1280, "height": 1000},
        )
        try:
            per_event(context)
            open_saved(context, args.turns, args.runs)
        finally:
            context.close()


if __name__ == "__main__":
    main()
