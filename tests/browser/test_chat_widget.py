"""The chat widget and the saved answer in a real browser, in JupyterLab 4 and Notebook 7.

Cells play scripted chat streams into ChatWidgets (scripted_chat.py, standing in for the
%copilot magics: a widget per cell, no input box) while the page is watched. While a turn
runs, on the live widget: tool cards stay one line with their arguments readable as they
stream; Stop POSTs the server's abort endpoint (with the XSRF header) while the cell is
still running. When the turn ends the cell's output is the saved answer, and on it: the
answer close below the question, cards opening on click or Enter onto per-device tables,
badges, sanitised Markdown, the footer with statistics, light and dark themes readable;
the next cell continues the conversation; the saved notebook re-renders after a reload
with no kernel and no widget state. A widget with an input box (`on_send`) stays live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from support import jupyter_ui, scripted_chat
from support.jupyter_ui import WATCH_WIDGET, cell, live, saved

SCRIPTED_CHAT_DIR = Path(scripted_chat.__file__).parent  # on the kernel's sys.path in the cells
TURN_MIME = "application/vnd.gns3-copilot.turns+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _cells(stop_file: Path) -> list[str]:
    return [
        f"import sys\nsys.path.insert(0, {str(SCRIPTED_CHAT_DIR)!r})\n"
        "from IPython.display import display\n"
        "from scripted_chat import ScriptedChat\n"
        "chat = ScriptedChat()\n"
        "display(chat.widget)\n"
        "print('DEMO-DONE', chat.demo_turn())",
        "print('NEXT-DONE', chat.next_turn('Does PC2 answer pings?'))",
        f"print('LONG-DONE', chat.long_turn({str(stop_file)!r}))",
    ]


def _contrast_ok(page: Any, theme: str) -> None:
    """Readable text in the first saved answer, with its cards open."""
    heads = saved(page, 0).locator(".gns3c-tool-head[aria-expanded='false']")
    while heads.count():
        heads.first.click()
    jupyter_ui.assert_readable(page, ".jp-gns3-copilot-saved", theme, at_least=14)


def _play_demo_turn(page: Any, ui: str, screenshots: Path) -> Any:
    """Cell 0 streams a turn: what showed up live while it ran, then on the saved answer."""
    page.evaluate(WATCH_WIDGET)
    jupyter_ui.run_cell(page, 0)
    widget = live(page, 0)
    widget.locator(".gns3c-tool-title", has_text="commands: show ip").wait_for()
    assert not widget.locator("textarea.gns3c-input").is_visible(), "no input box"
    jupyter_ui.screenshot(page, widget, screenshots / f"{ui}-streaming.png")
    output = jupyter_ui.wait_for_output(page, 0, "DEMO-DONE")
    assert "DEMO-DONE done" in output

    # The arguments read as words while they stream, never as JSON.
    seen = page.evaluate("() => window.__gns3cSeen")
    final = "device_names: PC1, PC2, PC3; commands: show ip, ping 10.0.0.3 -c 2"
    growing = [text for text in seen if text.startswith("device_names")]
    assert len(growing) >= 3 and growing[-1] == final, seen
    assert not any("{" in text or '"' in text for text in seen), seen

    # The turn ended: the cell now holds the saved answer, not the widget.
    answer_view = saved(page, 0)
    answer_view.wait_for()
    assert live(page, 0).count() == 0

    # Answer first: every card is one closed line, the answer right below them.
    heads = answer_view.locator(".gns3c-tool-head")
    assert heads.count() == 2
    assert [heads.nth(i).get_attribute("aria-expanded") for i in range(2)] == ["false", "false"]
    question = answer_view.locator(".gns3c-user-text").first.bounding_box()
    answer_box = answer_view.locator(".gns3c-md h2", has_text="Diagnosis").bounding_box()
    assert question and answer_box
    assert answer_box["y"] - (question["y"] + question["height"]) < 250
    device_card = answer_view.locator(".gns3c-tool").nth(1)
    assert device_card.locator(".gns3c-badge").inner_text() == "partial"

    # Opened (keyboard): per-device results as a table, long output folded.
    device_card.locator(".gns3c-tool-head").focus()
    page.keyboard.press("Enter")
    assert device_card.locator(".gns3c-tool-head").get_attribute("aria-expanded") == "true"
    rows = device_card.locator(".gns3c-devices tbody tr")
    assert rows.count() == 3
    assert [rows.nth(i).get_attribute("data-status") for i in range(3)] == [
        "success",
        "partial_success",
        "failed",
    ]
    assert [rows.nth(i).locator(".gns3c-status").inner_text() for i in range(3)] == [
        "ran",
        "partly ran",
        "not run",
    ]
    assert "10.0.0.1/24" in rows.nth(0).locator("pre").inner_text()
    long_output = rows.nth(1).locator("details.gns3c-long")
    assert not long_output.get_attribute("open") and long_output.count() == 1
    assert "reload" in rows.nth(1).locator(".gns3c-device-blocked").inner_text()
    assert "Connection timeout" in rows.nth(2).locator(".gns3c-device-error").inner_text()
    progress = device_card.locator("details.gns3c-progress-done")
    progress.locator("summary").click()
    assert "waiting for PC3's console" in progress.locator("ol").inner_text()
    topology = answer_view.locator(".gns3c-tool").first
    topology.locator(".gns3c-tool-head").click()
    assert "PC1, PC2, PC3, SW1" in topology.locator(".gns3c-kv tr", has_text="nodes").inner_text()

    # Safe Markdown: formatting rendered, raw HTML and javascript: links left as text.
    answer = answer_view.locator(".gns3c-md").last
    assert answer.locator("strong", has_text="PC3 does not answer.").count() == 1
    assert answer.locator("li").count() == 2
    assert answer.locator("pre", has_text="host (10.0.0.3) not reachable").count() == 1
    docs = answer.locator("a", has_text="the VPCS docs")
    assert docs.get_attribute("href") == "https://docs.gns3.com/docs/emulators/vpcs/"
    assert docs.get_attribute("rel") == "noopener noreferrer"
    assert answer_view.locator("img").count() == 0
    assert answer_view.locator("a[href^='javascript']").count() == 0
    assert scripted_chat.INJECTION in answer.inner_text()
    assert page.evaluate("() => window.__gns3cInjected") is None

    footer = answer_view.locator(".gns3c-turn").first.locator(".gns3c-footer").inner_text()
    for expected in ("PC reachability", "8,500 in / 1,200 out tokens", "2 model calls"):
        assert expected in footer
    where = answer_view.locator(".gns3c-saved-footer").inner_text()
    assert "OSPF lab" in where and f"session {scripted_chat.SESSION_ID[:8]}" in where
    assert answer_view.locator("button.gns3c-continue").is_visible()
    return answer_view


def _continue_in_the_next_cell(page: Any) -> None:
    """The next cell's turn continues the conversation (same session) in its own output."""
    jupyter_ui.run_cell(page, 1)
    output = jupyter_ui.wait_for_output(page, 1, "NEXT-DONE")
    assert "NEXT-DONE done" in output
    second = saved(page, 1)
    second.wait_for()
    assert second.locator(".gns3c-user-text").inner_text() == "Does PC2 answer pings?"
    assert "PC2 answers pings" in second.locator(".gns3c-md").inner_text()
    assert second.locator(".gns3c-turn").get_attribute("data-status") == "done"
    assert (
        f"session {scripted_chat.SESSION_ID[:8]}"
        in second.locator(".gns3c-saved-footer").inner_text()
    )
    assert saved(page, 0).locator(".gns3c-turn").count() == 1, "cell 0 keeps its own turn"


def _stop_running_turn(page: Any, server: Any, stop_file: Path, ui: str, screenshots: Path) -> None:
    """Stop, pressed while cell 2 still runs, POSTs the server's abort endpoint itself."""
    requests: list[dict[str, Any]] = []

    def handle(route: Any, request: Any) -> None:
        # Forward to the real server (its verdict proves auth + XSRF), then tell the
        # scripted stream to end as an aborted real stream would. The scripted session does
        # not exist on the server, which answers 404: the browser then gets a stub reply.
        response = route.fetch()
        requests.append(
            {
                "url": request.url,
                "method": request.method,
                "headers": request.headers,
                "server_status": response.status,
            }
        )
        stop_file.touch()
        if response.status < 400:
            route.fulfill(response=response)
        else:
            route.fulfill(status=200, json={"status": "aborting"})

    page.route("**/copilot/projects/*/chat/sessions/*/abort", handle)
    jupyter_ui.run_cell(page, 2)
    widget = live(page, 2)
    running = widget.locator(".gns3c-turn").first
    running.locator(".gns3c-tool-head").click()  # open while it runs: the progress shows
    running.locator(".gns3c-progress li", has_text="ping round").first.wait_for()
    assert "null" not in running.locator(".gns3c-progress").inner_text()
    stop = widget.locator("button.gns3c-stop")
    assert stop.is_visible() and stop.is_enabled()
    jupyter_ui.screenshot(page, widget, screenshots / f"{ui}-running.png")
    stop.click()
    output = jupyter_ui.wait_for_output(page, 2, "LONG-DONE")
    assert "LONG-DONE aborted" in output
    stopped = saved(page, 2)
    stopped.wait_for()
    turn = stopped.locator(".gns3c-turn")
    assert turn.get_attribute("data-status") == "aborted"
    assert "Stopped" in turn.locator(".gns3c-note").inner_text()
    assert turn.locator(".gns3c-tool .gns3c-badge").inner_text() == "stopped"
    assert cell(page, 2).locator("button.gns3c-stop").count() == 0

    assert len(requests) == 1, requests
    request = requests[0]
    path = (
        f"copilot/projects/{scripted_chat.PROJECT_ID}/chat/sessions/"
        f"{scripted_chat.SESSION_ID}/abort"
    )
    assert request["method"] == "POST"
    assert request["url"] == server.url + path
    xsrf = {c["name"]: c["value"] for c in page.context.cookies()}.get("_xsrf")
    assert xsrf and request["headers"].get("x-xsrftoken") == xsrf
    assert request["server_status"] not in (401, 403), request
    # Control: the same request without the XSRF header is refused by the server.
    assert page.request.post(server.url + path, data="{}").status == 403
    page.unroute("**/copilot/projects/*/chat/sessions/*/abort")


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_chat_widget_streams_continues_and_stops(
    jupyter_server: Any, page: Any, screenshots: Path, ui: str
) -> None:
    name = f"chat-{ui}.ipynb"
    stop_file = jupyter_server.root_dir / f"stop-{ui}"
    jupyter_ui.write_notebook(jupyter_server.root_dir / name, _cells(stop_file))
    jupyter_ui.open_notebook(page, jupyter_server.url, jupyter_server.token, name, ui)
    jupyter_ui.set_theme(page, dark=False)

    answer_view = _play_demo_turn(page, ui, screenshots)
    _contrast_ok(page, "light")
    jupyter_ui.screenshot(page, answer_view, screenshots / f"{ui}-light.png")
    _continue_in_the_next_cell(page)
    _stop_running_turn(page, jupyter_server, stop_file, ui, screenshots)

    jupyter_ui.set_theme(page, dark=True)
    _contrast_ok(page, "dark")
    jupyter_ui.screenshot(page, answer_view, screenshots / f"{ui}-dark.png")
    jupyter_ui.set_theme(page, dark=False)
    # The widget's module is loaded from a blob: URL; errors of the front ends themselves
    # (Notebook 7 logs a few while switching themes) are not ours to fail on.
    assert [e for e in page.page_errors if "blob:" in e or "gns3c" in e] == []

    if ui == "lab":
        _saved_notebook_rerenders(page, jupyter_server, name, screenshots)


def _saved_notebook_rerenders(page: Any, server: Any, name: str, screenshots: Path) -> None:
    """Saved, reopened with no kernel: every cell's answer is back, from its saved bundle."""
    jupyter_ui.save_notebook(page)
    notebook = nbformat.read(server.root_dir / name, as_version=4)
    bundles = []
    for saved_cell in notebook.cells:
        [data] = [o.data for o in saved_cell.outputs if TURN_MIME in o.get("data", {})]
        assert WIDGET_VIEW not in data
        bundles.append(data)
    assert [[t["status"] for t in b[TURN_MIME]["turns"]] for b in bundles] == [
        ["done"],
        ["done"],
        ["aborted"],
    ]
    assert "| PC3 | failed |" in bundles[0]["text/markdown"]
    assert "Does PC2 answer pings?" in bundles[1]["text/markdown"]

    with server.api() as api:
        for session in api.get("api/sessions").json():
            api.delete(f"api/sessions/{session['id']}").raise_for_status()
    page.reload()
    saved(page, 2).wait_for()
    turns = page.locator(".jp-gns3-copilot-saved .gns3c-turn")
    assert turns.count() == 3
    assert [turns.nth(i).get_attribute("data-status") for i in range(3)] == [
        "done",
        "done",
        "aborted",
    ]
    assert page.locator(".jp-gns3-copilot-saved .gns3c-tool").count() == 3
    assert turns.first.locator(".gns3c-badge").all_inner_texts() == ["ok", "partial"]
    assert "8,500 in / 1,200 out tokens" in turns.first.locator(".gns3c-footer").inner_text()
    assert "Stopped" in turns.nth(2).locator(".gns3c-note").inner_text()
    assert "model not found" not in page.locator(".jp-Notebook").inner_text()
    jupyter_ui.screenshot(page, saved(page, 0), screenshots / "lab-reloaded.png")


def test_a_widget_whose_kernel_restarted_says_so(
    jupyter_server: Any, page: Any, screenshots: Path
) -> None:
    """After a kernel restart the old widget is not silently dead: it says to run the cell
    again and its controls are disabled, before anyone types; no uncaught error."""
    name = "restart.ipynb"
    jupyter_ui.write_notebook(
        jupyter_server.root_dir / name,
        [
            f"import sys\nsys.path.insert(0, {str(SCRIPTED_CHAT_DIR)!r})\n"
            "from scripted_chat import ScriptedChat\nchat = ScriptedChat(input_box=True)\n"
            "display(chat.widget)\nprint('SHOWN')"
        ],
    )
    # Notebook 7: one notebook per page (JupyterLab would restore the other tests' tabs).
    jupyter_ui.open_notebook(page, jupyter_server.url, jupyter_server.token, name, "notebook")
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, "SHOWN")
    widget = page.locator(".gns3c").first
    box = widget.locator("textarea.gns3c-input")
    box.wait_for()
    page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()"
    )
    status = widget.locator(".gns3c-composer-status")
    status.filter(has_text="kernel restarted: run the cell again").wait_for()
    assert box.is_disabled()
    assert widget.locator("button.gns3c-send").is_disabled()
    jupyter_ui.screenshot(page, widget, screenshots / "notebook-kernel-restarted.png")
    assert [e for e in page.page_errors if "Cannot send" in e or "gns3c" in e] == []


def test_a_widget_with_an_input_box_keeps_it_after_each_turn(
    jupyter_server: Any, page: Any, screenshots: Path
) -> None:
    """`ChatWidget(on_send=...)` used directly: when its turn ends it stays the live widget
    (not the saved answer) with its input box, and a message sent from the box gets its
    turn in the same widget, after which the box is still there."""
    name = "input-box.ipynb"
    jupyter_ui.write_notebook(
        jupyter_server.root_dir / name,
        [
            f"import sys\nsys.path.insert(0, {str(SCRIPTED_CHAT_DIR)!r})\n"
            "from scripted_chat import ScriptedChat\nchat = ScriptedChat(input_box=True)\n"
            "display(chat.widget)\nprint('DEMO-DONE', chat.demo_turn())",
            "print('SENT', chat.sent)",
        ],
    )
    jupyter_ui.open_notebook(page, jupyter_server.url, jupyter_server.token, name, "notebook")
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, "DEMO-DONE")
    widget = live(page, 0)
    box = widget.locator("textarea.gns3c-input")
    box.wait_for()
    assert saved(page, 0).count() == 0
    assert widget.locator(".gns3c-turn").count() == 1

    box.fill("Does PC2 answer pings?")
    widget.locator("button.gns3c-send").click()
    widget.locator(".gns3c-turn").nth(1).locator(".gns3c-footer").wait_for()
    assert "Does PC2 answer pings?" in widget.locator(".gns3c-turn").nth(1).inner_text()
    assert box.is_visible() and box.is_enabled()
    assert saved(page, 0).count() == 0
    jupyter_ui.run_cell(page, 1)
    assert "Does PC2 answer pings?" in jupyter_ui.wait_for_output(page, 1, "SENT")
    jupyter_ui.screenshot(page, widget, screenshots / "notebook-input-box-after-turns.png")
