"""Lab objectives in a real browser: JupyterLab with the extension, the REAL local GNS3 lab
(two addressed VPCS behind a switch) and a real `lab.yaml` attached to the project through
the extension's route. The scripted model (a TEST DOUBLE) is configured but never asked:
checks and catch-up need no model.

The notebook: `%copilot check` shows a checklist that fills in while the objectives are
decided on the devices; saved, its kernel shut down, and reopened in JupyterLab and in
Notebook 7 (which start a new kernel that runs no cell), the notebook shows the same
checklist from the file alone (the MIME renderer); the evidence opens on click; light and
dark themes read.
The sidebar: the Objectives panel lists the lab's stages and objectives with the student's
texts and the latest check's marks (one made outside the sidebar too), Check all streams
the checks route into the same view, a check made elsewhere (and a stage chosen there)
shows at once without the panel being opened again, a stage checks alone, Catch up shows
what it would restore, restores nothing on Enter (Cancel is the default button), and
restores the stage's snapshot (an extra node gone, the nodes started again) once Restore
is clicked; a lab file broken in the project shows its problems. Start an exercise puts
the lab's fault into the working lab and shows what fails, a check grades it, Give up
(confirmed) tells the fault and takes it out.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from support import jupyter_ui
from support.jupyter_ui import LabStack

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.notebook.copilot import Copilot
from jupyter_gns3_copilot.testing.local_stack import (
    JupyterServer,
    ModelEndpoint,
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

# `fresh`: the lab before its PCs start, unaddressed (the start of the addressing stage).
PROJECT = ProjectRecipe(
    "Copilot objectives", {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"}, snapshot="fresh"
)
LAB = textwrap.dedent(
    """\
    title: Two PCs
    stages:
      - id: addressing
        title: Address the PCs
        snapshot: fresh
        objectives:
          - id: pc1-address
            text: PC1 has 10.0.0.1/24
            points: 2
            check: {kind: address, node: PC1, address: 10.0.0.1/24}
          - id: pc2-address
            text: PC2 has 10.0.0.9/24
            check: {kind: address, node: PC2, address: 10.0.0.9/24}
      - id: reach
        title: Reach PC2
        objectives:
          - id: pc1-pc2
            text: PC1 reaches PC2
            points: 3
            check: {kind: reachable, from: PC1, to: PC2}
          - id: pcs-run
            text: Both PCs run
            all:
              - {kind: node_running, node: PC1}
              - {kind: node_running, node: PC2}
              - {kind: command, node: PC1, command: show ip, contains: 10.0.0.1/24}
    faults:
      - id: pc1-moved
        description: PC1's address is 10.0.0.5 instead of 10.0.0.1.
        breaks: [pc1-address, pcs-run]
        apply:
          - {kind: config, node: PC1, lines: ["ip 10.0.0.5/24"]}
        diagnosis: {device: PC1, cause: wrong address, words: [address]}
    """
)
CHECKS_MIME = "application/vnd.gns3-copilot.checks+json"
NOTEBOOK = "graded.ipynb"
SIDEBAR = "#jp-gns3-copilot-sidebar"
OBJECTIVES = SIDEBAR + " .jp-gns3-copilot-sidebar-objectives"
EXTRA_NODE = "Later"
DECIDED = {
    "pc1-address": "pass",
    "pc2-address": "fail",
    "pc1-pc2": "pass",
    "pcs-run": "pass",
}

# The checklist's kinds of text, for the contrast check of each theme.
READABLE = [
    ".gns3c-checks-title",
    ".gns3c-checks-score",
    ".gns3c-checks-stage-title",
    ".gns3c-checks-stage-score",
    ".gns3c-check[data-state='pass'] .gns3c-check-text",
    ".gns3c-check[data-state='fail'] .gns3c-check-why",
    ".gns3c-check-points",
    ".gns3c-check[data-state='pass'] .gns3c-check-why",
    ".gns3c-check-evidence summary",
    ".gns3c-check-evidence-node",
    ".gns3c-check-evidence-lines",
]

# Records every state each objective row shows (`id:state`), so a list seen only when
# finished fails the test.
_WATCH_STATES = """(root) => {
  window.__checkStates = [];
  const record = () => {
    document.querySelectorAll(root + " .gns3c-check").forEach((row) => {
      const entry = row.dataset.objective + ":" + row.dataset.state;
      if (!window.__checkStates.includes(entry)) window.__checkStates.push(entry);
    });
  };
  new MutationObserver(record).observe(document.body,
    {subtree: true, childList: true, attributes: true});
}"""


def _off_loop(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` in another thread: it runs its own event loop, and Playwright's
    sync API keeps one marked as running in this thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(function, *args).result()


def _gns3(lab: Any, action: Callable[[GNS3Client], Any]) -> Any:
    """`action(client)` against the lab, from a thread of its own (`_off_loop`)."""

    async def run() -> Any:
        async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
            return await action(gns3)

    return _off_loop(asyncio.run, run())


@pytest.fixture(scope="module")
def stack(gns3_lab: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabStack]:
    """`jupyter lab` with the extension on the lab, the project (with its snapshot `fresh`),
    and `LAB` attached as the project's lab file (automation mode, as an
    instructor attaches it)."""
    work = tmp_path_factory.mktemp("objectives-server")
    jupyter_ui.configure_front_end(work)
    root = work / "notebooks"
    root.mkdir()
    jupyter_ui.write_notebook(root / NOTEBOOK, [f'%copilot use "{PROJECT.name}"', "%copilot check"])
    project_ids = _off_loop(prepare_projects, gns3_lab, [PROJECT])
    project_id = project_ids[PROJECT.name]
    try:
        with (
            jupyter_ui.checkout_front_end(work),
            ScriptedLLM() as llm,
            JupyterServer(
                gns3_lab, ModelEndpoint.scripted_model(llm), work, app="lab", root_dir=root
            ) as server,
        ):
            stack = LabStack(server, llm, project_id)
            with stack.api() as api:
                lab_mode = {"copilot_mode": "lab_automation_assistant"}
                assert api.put("copilot/llm-config", json=lab_mode).status_code == 200
                attached = api.put(f"copilot/projects/{project_id}/lab", json={"text": LAB})
                assert attached.status_code == 200, attached.text
                api.put("copilot/llm-config", json={"copilot_mode": None})
            yield stack
    finally:
        _off_loop(delete_projects, gns3_lab, project_ids.values())


def _rows(root: Any) -> dict[str, str]:
    """Each objective row's state, by objective id."""
    rows = root.locator(".gns3c-check")
    return {
        rows.nth(i).get_attribute("data-objective"): rows.nth(i).get_attribute("data-state")
        for i in range(rows.count())
    }


def _assert_decided(checklist: Any) -> None:
    """The checklist of the whole lab, decided on the devices as they are."""
    assert _rows(checklist) == DECIDED
    assert checklist.locator(".gns3c-checks-score").inner_text() == "not yet · 6/7"
    stages = checklist.locator(".gns3c-checks-stage-head")
    assert "Address the PCs" in stages.nth(0).inner_text()
    assert "not yet · 2/3" in stages.nth(0).inner_text()
    assert "passed · 4/4" in stages.nth(1).inner_text()
    failed = checklist.locator("[data-objective='pc2-address']")
    assert failed.locator(".gns3c-check-mark").get_attribute("aria-label") == "not passed"
    assert failed.locator(".gns3c-check-why").inner_text() == (
        "PC2 has 10.0.0.2/24, not 10.0.0.9/24."
    )
    assert failed.locator(".gns3c-check-points").inner_text() == "0/1 pt"
    # an explanation's Markdown is rendered: the command and the output as code
    why = checklist.locator("[data-objective='pcs-run'] .gns3c-check-why")
    assert why.inner_text() == ("PC1 is running; PC2 is running; show ip on PC1 shows 10.0.0.1/24.")
    assert why.locator("code").all_inner_texts() == ["show ip", "10.0.0.1/24"]


def _open_evidence(checklist: Any) -> None:
    """The ping's evidence opens on click: node, command and the lines that decided."""
    evidence = checklist.locator("[data-objective='pc1-pc2'] .gns3c-check-evidence")
    assert evidence.evaluate("(el) => el.open") is False
    evidence.locator("summary").click()
    assert evidence.evaluate("(el) => el.open") is True
    assert evidence.locator(".gns3c-check-evidence-node").inner_text() == "PC1"
    assert evidence.locator("code").inner_text().startswith("ping 10.0.0.2")
    assert "10.0.0.2" in evidence.locator(".gns3c-check-evidence-lines").inner_text()


def _both_themes(
    page: Any, element: Any, root: str, name: str, screenshots: Path, readable: list[str]
) -> None:
    """Screenshots in the light and the dark theme; the `readable` text reads in both."""
    for dark in (False, True):
        theme = "dark" if dark else "light"
        jupyter_ui.set_theme(page, dark=dark)
        jupyter_ui.assert_readable(page, root, theme, len(readable), readable)
        jupyter_ui.screenshot(page, element, screenshots / f"{name}-{theme}.png")
    jupyter_ui.set_theme(page, dark=False)


def _pc1_addressed_again(stack: LabStack) -> None:
    """Wait until PC1, restarted by a give-up, has its saved address back (the next tests
    start from the lab as it was)."""
    with stack.api() as api:
        for _ in range(60):
            report = api.post(
                f"copilot/projects/{stack.project_id}/lab/checks",
                json={"stage": "addressing", "stream": False},
                timeout=120,
            )
            assert report.status_code == 200, report.text
            if {r["id"]: r["status"] for r in report.json()["results"]}["pc1-address"] == "pass":
                return
            time.sleep(1)
    raise AssertionError("PC1 did not come back with its saved address after the give-up")


def test_the_objectives_panel_runs_an_exercise(stack: LabStack, page: Any) -> None:
    """Given the lab with a fault, PC1 addressed as it should be; when the student starts an
    exercise in the Objectives panel, checks all and gives up (confirmed in the dialog);
    then the panel shows the objective the fault broke, the check's grade (not fixed, the
    objective still failing), and the fault's description and diagnosis, and PC1 comes
    back with its saved address. Runs first: the later tests change the lab."""
    panel = _open_objectives(page, stack)
    exercise = panel.locator(".jp-gns3-copilot-sidebar-exercise")
    with page.expect_request(lambda r: r.url.split("?")[0].endswith("/lab/exercises")) as sent:
        exercise.locator("button", has_text="Start an exercise").click()
    assert json.loads(sent.value.post_data) == {"random": True}
    panel.locator(".jp-gns3-copilot-sidebar-exercise[data-state='active']").wait_for(
        timeout=180_000
    )
    assert "Exercise going since" in exercise.inner_text()
    symptom = exercise.locator(".jp-gns3-copilot-sidebar-exercise-symptom li")
    assert symptom.all_inner_texts() == ["PC1 has 10.0.0.1/24", "Both PCs run"]
    assert "10.0.0.5" not in exercise.inner_text()  # never which fault it is

    panel.locator("button.jp-gns3-copilot-sidebar-objectives-check-all").click()
    grade = exercise.locator(".jp-gns3-copilot-sidebar-exercise-grade")
    grade.wait_for(timeout=120_000)
    assert "Exercise not solved: not fixed yet" in grade.inner_text()
    assert grade.locator("li").all_inner_texts() == [
        "Still failing: PC1 has 10.0.0.1/24",
        "Still failing: Both PCs run",
    ]
    assert _rows(panel)["pc1-address"] == "fail"

    dialog = page.locator(".jp-Dialog")
    exercise.locator("button", has_text="Give up").click()
    assert "You will see what the fault was" in dialog.inner_text()
    dialog.locator("button.jp-mod-accept", has_text="Give up").click()
    dialog.wait_for(state="detached")
    answer = exercise.locator(".jp-gns3-copilot-sidebar-exercise-answer")
    answer.wait_for(timeout=120_000)
    assert "The fault: PC1's address is 10.0.0.5 instead of 10.0.0.1." in answer.inner_text()
    assert "A diagnosis names PC1: wrong address." in answer.inner_text()
    assert exercise.get_attribute("data-state") == "ended"
    _pc1_addressed_again(stack)
    assert [e for e in page.page_errors if "gns3" in e.lower()] == []


def test_the_checklist_fills_in_and_is_saved_with_the_notebook(
    stack: LabStack, page: Any, screenshots: Path
) -> None:
    """Given the lab attached; when `%copilot check` runs in a notebook, then its
    checklist shows each objective being checked, then decided; saved and reopened after
    its kernel was shut down, the notebook shows the same checklist from the file."""
    server = stack.server
    jupyter_ui.open_notebook(page, server.url, server.token, NOTEBOOK, "lab")
    jupyter_ui.run_cell(page, 0)
    jupyter_ui.wait_for_output(page, 0, PROJECT.name)
    page.evaluate(_WATCH_STATES, ".jp-gns3-copilot-checks")
    jupyter_ui.run_cell(page, 1)
    checklist = page.locator(".jp-gns3-copilot-checks")
    page.locator(".jp-gns3-copilot-checks .gns3c-checks[data-state='decided']").wait_for(
        timeout=120_000
    )
    seen = page.evaluate("() => window.__checkStates")
    assert {f"{objective}:pending" for objective in DECIDED} <= set(seen), seen
    _assert_decided(checklist)
    # the renderer won over the Markdown fallback
    assert page.locator(".jp-OutputArea-output .jp-RenderedMarkdown").count() == 0
    _open_evidence(checklist)
    _both_themes(page, checklist, ".jp-gns3-copilot-checks", "checklist", screenshots, READABLE)
    jupyter_ui.save_notebook(page)

    saved = nbformat.read(server.root_dir / NOTEBOOK, as_version=4)
    [bundle] = [
        o["data"][CHECKS_MIME] for o in saved.cells[1].outputs if CHECKS_MIME in o.get("data", {})
    ]
    assert bundle["pending"] == [] and bundle["summary"]["score"] == 6
    assert [r["id"] for r in bundle["results"]] == list(DECIDED)  # the lab's order

    with stack.api() as api:
        for kernel in api.get("api/kernels").json():
            assert api.delete(f"api/kernels/{kernel['id']}").status_code == 204
        assert api.get("api/kernels").json() == []
    for ui in ("lab", "notebook"):
        page.goto(jupyter_ui.notebook_url(server.url, server.token, NOTEBOOK, ui))
        reopened = page.locator(".jp-gns3-copilot-checks")
        reopened.locator(".gns3c-checks[data-state='decided']").wait_for()
        _assert_decided(reopened)
        _open_evidence(reopened)
    assert [e for e in page.page_errors if "gns3" in e.lower()] == []


def _open_objectives(page: Any, stack: LabStack) -> Any:
    """The sidebar on the project; its Objectives panel once the lab is read."""
    server = stack.server
    page.goto(f"{server.url}lab?reset&token={server.token}")
    page.wait_for_function("() => !!window.jupyterapp")
    page.evaluate("""async () => {
      await window.jupyterapp.restored;
      await window.jupyterapp.commands.execute('gns3-copilot:open');
    }""")
    sidebar = page.locator(SIDEBAR)
    sidebar.wait_for(state="visible")
    project = sidebar.locator(".jp-gns3-copilot-sidebar-project")
    project.locator(f"option[value='{stack.project_id}']").wait_for(state="attached")
    project.select_option(stack.project_id)
    panel = page.locator(OBJECTIVES)
    panel.locator(".gns3c-check").first.wait_for()
    return panel


def _check_elsewhere(stack: LabStack) -> None:
    """A check made outside the sidebar (a notebook cell, the command line): the
    non-streamed route, so the panel has none of its details."""
    with stack.api() as api:
        report = api.post(
            f"copilot/projects/{stack.project_id}/lab/checks", json={"stream": False}, timeout=120
        )
        assert report.status_code == 200, report.text
        assert {r["id"]: r["status"] for r in report.json()["results"]} == DECIDED


def _latest_statuses(panel: Any) -> None:
    """The panel shows the latest check, wherever it ran (no details: it did not see it),
    and the stage the student works on (the first not passed)."""
    assert _rows(panel) == DECIDED
    assert panel.locator(".gns3c-checks-score").inner_text() == "not yet · 6/7"
    assert panel.locator(".gns3c-check-why, .gns3c-check-evidence").count() == 0
    assert [t.strip() for t in panel.locator(".gns3c-check-text").all_inner_texts()] == [
        "PC1 has 10.0.0.1/24",
        "PC2 has 10.0.0.9/24",
        "PC1 reaches PC2",
        "Both PCs run",
    ]
    here = panel.locator(".gns3c-checks-stage-current")
    assert here.count() == 1 and here.inner_text() == "you are here"
    assert here.evaluate("(el) => el.closest('section').dataset.stage") == "addressing"


def _check_all(page: Any, panel: Any) -> None:
    """Check all streams each result into the panel (seen being checked, then decided)."""
    page.evaluate(_WATCH_STATES, OBJECTIVES)
    panel.locator("button.jp-gns3-copilot-sidebar-objectives-check-all").click()
    panel.locator(".gns3c-checks[data-state='decided']").wait_for(timeout=120_000)
    seen = page.evaluate("() => window.__checkStates")
    assert {f"{objective}:pending" for objective in DECIDED} <= set(seen), seen
    _assert_decided(panel)
    _open_evidence(panel)


def _check_a_stage(page: Any, panel: Any) -> None:
    """A stage's Check asks for that stage only; the other stage keeps its results."""
    reach = panel.locator(".gns3c-checks-stage[data-stage='reach']")
    page.evaluate(_WATCH_STATES, OBJECTIVES)
    with page.expect_request(lambda r: "/lab/checks" in r.url) as request:
        reach.locator("button.jp-gns3-copilot-sidebar-objectives-check").click()
    assert json.loads(request.value.post_data) == {"stage": "reach", "stream": True}
    panel.locator(".gns3c-checks[data-state='decided']").wait_for(timeout=120_000)
    assert _rows(panel) == DECIDED
    pending = {e for e in page.evaluate("() => window.__checkStates") if e.endswith(":pending")}
    assert pending == {"pc1-pc2:pending", "pcs-run:pending"}


def _catch_up(page: Any, panel: Any, stack: LabStack, lab: Any) -> None:
    """Catch up says what it restores; Enter (Cancel, the default) restores nothing;
    Restore brings the stage's snapshot back (the node added since is gone) and starts
    the nodes again."""
    extra = _gns3(
        lab, lambda gns3: gns3.create_node_from_template(stack.project_id, "VPCS", EXTRA_NODE)
    )
    assert extra.name == EXTRA_NODE
    addressing = panel.locator(".gns3c-checks-stage[data-stage='addressing']")
    assert (
        panel.locator(
            ".gns3c-checks-stage[data-stage='reach'] "
            "button.jp-gns3-copilot-sidebar-objectives-catch-up"
        ).count()
        == 0
    )
    dialog = page.locator(".jp-Dialog")
    addressing.locator("button.jp-gns3-copilot-sidebar-objectives-catch-up").click()
    assert "restores the snapshot 'fresh'" in dialog.inner_text()
    assert "every change made since is lost" in dialog.inner_text()
    assert '"confirm"' not in dialog.inner_text()
    page.keyboard.press("Enter")  # the default button keeps the lab
    dialog.wait_for(state="detached")
    nodes = _gns3(lab, lambda gns3: gns3.list_nodes(stack.project_id))
    assert EXTRA_NODE in {n.name for n in nodes}
    assert _rows(panel) == DECIDED

    addressing.locator("button.jp-gns3-copilot-sidebar-objectives-catch-up").click()
    dialog.locator("button.jp-mod-accept", has_text="Restore").click()
    dialog.wait_for(state="detached")
    notice = panel.locator(".jp-gns3-copilot-sidebar-objectives-notice")
    notice.locator("text=is restored").wait_for(timeout=120_000)
    assert "Caught up to Address the PCs" in notice.inner_text()
    assert set(_rows(panel).values()) == {"unchecked"}
    nodes = _gns3(lab, lambda gns3: gns3.list_nodes(stack.project_id))
    assert EXTRA_NODE not in {n.name for n in nodes}
    assert {n.name: n.status for n in nodes if n.node_type == "vpcs"} == {
        "PC1": "started",
        "PC2": "started",
    }

    # checked again: the PCs are back at the start of the stage, running but unaddressed
    addressing.locator("button.jp-gns3-copilot-sidebar-objectives-check").click()
    addressing.locator(".gns3c-checks-stage-score", has_text="not yet").wait_for(timeout=120_000)
    assert _rows(panel) == {
        "pc1-address": "fail",
        "pc2-address": "fail",
        "pc1-pc2": "unchecked",
        "pcs-run": "unchecked",
    }
    assert panel.locator("[data-objective='pc1-address'] .gns3c-check-why").inner_text() == (
        "PC1 has no IPv4 address."
    )
    assert panel.locator(".gns3c-checks-score").inner_text() == "0/7 · 2 not checked"


def _invalid_lab_file(page: Any, panel: Any, stack: LabStack, lab: Any) -> None:
    """A lab file broken in the project (not through the route, which refuses it): the
    panel lists its problems with their line and field, and offers nothing to check."""
    broken = LAB.replace("kind: node_running, node: PC2", "kind: node_runing, node: PC2")
    _gns3(lab, lambda gns3: gns3.write_project_file(stack.project_id, "lab.yaml", broken.encode()))
    project = page.locator(SIDEBAR + " .jp-gns3-copilot-sidebar-project")
    project.select_option("")
    project.select_option(stack.project_id)
    problem = panel.locator(".jp-gns3-copilot-sidebar-objectives-notice li")
    problem.first.wait_for()
    assert "lab file has problems" in panel.inner_text()
    assert problem.all_inner_texts() == [
        "lab.yaml, line 25, stages[1].objectives[1].all[1]: unknown check kind; the kinds are "
        "reachable, address, command, parsed, node_running, link, traffic, ospf_neighbor, "
        "route, bgp_session, json"
    ]
    assert panel.locator("button").count() == 0


def _address_pc2(stack: LabStack, address: str) -> None:
    """Give PC2 `address` on its console, as the student would (the tool route)."""
    commands = {"devices": [{"device": "PC2", "commands": [f"ip {address}"]}]}
    body = {"arguments": commands, "copilot_mode": "lab_automation_assistant", "stream": False}
    with stack.api() as api:
        done = api.post(
            f"copilot/projects/{stack.project_id}/tools/run_vpcs_commands", json=body, timeout=120
        )
        assert done.status_code == 200, done.text


def _current_stage(panel: Any) -> str:
    here = panel.locator(".gns3c-checks-stage-current")
    return str(here.evaluate("(el) => el.closest('section').dataset.stage"))


def test_the_objectives_panel_follows_checks_made_elsewhere(
    stack: LabStack, page: Any, screenshots: Path
) -> None:
    """Given the sidebar's Objectives panel shown on the project (PC2 misaddressed: not
    yet); when the student fixes PC2 and checks with the notebook's client (`Copilot`,
    what `%copilot check` runs in a kernel), then chooses a stage from another client;
    then the panel shows the new marks, score and "you are here" without being hidden
    and shown again."""
    _check_elsewhere(stack)
    panel = _open_objectives(page, stack)
    assert _rows(panel)["pc2-address"] == "fail"
    assert _current_stage(panel) == "addressing"
    try:
        _address_pc2(stack, "10.0.0.9/24")
        notebook = Copilot(stack.server.url, stack.server.token, notebook="")
        try:
            notebook.use(stack.project_id)
            assert notebook.check_lab("addressing").passed
        finally:
            notebook.close()
        panel.locator(".gns3c-checks-score", has_text="passed · 7/7").wait_for(timeout=30_000)
        assert set(_rows(panel).values()) == {"pass"}
        assert _current_stage(panel) == "reach"  # every objective passed: the last stage
        jupyter_ui.screenshot(page, page.locator(SIDEBAR), screenshots / "objectives-live.png")

        with stack.api() as api:
            stage = f"copilot/projects/{stack.project_id}/lab/stage"
            assert api.put(stage, json={"stage": "addressing"}).status_code == 200
        addressing = panel.locator(".gns3c-checks-stage[data-stage='addressing']")
        addressing.locator(".gns3c-checks-stage-current").wait_for(timeout=30_000)
        assert _current_stage(panel) == "addressing"
    finally:
        _address_pc2(stack, "10.0.0.2/24")
        with stack.api() as api:
            stage = f"copilot/projects/{stack.project_id}/lab/stage"
            assert api.put(stage, json={"stage": None}).status_code == 200
    assert [e for e in page.page_errors if "gns3" in e.lower()] == []


def test_the_objectives_panel_checks_and_catches_up(
    stack: LabStack, gns3_lab: Any, page: Any, screenshots: Path
) -> None:
    """Given the lab attached and checked once outside the sidebar; when the student opens
    the sidebar on the project, checks all, checks a stage and catches up; then the panel
    shows the latest check first, each new result as it comes, and the lab is restored
    only after the student confirmed."""
    _check_elsewhere(stack)
    panel = _open_objectives(page, stack)
    _latest_statuses(panel)
    _check_all(page, panel)
    readable = [
        *READABLE,
        ".gns3c-checks-stage-current",
        ".jp-gns3-copilot-sidebar-objectives-check-all",
        ".jp-gns3-copilot-sidebar-objectives-catch-up",
    ]
    _both_themes(page, page.locator(SIDEBAR), OBJECTIVES, "objectives", screenshots, readable)
    _check_a_stage(page, panel)
    _catch_up(page, panel, stack, gns3_lab)
    _invalid_lab_file(page, panel, stack, gns3_lab)
    assert [e for e in page.page_errors if "gns3" in e.lower()] == []
