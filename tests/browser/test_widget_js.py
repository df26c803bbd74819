"""widget.js on its own, in chromium: the safe Markdown renderer, rendering from saved state,
live messages and their reconciliation with the state, the input box and the Stop button.

The page is served from a stub origin by Playwright's router, with a fake anywidget model
(get/set/on/off/send, `trigger` to play messages) and a `jupyter-config-data` block as
JupyterLab and Notebook 7 pages have; no Jupyter server is involved.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

STATIC = Path(__file__).resolve().parents[2] / "jupyter_gns3_copilot" / "static"
ORIGIN = "http://gns3c.test"
BASE_URL = "/user/ann/"
XSRF = "2|1a2b3c4d|e5f6a7b8c9d0|1700000000"

PAGE = f"""<!doctype html>
<html><head><meta charset="utf-8">
<script id="jupyter-config-data" type="application/json">{{"baseUrl": "{BASE_URL}"}}</script>
<link rel="stylesheet" href="/widget.css">
</head><body><div id="host"></div>
<script type="module">
import widget, {{ renderMarkdown }} from "/widget.js";
class FakeModel {{
  constructor(state) {{ this.state = state; this.handlers = {{}}; this.sent = []; }}
  get(key) {{ return this.state[key]; }}
  set(key, value) {{ this.state[key] = value; this.trigger("change:" + key); }}
  on(name, callback) {{ (this.handlers[name] = this.handlers[name] || []).push(callback); }}
  off(name, callback) {{
    this.handlers[name] = (this.handlers[name] || []).filter((c) => c !== callback);
  }}
  trigger(name, ...args) {{ for (const c of [...(this.handlers[name] || [])]) c(...args); }}
  send(content) {{ this.sent.push(content); }}
}}
let counter = 0;
window.gns3c = {{
  markdown(text) {{
    const div = document.createElement("div");
    div.append(renderMarkdown(text));
    return div.innerHTML;
  }},
  // A model, initialized as anywidget does before any message; render() adds a view.
  model(state) {{
    const model = new FakeModel({{project_id: "p1", project_name: "OSPF lab", session_id: "",
      title: "", turns: [], can_send: false, instance_id: "w" + (++counter), ...state}});
    widget.initialize({{model}});
    return model;
  }},
  render(model) {{
    const el = document.createElement("div");
    document.getElementById("host").append(el);
    widget.render({{model, el}});
    return el;
  }},
}};
window.ready = true;
</script></body></html>"""

DEVICES = [
    {"device_name": "PC1", "status": "success", "output": "PC1> show ip", "commands": []},
    {"device_name": "PC3", "status": "failed", "output": "", "error": "timeout",
     "commands": []},
]
TOOL = {"kind": "tool", "id": "c1", "name": "execute_multiple_device_commands",
        "arguments": '{"device_names": ["PC1", "PC3"]}', "complete": True, "state": "done",
        "progress": [], "output": json.dumps(DEVICES)}
FINISHED = {"user": "Why?", "status": "done", "stats": {"title": "Reachability",
            "input_tokens": 1234, "output_tokens": 56, "llm_calls": 2, "elapsed": 3.21},
            "items": [{"kind": "text", "text": "Checking **now**."}, TOOL,
                      {"kind": "error", "text": "PC3 console timed out"}]}


@pytest.fixture
def stub(browser_context: Any) -> Iterator[Any]:
    """A fresh page on the stub origin; `page.abort_requests` records abort POSTs."""
    yield from _stub_page(browser_context)


@pytest.fixture(scope="module")
def markdown_page(browser_context: Any) -> Iterator[Any]:
    """One stub page for all the (stateless) Markdown cases."""
    yield from _stub_page(browser_context)


def _stub_page(browser_context: Any) -> Iterator[Any]:
    page = browser_context.new_page()
    page.abort_requests = []
    page.abort_status = 200
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def serve(route: Any, request: Any) -> None:
        path = request.url[len(ORIGIN):]
        if path == "/":
            route.fulfill(body=PAGE, content_type="text/html")
        elif path in ("/widget.js", "/widget.css"):
            kind = "text/javascript" if path.endswith(".js") else "text/css"
            route.fulfill(body=(STATIC / path[1:]).read_text(), content_type=kind)
        elif path.endswith("/abort"):
            page.abort_requests.append({"url": request.url, "method": request.method,
                                        "headers": request.headers})
            body = {"status": "aborting"} if page.abort_status < 400 else {
                "error": {"message": "Session not found", "type": "SessionNotFound"}}
            route.fulfill(status=page.abort_status, json=body)
        else:
            route.fulfill(status=404)

    page.route(f"{ORIGIN}/**", serve)
    browser_context.add_cookies([{"name": "_xsrf", "value": XSRF, "url": ORIGIN}])
    page.goto(f"{ORIGIN}/")
    page.wait_for_function("() => window.ready === true")
    yield page
    assert errors == []
    page.close()


def markdown(page: Any, text: str) -> str:
    return page.evaluate("(text) => window.gns3c.markdown(text)", text)


# --- Safe Markdown -----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("**bold**, *em*, _em_ and ~~gone~~",
         "<p><strong>bold</strong>, <em>em</em>, <em>em</em> and <del>gone</del></p>"),
        ("device_name and snake_case_names stay", "<p>device_name and snake_case_names stay</p>"),
        ("2 * 3 * 4 and *> 10.0.0.0/8", "<p>2 * 3 * 4 and *&gt; 10.0.0.0/8</p>"),
        ("``a ` tick`` and `x`", "<p><code>a ` tick</code> and <code>x</code></p>"),
        (r"\*not em\*", "<p>*not em*</p>"),
        ("# Title", '<h3 class="gns3c-md-h1">Title</h3>'),
        ("line one\nline two", "<p>line one<br>line two</p>"),
        ("> quoted", "<blockquote><p>quoted</p></blockquote>"),
        ("Steps:\n1. one\n2. two", "<p>Steps:</p><ol><li>one</li><li>two</li></ol>"),
        ("3. three\n4. four", '<ol start="3"><li>three</li><li>four</li></ol>'),
        ("- a\n- b\n  - c\n- d",
         "<ul><li>a</li><li><p>b</p><ul><li>c</li></ul></li><li>d</li></ul>"),
        ("| a | b |\n|---|:-:|\n| 1 | 2 |",
         '<div class="gns3c-table-wrap"><table class="gns3c-md-table"><thead><tr><th>a</th>'
         "<th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table></div>"),
        ("see https://gns3.com.",
         '<p>see <a href="https://gns3.com" target="_blank" rel="noopener noreferrer">'
         "https://gns3.com</a>.</p>"),
        ("[docs](https://a.example/x?y=1&z=2)",
         '<p><a href="https://a.example/x?y=1&amp;z=2" target="_blank" '
         'rel="noopener noreferrer">docs</a></p>'),
    ],
)
def test_markdown_renders_the_common_constructs(
    markdown_page: Any, text: str, expected: str
) -> None:
    assert markdown(markdown_page, text) == expected


def test_code_fences_render_literally_even_while_still_streaming(markdown_page: Any) -> None:
    closed = markdown(markdown_page, "```bash\n<b>show ip</b>\n```\nafter")
    assert '<pre><code class="language-bash">&lt;b&gt;show ip&lt;/b&gt;</code></pre>' in closed
    assert closed.endswith("<p>after</p>")
    assert "<pre><code>line 1\nline 2</code></pre>" in markdown(markdown_page,
                                                                "```\nline 1\nline 2")


@pytest.mark.parametrize(
    "text",
    [
        "<script>window.pwned = 1</script>",
        '<img src="x" onerror="window.pwned = 1">',
        "[click](javascript:window.pwned=1)",
        "[data](data:text/html,<script>window.pwned=1</script>)",
        "**<svg onload=window.pwned=1>**",
        "| <img src=x onerror=window.pwned=1> |\n|---|\n| x |",
    ],
)
def test_markdown_never_turns_text_into_markup(markdown_page: Any, text: str) -> None:
    html = markdown(markdown_page, text)
    for tag in ("<script", "<img", "<svg", 'href="javascript', 'href="data'):
        assert tag not in html
    assert markdown_page.evaluate("() => window.pwned") is None


# --- Rendering from state and from live messages ----------------------------------------------

def render(page: Any, state: dict[str, Any]) -> Any:
    page.evaluate("(state) => { window.m = window.gns3c.model(state); "
                  "window.gns3c.render(window.m); }", state)
    return page.locator(".gns3c").last


def emit(page: Any, message: dict[str, Any]) -> None:
    page.evaluate("(msg) => window.m.trigger('msg:custom', msg)", message)


def set_turns(page: Any, turns: list[dict[str, Any]]) -> None:
    page.evaluate("(turns) => window.m.set('turns', turns)", turns)


def test_a_saved_conversation_renders_from_state(stub: Any) -> None:
    widget = render(stub, {"turns": [FINISHED], "title": "Reachability"})
    assert widget.locator(".gns3c-user-text").inner_text() == "Why?"
    assert widget.locator(".gns3c-md strong").inner_text() == "now"
    assert widget.locator(".gns3c-devices tbody tr").count() == 2
    assert widget.locator(".gns3c-badge").inner_text() == "1 success, 1 failed"
    assert widget.locator(".gns3c-error[role=alert]").inner_text() == "PC3 console timed out"
    assert widget.locator(".gns3c-footer").inner_text().split("\n") == [
        "Reachability", "1,234 in / 56 out tokens", "2 model calls", "3.2 s"]
    assert widget.locator(".gns3c-session").inner_text() == "Reachability"
    assert not widget.locator(".gns3c-composer").is_visible()  # nobody to send to


def test_a_stopped_turn_without_usage_says_tokens_were_not_reported(stub: Any) -> None:
    stopped = {**FINISHED, "status": "aborted",
               "stats": {"input_tokens": 0, "output_tokens": 0, "llm_calls": 1, "elapsed": 1.0}}
    widget = render(stub, {"turns": [stopped]})
    assert widget.locator(".gns3c-footer").inner_text().split("\n") == [
        "tokens not reported", "1 model call", "1.0 s"]


def test_live_messages_stream_into_the_view_and_the_state_has_the_last_word(stub: Any) -> None:
    widget = render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    emit(stub, {"type": "ops", "turn": 0, "batch": 0, "ops": [
        {"op": "append", "index": 0, "text": "Check"},
        {"op": "item", "index": 1, "item": {**TOOL, "arguments": '{"device_na',
                                            "complete": False, "state": "arguments",
                                            "output": None}}]})
    emit(stub, {"type": "ops", "turn": 0, "batch": 1, "ops": [
        {"op": "append", "index": 0, "text": "ing **now**."}]})
    stub.wait_for_function("() => document.querySelector('.gns3c-md strong')")
    args = widget.locator(".gns3c-tool-args")
    assert args.inner_text() == '{"device_na' and args.get_attribute("data-complete") == "false"
    assert widget.locator(".gns3c-badge").inner_text() == "writing arguments"
    assert widget.locator(".gns3c-turn").get_attribute("aria-busy") == "true"
    assert "Working" in widget.locator(".gns3c-note").inner_text()

    final = {**FINISHED, "items": [{"kind": "text", "text": "Final **answer**."}, TOOL]}
    set_turns(stub, [final])
    assert widget.locator(".gns3c-md").first.inner_text() == "Final answer."
    assert not args.is_visible()
    assert widget.locator(".gns3c-args code").all_inner_texts() == ["PC1", "PC3"]
    assert widget.locator(".gns3c-turn").get_attribute("data-status") == "done"


def test_progress_shows_the_latest_lines_of_a_running_tool(stub: Any) -> None:
    widget = render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Ping"})
    progress = [{"message": f"round {n}", "elapsed": n / 2, "node": "PC1"} for n in range(6)]
    running = {**TOOL, "state": "running", "output": None, "progress": progress}
    emit(stub, {"type": "ops", "turn": 0, "batch": 0,
                "ops": [{"op": "item", "index": 0, "item": running}]})
    lines = widget.locator(".gns3c-progress li").all_inner_texts()
    assert lines == ["2 earlier updates", "PC1: round 2 · 1.0 s", "PC1: round 3 · 1.5 s",
                     "PC1: round 4 · 2.0 s", "PC1: round 5 · 2.5 s"]
    assert widget.locator(".gns3c-badge").inner_text() == "running"


def test_a_view_opened_mid_turn_shows_what_already_streamed(stub: Any) -> None:
    stub.evaluate("() => { window.m = window.gns3c.model({}); }")
    set_turns(stub, [{"user": "Why?", "status": "running", "items": [], "stats": {}}])
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    emit(stub, {"type": "ops", "turn": 0, "batch": 0, "ops": [
        {"op": "append", "index": 0, "text": "Already here."}]})
    stub.evaluate("() => window.gns3c.render(window.m)")
    widget = stub.locator(".gns3c").last
    assert widget.locator(".gns3c-md").inner_text() == "Already here."
    emit(stub, {"type": "ops", "turn": 0, "batch": 1, "ops": [
        {"op": "append", "index": 0, "text": " And more."}]})
    stub.wait_for_function(
        "() => document.querySelector('.gns3c-md').textContent === 'Already here. And more.'")


def test_a_missing_batch_waits_for_the_state(stub: Any) -> None:
    widget = render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    emit(stub, {"type": "ops", "turn": 0, "batch": 1, "ops": [
        {"op": "append", "index": 3, "text": "out of order"}]})
    assert "missed" in widget.locator(".gns3c-note").inner_text()
    assert widget.locator(".gns3c-md").count() == 0
    set_turns(stub, [FINISHED])
    assert widget.locator(".gns3c-items > *").count() == 3


def test_a_view_taken_out_of_the_page_rebuilds_when_shown_again(stub: Any) -> None:
    render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    stub.evaluate("() => { window.parked = document.getElementById('host'); "
                  "window.parked.remove(); }")
    emit(stub, {"type": "ops", "turn": 0, "batch": 0, "ops": [
        {"op": "append", "index": 0, "text": "while away"}]})
    set_turns(stub, [{**FINISHED, "items": [{"kind": "text", "text": "while away"}]}])
    stub.evaluate("() => document.body.append(window.parked)")
    stub.wait_for_function("() => document.querySelector('.gns3c-md')?.textContent === "
                           "'while away'")


# --- Input box and Stop --------------------------------------------------------------------

def test_enter_sends_and_shift_enter_breaks_the_line(stub: Any) -> None:
    widget = render(stub, {"can_send": True, "turns": [FINISHED]})
    box = widget.locator("textarea")
    box.click()
    box.type("first")
    box.press("Shift+Enter")
    box.type("second")
    assert box.input_value() == "first\nsecond"
    assert stub.evaluate("() => window.m.sent") == []
    box.press("Enter")
    assert stub.evaluate("() => window.m.sent") == [{"type": "send", "text": "first\nsecond"}]
    assert box.input_value() == "" and box.is_disabled()  # until the kernel starts the turn
    assert widget.get_attribute("data-lm-suppress-shortcuts") == "true"
    emit(stub, {"type": "begin", "turn": 1, "user": "first\nsecond"})
    assert box.is_disabled()  # a turn runs
    set_turns(stub, [FINISHED, {**FINISHED, "user": "first\nsecond"}])
    assert box.is_enabled()
    box.focus()
    stub.keyboard.press("Enter")  # empty: nothing sent
    assert len(stub.evaluate("() => window.m.sent")) == 1


def test_stop_posts_the_abort_endpoint_with_the_xsrf_header(stub: Any) -> None:
    running = {"user": "Ping all", "status": "running", "items": [], "stats": {}}
    widget = render(stub, {"turns": [running], "project_id": "proj 1"})
    stop = widget.locator("button.gns3c-stop")
    assert stop.is_visible() and stop.is_disabled()  # no session id yet
    stub.evaluate("() => window.m.set('session_id', 'sess-1')")
    assert stop.is_enabled() and stop.get_attribute("aria-label") == "Stop the running turn"
    stop.focus()
    stub.keyboard.press("Enter")  # keyboard reachable
    widget.locator(".gns3c-composer-status", has_text="Stop requested").wait_for()
    (request,) = stub.abort_requests
    assert request["method"] == "POST"
    path = "copilot/projects/proj%201/chat/sessions/sess-1/abort"
    assert request["url"] == f"{ORIGIN}{BASE_URL}{path}"
    assert request["headers"]["x-xsrftoken"] == XSRF
    assert stop.is_disabled()
    set_turns(stub, [{**running, "status": "aborted"}])
    assert not stop.is_visible()
    assert "Stopped" in widget.locator(".gns3c-note").inner_text()


def test_a_refused_stop_says_why_and_can_be_retried(stub: Any) -> None:
    stub.abort_status = 404
    running = {"user": "Ping all", "status": "running", "items": [], "stats": {}}
    widget = render(stub, {"turns": [running], "session_id": "gone"})
    widget.locator("button.gns3c-stop").click()
    status = widget.locator(".gns3c-composer-status")
    status.filter(has_text="Could not stop").wait_for()
    assert "HTTP 404: Session not found" in status.inner_text()
    assert widget.locator("button.gns3c-stop").is_enabled()
