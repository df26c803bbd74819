"""Shared test configuration: pytest-jupyter runs `async def` tests on a fresh loop each;
every test reaching the GNS3 lab through its fixtures is marked `lab`; `prefix`, a unique
GNS3 account prefix cleaned up afterwards (classroom tests);
`reductions`, the events the turn reducer reduces (how often the kernel reduces each)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_gns3_copilot.turns import TurnBuilder

pytest_plugins = ["pytest_jupyter.jupyter_server"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `lab` every test whose fixtures start the GNS3 lab, so that `-m "not lab"`
    (`make check`) never starts it, whether or not the test's author marked it."""
    for item in items:
        if {"gns3_lab", "gns3_computes_lab"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.lab)


@pytest.fixture
def reductions(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The events `TurnBuilder.apply` reduces from now on (whichever builder), in order."""
    reduced: list[Any] = []
    apply = TurnBuilder.apply

    def counting(builder: TurnBuilder, event: Any) -> list[dict[str, Any]]:
        reduced.append(event)
        return apply(builder, event)

    monkeypatch.setattr(TurnBuilder, "apply", counting)
    return reduced


@pytest.fixture
def prefix(gns3_http: httpx.Client) -> Iterator[str]:
    """A unique account prefix; afterwards its projects, pools, users, ACEs and group go."""
    value = f"t{uuid.uuid4().hex[:6]}-"
    yield value
    for project in gns3_http.get("/v3/projects").json():
        if project["name"].startswith(value):
            gns3_http.post(f"/v3/projects/{project['project_id']}/close")
            gns3_http.delete(f"/v3/projects/{project['project_id']}")
    for pool in gns3_http.get("/v3/pools").json():
        if pool["name"].startswith(value):
            gns3_http.delete(f"/v3/pools/{pool['resource_pool_id']}")
    users = [u for u in gns3_http.get("/v3/access/users").json() if u["username"].startswith(value)]
    ours = {u["user_id"] for u in users}
    for ace in gns3_http.get("/v3/access/acl").json():
        if ace["user_id"] in ours:
            gns3_http.delete(f"/v3/access/acl/{ace['ace_id']}")
    for user in users:
        gns3_http.delete(f"/v3/access/users/{user['user_id']}")
    for group in gns3_http.get("/v3/access/groups").json():
        if group["name"].startswith(value):
            gns3_http.delete(f"/v3/access/groups/{group['user_group_id']}")
