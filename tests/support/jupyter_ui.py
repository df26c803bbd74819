"""Driving JupyterLab 4 and Notebook 7 pages from Playwright: open a notebook, wait for a
usable kernel, run cells, read their outputs, switch themes, save.

Both front ends are reached through `window.jupyterapp` (the servers start with
`expose_app_in_browser`); its `shell.currentWidget` is the notebook panel in both.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest

from jupyter_gns3_copilot.testing.local_stack import JupyterServer
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

REPO = Path(__file__).resolve().parents[2]
KERNEL_READY_TIMEOUT_MS = 90_000
CELL_TIMEOUT_MS = 120_000

# The kernel status turns idle 1.5-2 s before its connection is usable, and a cell run in
# that window is silently dropped: wait for all three (jupyter.md).
_KERNEL_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const context = panel && panel.sessionContext;
  const kernel = context && context.session && context.session.kernel;
  return !!(context && context.isReady && kernel && kernel.connectionStatus === "connected"
            && kernel.status === "idle");
}"""

_CELL_OUTPUT_TEXT = """(index) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const outputs = panel.content.widgets[index].model.outputs.toJSON();
  return JSON.stringify(outputs);
}"""


# Text/background contrast (WCAG) of the main kinds of text in a copilot output (the widget,
# a saved turn); backgrounds are composited up the ancestors, so translucent theme colours
# count as they look.
_CONTRASTS = """([rootSelector, selectors]) => {
  const parse = (c) => {  // rgb(a)(...) or color(srgb ...) as color-mix() computes
    const m = c.match(/^(rgba?|color)\\((?:srgb )?([^)]+)\\)/);
    if (!m) throw new Error("unparsed colour " + c);
    const p = m[2].split(/[ ,/]+/).filter(Boolean).map(Number);
    const scale = m[1] === "color" ? 255 : 1;
    return [p[0] * scale, p[1] * scale, p[2] * scale, p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
  };
  const background = (el) => {
    const layers = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      layers.push(parse(getComputedStyle(node).backgroundColor));
    }
    return layers.reverse().reduce((acc, layer) => over(layer, acc), [255, 255, 255, 1]);
  };
  const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (el) => {
    const bg = background(el);
    const fg = over(parse(getComputedStyle(el).color), bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  };
  const root = document.querySelector(rootSelector);
  const out = {};
  for (const selector of selectors) {
    const el = root.querySelector(selector);
    if (el) out[selector] = Math.round(ratio(el) * 100) / 100;
  }
  return out;
}"""

# The kinds of text of a copilot output: answer, question, tool cards (opened), device
# tables, badges, footer, notes.
READABLE = [
    ".gns3c-md p",
    ".gns3c-md a",
    ".gns3c-user-text",
    ".gns3c-tool-title",
    ".gns3c-tool-name",
    ".gns3c-args code",
    ".gns3c-device-name",
    ".gns3c-status",
    ".gns3c-output",
    ".gns3c-device-error",
    ".gns3c-device-blocked",
    ".gns3c-badge",
    ".gns3c-kv th",
    ".gns3c-refusal",
    ".gns3c-footer span",
    ".gns3c-note",
    ".gns3c-brand",
    ".gns3c-header",
    ".gns3c-saved-footer",
    ".gns3c-continue",
    ".gns3c-error",
]


def assert_readable(
    page: Any, root: str, theme: str, at_least: int, selectors: list[str] = READABLE
) -> None:
    """Every kind of text (`selectors`) found under the first `root` has a WCAG contrast of
    4.5 or more; at least `at_least` kinds are found."""
    contrasts = page.evaluate(_CONTRASTS, [root, selectors])
    assert len(contrasts) >= at_least, (contrasts, selectors)
    low = {selector: value for selector, value in contrasts.items() if value < 4.5}
    assert not low, f"text hard to read in the {theme} theme (contrast < 4.5): {low}"


# Front-end settings of the test servers: no news pop-up over the screenshots.
QUIET_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def configure_front_end(work: Path, settings: Mapping[str, Any] = QUIET_SETTINGS) -> Path:
    """Configure the JupyterLab / Notebook 7 server `local_stack` starts in `work`: the app
    exposed to the page (`window.jupyterapp`), user settings (`settings`) and workspaces
    under `work`; returns the user settings directory."""
    settings_dir = work / "user-settings"
    front_end = {
        "expose_app_in_browser": True,
        "user_settings_dir": str(settings_dir),
        "workspaces_dir": str(work / "workspaces"),
    }
    (work / "config").mkdir(parents=True, exist_ok=True)
    (work / "config" / "jupyter_lab_config.json").write_text(
        json.dumps({"LabApp": front_end, "JupyterNotebookApp": front_end})
    )
    for name, values in settings.items():
        path = settings_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    return settings_dir


@dataclass
class LabStack:
    """A `local_stack` Jupyter server on the lab with the scripted model, and the project
    its test works on."""

    server: JupyterServer
    llm: ScriptedLLM
    project_id: str

    def api(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.server.url,
            timeout=10.0,
            headers={"Authorization": f"token {self.server.token}"},
        )


def checkout_jupyter_path(base: Path) -> str:
    """A JUPYTER_PATH entry (searched before the venv's) holding this checkout's built
    labextension, so the pages load the front end under test; JUPYTER_PATH kept after it."""
    built = REPO / "jupyter_gns3_copilot" / "labextension"
    if not (built / "package.json").exists():
        pytest.skip(f"the front end is not built ({built}): run make frontend")
    path = base / "jupyter-path"
    (path / "labextensions").mkdir(parents=True)
    (path / "labextensions" / "jupyter-gns3-copilot").symlink_to(built)
    return os.pathsep.join(filter(None, [str(path), os.environ.get("JUPYTER_PATH")]))


@contextlib.contextmanager
def checkout_front_end(base: Path) -> Iterator[None]:
    """Servers started inside (they inherit the environment, as `local_stack`'s do) load
    this checkout's front end (`checkout_jupyter_path`)."""
    before = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = checkout_jupyter_path(base)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = before


def write_notebook(path: Path, cells: list[str]) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, path)


def notebook_url(server_url: str, token: str, name: str, ui: str) -> str:
    """The page of notebook `name`; in JupyterLab with its workspace reset, so the tabs of
    an earlier test (their outputs) are not restored beside it."""
    if ui == "lab":
        return f"{server_url}lab/tree/{name}?reset&token={token}"
    return f"{server_url}notebooks/{name}?token={token}"


def open_notebook(page: Any, server_url: str, token: str, name: str, ui: str) -> None:
    """Open `name` in JupyterLab (`ui="lab"`) or Notebook 7 and wait for its kernel."""
    page.goto(notebook_url(server_url, token, name, ui))
    wait_kernel_ready(page)


def wait_kernel_ready(page: Any) -> None:
    page.wait_for_function(_KERNEL_READY, timeout=KERNEL_READY_TIMEOUT_MS, polling=200)


def run_cell(page: Any, index: int) -> None:
    """Start running cell `index` and return at once (see `wait_for_output`): the command's
    promise, which resolves only when the cell has run, is deliberately not awaited."""
    page.evaluate(
        """(index) => {
          const panel = window.jupyterapp.shell.currentWidget;
          panel.content.activeCellIndex = index;
          void window.jupyterapp.commands.execute("notebook:run-cell");
        }""",
        index,
    )


def cell_outputs(page: Any, index: int) -> list[dict[str, Any]]:
    return json.loads(page.evaluate(_CELL_OUTPUT_TEXT, index))


def cell_text(page: Any, index: int) -> str:
    """The stream and text/plain outputs of a cell; raises with the traceback on errors."""
    texts = []
    for output in cell_outputs(page, index):
        if output.get("output_type") == "error":
            raise AssertionError(
                f"cell {index} failed: {output.get('ename')}: {output.get('evalue')}\n"
                + "\n".join(output.get("traceback", []))
            )
        if output.get("output_type") == "stream":
            texts.append(output["text"])
        elif "text/plain" in output.get("data", {}):
            texts.append(output["data"]["text/plain"])
    return "".join(texts)


def wait_for_output(page: Any, index: int, marker: str, timeout_ms: int = CELL_TIMEOUT_MS) -> str:
    """Wait until cell `index` prints `marker` (or fails); return its text output."""
    page.wait_for_function(
        """([index, marker]) => {
          const panel = window.jupyterapp.shell.currentWidget;
          const outputs = panel.content.widgets[index].model.outputs.toJSON();
          return outputs.some((o) => o.output_type === "error" ||
            (o.output_type === "stream" && String(o.text).includes(marker)));
        }""",
        arg=[index, marker],
        timeout=timeout_ms,
        polling=100,
    )
    return cell_text(page, index)


def set_theme(page: Any, dark: bool) -> None:
    theme = "JupyterLab Dark" if dark else "JupyterLab Light"
    page.evaluate(
        "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme
    )
    page.wait_for_function(
        "(light) => document.body.dataset.jpThemeLight === light", arg="false" if dark else "true"
    )
    page.wait_for_timeout(300)  # let the theme's CSS variables apply before screenshots


def save_notebook(page: Any) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )


def screenshot(page: Any, element: Any, path: Path) -> None:
    """A screenshot of `element`, with the window made tall enough to show all of it (the
    notebook scrolls inside its own panel, so a taller element would be cut)."""
    size = page.viewport_size
    height = element.bounding_box()["height"]
    tall = max(size["height"], int(height) + 400)
    page.set_viewport_size({"width": size["width"], "height": tall})
    element.evaluate("(el) => el.scrollIntoView({block: 'center'})")  # clear of sticky bars
    page.wait_for_timeout(200)
    element.screenshot(path=path, animations="disabled", caret="hide")
    page.set_viewport_size(size)


# Records every text a tool card's one-line header shows (a MutationObserver sees each
# change, however short-lived).
WATCH_WIDGET = """() => {
  window.__gns3cSeen = [];
  const seen = window.__gns3cSeen;
  const record = () => {
    for (const head of document.querySelectorAll(".gns3c-tool-head")) {
      const text = head.querySelector(".gns3c-tool-title").textContent;
      if (!seen.includes(text)) seen.push(text);
    }
  };
  new MutationObserver(record).observe(document.body,
    {subtree: true, childList: true, characterData: true, attributes: true});
}"""


def cell(page: Any, index: int) -> Any:
    """The notebook's cell `index` (outputs are scoped by cell: each turn has its own)."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def live(page: Any, index: int) -> Any:
    """The live widget in cell `index` (only while its turn runs)."""
    return cell(page, index).locator(".gns3c")


def saved(page: Any, index: int) -> Any:
    """The saved answer in cell `index` (once its turn has ended)."""
    return cell(page, index).locator(".jp-gns3-copilot-saved")
