"""One routed triangle (tests/support/routing.py: R1-R3 in an OSPF triangle, PC1 behind
R1, PC2 behind R3) for every module here, so its three routers boot once for all of them
instead of once per module; it is deleted when the package's last test is done.

A test that changes the triangle puts it back as the routed lab promises it (its
configuration lines removed, a link cabled anew, a router started again, the PCs
configured again after a restore), and `triangle` waits for every adjacency to be Full
and every router to have its routes before a module's first test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.routing import routed_triangle
from support.tools import client_for

from jupyter_gns3_copilot.testing.pytest_plugin import GNS3Project
from jupyter_gns3_copilot.testing.routed_lab import until_full, until_routed


@pytest.fixture(scope="package")
def shared_triangle(gns3_lab: Any, gns3_http: httpx.Client) -> Iterator[GNS3Project]:
    yield from routed_triangle(gns3_lab, gns3_http, "shared")


async def _full(project: GNS3Project) -> None:
    async with client_for(project) as gns3:
        await until_full(gns3, project.project_id)
        await until_routed(gns3, project.project_id)


@pytest.fixture(scope="module")
def triangle(shared_triangle: GNS3Project) -> GNS3Project:
    """The shared triangle, every adjacency Full and every subnet routed, for one
    module's tests."""
    asyncio.run(_full(shared_triangle))
    return shared_triangle
