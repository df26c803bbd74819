"""Shared test configuration: pytest-jupyter runs `async def` tests on a fresh loop each;
`prefix`, a unique GNS3 account prefix cleaned up afterwards (classroom tests)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server"]


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
