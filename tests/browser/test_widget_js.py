"""widget.js on its own, in chromium: Markdown sanitising in a real browser, rendering from
saved state, live messages and their reconciliation with the state, the input box, the Stop
button, and a model whose kernel is gone.

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
  send(content) {{
    if (this.closed) throw new Error("Cannot send");
    this.sent.push(content);
  }}
}}
let counter = 0;
window.gns3c = {{
  markdown(text) {{
    const div = document.createElement("div");
    renderMarkdown(div, text);
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
    {"device_name": "PC3", "status": "failed", "output": "", "error": "timeout", "commands": []},
]
ARGUMENTS = json.dumps(
    {
        "devices": [
            {"device": "PC1", "commands": ["show ip"]},
            {"device": "PC3", "commands": ["show ip"]},
        ]
    }
)
TOOL = {
    "kind": "tool",
    "id": "c1",
    "name": "run_vpcs_commands",
    "arguments": ARGUMENTS,
    "complete": True,
    "state": "done",
    "progress": [],
    "output": json.dumps(DEVICES),
    "summary": "ran `show ip` on PC1, PC3 · 1 ok, 1 failed",
    "outcome": "partial",
    "note": None,
}
FINISHED = {
    "user": "Why?",
    "status": "done",
    "stats": {
        "title": "Reachability",
        "input_tokens": 1234,
        "output_tokens": 56,
        "llm_calls": 2,
        "elapsed": 3.21,
    },
    "items": [
        {"kind": "text", "text": "Checking **now**."},
        TOOL,
        {"kind": "error", "text": "PC3 console timed out"},
    ],
}


@pytest.fixture
def stub(browser_context: Any) -> Iterator[Any]:
    """A fresh page on the stub origin; `page.abort_requests` records abort POSTs,
    `page.decisions` approval POSTs."""
    yield from _stub_page(browser_context)


@pytest.fixture(scope="module")
def markdown_page(browser_context: Any) -> Iterator[Any]:
    """One stub page for all the (stateless) Markdown cases."""
    yield from _stub_page(browser_context)


def _stub_page(browser_context: Any) -> Iterator[Any]:
    page = browser_context.new_page()
    page.abort_requests = []
    page.abort_status = 200
    page.decisions = []
    page.decision_status = 200
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def serve(route: Any, request: Any) -> None:
        path = request.url[len(ORIGIN) :]
        if path == "/":
            route.fulfill(body=PAGE, content_type="text/html")
        elif path in ("/widget.js", "/widget.css"):
            kind = "text/javascript" if path.endswith(".js") else "text/css"
            route.fulfill(body=(STATIC / path[1:]).read_text(), content_type=kind)
        elif path.endswith("/abort"):
            page.abort_requests.append(
                {"url": request.url, "method": request.method, "headers": request.headers}
            )
            body = (
                {"status": "aborting"}
                if page.abort_status < 400
                else {"error": {"message": "Session not found", "type": "SessionNotFound"}}
            )
            route.fulfill(status=page.abort_status, json=body)
        elif "/approvals/" in path:
            page.decisions.append(
                {"url": request.url, "headers": request.headers, "body": request.post_data_json}
            )
            body = (
                {"status": "ok"}
                if page.decision_status < 400
                else {
                    "error": {
                        "message": "Approval 'ap1' was already decided.",
                        "type": "AlreadyDecided",
                    }
                }
            )
            route.fulfill(status=page.decision_status, json=body)
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


# --- Safe Markdown (the library's output, sanitised, in a real browser) -------------------


def test_markdown_renders_the_common_constructs(markdown_page: Any) -> None:
    html = markdown(markdown_page, "# Title\n\n**bold** and `x`, see https://gns3.com.")
    assert "<h1>Title</h1>" in html
    assert "<strong>bold</strong>" in html and "<code>x</code>" in html
    assert (
        '<a href="https://gns3.com" target="_blank" rel="noopener noreferrer">https://gns3.com</a>.'
    ) in html


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
    page.evaluate(
        "(state) => { window.m = window.gns3c.model(state); window.gns3c.render(window.m); }", state
    )
    return page.locator(".gns3c").last


def emit(page: Any, message: dict[str, Any]) -> None:
    page.evaluate("(msg) => window.m.trigger('msg:custom', msg)", message)


def set_turns(page: Any, turns: list[dict[str, Any]]) -> None:
    page.evaluate("(turns) => window.m.set('turns', turns)", turns)


def test_a_saved_conversation_renders_from_state_answer_first(stub: Any) -> None:
    widget = render(stub, {"turns": [FINISHED], "title": "Reachability"})
    assert widget.locator(".gns3c-user-text").inner_text() == "Why?"
    assert widget.locator(".gns3c-md strong").inner_text() == "now"
    head = widget.locator(".gns3c-tool-head")
    assert head.inner_text().split("\n")[0].startswith("ran show ip on PC1, PC3")
    assert head.get_attribute("aria-expanded") == "false"
    assert not widget.locator(".gns3c-tool-body").is_visible()
    badge = widget.locator(".gns3c-badge")
    assert badge.inner_text() == "partial" and badge.get_attribute("data-tone") == "warn"
    assert widget.locator(".gns3c-error[role=alert]").inner_text() == "PC3 console timed out"
    assert widget.locator(".gns3c-footer").inner_text().split("\n") == [
        "Reachability",
        "1,234 in / 56 out tokens",
        "2 model calls",
        "3.2 s",
    ]
    assert widget.locator(".gns3c-session").inner_text() == "Reachability"
    assert not widget.locator(".gns3c-composer").is_visible()  # nobody to send to
    # A collapsed card is one line: the answer is close below the question.
    card = widget.locator(".gns3c-tool").bounding_box()
    assert card is not None and card["height"] < 40

    head.focus()
    stub.keyboard.press("Enter")
    assert head.get_attribute("aria-expanded") == "true"
    body = widget.locator(".gns3c-tool-body")
    assert body.locator(".gns3c-args li").all_inner_texts() == ["PC1: show ip", "PC3: show ip"]
    assert body.locator(".gns3c-devices tbody tr").count() == 2
    assert body.locator(".gns3c-device-error").inner_text() == "timeout"
    stub.keyboard.press("Space")
    assert head.get_attribute("aria-expanded") == "false"


def test_the_header_names_the_mode_as_people_say_it(stub: Any) -> None:
    """The widget's `mode` trait holds the id; the header shows "Automation mode", follows a
    change, and shows nothing for a widget that names no mode (older states too)."""
    widget = render(stub, {"turns": [FINISHED], "mode": "lab_automation_assistant"})
    mode = widget.locator(".gns3c-header .gns3c-mode")
    assert mode.inner_text() == "Automation mode"
    stub.evaluate("() => window.m.set('mode', 'teaching_assistant')")
    assert mode.inner_text() == "Teaching mode"
    assert "_assistant" not in widget.locator(".gns3c-header").inner_text()
    unnamed = render(stub, {"turns": [FINISHED]})
    assert not unnamed.locator(".gns3c-mode").is_visible()


def test_a_stopped_turn_without_usage_says_tokens_were_not_reported(stub: Any) -> None:
    stopped = {
        **FINISHED,
        "status": "aborted",
        "stats": {"input_tokens": 0, "output_tokens": 0, "llm_calls": 1, "elapsed": 1.0},
    }
    widget = render(stub, {"turns": [stopped]})
    assert widget.locator(".gns3c-footer").inner_text().split("\n") == [
        "tokens not reported",
        "1 model call",
        "1.0 s",
    ]


def test_live_messages_stream_into_the_view_and_the_state_has_the_last_word(stub: Any) -> None:
    widget = render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    streaming = {
        **TOOL,
        "arguments": ARGUMENTS[:40],
        "complete": False,
        "state": "arguments",
        "output": None,
        "summary": None,
        "outcome": None,
    }
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 0,
            "ops": [
                {"op": "append", "index": 0, "text": "Check"},
                {"op": "item", "index": 1, "item": streaming},
            ],
        },
    )
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 1,
            "ops": [
                {"op": "append", "index": 0, "text": "ing **now**."},
                {
                    "op": "item",
                    "index": 1,
                    "item": {
                        **streaming,
                        "arguments": ARGUMENTS,
                        "complete": True,
                        "state": "running",
                    },
                },
            ],
        },
    )
    stub.wait_for_function("() => document.querySelector('.gns3c-md strong')")
    head = widget.locator(".gns3c-tool-head")
    assert head.locator(".gns3c-tool-name").inner_text() == "run vpcs commands"
    assert head.locator(".gns3c-tool-title").inner_text() == "PC1: show ip; PC3: show ip"
    assert "{" not in head.inner_text()
    assert widget.locator(".gns3c-badge").inner_text() == "running"
    head.click()  # opened while it runs: stays open when the state arrives
    assert widget.locator(".gns3c-turn").get_attribute("aria-busy") == "true"
    assert "Working" in widget.locator(".gns3c-note").inner_text()
    card = widget.locator(".gns3c-tool").element_handle()

    final = {**FINISHED, "items": [{"kind": "text", "text": "Final **answer**."}, TOOL]}
    set_turns(stub, [final])
    assert widget.locator(".gns3c-md").first.inner_text() == "Final answer."
    assert widget.locator(".gns3c-tool").element_handle().evaluate("(n, old) => n === old", card)
    assert head.get_attribute("aria-expanded") == "true"
    assert widget.locator(".gns3c-devices tbody tr").count() == 2
    assert widget.locator(".gns3c-badge").inner_text() == "partial"
    assert widget.locator(".gns3c-turn").get_attribute("data-status") == "done"


def test_progress_lines_of_a_running_tool_keep_their_lines(stub: Any) -> None:
    widget = render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Ping"})
    progress = [
        {"message": f"round {n}\nreply from 10.0.0.{n}", "elapsed": n / 2, "node": "PC1"}
        for n in range(3)
    ]
    running = {
        **TOOL,
        "state": "running",
        "output": None,
        "summary": None,
        "outcome": None,
        "progress": progress,
    }
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 0,
            "ops": [{"op": "item", "index": 0, "item": running}],
        },
    )
    widget.locator(".gns3c-tool-head").click()
    lines = widget.locator(".gns3c-progress li").all_inner_texts()
    assert lines == [f"PC1: round {n}\nreply from 10.0.0.{n} · {n / 2:.1f} s" for n in range(3)]
    assert widget.locator(".gns3c-badge").inner_text() == "running"


def test_a_view_opened_mid_turn_shows_what_already_streamed(stub: Any) -> None:
    stub.evaluate("() => { window.m = window.gns3c.model({}); }")
    set_turns(stub, [{"user": "Why?", "status": "running", "items": [], "stats": {}}])
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 0,
            "ops": [{"op": "append", "index": 0, "text": "Already here."}],
        },
    )
    stub.evaluate("() => window.gns3c.render(window.m)")
    widget = stub.locator(".gns3c").last
    assert widget.locator(".gns3c-md").inner_text() == "Already here."
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 1,
            "ops": [{"op": "append", "index": 0, "text": " And more."}],
        },
    )
    stub.wait_for_function(
        "() => document.querySelector('.gns3c-md').textContent.trim() === 'Already here. And more.'"
    )


def test_a_missing_batch_waits_for_the_state(stub: Any) -> None:
    widget = render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 1,
            "ops": [{"op": "append", "index": 3, "text": "out of order"}],
        },
    )
    assert "missed" in widget.locator(".gns3c-note").inner_text()
    assert widget.locator(".gns3c-md").count() == 0
    set_turns(stub, [FINISHED])
    assert widget.locator(".gns3c-items > *").count() == 3


def test_a_view_taken_out_of_the_page_rebuilds_when_shown_again(stub: Any) -> None:
    render(stub, {})
    emit(stub, {"type": "begin", "turn": 0, "user": "Why?"})
    stub.evaluate(
        "() => { window.parked = document.getElementById('host'); window.parked.remove(); }"
    )
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 0,
            "ops": [{"op": "append", "index": 0, "text": "while away"}],
        },
    )
    set_turns(stub, [{**FINISHED, "items": [{"kind": "text", "text": "while away"}]}])
    stub.evaluate("() => document.body.append(window.parked)")
    stub.wait_for_function(
        "() => document.querySelector('.gns3c-md')?.textContent.trim() === 'while away'"
    )


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


def test_stop_and_approve_of_a_direct_run_post_the_run_routes(stub: Any) -> None:
    """A direct run (`%copilot run`) is no chat session: its Stop and its decision go to
    the run routes of the id its events carry."""
    widget = _waiting_turn(stub, direct_run=True, session_id="run-1")
    widget.locator("button.gns3c-approve").click()
    stub.wait_for_function("() => document.querySelector('button.gns3c-approve').disabled")
    widget.locator("button.gns3c-stop").click()
    widget.locator(".gns3c-composer-status", has_text="Stop requested").wait_for()
    runs = f"{ORIGIN}{BASE_URL}copilot/projects/proj%201/runs/run-1"
    assert [r["url"] for r in stub.decisions] == [f"{runs}/approvals/ap1"]
    assert [r["url"] for r in stub.abort_requests] == [f"{runs}/abort"]


def test_a_refused_stop_says_why_and_can_be_retried(stub: Any) -> None:
    stub.abort_status = 404
    running = {"user": "Ping all", "status": "running", "items": [], "stats": {}}
    widget = render(stub, {"turns": [running], "session_id": "gone"})
    widget.locator("button.gns3c-stop").click()
    status = widget.locator(".gns3c-composer-status")
    status.filter(has_text="Could not stop").wait_for()
    assert "HTTP 404: Session not found" in status.inner_text()
    assert widget.locator("button.gns3c-stop").is_enabled()


APPROVAL = {
    "kind": "approval",
    "approval_id": "ap1",
    "tool_call_id": "c1",
    "tool_name": "create_nodes",
    "summary": "create PC3 (VPCS)",
    "state": "pending",
    "comment": None,
}


def _waiting_turn(page: Any, **state: Any) -> Any:
    """A running turn (live messages) that waits on APPROVAL (`state`: more of the
    widget's state)."""
    running = {"user": "Add PC3", "status": "running", "items": [], "stats": {}}
    base = {"turns": [running], "project_id": "proj 1", "session_id": "sess-1"}
    widget = render(page, {**base, **state})
    emit(page, {"type": "begin", "turn": 0, "user": "Add PC3"})
    emit(
        page,
        {
            "type": "ops",
            "turn": 0,
            "batch": 0,
            "ops": [{"op": "item", "index": 0, "item": APPROVAL}],
        },
    )
    widget.locator(".gns3c-approval-summary", has_text="create PC3 (VPCS)").wait_for()
    return widget


def test_approve_posts_the_approval_route_while_the_cell_waits(stub: Any) -> None:
    widget = _waiting_turn(stub)
    approve = widget.locator("button.gns3c-approve")
    assert approve.is_visible() and widget.locator("button.gns3c-reject").is_visible()
    approve.click()
    stub.wait_for_function("() => document.querySelector('button.gns3c-approve').disabled")
    (request,) = stub.decisions
    path = "copilot/projects/proj%201/chat/sessions/sess-1/approvals/ap1"
    assert request["url"] == f"{ORIGIN}{BASE_URL}{path}"
    assert request["headers"]["x-xsrftoken"] == XSRF
    assert request["body"] == {"decision": "approve", "comment": None}
    emit(
        stub,
        {
            "type": "ops",
            "turn": 0,
            "batch": 1,
            "ops": [{"op": "item", "index": 0, "item": {**APPROVAL, "state": "approve"}}],
        },
    )
    widget.locator(".gns3c-approval-state", has_text="Approved").wait_for()
    assert not approve.is_visible()


def test_a_refused_decision_says_why_and_gives_the_buttons_back(stub: Any) -> None:
    stub.decision_status = 409
    widget = _waiting_turn(stub)
    widget.locator("button.gns3c-reject").click()
    state = widget.locator(".gns3c-approval-state", has_text="Could not send the decision")
    state.wait_for()
    assert "HTTP 409: Approval 'ap1' was already decided." in state.inner_text()
    assert widget.locator("button.gns3c-reject").is_enabled()


def test_a_change_whose_cell_stopped_waiting_says_where_to_decide(stub: Any) -> None:
    interrupted = {"user": "Add PC3", "status": "interrupted", "items": [APPROVAL], "stats": {}}
    widget = render(stub, {"turns": [interrupted]})
    assert not widget.locator("button.gns3c-approve").is_visible()
    assert "%copilot approve" in widget.locator(".gns3c-approval-state").inner_text()


# --- A kernel that is gone -----------------------------------------------------------------


def test_a_send_refused_by_a_closed_comm_says_run_the_cell_again(stub: Any) -> None:
    widget = render(stub, {"can_send": True, "turns": [FINISHED]})
    stub.evaluate("() => { window.m.closed = true; }")
    box = widget.locator("textarea")
    box.fill("still there?")
    box.press("Enter")  # the page's error listener fails the test on an uncaught error
    status = widget.locator(".gns3c-composer-status")
    assert status.inner_text() == "kernel restarted: run the cell again"
    assert box.is_disabled() and widget.locator("button.gns3c-send").is_disabled()
    assert widget.get_attribute("data-kernel") == "gone"


@pytest.mark.parametrize("event", ["comm:close", "destroy", "comm_live_update"])
def test_a_closed_comm_disables_the_controls_at_once(stub: Any, event: str) -> None:
    running = {"user": "Ping all", "status": "running", "items": [], "stats": {}}
    widget = render(stub, {"can_send": True, "turns": [running], "session_id": "s1"})
    assert widget.locator("button.gns3c-stop").is_visible()
    stub.evaluate("(event) => window.m.trigger(event)", event)
    assert "kernel restarted" in widget.locator(".gns3c-composer-status").inner_text()
    assert widget.locator("textarea").is_disabled()
    assert not widget.locator("button.gns3c-stop").is_visible()
