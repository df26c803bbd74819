"""The chat widget in a real browser, in JupyterLab 4 and Notebook 7.

A notebook cell plays a scripted chat stream into a ChatWidget (scripted_chat.py, standing
in for the %copilot magics) while the page is watched: tool cards must stay one line with
their arguments readable as they stream, open on click onto per-device tables, the answer
close below the question, the footer with statistics; Enter in the input
box must reach the kernel's `on_send` and continue the conversation; Stop must POST the
server's abort endpoint (with the XSRF header) while the cell is still running; light and
dark themes must stay readable; the saved notebook must re-render from widget state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jupyter_ui
import nbformat
import pytest
import scripted_chat

HERE = Path(__file__).parent

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


def _cells(stop_file: Path) -> list[str]:
    return [
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\n"
        "from IPython.display import display\n"
        "from scripted_chat import ScriptedChat\n"
        "chat = ScriptedChat()\n"
        "display(chat.widget)\n"
        "print('DEMO-DONE', chat.demo_turn())",
        "print('SENT', chat.sent)",
        f"print('LONG-DONE', chat.long_turn({str(stop_file)!r}))",
    ]


def _contrast_ok(page: Any, theme: str) -> None:
    """Readable text, with the first turn's cards open (a turn's end re-renders the output,
    closed)."""
    heads = page.locator(".gns3c").first.locator(".gns3c-turn").first.locator(
        ".gns3c-tool-head[aria-expanded='false']")
    while heads.count():
        heads.first.click()
    jupyter_ui.assert_readable(page, ".gns3c", theme, at_least=14)


def _play_demo_turn(page: Any, widget: Any, ui: str, screenshots: Path) -> None:
    """Cell 0 streams a turn; check what showed up while it ran and after."""
    page.evaluate(WATCH_WIDGET)
    jupyter_ui.run_cell(page, 0)
    page.locator(".gns3c-tool-title", has_text="commands: show ip").wait_for()
    jupyter_ui.screenshot(page, widget, screenshots / f"{ui}-streaming.png")
    output = jupyter_ui.wait_for_output(page, 0, "DEMO-DONE")
    assert "DEMO-DONE done" in output

    # The arguments read as words while they stream, never as JSON.
    seen = page.evaluate("() => window.__gns3cSeen")
    final = "device_names: PC1, PC2, PC3; commands: show ip, ping 10.0.0.3 -c 2"
    growing = [text for text in seen if text.startswith("device_names")]
    assert len(growing) >= 3 and growing[-1] == final, seen
    assert not any("{" in text or '"' in text for text in seen), seen

    # Answer first: every card is one closed line, the answer right below them.
    heads = widget.locator(".gns3c-tool-head")
    assert heads.count() == 2
    assert [heads.nth(i).get_attribute("aria-expanded") for i in range(2)] == ["false", "false"]
    question = widget.locator(".gns3c-user-text").first.bounding_box()
    answer_box = widget.locator(".gns3c-md h2", has_text="Diagnosis").bounding_box()
    assert question and answer_box
    assert answer_box["y"] - (question["y"] + question["height"]) < 250
    device_card = widget.locator(".gns3c-tool").nth(1)
    assert device_card.locator(".gns3c-badge").inner_text() == "partial"

    # Opened (keyboard): per-device results as a table, long output folded.
    device_card.locator(".gns3c-tool-head").focus()
    page.keyboard.press("Enter")
    assert device_card.locator(".gns3c-tool-head").get_attribute("aria-expanded") == "true"
    rows = device_card.locator(".gns3c-devices tbody tr")
    assert rows.count() == 3
    assert [rows.nth(i).get_attribute("data-status") for i in range(3)] == [
        "success", "partial_success", "failed"]
    assert [rows.nth(i).locator(".gns3c-status").inner_text() for i in range(3)] == [
        "ran", "partly ran", "not run"]
    assert "10.0.0.1/24" in rows.nth(0).locator("pre").inner_text()
    long_output = rows.nth(1).locator("details.gns3c-long")
    assert not long_output.get_attribute("open") and long_output.count() == 1
    assert "reload" in rows.nth(1).locator(".gns3c-device-blocked").inner_text()
    assert "Connection timeout" in rows.nth(2).locator(".gns3c-device-error").inner_text()
    progress = device_card.locator("details.gns3c-progress-done")
    progress.locator("summary").click()
    assert "waiting for PC3's console" in progress.locator("ol").inner_text()
    topology = widget.locator(".gns3c-tool").first
    topology.locator(".gns3c-tool-head").click()
    assert "PC1, PC2, PC3, SW1" in topology.locator(".gns3c-kv tr", has_text="nodes").inner_text()

    # Safe Markdown: formatting rendered, raw HTML and javascript: links left as text.
    answer = widget.locator(".gns3c-md").last
    assert answer.locator("strong", has_text="PC3 does not answer.").count() == 1
    assert answer.locator("li").count() == 2
    assert answer.locator("pre", has_text="host (10.0.0.3) not reachable").count() == 1
    docs = answer.locator("a", has_text="the VPCS docs")
    assert docs.get_attribute("href") == "https://docs.gns3.com/docs/emulators/vpcs/"
    assert docs.get_attribute("rel") == "noopener noreferrer"
    assert widget.locator("img").count() == 0
    assert widget.locator("a[href^='javascript']").count() == 0
    assert scripted_chat.INJECTION in answer.inner_text()
    assert page.evaluate("() => window.__gns3cInjected") is None

    footer = widget.locator(".gns3c-turn").first.locator(".gns3c-footer").inner_text()
    for expected in ("PC reachability", "8,500 in / 1,200 out tokens", "2 model calls"):
        assert expected in footer
    assert "OSPF lab" in widget.locator(".gns3c-header").inner_text()
    assert "PC reachability" in widget.locator(".gns3c-session").inner_text()


def _continue_from_input_box(page: Any, widget: Any) -> None:
    """Enter sends (Shift+Enter does not); the kernel's on_send continues the chat."""
    box = widget.locator("textarea.gns3c-input")
    assert box.get_attribute("aria-label")
    box.click()
    box.type("first line")
    box.press("Shift+Enter")
    box.type("second line")
    assert box.input_value() == "first line\nsecond line"
    assert widget.locator(".gns3c-turn").count() == 1
    box.fill("Does PC2 answer pings?")
    box.press("Enter")
    second = widget.locator(".gns3c-turn").nth(1)
    second.locator(".gns3c-user-text", has_text="Does PC2 answer pings?").wait_for()
    page.wait_for_function(
        "() => document.querySelectorAll('.gns3c-turn')[1]?.dataset.status === 'done'")
    assert "PC2 answers pings" in second.locator(".gns3c-md").inner_text()
    assert box.input_value() == ""
    jupyter_ui.run_cell(page, 1)
    output = jupyter_ui.wait_for_output(page, 1, "SENT")
    assert "SENT ['Does PC2 answer pings?']" in output


def _stop_running_turn(page: Any, widget: Any, server: Any, stop_file: Path, ui: str,
                       screenshots: Path) -> None:
    """Stop, pressed while cell 2 still runs, POSTs the server's abort endpoint itself."""
    requests: list[dict[str, Any]] = []

    def handle(route: Any, request: Any) -> None:
        # Forward to the real server (its verdict proves auth + XSRF), then tell the
        # scripted stream to end as an aborted real stream would. Until the chat API's
        # abort route exists the server answers 404: the browser then gets a stub reply.
        response = route.fetch()
        requests.append({"url": request.url, "method": request.method,
                         "headers": request.headers, "server_status": response.status})
        stop_file.touch()
        if response.status < 400:
            route.fulfill(response=response)
        else:
            route.fulfill(status=200, json={"status": "aborting"})

    page.route("**/copilot/projects/*/chat/sessions/*/abort", handle)
    jupyter_ui.run_cell(page, 2)
    running = widget.locator(".gns3c-turn").nth(2)
    running.locator(".gns3c-tool-head").click()  # open while it runs: the progress shows
    running.locator(".gns3c-progress li", has_text="ping round").first.wait_for()
    assert "null" not in running.locator(".gns3c-progress").inner_text()
    stop = widget.locator("button.gns3c-stop")
    assert stop.is_visible() and stop.is_enabled()
    assert widget.locator("textarea.gns3c-input").is_disabled()
    jupyter_ui.screenshot(page, widget, screenshots / f"{ui}-running.png")
    stop.click()
    output = jupyter_ui.wait_for_output(page, 2, "LONG-DONE")
    assert "LONG-DONE aborted" in output
    page.wait_for_function(
        "() => document.querySelectorAll('.gns3c-turn')[2]?.dataset.status === 'aborted'")
    assert "Stopped" in running.locator(".gns3c-note").inner_text()
    assert running.locator(".gns3c-tool .gns3c-badge").inner_text() == "stopped"
    assert not stop.is_visible()

    assert len(requests) == 1, requests
    request = requests[0]
    path = (f"copilot/projects/{scripted_chat.PROJECT_ID}/chat/sessions/"
            f"{scripted_chat.SESSION_ID}/abort")
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
    widget = page.locator(".gns3c").first

    _play_demo_turn(page, widget, ui, screenshots)
    _contrast_ok(page, "light")
    jupyter_ui.screenshot(page, widget, screenshots / f"{ui}-light.png")
    _continue_from_input_box(page, widget)
    _stop_running_turn(page, widget, jupyter_server, stop_file, ui, screenshots)

    jupyter_ui.set_theme(page, dark=True)
    _contrast_ok(page, "dark")
    jupyter_ui.screenshot(page, widget, screenshots / f"{ui}-dark.png")
    jupyter_ui.set_theme(page, dark=False)
    # The widget's module is loaded from a blob: URL; errors of the front ends themselves
    # (Notebook 7 logs a few while switching themes) are not ours to fail on.
    assert [e for e in page.page_errors if "blob:" in e or "gns3c" in e] == []

    if ui == "lab":
        _saved_notebook_rerenders(page, jupyter_server, name, screenshots)


def _saved_notebook_rerenders(page: Any, server: Any, name: str, screenshots: Path) -> None:
    """Saved with widget state, reopened on a fresh kernel: the conversation is back."""
    jupyter_ui.save_notebook(page)
    saved = nbformat.read(server.root_dir / name, as_version=4)
    state = saved.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    chats = [m["state"] for m in state.values() if m["state"].get("project_id")]
    assert [t["status"] for t in chats[0]["turns"]] == ["done", "done", "aborted"]
    markdown = next(output.data["text/markdown"] for output in saved.cells[0].outputs
                    if "text/markdown" in output.get("data", {}))
    assert "Does PC2 answer pings?" in markdown and "| PC3 | failed |" in markdown

    with server.api() as api:
        for session in api.get("api/sessions").json():
            api.delete(f"api/sessions/{session['id']}").raise_for_status()
    page.reload()
    jupyter_ui.wait_kernel_ready(page)
    widget = page.locator(".gns3c").first
    widget.wait_for()
    turns = widget.locator(".gns3c-turn")
    assert turns.count() == 3
    assert [turns.nth(i).get_attribute("data-status") for i in range(3)] == [
        "done", "done", "aborted"]
    assert widget.locator(".gns3c-tool").count() == 3
    assert turns.first.locator(".gns3c-badge").all_inner_texts() == ["ok", "partial"]
    assert "8,500 in / 1,200 out tokens" in turns.first.locator(".gns3c-footer").inner_text()
    assert "Stopped" in turns.nth(2).locator(".gns3c-note").inner_text()
    jupyter_ui.screenshot(page, widget, screenshots / "lab-reloaded.png")


def test_a_widget_whose_kernel_restarted_says_so(
    jupyter_server: Any, page: Any, screenshots: Path
) -> None:
    """After a kernel restart the old widget is not silently dead: it says to run the cell
    again and its controls are disabled, before anyone types; no uncaught error."""
    name = "restart.ipynb"
    jupyter_ui.write_notebook(jupyter_server.root_dir / name, [
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\n"
        "from scripted_chat import ScriptedChat\nchat = ScriptedChat()\n"
        "display(chat.widget)\nprint('SHOWN')"])
    # Notebook 7: one notebook per page (JupyterLab would restore the other tests' tabs).
    jupyter_ui.open_notebook(page, jupyter_server.url, jupyter_server.token, name, "notebook")
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, "SHOWN")
    widget = page.locator(".gns3c").first
    box = widget.locator("textarea.gns3c-input")
    box.wait_for()
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session"
                  ".kernel.restart()")
    status = widget.locator(".gns3c-composer-status")
    status.filter(has_text="kernel restarted: run the cell again").wait_for()
    assert box.is_disabled()
    assert widget.locator("button.gns3c-send").is_disabled()
    jupyter_ui.screenshot(page, widget, screenshots / "notebook-kernel-restarted.png")
    assert [e for e in page.page_errors if "Cannot send" in e or "gns3c" in e] == []
