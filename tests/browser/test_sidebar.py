"""The Copilot sidebar in JupyterLab 4 and Notebook 7, end to end: browser -> server
extension (REST + SSE, no kernel) against the local GNS3 lab (real gns3-server and VPCS)
and the scripted model (a TEST DOUBLE replaying `tests/notebook_scripts/browser-sidebar.json`).

JupyterLab: the sidebar streams a turn that runs `show ip` on the real PC1; Stop ends a
long turn through the server's abort route; a session is renamed (the dialog), pinned
(moves to the top), found by search, and deleted after confirming; a session is exported
into the open notebook after its active cell and as a Markdown download; the palette lists
the commands; Show Topology draws the lab inline, in the dark theme's colours too; the
model API key set through its password dialog reaches `copilot/llm-config` and no file of
the server's (user settings, workspaces, data, log) holds it, Remove key (offered only
once the user has a key of their own) removes it; the Settings Editor's model field
reaches `copilot/llm-config`, its form has no key field, and the sidebar's status names
the new model; the sidebar's text is readable in the dark theme.
Following the notebook: the sidebar chooses the active notebook's project (from its saved
answer, then from what its kernel's `%copilot use` recorded on the server); a saved answer
whose conversation the server does not have says so on Continue; a `%copilot run` leaves a
saved output with its device output open and nothing to continue; the topology card lists
the links as a table and an answer's code block copies with its Copy button.
Notebook 7: the sidebar opens from the command palette's command in the notebook page's
left area and streams a turn.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from support import jupyter_ui
from support.jupyter_ui import LabStack
from support.sidebar import SIDEBAR, ask, off_loop, open_sidebar, session_row, wait_idle

from jupyter_gns3_copilot.testing.local_stack import (
    JupyterServer,
    ModelEndpoint,
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

SCRIPT = Path(__file__).resolve().parents[1] / "notebook_scripts" / "browser-sidebar.json"
PROJECT = ProjectRecipe("Copilot sidebar", {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"})
NOTEBOOK = "sidebar.ipynb"
QUESTION = "Which address does PC1 have?"
LONG = "Tell me the long history of the lab"
NOTEBOOK7_QUESTION = "Hello from Notebook 7"
RENAMED = "Addresses of the PCs"
SECRET = "sk-sidebar-test-key-5d1f"
FOLLOWED = "followed.ipynb"
KERNEL_NOTEBOOK = "kernel.ipynb"
LINKS = "Which links does the lab have?"
TURN_MIME = "application/vnd.gns3-copilot.turns+json"

_TURN = SIDEBAR + " .jp-gns3-copilot-sidebar-turn"
# Records each status a sidebar turn shows, so a turn seen only when done fails the test.
_WATCH_TURNS = """(selector) => {
  window.__sidebarSeen = [];
  const record = () => {
    document.querySelectorAll(selector).forEach((turn, index) => {
      const entry = index + ":" + turn.dataset.status;
      if (!window.__sidebarSeen.includes(entry)) window.__sidebarSeen.push(entry);
    });
  };
  new MutationObserver(record).observe(document.body,
    {subtree: true, childList: true, attributes: true, characterData: true});
}"""

_READABLE = [
    ".jp-gns3-copilot-sidebar-heading",
    ".jp-gns3-copilot-sidebar-mode-badge",
    ".jp-gns3-copilot-sidebar-status-part",
    ".jp-gns3-copilot-sidebar-project",
    ".jp-gns3-copilot-sidebar-session-title",
    ".jp-gns3-copilot-sidebar-search",
    ".jp-gns3-copilot-turn",
    ".jp-gns3-copilot-sidebar-input",
    ".jp-gns3-copilot-sidebar-send",
    ".jp-gns3-copilot-sidebar-new",
    ".jp-gns3-copilot-sidebar-icon-button",
]


@dataclass
class SidebarStack(LabStack):
    work_dir: Path
    """Everything of the server: config, data, runtime, user settings, workspaces, log."""

    def sessions(self) -> list[dict[str, Any]]:
        with self.api() as api:
            response = api.get(f"copilot/projects/{self.project_id}/chat/sessions")
            response.raise_for_status()
            return response.json()


@pytest.fixture(scope="module")
def stack(gns3_lab: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SidebarStack]:
    """`jupyter lab` (Notebook 7 pages included) with the copilot extension on the lab and
    the scripted model, the project PC1 (10.0.0.1/24) + PC2 (10.0.0.2/24) on a switch,
    started, and a notebook to export into."""
    work = tmp_path_factory.mktemp("sidebar-server")
    jupyter_ui.configure_front_end(work)
    root = work / "notebooks"
    root.mkdir()
    jupyter_ui.write_notebook(root / NOTEBOOK, ["print('first')", "print('last')"])
    project_ids = off_loop(prepare_projects, gns3_lab, [PROJECT])
    try:
        with (
            jupyter_ui.checkout_front_end(work),
            ScriptedLLM(SCRIPT, models=["scripted-model"]) as llm,
            JupyterServer(
                gns3_lab, ModelEndpoint.scripted_model(llm), work, app="lab", root_dir=root
            ) as server,
        ):
            yield SidebarStack(server, llm, project_ids[PROJECT.name], work)
    finally:
        off_loop(delete_projects, gns3_lab, project_ids.values())


def _stream_a_turn(page: Any, sidebar: Any, stack: SidebarStack, screenshots: Path) -> str:
    """A question streams in (seen running, then done) and runs `show ip` on the real PC1;
    the session is the server's (what the magics continue) and gets its title."""
    page.evaluate(_WATCH_TURNS, _TURN)
    turn = ask(page, sidebar, QUESTION)
    wait_idle(page)
    assert turn.get_attribute("data-status") == "done"
    assert page.evaluate("() => window.__sidebarSeen") == ["0:running", "0:done"]
    assert "10.0.0.1/24" in turn.inner_text()
    jupyter_ui.screenshot(page, sidebar, screenshots / "sidebar-lab-answered.png")

    [session] = stack.sessions()
    with stack.api() as api:
        history = api.get(
            f"copilot/projects/{stack.project_id}/chat/sessions/{session['thread_id']}/history"
        ).json()
    tool_results = [m["content"] for m in history["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 1 and "10.0.0.1/24" in tool_results[0], tool_results
    row = session_row(sidebar, session["thread_id"])
    row.locator(".jp-gns3-copilot-sidebar-session-title", has_text="PC1 address").wait_for()
    assert row.get_attribute("class").split().count("jp-mod-selected") == 1
    return session["thread_id"]


def _stop_a_turn(page: Any, sidebar: Any, stack: SidebarStack) -> str:
    """Stop, pressed while a long answer streams in a new chat, POSTs the real abort
    route; the server leaves the model's stream and the turn ends early."""
    aborts: list[Any] = []
    page.on(
        "response", lambda r: aborts.append(r) if r.url.split("?")[0].endswith("/abort") else None
    )
    sidebar.locator("button.jp-gns3-copilot-sidebar-new").click()
    assert sidebar.locator(".jp-gns3-copilot-sidebar-turn").count() == 0
    turn = ask(page, sidebar, LONG)
    turn.get_by_text("Chapter 2", exact=False).wait_for()
    stop = sidebar.locator("button.jp-gns3-copilot-sidebar-stop")
    assert stop.is_visible() and stop.is_enabled()
    stop.click()
    wait_idle(page, timeout_ms=20_000)
    assert not stop.is_visible()
    assert "Chapter 80" not in turn.inner_text(), "the whole answer streamed: not stopped"

    assert len(aborts) == 1, [r.url for r in aborts]
    assert aborts[0].request.method == "POST"
    assert aborts[0].status == 200 and aborts[0].json()["status"] == "ok", aborts[0].text()
    [long_request] = [
        r for r in stack.llm.chat_requests if r.body["messages"][-1].get("content") == LONG
    ]
    # The scripted model marks the request when its next chunk finds the connection gone
    # (chunks are 0.25 s apart); it has no event to wait on, so poll it with a deadline.
    deadline = time.monotonic() + 10
    while not long_request.disconnected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert long_request.disconnected, "the server kept reading the model after Stop"
    return aborts[0].url.split("/sessions/")[1].split("/")[0]


def _rename_and_pin(page: Any, sidebar: Any, stack: SidebarStack, first: str, long: str) -> None:
    """Rename through the dialog; pin moves the older session above the newer one."""
    rows = sidebar.locator(".jp-gns3-copilot-sidebar-session")
    rows.nth(1).wait_for()
    assert [rows.nth(i).get_attribute("data-session-id") for i in range(2)] == [long, first]

    session_row(sidebar, first).locator("button.jp-gns3-copilot-sidebar-rename").click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator("input").fill(RENAMED)
    dialog.locator("button.jp-mod-accept").click()
    session_row(sidebar, first).locator(
        ".jp-gns3-copilot-sidebar-session-title", has_text=RENAMED
    ).wait_for()

    session_row(sidebar, first).locator("button.jp-gns3-copilot-sidebar-pin").click()
    page.wait_for_function(
        """([sel, id]) => {
          const row = document.querySelector(sel + " .jp-gns3-copilot-sidebar-session");
          return row && row.dataset.sessionId === id && row.dataset.pinned === "true";
        }""",
        arg=[SIDEBAR, first],
        polling=100,
    )
    by_id = {s["thread_id"]: s for s in stack.sessions()}
    assert by_id[first]["title"] == RENAMED and by_id[first]["pinned"] is True
    assert by_id[long]["pinned"] is False
    assert [s["thread_id"] for s in stack.sessions()] == [first, long]

    search = sidebar.locator("input.jp-gns3-copilot-sidebar-search")
    search.fill("addresses")
    assert rows.count() == 1 and rows.first.get_attribute("data-session-id") == first
    search.fill("")


def _delete_after_confirming(page: Any, sidebar: Any, stack: SidebarStack, long: str) -> None:
    """Delete asks first: Cancel keeps the session, Delete removes it (list and server)."""
    dialog = page.locator(".jp-Dialog")
    session_row(sidebar, long).locator("button.jp-gns3-copilot-sidebar-delete").click()
    dialog.locator("button.jp-mod-reject").click()
    dialog.wait_for(state="detached")
    assert long in [s["thread_id"] for s in stack.sessions()]
    session_row(sidebar, long).locator("button.jp-gns3-copilot-sidebar-delete").click()
    dialog.locator("button.jp-mod-accept", has_text="Delete").click()
    session_row(sidebar, long).wait_for(state="detached")
    assert long not in [s["thread_id"] for s in stack.sessions()]


def _export_into_notebook(page: Any, sidebar: Any, first: str) -> None:
    """The first session's cells land after the notebook's active cell."""
    page.evaluate("() => { window.jupyterapp.shell.currentWidget.content.activeCellIndex = 0; }")
    session_row(sidebar, first).locator(".jp-gns3-copilot-sidebar-session-title").click()
    sidebar.locator(".jp-gns3-copilot-sidebar-turn", has_text="10.0.0.1/24").wait_for()
    sidebar.locator("button.jp-gns3-copilot-sidebar-export-notebook").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length > 2", polling=100
    )
    cells = page.evaluate("""() => window.jupyterapp.shell.currentWidget.content.model
        .sharedModel.toJSON().cells.map((c) => [c.cell_type, c.source])""")
    sources = [source for _, source in cells]
    assert sources[0] == "print('first')" and sources[-1] == "print('last')", sources
    exported = cells[1:-1]
    assert ["code", "%copilot run PC1: show ip"] in exported, exported
    markdown = "\n".join(source for kind, source in exported if kind == "markdown")
    assert QUESTION in markdown and "10.0.0.1/24" in markdown, exported


def _export_markdown(page: Any, sidebar: Any) -> None:
    """The selected session downloads as a Markdown file of the same content."""
    with page.expect_download() as download_info:
        sidebar.locator("button.jp-gns3-copilot-sidebar-export-markdown").click()
    download = download_info.value
    assert download.suggested_filename == f"{RENAMED}.md"
    text = Path(download.path()).read_text()
    # The server's Markdown export.
    assert QUESTION in text and "10.0.0.1/24" in text and "show ip" in text, text


def _palette_and_topology(page: Any, sidebar: Any) -> None:
    """The palette lists the copilot's commands; Show Topology draws the project."""
    page.evaluate("() => window.jupyterapp.commands.execute('apputils:activate-command-palette')")
    palette = page.locator(".lm-CommandPalette")
    palette.locator("input.lm-CommandPalette-input").fill("GNS3 Copilot")
    labels = palette.locator(".lm-CommandPalette-item .lm-CommandPalette-itemLabel")
    labels.first.wait_for()
    assert {
        "GNS3 Copilot: Open",
        "GNS3 Copilot: New Chat",
        "GNS3 Copilot: Show Topology",
        "GNS3 Copilot: Export Chat into the Notebook",
        "GNS3 Copilot: Set Model API Key",
    } <= set(labels.all_inner_texts())
    palette.locator("input.lm-CommandPalette-input").press("Escape")

    page.evaluate("() => window.jupyterapp.commands.execute('gns3-copilot:show-topology')")
    drawing = sidebar.locator(".jp-gns3-copilot-sidebar-topology-drawing svg")
    drawing.wait_for()
    names = drawing.locator("text").all_text_contents()
    for name in ("PC1", "PC2", "Switch1"):
        assert name in names, f"{name} is not in the diagram: {names}"


def _background_luminance(page: Any, selector: str) -> float:
    """The relative luminance (0 black .. 1 white) of the drawing's background fill."""
    return page.evaluate(
        """(selector) => {
          const fill = getComputedStyle(document.querySelector(selector)).fill;
          const [r, g, b] = fill.match(/[0-9.]+/g).map(Number).map((v) => v / 255);
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        }""",
        selector,
    )


_TOPOLOGY_BACKGROUND = SIDEBAR + " .jp-gns3-copilot-sidebar-topology-drawing rect.background"


def _dark_theme_contrast(page: Any, sidebar: Any, screenshots: Path) -> None:
    """The sidebar's text reads in the dark theme, and the topology drawing takes the
    theme's colours (a dark background), as the notebook's inline drawing does."""
    assert _background_luminance(page, _TOPOLOGY_BACKGROUND) > 0.8
    jupyter_ui.screenshot(page, sidebar, screenshots / "sidebar-lab-light.png")
    jupyter_ui.set_theme(page, dark=True)
    try:
        jupyter_ui.assert_readable(page, SIDEBAR, "dark", len(_READABLE), _READABLE)
        assert _background_luminance(page, _TOPOLOGY_BACKGROUND) < 0.2
        jupyter_ui.screenshot(page, sidebar, screenshots / "sidebar-lab-dark.png")
    finally:
        jupyter_ui.set_theme(page, dark=False)


def _is_llm_config_put(response: Any) -> bool:
    return response.request.method == "PUT" and "copilot/llm-config" in response.url


def _settings_editor_saves(page: Any, stack: SidebarStack) -> None:
    """The Settings Editor's form: a model name typed there reaches `copilot/llm-config`
    and the sidebar's status names it; the form has no key field."""
    page.evaluate("""() => window.jupyterapp.commands.execute('settingeditor:open',
        {query: 'GNS3 Copilot'})""")
    page.locator(".jp-PluginList-entry", has_text="GNS3 Copilot").first.click()
    form = page.locator(".jp-SettingsPanel")
    model = form.locator("input[id$='_model']")
    with stack.api() as api:
        try:
            with page.expect_response(_is_llm_config_put, timeout=20_000) as saved:
                model.fill("scripted-model-2")
            assert saved.value.ok, saved.value.text()
            current = api.get("copilot/llm-config").json()
            assert current["model"] == "scripted-model-2", current
            assert current["sources"]["model"] == "user", current
            page.locator(
                SIDEBAR + " .jp-gns3-copilot-sidebar-status-part", has_text="model scripted-model-2"
            ).wait_for()
            fields = form.locator("input, select, textarea").evaluate_all(
                "nodes => nodes.map(node => node.id + ':' + node.type)"
            )
            assert any(field.endswith("_model:text") for field in fields), fields
            assert not [f for f in fields if "key" in f.lower() or "password" in f], fields
        finally:  # the other tests of the module talk to "scripted-model"
            api.put("copilot/llm-config", json={"model": None})


def _key_through_its_dialog(page: Any, sidebar: Any, stack: SidebarStack) -> None:
    """The sidebar's "Set key" button opens a password dialog; the key typed there is PUT to
    `copilot/llm-config` (the sidebar then says "your key set") and is in no file of the user
    settings, workspaces or data dirs; Remove key, offered only once the key is the user's
    own, removes it."""
    with stack.api() as api:
        try:
            dialog = page.locator(".jp-Dialog")
            sidebar.locator("button.jp-gns3-copilot-sidebar-set-key").click()
            dialog.locator("button", has_text="Save").wait_for()
            # The administrator's key is in use: nothing of the user's to remove.
            assert dialog.locator("button", has_text="Remove key").count() == 0
            dialog.locator("button.jp-mod-reject").click()
            dialog.wait_for(state="detached")

            sidebar.locator("button.jp-gns3-copilot-sidebar-set-key").click()
            box = dialog.locator("input.jp-gns3-copilot-key-input")
            assert box.get_attribute("type") == "password"
            assert box.get_attribute("autocomplete") == "off"
            box.fill(SECRET)
            dialog.locator("button.jp-mod-accept", has_text="Save").click()
            dialog.wait_for(state="detached")
            sidebar.locator(".jp-gns3-copilot-sidebar-key", has_text="your key set").wait_for()
            current = api.get("copilot/llm-config").json()
            assert current["api_key_set"] and current["api_key_source"] == "user", current
            assert SECRET not in json.dumps(current)
            # Also after JupyterLab saved its workspace and settings.
            page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
            for path in stack.work_dir.rglob("*"):
                if path.is_file():
                    assert SECRET.encode() not in path.read_bytes(), f"the key is in {path}"

            # Not awaited: the command resolves only once its dialog is closed.
            page.evaluate(
                "() => { window.jupyterapp.commands.execute('gns3-copilot:set-api-key'); }"
            )
            dialog.locator("button", has_text="Remove key").click()
            dialog.wait_for(state="detached")
            # The server's own key (the scripted model's) applies again.
            sidebar.locator(
                ".jp-gns3-copilot-sidebar-key", has_text="administrator's key set"
            ).wait_for()
            assert api.get("copilot/llm-config").json()["api_key_source"] == "admin"
        finally:  # the other tests of the module talk to the scripted model with its key
            api.put("copilot/llm-config", json={"api_key": None})


def test_sidebar_in_jupyterlab(stack: SidebarStack, page: Any, screenshots: Path) -> None:
    """Given JupyterLab with the extension, the lab project and the scripted model; when a
    student chats from the sidebar, stops a turn, renames, pins, deletes and exports a session,
    shows the topology and saves model settings; then each step shows in the browser and
    the server did it."""
    sidebar = open_sidebar(page, stack, "lab", NOTEBOOK)
    first = _stream_a_turn(page, sidebar, stack, screenshots)
    long = _stop_a_turn(page, sidebar, stack)
    _rename_and_pin(page, sidebar, stack, first, long)
    _delete_after_confirming(page, sidebar, stack, long)
    _export_into_notebook(page, sidebar, first)
    _export_markdown(page, sidebar)
    _palette_and_topology(page, sidebar)
    _dark_theme_contrast(page, sidebar, screenshots)
    _key_through_its_dialog(page, sidebar, stack)
    _settings_editor_saves(page, stack)
    assert [e for e in page.page_errors if "gns3-copilot" in e] == []


def test_sidebar_in_notebook7(stack: SidebarStack, page: Any, screenshots: Path) -> None:
    """Given Notebook 7's notebook page; when the copilot is opened through its command
    and asked; then the left area shows the sidebar, its mode named "Teaching mode", and
    the turn streams to its end."""
    sidebar = open_sidebar(page, stack, "notebook", NOTEBOOK)
    # The mode as the docs name it; the selector's values stay the mode ids.
    badge = sidebar.locator(".jp-gns3-copilot-sidebar-mode-badge")
    assert badge.inner_text() == "Teaching mode"
    assert badge.get_attribute("data-mode") == "teaching_assistant"
    options = sidebar.locator("select.jp-gns3-copilot-sidebar-mode option")
    assert options.all_inner_texts() == ["Teaching mode", "Automation mode"]
    assert [options.nth(i).get_attribute("value") for i in range(2)] == [
        "teaching_assistant",
        "lab_automation_assistant",
    ]
    turn = ask(page, sidebar, NOTEBOOK7_QUESTION)
    wait_idle(page)
    assert turn.get_attribute("data-status") == "done"
    # Until the turn view renders Markdown the stars show: compare the words only.
    assert "PC1 and PC2 on a switch" in turn.inner_text().replace("*", "")
    jupyter_ui.screenshot(page, sidebar, screenshots / "sidebar-notebook7.png")
    assert [e for e in page.page_errors if "gns3-copilot" in e] == []


def _write_followed_notebooks(root: Path, project_id: str) -> str:
    """`FOLLOWED`, whose one cell holds an answer saved before direct runs were marked (its
    session id named a run, which the server never kept: returned), and `KERNEL_NOTEBOOK`,
    whose cells choose the project and run a `%copilot run`."""
    missing = str(uuid.uuid4())
    saved = {
        "version": 1,
        "project_id": project_id,
        "project_name": PROJECT.name,
        "session_id": missing,
        "mode": None,
        "turns": [{"user": "run PC1: show ip", "status": "done", "items": [], "stats": {}}],
    }
    notebook = nbformat.v4.new_notebook()
    old = nbformat.v4.new_code_cell("%copilot run PC1: show ip", execution_count=1)
    old.outputs = [
        nbformat.v4.new_output(
            "display_data", data={TURN_MIME: saved, "text/plain": "run PC1: show ip"}
        )
    ]
    notebook.cells = [old]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, root / FOLLOWED)
    jupyter_ui.write_notebook(
        root / KERNEL_NOTEBOOK,
        [
            "%load_ext jupyter_gns3_copilot\nprint('LOADED')",
            f'%copilot use "{PROJECT.name}"',
            "%copilot run PC1: show ip",
        ],
    )
    return missing


def _cells(page: Any) -> Any:
    """The cells of the active notebook (other notebooks' tabs stay in the page)."""
    panel = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    return page.locator(f"[id='{panel}'] .jp-Cell")


def _saved_bundle(page: Any, index: int) -> dict[str, Any]:
    page.wait_for_function(
        """([index, mime]) => window.jupyterapp.shell.currentWidget.content.widgets[index]
            .model.outputs.toJSON().some((o) => o.data && o.data[mime])""",
        arg=[index, TURN_MIME],
        timeout=60_000,
        polling=100,
    )
    [bundle] = [
        o["data"][TURN_MIME]
        for o in jupyter_ui.cell_outputs(page, index)
        if TURN_MIME in o.get("data", {})
    ]
    return bundle


def _open_notebook(page: Any, path: str) -> None:
    """Open `path` in a new tab beside the others; wait for its kernel."""
    page.evaluate("(path) => window.jupyterapp.commands.execute('docmanager:open', {path})", path)
    page.wait_for_function(
        "(path) => window.jupyterapp.shell.currentWidget.context.path === path", arg=path
    )
    jupyter_ui.wait_kernel_ready(page)


def _wait_project(page: Any, project_id: str) -> None:
    page.wait_for_function(
        "([select, id]) => document.querySelector(select).value === id",
        arg=[f"{SIDEBAR} .jp-gns3-copilot-sidebar-project", project_id],
        polling=100,
    )


def _follows_the_kernels_project(page: Any, sidebar: Any, stack: SidebarStack) -> None:
    """A notebook with no saved answer: the sidebar follows the project its kernel's
    `%copilot use` recorded on the server (found by the notebook's path)."""
    projects = sidebar.locator(".jp-gns3-copilot-sidebar-project")
    projects.select_option("")
    _open_notebook(page, KERNEL_NOTEBOOK)
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, "LOADED")
    assert projects.input_value() == "", "a notebook without a project changed the sidebar"
    jupyter_ui.run_cell(page, 1)
    jupyter_ui.wait_for_output(page, 1, "Using project")
    _wait_project(page, stack.project_id)
    with stack.api() as api:
        kept = api.get("copilot/notebook-projects", params={"notebook": KERNEL_NOTEBOOK}).json()
    assert kept["project_id"] == stack.project_id, kept


def _direct_run(page: Any, screenshots: Path) -> None:
    """`%copilot run` leaves a saved output with the device output open (what the student
    asked for) and nothing to continue: a direct run starts no conversation."""
    jupyter_ui.run_cell(page, 2)
    bundle = _saved_bundle(page, 2)
    assert bundle["direct_run"] is True and bundle["session_id"] is None, bundle
    saved = _cells(page).nth(2).locator(".jp-gns3-copilot-saved")
    saved.wait_for()
    assert saved.locator(".gns3c-continue").count() == 0
    assert saved.locator(".gns3c-tool-head").get_attribute("aria-expanded") == "true"
    assert "10.0.0.1/24" in saved.locator(".gns3c-devices pre").inner_text()
    assert "commands run without the model" in saved.locator(".gns3c-saved-footer").inner_text()
    jupyter_ui.screenshot(page, saved, screenshots / "direct-run-saved.png")


def _links_table_and_copy(page: Any, sidebar: Any, stack: SidebarStack) -> None:
    """The topology card lists the real lab's links as a table; the answer's code block
    goes to the clipboard with its Copy button."""
    turn = ask(page, sidebar, LINKS)
    wait_idle(page)
    assert turn.get_attribute("data-status") == "done"
    card = turn.locator(".gns3c-tool")
    card.locator(".gns3c-tool-head").click()
    links = card.locator("table.gns3c-records").last
    rows = [row.locator("th, td").all_inner_texts() for row in links.locator("tr").all()]
    assert rows[0] == ["a", "a_port", "b", "b_port"], rows
    assert sorted(row[0] for row in rows[1:]) == ["PC1", "PC2"], rows
    assert all(row[2] == "Switch1" for row in rows[1:]), rows
    assert "{" not in card.locator(".gns3c-tool-body").inner_text()

    page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=stack.server.url.rstrip("/")
    )
    code = turn.locator(".gns3c-code")
    code.hover()
    copy = code.locator("button.gns3c-copy")
    assert copy.is_visible()
    copy.click()
    page.wait_for_function("(button) => button.textContent === 'Copied'", arg=copy.element_handle())
    assert page.evaluate("() => navigator.clipboard.readText()") == "show arp\n"


def test_sidebar_follows_the_notebook_and_its_runs(
    stack: SidebarStack, page: Any, screenshots: Path
) -> None:
    """Given the sidebar on no project; when a notebook holding an old saved answer becomes
    the active one and that answer is continued, then another notebook's kernel uses the
    project and runs `%copilot run`, and the student asks about the links; then the
    sidebar shows each notebook's project, says the old conversation is not on the server,
    the run leaves its device output open with nothing to continue, the links show as a
    table and the answer's command copies."""
    missing = _write_followed_notebooks(stack.work_dir / "notebooks", stack.project_id)
    sidebar = open_sidebar(page, stack, "lab", NOTEBOOK)
    sidebar.locator(".jp-gns3-copilot-sidebar-project").select_option("")
    _open_notebook(page, FOLLOWED)
    _wait_project(page, stack.project_id)  # its saved answer's

    histories: list[Any] = []
    page.on("response", lambda r: histories.append(r) if missing in r.url else None)
    _cells(page).nth(0).locator("button.gns3c-continue").click()
    notice = sidebar.locator(".jp-gns3-copilot-sidebar-notice")
    notice.get_by_text("That conversation is not on the server").wait_for()
    assert "%copilot run" in notice.inner_text()
    assert sidebar.locator(".jp-gns3-copilot-sidebar-turn").count() == 0
    assert histories and all(r.status == 404 for r in histories)

    _follows_the_kernels_project(page, sidebar, stack)
    _direct_run(page, screenshots)
    _links_table_and_copy(page, sidebar, stack)
    jupyter_ui.screenshot(page, sidebar, screenshots / "sidebar-links-light.png")
    jupyter_ui.set_theme(page, dark=True)
    try:
        jupyter_ui.screenshot(page, sidebar, screenshots / "sidebar-links-dark.png")
    finally:
        jupyter_ui.set_theme(page, dark=False)
    assert [e for e in page.page_errors if "gns3-copilot" in e] == []
