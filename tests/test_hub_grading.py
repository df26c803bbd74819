"""Lab grading in a class on a REAL JupyterHub: the instructor guide's recipe
(`testing.hub_recipe`, as tests/test_hub_service.py runs it), the real gns3-server 3.0.6 of
the lab kit with real VPCS nodes, the students' real Jupyter servers in hub mode, the
real `nbgrader` command line and gradebook, and the scripted model server (a TEST DOUBLE
of the OpenAI API, a real HTTP server; no model call is made here).

The class: alice and bob (students), carol (instructor). The template project `two PCs`
(PC1 - PC2, and its lab file with per-student subnets) is made by the GNS3 administrator
and assigned to both students on the dashboard's API. What the students type into their
devices is typed over telnet from the test, as their terminal or copilot would.

What is proved: a student's server has no salt, and reads its lab (with the student's own
values, the service's salt) and checks it through the service; the student's own lab file
in their copy (written with their own GNS3 token) changes nothing; the service records
only what it checked; another student cannot read or check the lab; the instructor's grid
and "check everyone now"; and nbgrader: `generate_assignment`, two submissions,
`autograde` in a terminal of the instructor's (hub URL and hub token), the gradebook's
points matching the service's checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from support.dashboard import FORGED, LAB, make_template, type_into
from support.hub import (
    MODEL,
    ServiceHub,
    environ,
    proxy_command,
    recipe_values,
    remove_class_projects,
)
from support.server import TITLE_REPLY, parse_sse

from jupyter_gns3_copilot import Copilot
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.hub.lab_accounts import lab_name
from jupyter_gns3_copilot.objectives import SALT_FILE
from jupyter_gns3_copilot.objectives.loader import load_lab
from jupyter_gns3_copilot.testing.hub_recipe import RecipeHub
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text, tool_call

pytestmark = [pytest.mark.lab, pytest.mark.hub, pytest.mark.slow]

PAGE = Path(__file__).resolve().parents[1] / "docs" / "instructor" / "jupyterhub.md"
UPSTREAM_KEY = "sk-upstream-grading-key-3Hs"
TEMPLATE = f"two PCs {uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def class_hub(
    gns3_lab: Any, gns3_http: httpx.Client, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceHub]:
    """The recipe's hub with alice's server started, the template assigned to alice and
    bob, and everyone's hub token (`tokens`: alice, bob, carol)."""
    directory = tmp_path_factory.mktemp("grading-hub") / "srv"
    with ScriptedLLM(api_key=UPSTREAM_KEY, models=[MODEL]) as llm:
        values = recipe_values(gns3_lab, llm, UPSTREAM_KEY, "the-class-password-8Lq")
        with RecipeHub(PAGE, directory, values, proxy=proxy_command()) as recipe:
            hub = ServiceHub(recipe, llm, secrets=(UPSTREAM_KEY, gns3_lab.password))
            hub.start_server("alice")
            for user in ("bob", "carol"):
                made = recipe.api.post(f"/users/{user}/tokens", json={"note": "grading"})
                made.raise_for_status()
                hub.tokens[user] = made.json()["token"]
            template = asyncio.run(_template(gns3_lab))
            try:
                assigned = httpx.post(
                    hub.dashboard_url("api", "labs", "assign"),
                    headers=hub.headers("carol"),
                    json={"template": TEMPLATE, "students": ["alice", "bob"]},
                    timeout=60,
                    trust_env=False,
                )
                assert assigned.status_code == 200, assigned.text
                yield hub
            finally:
                remove_class_projects(gns3_http)
                gns3_http.delete(f"/v3/projects/{template}")


async def _template(gns3_lab: Any) -> str:
    async with _admin(gns3_lab) as gns3:
        return await make_template(gns3, TEMPLATE)


def _admin(gns3_lab: Any) -> GNS3Client:
    return GNS3Client(gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password)


def copy_of(hub: ServiceHub, user: str) -> str:
    """The project id of `user`'s copy of the template, as the service lists it."""
    listed = httpx.get(
        hub.service_url("api", "projects"), headers=hub.headers(user), timeout=30, trust_env=False
    )
    listed.raise_for_status()
    return next(p["project_id"] for p in listed.json() if p["name"] == lab_name(TEMPLATE, user))


def _server(hub: ServiceHub, user: str) -> dict[str, str]:
    return {"Authorization": f"token {hub.server_token(user)}"}


def service_salt(hub: ServiceHub) -> str:
    return (hub.directory / "gns3-copilot" / SALT_FILE).read_text().strip()


def expected_texts(hub: ServiceHub, user: str) -> dict[str, str]:
    """The objective texts `user` must read: the lab rendered with the service's salt."""
    lab = load_lab(LAB).for_student(user, service_salt(hub))
    return {o.id: o.text for s in lab.stages for o in s.objectives}


def address(hub: ServiceHub, user: str, objective: str) -> str:
    return expected_texts(hub, user)[objective].split(" has ", 1)[1]


def configure(gns3_lab: Any, project_id: str, *commands: tuple[str, str]) -> None:
    async def run() -> None:
        async with _admin(gns3_lab) as gns3:
            await gns3.open_project(project_id)
            await gns3.start_all(project_id)
            for device, command in commands:
                await type_into(gns3, project_id, device, command)

    asyncio.run(run())


def grades_rows(hub: ServiceHub) -> list[tuple[Any, ...]]:
    with sqlite3.connect(hub.directory / "gns3-copilot" / "grades.db") as db:
        return db.execute(
            "SELECT hub_user, lab, objective, status, first_passed_at IS NOT NULL, checks "
            "FROM objective_grades ORDER BY hub_user, objective"
        ).fetchall()


def statuses(view: dict[str, Any]) -> list[Any]:
    return [o.get("status") for stage in view["stages"] for o in stage["objectives"]]


class LabEvents:
    """A lab events stream (`GET .../lab/events`) read in a thread of its own."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.views: queue.Queue[dict[str, Any]] = queue.Queue()
        self._client = httpx.Client(timeout=httpx.Timeout(30, read=None), trust_env=False)
        self._response = self._client.send(
            self._client.build_request("GET", url, headers=headers), stream=True
        )
        assert self._response.status_code == 200, self._response.read()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(httpx.HTTPError):
            for line in self._response.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[len("data: ") :])
                    if event["type"] == "lab_view":
                        self.views.put(event["view"])

    def next_view(self, wanted: Any, timeout: float = 60.0) -> dict[str, Any]:
        """The next view `wanted(view)` accepts."""
        while True:
            view = self.views.get(timeout=timeout)
            if wanted(view):
                return view

    def close(self) -> None:
        self._response.close()
        self._client.close()


def test_students_check_through_the_service_and_their_own_lab_file_changes_nothing(
    class_hub: ServiceHub, gns3_lab: Any
) -> None:
    hub = class_hub
    alice = hub.headers("alice")
    project = copy_of(hub, "alice")
    lab_url = hub.server_url("alice", "copilot", "projects", project, "lab")
    with httpx.Client(timeout=120, trust_env=False) as client:
        # Her lab, read through her copilot: her values, rendered by the service.
        view = client.get(lab_url, headers=alice)
        assert view.status_code == 200, view.text
        texts = {o["id"]: o["text"] for s in view.json()["stages"] for o in s["objectives"]}
        assert texts == expected_texts(hub, "alice")
        assert texts["pc1-address"] != expected_texts(hub, "bob")["pc1-address"]
        # Her server has no salt: none in its environment, none in any file of hers.
        assert "GNS3_COPILOT_LAB_SALT" not in hub_environ(hub, "alice")
        assert not list((hub.directory / "home").rglob(SALT_FILE))

        # Her copy opened, its nodes started: nothing is configured yet.
        opened = client.post(
            hub.server_url("alice", "copilot", "projects", project, "open"), headers=alice
        )
        assert opened.status_code == 200, opened.text
        configure(gns3_lab, project)
        checks_url = f"{lab_url}/checks"
        fresh = client.post(checks_url, headers=alice, json={"stream": False})
        assert fresh.status_code == 200, fresh.text
        assert (fresh.json()["score"], fresh.json()["passed"]) == (0, False)

        # Her copilot knows the lab through the service: the current stage's texts (her
        # values, her latest statuses) in its prompt, and check_objectives checked there.
        hub.llm.add(
            tool_call("check_objectives", {"stage": "addressing"}),
            text("Look at PC1's address first."),
            text("Addressing", when=TITLE_REPLY),
        )
        before = len(hub.llm.chat_requests)
        chat_url = hub.server_url("alice", "copilot", "projects", project, "chat", "stream")
        turn = sse_events(client, chat_url, alice, {"message": "What is left?"})
        assert turn[-1]["type"] == "done" and "error" not in [e["type"] for e in turn], turn
        system = hub.llm.chat_requests[before].body["messages"][0]["content"]
        assert "current stage addressing" in system
        assert f"- pc1-address: {texts['pc1-address']} (not yet)" in system
        assert "kind" not in system  # the checks never reach the student's server
        [checked] = [e for e in turn if e["type"] == "tool_end"]
        assert [o["status"] for o in json.loads(checked["tool_output"])["objectives"]] == [
            "fail",
            "fail",
        ]
        chosen = client.put(f"{lab_url}/stage", headers=alice, json={"stage": "reach"})
        assert chosen.status_code == 200 and chosen.json()["current_stage"] == "reach"
        chosen = client.put(f"{lab_url}/stage", headers=alice, json={"stage": None})
        assert chosen.json()["current_stage"] == "addressing"

        # She writes her own lab file into her copy with her own GNS3 token (GNS3 lets
        # her): checks that would pass at once. Her lab and her checks do not change.
        session = client.get(
            hub.service_url("api", "session"), headers=_server(hub, "alice")
        ).json()
        as_alice = {"Authorization": f"Bearer {session['gns3_token']}"}
        # First she reads the lab file of her copy: it holds no check (the answers).
        shown = client.get(
            f"{session['gns3_url']}/v3/projects/{project}/files/lab.yaml", headers=as_alice
        )
        assert shown.status_code in (200, 403, 404), shown.text
        if shown.status_code == 200:
            assert all(line.startswith("#") for line in shown.text.splitlines()), shown.text
            assert "check:" not in shown.text and "PC1" not in shown.text
        written = client.post(
            f"{session['gns3_url']}/v3/projects/{project}/files/lab.yaml",
            headers=as_alice,
            content=FORGED.encode(),
        )
        assert written.is_success, written.text
        again = client.get(lab_url, headers=alice).json()
        assert {o["text"] for s in again["stages"] for o in s["objectives"]} == set(texts.values())
        forged = client.post(checks_url, headers=alice, json={"stream": False}).json()
        assert forged["score"] == 0, forged
        assert not [r for r in grades_rows(hub) if r[4]], "nothing passed yet"

        # She addresses both PCs; her check, streamed, fills in as the service decides,
        # and her Objectives panel (the lab events of her server) follows it.
        watched = LabEvents(
            hub.server_url("alice", "copilot", "projects", project, "lab", "events"), alice
        )
        watched.next_view(lambda view: True)
        configure(
            gns3_lab,
            project,
            ("PC1", f"ip {address(hub, 'alice', 'pc1-address')}"),
            ("PC2", f"ip {address(hub, 'alice', 'pc2-address')}"),
        )
        events = sse_events(client, checks_url, alice, {"stage": "addressing"})
        kinds = [e["type"] for e in events]
        assert kinds == ["heartbeat", "check_result", "check_result", "check_summary", "done"]
        assert {e["result"]["id"]: e["result"]["status"] for e in events[1:3]} == {
            "pc1-address": "pass",
            "pc2-address": "pass",
        }
        assert events[3]["summary"]["passed"] is True
        passed = watched.next_view(lambda view: statuses(view)[:2] == ["pass", "pass"])
        assert passed["current_stage"] == "reach"
        watched.close()
        assert [(r[1], r[2], r[4]) for r in grades_rows(hub) if r[0] == "alice"] == [
            (TEMPLATE, "pc1-address", 1),
            (TEMPLATE, "pc1-pc2", 0),
            (TEMPLATE, "pc2-address", 1),
        ]

        # From Python, as her kernel would: the template's name finds her copy, and her
        # check goes through her server to the service.
        copilot = Copilot(hub.server_url("alice"), hub.tokens["alice"])
        assert copilot.use(TEMPLATE).project_id == project
        report = copilot.check_lab("addressing")
        report.assert_passed()
        assert sorted(r.text for r in report.results) == [
            texts["pc1-address"],
            texts["pc2-address"],
        ]
        copilot.close()

        # Errors come back as the copilot's: an unknown stage, a stage with no snapshot.
        unknown = client.post(checks_url, headers=alice, json={"stage": "nope"})
        assert unknown.status_code == 404
        assert "stages: addressing, reach" in unknown.json()["error"]["message"]
        catch_up = client.post(f"{lab_url}/stages/addressing/catch-up", headers=alice, json={})
        assert catch_up.status_code == 409, catch_up.text
        assert "no snapshot" in catch_up.json()["error"]["message"]

        # Bob cannot read or check alice's lab through the service.
        for verb, parts in (("GET", ()), ("POST", ("checks",))):
            theirs = client.request(
                verb,
                hub.service_url("api", "labs", project, *parts),
                headers=hub.headers("bob"),
                json={} if verb == "POST" else None,
            )
            assert theirs.status_code == 404, theirs.text

        # Carol's grid: alice's stage done, bob never checked; "check everyone now"
        # checks alice's opened copy and says bob's is closed. Carol's own working copy
        # ("Edit a copy") is no student's: neither checked nor in the grid.
        carol = hub.headers("carol")
        hers = client.post(
            hub.dashboard_url("api", "templates", "edit"),
            headers=carol,
            json={"template": TEMPLATE},
        )
        assert hers.status_code == 200, hers.text
        everyone = client.post(hub.dashboard_url("api", "grades", "check"), headers=carol, json={})
        assert everyone.status_code == 200, everyone.text
        assert [c["user"] for c in everyone.json()["checked"]] == ["alice"]
        assert [s["user"] for s in everyone.json()["skipped"]] == ["bob"]
        labs = client.get(hub.dashboard_url("api", "grades"), headers=carol).json()["labs"]
        grid = next(g for g in labs if g["lab"] == TEMPLATE)
        rows = {r["user"]: r for r in grid["students"]}
        assert set(rows) == {"alice", "bob"}
        assert rows["alice"]["stages"][0]["passed"] is True
        assert rows["alice"]["objectives"]["pc1-pc2"]["status"] == "pass"
        assert {c["status"] for c in rows["bob"]["objectives"].values()} == {"unchecked"}
        # Students may not read it.
        assert client.get(hub.dashboard_url("api", "grades"), headers=alice).status_code == 403


def sse_events(
    client: httpx.Client, url: str, headers: dict[str, str], body: dict[str, Any]
) -> list[dict[str, Any]]:
    """The events of a streamed copilot route (a check, a chat turn)."""
    events: list[dict[str, Any]] = []
    rest = ""
    with client.stream("POST", url, headers=headers, json=body) as response:
        assert response.status_code == 200, response.read()
        for chunk in response.iter_text():
            more, rest = parse_sse(rest + chunk)
            events += more
    return events


def hub_environ(hub: ServiceHub, user: str) -> dict[str, str]:
    return environ(hub.server_pid(user))


SETUP = f'from jupyter_gns3_copilot import Copilot\n\nlab = Copilot(project="{TEMPLATE}")'
TESTS = (
    ("addressing", 3, 'lab.check_lab("addressing").assert_passed()'),
    ("addressing-partial", 3, 'lab.check_lab("addressing").score'),
    ("reach", 1, 'lab.check_lab("reach").assert_passed()'),
)


def assignment() -> nbformat.NotebookNode:
    """The instructor's source notebook: a locked setup cell and autograder test cells."""
    cells = [
        nbformat.v4.new_markdown_cell("Address PC1 and PC2 with your subnet, then check."),
        _graded(nbformat.v4.new_code_cell(SETUP), "setup", grade=False),
    ]
    for grade_id, points, source in TESTS:
        cells.append(_graded(nbformat.v4.new_code_cell(source), grade_id, points=points))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return notebook


def _graded(
    cell: nbformat.NotebookNode, grade_id: str, *, grade: bool = True, points: int = 0
) -> nbformat.NotebookNode:
    cell.metadata["nbgrader"] = {
        "grade_id": grade_id,
        "grade": grade,
        "solution": False,
        "locked": True,
        "schema_version": 3,
        **({"points": points} if grade else {}),
    }
    return cell


def nbgrader(course: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "nbgrader"), *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"nbgrader {args}: {done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_nbgrader_autogrades_with_the_services_checks(
    class_hub: ServiceHub, gns3_lab: Any, tmp_path: Path
) -> None:
    hub = class_hub
    # alice addressed both PCs; bob only PC1.
    alice, bob = copy_of(hub, "alice"), copy_of(hub, "bob")
    configure(
        gns3_lab,
        alice,
        ("PC1", f"ip {address(hub, 'alice', 'pc1-address')}"),
        ("PC2", f"ip {address(hub, 'alice', 'pc2-address')}"),
    )
    configure(gns3_lab, bob, ("PC1", f"ip {address(hub, 'bob', 'pc1-address')}"))

    course = tmp_path / "course"
    (course / "source" / "lab1").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        textwrap.dedent(
            f"""\
            c = get_config()
            c.CourseDirectory.root = {str(course)!r}
            c.CourseDirectory.course_id = "networks"
            """
        )
    )
    nbformat.write(assignment(), course / "source" / "lab1" / "lab.ipynb")
    # As in a terminal of carol's JupyterLab: her server's hub token and the hub's URL.
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GNS3_COPILOT_HUB_URL": hub.service_url(""),
        "JUPYTERHUB_API_TOKEN": hub.tokens["carol"],
    }
    nbgrader(course, env, "generate_assignment", "lab1", "--create")
    released = course / "release" / "lab1" / "lab.ipynb"
    for student in ("alice", "bob"):
        submitted = course / "submitted" / student / "lab1"
        submitted.mkdir(parents=True)
        shutil.copy(released, submitted / "lab.ipynb")
        (submitted / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    log = nbgrader(course, env, "autograde", "lab1", "--create")
    assert "lab.ipynb" in log

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        scores = {
            student: {
                grade_id: gradebook.find_grade(grade_id, "lab", "lab1", student).score
                for grade_id, _, _ in TESTS
            }
            for student in ("alice", "bob")
        }
        totals = {s: gradebook.find_submission("lab1", s).score for s in ("alice", "bob")}
    # The gradebook's points are the service's checks: alice did everything, bob PC1 only.
    assert scores == {
        "alice": {"addressing": 3, "addressing-partial": 3, "reach": 1},
        "bob": {"addressing": 0, "addressing-partial": 2, "reach": 0},
    }, scores
    assert totals == {"alice": 7, "bob": 2}
    for student, stage_points in (("alice", 3), ("bob", 2)):
        report = httpx.post(
            hub.dashboard_url("api", "grades", "report"),
            headers=hub.headers("carol"),
            json={"student": student, "project": TEMPLATE, "stage": "addressing"},
            timeout=120,
            trust_env=False,
        )
        assert report.status_code == 200, report.text
        assert report.json()["score"] == stage_points == scores[student]["addressing-partial"]
    # The failing cell says why, in the autograded notebook.
    graded = nbformat.read(course / "autograded" / "bob" / "lab1" / "lab.ipynb", as_version=4)
    failure = next(
        c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "addressing"
    )
    error = next(o for o in failure.outputs if o.output_type == "error")
    assert error.ename == "AssertionError"
    assert "2 of 3 points; not passed:" in error.evalue and "pc2-address" in error.evalue
