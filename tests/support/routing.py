"""A routed lab of three real FRR routers and two VPCS (`jupyter_gns3_copilot.testing.
routed_lab`), for a test module to share: `routed_triangle(gns3_lab, gns3_http, name)`
creates its project, builds it, starts it, configures OSPF and the PCs, waits until every
adjacency is Full, yields it as a `GNS3Project`, and deletes it afterwards.

Use it from a fixture shared as widely as its tests allow, so the routers boot once for
all of them: tests/triangle/conftest.py shares one for every module in that package.

    @pytest.fixture(scope="package")
    def shared_triangle(gns3_lab, gns3_http):
        yield from routed_triangle(gns3_lab, gns3_http, "shared")
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.testing.pytest_plugin import GNS3Project
from jupyter_gns3_copilot.testing.routed_lab import (
    build_triangle,
    configure_triangle,
    start_triangle,
    until_full,
)


async def _prepare(project: GNS3Project, configure: bool) -> None:
    async with GNS3Client(project.url, token=project.token) as gns3:
        await build_triangle(gns3, project.project_id)
        await start_triangle(gns3, project.project_id)
        if configure:
            await configure_triangle(gns3, project.project_id)
            await until_full(gns3, project.project_id)


def routed_triangle(
    gns3_lab: Any, gns3_http: httpx.Client, name: str, *, configure: bool = True
) -> Iterator[GNS3Project]:
    """The routed lab in a project of its own (module docstring); `configure=False` leaves
    the started routers and PCs blank."""
    project_name = f"pytest-routed-{name}-{uuid.uuid4().hex[:8]}"
    response = gns3_http.post("/v3/projects", json={"name": project_name})
    response.raise_for_status()
    project = GNS3Project(
        project_id=response.json()["project_id"],
        name=project_name,
        url=gns3_lab.url,
        username=gns3_lab.username,
        password=gns3_lab.password,
        token=gns3_http.headers["Authorization"].removeprefix("Bearer "),
    )
    try:
        asyncio.run(_prepare(project, configure))
        yield project
    finally:
        path = f"/v3/projects/{project.project_id}"
        gns3_http.post(f"{path}/close")
        gns3_http.delete(path)
