"""The instructor dashboard in Debian's chromium: the page of the real
dashboard handlers on 127.0.0.1 (in a thread of its own), the real gns3-server 3.0.6 of the
lab kit and the real SQLite usage store.

The one stand-in is the caller lookup of tests/support/dashboard.py (a cookie naming the
hub user, for JupyterHub's HubOAuth login; the real login is tested with the hub service).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypeVar

import pytest
from support.dashboard import TEST_USER_COOKIE, Service, dashboard_service, record_usage

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.hub.lab_accounts import lab_name

pytestmark = pytest.mark.lab
T = TypeVar("T")


class ServiceThread:
    """The dashboard service on an event loop in a background thread (Playwright's sync
    API owns the test's thread); `run(coro)` runs a coroutine there and waits for it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.stack = AsyncExitStack()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def stop(self) -> None:
        self.run(self.stack.aclose())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def hub(gns3_lab: Any, prefix: str, tmp_path: Path) -> Iterator[tuple[ServiceThread, Service]]:
    runner = ServiceThread()

    async def start() -> Service:
        gns3 = await runner.stack.enter_async_context(
            GNS3Client(gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password)
        )
        return await runner.stack.enter_async_context(
            dashboard_service(tmp_path, gns3, account_prefix=prefix)
        )

    try:
        yield runner, runner.run(start())
    finally:
        runner.stop()


def log_in(context: Any, service: Service, user: str) -> None:
    """The stand-in login: the cookie the stand-in caller lookup reads."""
    context.add_cookies([{"name": TEST_USER_COOKIE, "value": user, "url": service.url}])


def test_the_instructor_sees_usage_assigns_and_resets_and_a_student_gets_403(
    hub: tuple[ServiceThread, Service],
    prefix: str,
    browser_context: Any,
    page: Any,
    screenshots: Path,
) -> None:
    runner, service = hub
    gns3, accounts = service.deps.gns3, service.deps.accounts
    runner.run(record_usage(service.store, "alice", 600, "turn-1"))
    runner.run(record_usage(service.store, "bob", 120, "turn-2"))

    async def make_template() -> str:
        template = await gns3.create_project(f"{prefix}OSPF lab")
        await gns3.create_node_from_template(template.project_id, "VPCS", "PC1")
        await gns3.close_project(template.project_id)
        return template.name

    template = runner.run(make_template())

    log_in(browser_context, service, "ines")
    assert page.goto(service.url).status == 200
    rows = page.locator("#students tbody tr")
    alice_row = page.locator('tr[data-student="alice"]')
    assert alice_row.locator(".tokens-today").inner_text() == "600"
    assert "/ 1,000" in alice_row.locator(".usage").inner_text()
    assert page.locator('tr[data-student="bob"] .tokens-total').inner_text() == "120"
    assert rows.count() == 2

    form = page.locator("#assign-form")
    form.locator('select[name="template"]').select_option(template)
    form.get_by_label("alice").check()
    form.get_by_label("bob").check()
    form.get_by_role("button", name="Assign").click()
    notice = page.locator(".alert-success")
    assert f"Lab '{template}' assigned to" in notice.inner_text()
    copies = {who: runner.run(accounts.student_projects(who)) for who in ("alice", "bob")}
    assert {who: [p.name for p in mine] for who, mine in copies.items()} == {
        who: [lab_name(template, who)] for who in ("alice", "bob")
    }
    assert alice_row.locator(".project-name").inner_text() == lab_name(template, "alice")

    project = alice_row.locator(f'.project[data-project="{lab_name(template, "alice")}"]')
    project.locator("summary").click()
    project.get_by_role("button", name="Reset to template").click()
    assert "was reset to the template" in page.locator(".alert-success").inner_text()
    (fresh,) = runner.run(accounts.student_projects("alice"))
    assert fresh.name == lab_name(template, "alice")
    assert fresh.project_id != copies["alice"][0].project_id
    assert [p.project_id for p in runner.run(accounts.student_projects("bob"))] == [
        copies["bob"][0].project_id
    ]

    async def start_bobs_lab() -> None:
        mine = copies["bob"][0].project_id
        await gns3.open_project(mine)
        await gns3.start_all(mine)

    runner.run(start_bobs_lab())
    page.reload()  # the forms redirect: a reload repeats nothing
    assert "was reset" not in page.inner_text("main")
    bob_row = page.locator('tr[data-student="bob"]')
    assert bob_row.locator(".badge").inner_text() == "opened"
    assert bob_row.locator(".nodes li").inner_text() == "PC1 started"
    page.screenshot(path=screenshots / "hub-dashboard.png", full_page=True)
    assert page.page_errors == []

    log_in(browser_context, service, "bob")
    response = page.goto(service.url)
    assert response.status == 403
    assert page.get_by_role("heading", name="403 Forbidden").is_visible()
    assert "for the course's instructors" in page.inner_text("main")
    page.screenshot(path=screenshots / "hub-dashboard-403.png", full_page=True)
