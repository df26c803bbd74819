"""The hub service grading a class's labs itself (`hub/class_labs.py`, `hub/grades.py`,
the dashboard's lab progress): the real gns3-server 3.0.6 of the lab kit with real VPCS
nodes (the service reaches their consoles through GNS3's console websocket with its own
administrator token), the real SQLite grade and usage stores, the dashboard's real
tornado handlers on 127.0.0.1.

The one stand-in is the dashboard's caller lookup of tests/support/dashboard.py (for
JupyterHub's HubOAuth); the real hub, the students' servers and nbgrader are in
tests/test_hub_grading.py. A student's own configuration is typed into their devices
with the copilot's command tool over telnet, as their copilot or their terminal would.
"""

from __future__ import annotations

import csv
import html
import io
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.dashboard import (
    FORGED,
    LAB,
    NOW,
    Service,
    dashboard_service,
    host,
    make_template,
    type_into,
)

from jupyter_gns3_copilot.gns3 import GNS3Client, GNS3NotFound
from jupyter_gns3_copilot.hub.lab_accounts import lab_name
from jupyter_gns3_copilot.hub.usage import ModelCall, SqliteUsageStore
from jupyter_gns3_copilot.objectives.errors import LabFileError, NoLab

pytestmark = pytest.mark.lab

SALT = "class-salt-for-grades"


@asynccontextmanager
async def graded_service(
    gns3_lab: Any, prefix: str, data_dir: Path
) -> AsyncIterator[tuple[GNS3Client, Service]]:
    """The dashboard with the service's lab checks (class salt `SALT`), and its GNS3
    administrator's client."""
    gns3 = GNS3Client(gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password)
    async with (
        gns3,
        dashboard_service(data_dir, gns3, account_prefix=prefix, lab_salt=SALT) as service,
    ):
        yield gns3, service


class Clock:
    """The service's clock for lab checks, moved by the test (first passes, hints)."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def turn_at(store: SqliteUsageStore, user: str, when: datetime, turn: str) -> None:
    """A copilot turn of `user` through the gateway at `when` (as the gateway records it)."""
    await store.record(
        ModelCall(
            user=user,
            model="scripted-model",
            started_at=when,
            ended_at=when + timedelta(seconds=5),
            status="ok",
            prompt_tokens=90,
            completion_tokens=10,
            turn_id=turn,
        )
    )


def grid_of(grades: dict[str, Any], lab: str) -> dict[str, Any]:
    return next(g for g in grades["labs"] if g["lab"] == lab)


def row_of(grid: dict[str, Any], user: str) -> dict[str, Any]:
    return next(r for r in grid["students"] if r["user"] == user)


async def test_the_service_grades_each_students_copy_against_the_template(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    async with graded_service(gns3_lab, prefix, tmp_path) as (gns3, service):
        labs = service.deps.labs
        assert labs is not None
        clock = Clock(NOW + timedelta(minutes=1))
        labs.clock = clock
        name = f"{prefix}two-pcs"
        await make_template(gns3, name)
        async with service.client() as api:
            assigned = await api.post(
                "api/labs/assign", json={"template": name, "students": ["alice", "bob"]}
            )
            assert assigned.status_code == 200, assigned.text
            copies = {who: c["project_id"] for who, c in assigned.json().items()}

            # Each student reads their own values: the class's salt makes them differ.
            views = {who: await labs.view(who, copies[who]) for who in copies}
            alice_view = views["alice"].model_dump()
            assert host(alice_view, "pc1-address") != host(views["bob"].model_dump(), "pc1-address")
            assert "{{" not in str(alice_view) and "check" not in str(alice_view)

            # Nobody has checked yet: the grid knows both students, every cell unchecked.
            grid = grid_of((await api.get("api/grades")).json(), name)
            assert [r["user"] for r in grid["students"]] == ["alice", "bob"]
            assert [o["id"] for s in grid["stages"] for o in s["objectives"]] == [
                "pc1-address",
                "pc2-address",
                "pc1-pc2",
            ]
            assert {c["status"] for c in row_of(grid, "alice")["objectives"].values()} == {
                "unchecked"
            }

            # Alice opens her copy and starts it; bob's stays closed.
            await gns3.open_project(copies["alice"])
            await gns3.start_all(copies["alice"])
            everyone = await api.post("api/grades/check", json={"lab": name})
            assert everyone.status_code == 200, everyone.text
            result = everyone.json()
            assert [(c["user"], c["score"], c["max_score"]) for c in result["checked"]] == [
                ("alice", 0, 4)
            ]
            assert [(s["user"], s["project"]) for s in result["skipped"]] == [
                ("bob", lab_name(name, "bob"))
            ]
            assert "closed" in result["skipped"][0]["reason"]

            # Alice asks her copilot twice (one turn of two model calls, and another), then
            # addresses PC1 with her value; a turn before the lab was assigned does not count.
            await turn_at(service.store, "alice", NOW - timedelta(minutes=5), "turn-0")
            await turn_at(service.store, "alice", NOW + timedelta(minutes=5), "turn-1")
            await turn_at(service.store, "alice", NOW + timedelta(minutes=6), "turn-1")
            await turn_at(service.store, "alice", NOW + timedelta(minutes=10), "turn-2")
            await type_into(gns3, copies["alice"], "PC1", f"ip {host(alice_view, 'pc1-address')}")
            clock.now = NOW + timedelta(minutes=20)
            await api.post("api/grades/check", json={"lab": name})
            grid = grid_of((await api.get("api/grades", params={"lab": name})).json(), name)
            alice = row_of(grid, "alice")
            cell = alice["objectives"]["pc1-address"]
            assert cell["status"] == "pass" and cell["checks"] == 2
            assert datetime.fromisoformat(cell["first_passed_at"]) == clock.now
            # Her two turns since the lab was assigned (NOW), by the pass.
            assert cell["hints_used"] == 2
            assert alice["objectives"]["pc2-address"]["status"] == "fail"
            assert (alice["score"], alice["stages_passed"]) == (2, 0)
            assert row_of(grid, "bob")["objectives"]["pc1-address"]["status"] == "unchecked"

            # Alice writes her own lab file into her copy (her GNS3 user may): nothing
            # changes, the service checks against the template's.
            await gns3.write_project_file(copies["alice"], "lab.yaml", FORGED.encode())
            report = await api.post("api/grades/report", json={"student": "alice", "project": name})
            assert report.status_code == 200, report.text
            statuses = {r["id"]: r["status"] for r in report.json()["results"]}
            # (PC1 cannot ping PC2 before PC2 has an address: not decided.)
            assert statuses == {"pc1-address": "pass", "pc2-address": "fail", "pc1-pc2": "error"}
            assert report.json()["score"] == 2

            # PC2 addressed: the stage is completed; then PC1 loses its address while she
            # works on the next stage: the stage stays completed (a checkpoint).
            await type_into(gns3, copies["alice"], "PC2", f"ip {host(alice_view, 'pc2-address')}")
            clock.now = NOW + timedelta(minutes=30)
            stage = await api.post(
                "api/grades/report",
                json={
                    "student": "alice",
                    "project": lab_name(name, "alice"),
                    "stage": "addressing",
                },
            )
            assert stage.json()["passed"] is True, stage.text
            await type_into(gns3, copies["alice"], "PC1", "clear ip")
            clock.now = NOW + timedelta(minutes=40)
            again = (
                await api.post(
                    "api/grades/report",
                    json={"student": "alice", "project": name, "stage": "addressing"},
                )
            ).json()
            assert again["passed"] is True and again["score"] == 3
            pc1 = next(r for r in again["results"] if r["id"] == "pc1-address")
            assert pc1["explanation"].startswith("Passed the service's check on")
            assert "the last check" in pc1["explanation"]

            grid = grid_of((await api.get("api/grades")).json(), name)
            alice = row_of(grid, "alice")
            assert alice["stages"][0]["passed"] is True
            assert datetime.fromisoformat(alice["stages"][0]["completed_at"]) == NOW + timedelta(
                minutes=30
            )
            assert alice["objectives"]["pc1-address"]["status"] == "pass"
            assert alice["objectives"]["pc1-address"]["checks"] == 5
            # The grid keeps first passes (3 points); her last check passed only PC2's
            # address (1 point): both answers name both scores.
            assert (alice["score"], alice["kept_score"], alice["live_score"]) == (3, 3, 1)
            now = (await api.post("api/grades/check", json={"lab": name})).json()["checked"]
            assert [(c["score"], c["live_score"], c["kept_score"]) for c in now] == [(1, 1, 3)]

            # The CSV: one row per student and objective, as the grid says.
            exported = await api.get("api/grades.csv", params={"lab": name})
            assert exported.headers["content-type"].startswith("text/csv")
            rows = list(csv.DictReader(io.StringIO(exported.text)))
            assert len(rows) == 6
            mine = {r["objective"]: r for r in rows if r["student"] == "alice"}
            assert mine["pc1-address"]["status"] == "pass"
            assert mine["pc1-address"]["points_awarded"] == "2"
            assert mine["pc1-address"]["hints_used"] == "2"
            # PC1 has no address since the last check: it reaches nobody (a failure, not an
            # error: a check does not make a VPCS without an address ping)
            assert mine["pc1-pc2"]["status"] == "fail"
            assert {r["status"] for r in rows if r["student"] == "bob"} == {"unchecked"}

            # Bad requests name what is wrong.
            unknown = await api.post(
                "api/grades/report", json={"student": "alice", "project": name, "stage": "x"}
            )
            assert unknown.status_code == 400 and "stages: addressing, reach" in unknown.text
            nobody = await api.post("api/grades/report", json={"student": "carl", "project": name})
            assert nobody.status_code == 404, nobody.text
            no_lab = await api.get("api/grades", params={"lab": "no such lab"})
            assert no_lab.status_code == 404

        # Students do not see the class's grades.
        async with service.client("alice") as api:
            assert (await api.get("api/grades")).status_code == 403
            refused = await api.post("api/grades/report", json={"student": "bob", "project": name})
            assert refused.status_code == 403
        await gns3.close_project(copies["alice"])


async def test_copies_carry_no_checks_and_the_staffs_copies_are_not_graded(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    """Given a template made in GNS3 with its lab file, and one made on the dashboard with
    a lab file attached there; then the students' copies carry no check their own GNS3
    token can read, yet their labs read and check as before; and ines's working copy
    ("Edit a copy") is neither checked by "check everyone now" nor in the grid or CSV."""
    async with graded_service(gns3_lab, prefix, tmp_path) as (gns3, service):
        labs = service.deps.labs
        assert labs is not None
        made_in_gns3 = f"{prefix}gns3-made"
        await make_template(gns3, made_in_gns3)
        made_here = f"{prefix}dashboard-made"
        async with service.client() as api:
            made = await api.post("api/templates", json={"name": made_here})
            assert made.status_code == 200, made.text
            edited = await api.post("api/templates/edit", json={"template": made_here})
            assert edited.status_code == 200, edited.text
            ines_copy = edited.json()["project_id"]
            await gns3.open_project(ines_copy)
            for device in ("PC1", "PC2"):
                await gns3.create_node_from_template(ines_copy, "VPCS", device)
            await gns3.create_link(ines_copy, "PC1", "e0", "PC2", "e0")
            saved = await api.post(
                "api/templates/save", json={"template": made_here, "project": ines_copy}
            )
            assert saved.status_code == 200, saved.text
            attached = await api.post("api/templates/lab", json={"template": made_here, "lab": LAB})
            assert attached.status_code == 200, attached.text
            copies = {}
            for template in (made_in_gns3, made_here):
                assigned = await api.post(
                    "api/labs/assign", json={"template": template, "students": ["alice"]}
                )
                assert assigned.status_code == 200, assigned.text
                copies[template] = assigned.json()["alice"]["project_id"]
            ines = await api.post("api/templates/edit", json={"template": made_in_gns3})
            ines_copy = ines.json()["project_id"]

        # Alice's own GNS3 token (her copilot's, her web UI's) reads no check in her copies.
        token = (await service.deps.accounts.students.student_token("alice")).token
        async with GNS3Client(gns3_lab.url, token=token.get_secret_value()) as as_alice:
            shown = await as_alice.read_project_file(copies[made_in_gns3], "lab.yaml")
            assert all(line.startswith(b"#") for line in shown.splitlines()), shown
            assert b"check:" not in shown and b"kind:" not in shown and b"PC1" not in shown
            with pytest.raises(GNS3NotFound):
                await as_alice.read_project_file(copies[made_here], "lab.yaml")
        # Her labs still read (her values) and are graded against the templates' files.
        for template, project in copies.items():
            lab = await labs.student_lab("alice", project)
            assert lab.graded and lab.lab == template
            view = (await labs.view("alice", project)).model_dump()
            assert host(view, "pc1-address").startswith("10.40.")

        # Ines's copy, opened like alice's: only alice is checked, graded, exported.
        for project in (copies[made_in_gns3], ines_copy):
            await gns3.open_project(project)
            await gns3.start_all(project)
        async with service.client() as api:
            everyone = (await api.post("api/grades/check", json={"lab": made_in_gns3})).json()
            assert [c["user"] for c in everyone["checked"]] == ["alice"]
            assert everyone["skipped"] == []
            grid = grid_of((await api.get("api/grades")).json(), made_in_gns3)
            assert [r["user"] for r in grid["students"]] == ["alice"]
            exported = await api.get("api/grades.csv")
            assert {r["student"] for r in csv.DictReader(io.StringIO(exported.text))} == {"alice"}
        for project in (copies[made_in_gns3], ines_copy):
            await gns3.close_project(project)

        # Saving her working copy again keeps the template's lab file; saving a project
        # with a lab file of its own (her copilot's `%copilot lab attach`) replaces it.
        async with service.client() as api:

            async def save_and_read() -> set[str]:
                body = {"template": made_here, "project": lab_name(made_here, "ines")}
                saved = await api.post("api/templates/save", json=body)
                assert saved.status_code == 200, saved.text
                grid = grid_of((await api.get("api/grades")).json(), made_here)
                return {o["text"] for s in grid["stages"] for o in s["objectives"]}

            assert "PC1 reaches PC2" in await save_and_read()
            await labs.attach("ines", lab_name(made_here, "ines"), FORGED, "mine.yaml")
            assert await save_and_read() == {"easy"}


async def test_a_catch_up_brings_back_no_checks_into_a_copy(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    """Given a template made in GNS3 whose snapshot was taken with its lab file in the
    project; then a student's catch-up restores that snapshot in her copy, and her copy's
    lab file still holds no check."""
    async with graded_service(gns3_lab, prefix, tmp_path) as (gns3, service):
        labs = service.deps.labs
        assert labs is not None
        name = f"{prefix}snapshot-lab"
        staged = LAB.replace(
            "  - id: reach\n    title: Reachability\n",
            "  - id: reach\n    title: Reachability\n    snapshot: reach-start\n",
        )
        assert staged != LAB
        template = await make_template(gns3, name, staged)
        await gns3.open_project(template)
        await gns3.create_snapshot(template, "reach-start")
        await gns3.close_project(template)
        copy = (await service.deps.accounts.assign_lab(name, ["alice"]))["alice"].project_id
        await gns3.open_project(copy)
        lab = await labs.student_lab("alice", copy)
        await labs.catch_up(lab, await labs.catch_up_plan(lab, "reach"))
        token = (await service.deps.accounts.students.student_token("alice")).token
        async with GNS3Client(gns3_lab.url, token=token.get_secret_value()) as as_alice:
            shown = await as_alice.read_project_file(copy, "lab.yaml")
        assert all(line.startswith(b"#") for line in shown.splitlines()), shown
        assert (await labs.view("alice", copy)).title == "Two PCs"
        await gns3.close_project(copy)


async def test_the_lab_progress_page_shows_the_grid_and_checks_everyone(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    async with graded_service(gns3_lab, prefix, tmp_path) as (gns3, service):
        name = f"{prefix}page-lab"
        broken = f"{prefix}broken-lab"
        await make_template(gns3, name)
        await make_template(gns3, broken, lab="title: x\nstages: []\nextra: 1\n")
        copies = await service.deps.accounts.assign_lab(name, ["alice"])
        alice = copies["alice"].project_id
        await gns3.open_project(alice)
        await gns3.start_all(alice)
        view = (await service.deps.labs.view("alice", alice)).model_dump()  # type: ignore[union-attr]
        await type_into(gns3, alice, "PC1", f"ip {host(view, 'pc1-address')}")

        async with service.client() as page:
            before = await page.get("grades")
            assert before.status_code == 200
            assert f'data-lab="{name}"' in before.text
            assert 'data-status="unchecked"' in before.text
            assert "Its lab file cannot be used now" in before.text  # the broken template
            xsrf = await _xsrf(page, before)
            checked = await page.post("grades/check", data={"_xsrf": xsrf, "lab": name})
            assert checked.status_code == 200 and "done=" in str(checked.url)
            assert "Checked 1 student lab." in checked.text
            cell = re.search(r'data-objective="pc1-address" data-status="(\w+)"', checked.text)
            assert cell and cell.group(1) == "pass"
            assert re.search(r'data-objective="pc2-address" data-status="fail"', checked.text)
            assert re.search(r'<time class="first-pass"', checked.text)

            # Without tornado's XSRF token the form does nothing.
            forged = await page.post("grades/check", data={"lab": name})
            assert forged.status_code == 403
        await gns3.close_project(alice)


async def _xsrf(client: httpx.AsyncClient, page: httpx.Response) -> str:
    found = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
    assert found, "the form carries an XSRF token"
    return found.group(1)


async def test_a_students_own_project_is_practice_checked_against_its_own_lab_file(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    async with graded_service(gns3_lab, prefix, tmp_path) as (gns3, service):
        labs = service.deps.labs
        assert labs is not None
        own = await service.deps.accounts.create_project_for("alice", f"{prefix}my practice")
        await gns3.create_node_from_template(own.project_id, "VPCS", "PC1")
        await gns3.create_node_from_template(own.project_id, "VPCS", "PC2")
        await gns3.create_link(own.project_id, "PC1", "e0", "PC2", "e0")
        with pytest.raises(NoLab):
            await labs.view("alice", own.project_id)

        # She attaches a lab file (her server allows it in automation mode): checked
        # against her project first, then hers, with her values.
        with pytest.raises(LabFileError, match="line 1"):
            await labs.attach("alice", own.project_id, "title: [", "mine.yaml")
        view = await labs.attach("alice", own.project_id, LAB, "mine.yaml")
        assert view.title == "Two PCs" and "{{" not in view.model_dump_json()
        lab = await labs.student_lab("alice", own.project_id)
        assert not lab.graded and lab.lab == own.name
        await gns3.start_all(own.project_id)
        results = [r async for r in labs.check(lab, stage="addressing")]
        assert {r.status for r in results} == {"fail"}
        # Practice: nothing recorded, no grid for it (it is no template).
        assert await labs.grades.grades() == []
        async with service.client() as api:
            listed = (await api.get("api/grades")).json()["labs"]
            assert own.name not in [g["lab"] for g in listed]
        # Bob cannot reach it.
        with pytest.raises(GNS3NotFound):
            await labs.view("bob", own.project_id)
        await gns3.close_project(own.project_id)


async def test_an_instructor_attaches_a_lab_file_to_a_template_on_the_dashboard(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    """Given a template made on the dashboard; then a lab file with a schema error or a
    configuring check or naming nodes it lacks is refused with its line and field (nothing
    kept), a good one is kept by the service (API and the page's file upload), never
    written into GNS3, and the lab progress grid shows it; a template made in GNS3 gets one
    too, and its GNS3 project is not changed."""
    async with graded_service(gns3_lab, prefix, tmp_path) as (gns3, service):
        name = f"{prefix}attached-lab"
        async with service.client() as api:
            made = await api.post("api/templates", json={"name": name})
            assert made.status_code == 200, made.text
            template_id = made.json()["project_id"]

            broken = await api.post(
                "api/templates/lab",
                json={"template": name, "lab": "title: x\nstages: []\nextra: 1\n"},
            )
            assert broken.status_code == 422, broken.text
            problems = broken.json()["error"]["errors"]
            assert {(p["line"], p["field"]) for p in problems} >= {(3, "extra")}, problems
            configuring = LAB.replace(
                "check: {kind: reachable, from: PC1, to: PC2}",
                "check: {kind: command, node: PC1, command: configure terminal, contains: x}",
            )
            refused = await api.post(
                "api/templates/lab", json={"template": name, "lab": configuring}
            )
            assert refused.status_code == 422, refused.text
            assert "may only read a device" in refused.json()["error"]["message"]
            # its checks name nodes the template does not have yet
            early = await api.post("api/templates/lab", json={"template": name, "lab": LAB})
            assert early.status_code == 422, early.text
            assert "no node called PC1 (it has no nodes yet)" in early.json()["error"]["message"]
            with pytest.raises(GNS3NotFound):
                await gns3.read_project_file(template_id, "lab.yaml")
            await gns3.open_project(template_id)
            for pc in ("PC1", "PC2"):
                await gns3.create_node_from_template(template_id, "VPCS", pc)
            await gns3.close_project(template_id)

            attached = await api.post("api/templates/lab", json={"template": name, "lab": LAB})
            assert attached.status_code == 200, attached.text
            assert attached.json() == {
                "template": {"project_id": template_id, "name": name, "made_here": True},
                "title": "Two PCs",
                "stages": ["addressing", "reach"],
                "objectives": 3,
                "max_score": 4.0,
            }
            with pytest.raises(GNS3NotFound):  # kept by the service, not in the project
                await gns3.read_project_file(template_id, "lab.yaml")
            grid = grid_of((await api.get("api/grades", params={"lab": name})).json(), name)
            assert (grid["title"], grid["max_score"], grid["problem"]) == ("Two PCs", 4.0, None)

            # A template made in GNS3 (with a lab file of its own): the attached one wins.
            elsewhere = f"{prefix}not-made-here"
            elsewhere_id = await make_template(gns3, elsewhere)
            other = await api.post("api/templates/lab", json={"template": elsewhere, "lab": FORGED})
            assert other.status_code == 200, other.text
            assert other.json()["template"]["made_here"] is False
            assert await gns3.read_project_file(elsewhere_id, "lab.yaml") == LAB.encode()
            grid = grid_of((await api.get("api/grades")).json(), elsewhere)
            texts = {o["text"] for s in grid["stages"] for o in s["objectives"]}
            assert texts == {"easy"}

        async with service.client() as page:
            home = await page.get("")
            assert f'data-template="{name}"' in home.text and "Attach lab file" in home.text
            xsrf = await _xsrf(page, home)
            renamed = LAB.replace("title: Two PCs", "title: Two PCs, second version")
            posted = await page.post(
                "templates/lab",
                data={"_xsrf": xsrf, "template": name},
                files={"lab": ("ospf-lab.yaml", renamed.encode(), "application/yaml")},
                follow_redirects=False,  # httpx would keep the multipart type on the GET
            )
            assert posted.status_code == 303, posted.text
            uploaded = await page.get(posted.next_request.url if posted.next_request else "")
            assert uploaded.status_code == 200
            assert "now has the lab 'Two PCs, second version'" in html.unescape(uploaded.text)
            assert f'data-template="{elsewhere}"' in uploaded.text
            row = uploaded.text.split(f'data-template="{elsewhere}"', 1)[1].split("</tr>")[0]
            assert "Attach lab file" in row  # offered for a template made in GNS3 too

            bad = await page.post(
                "templates/lab",
                data={"_xsrf": xsrf, "template": name},
                files={"lab": ("mine.yaml", b"title: x\nstages: []\nextra: 1\n", "text/plain")},
            )
            assert bad.status_code == 400
            assert "mine.yaml" in bad.text and "extra" in bad.text
            grid = grid_of((await page.get("api/grades", params={"lab": name})).json(), name)
            assert grid["title"] == "Two PCs, second version"
            empty = await page.post(
                "templates/lab", data={"_xsrf": xsrf, "template": name}, files={}
            )
            assert empty.status_code == 400 and "choose the lab file" in empty.text
