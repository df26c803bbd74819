"""GNS3 project lookups shared between concurrent requests (single flight).

Every chat and tool run asks GNS3 whether its project is opened. When many start at once
(a class pressing Enter together), requests for the same project that arrive while a
lookup is in flight share its answer instead of each sending one; nothing is cached after
the answer arrives, so a project closed or deleted in GNS3 is noticed by the next request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..gns3 import Project


class ProjectLookup:
    """`await lookup(project_id)`: the project from `fetch`, shared while in flight."""

    def __init__(self, fetch: Callable[[str], Awaitable[Project]]) -> None:
        self._fetch = fetch
        self._in_flight: dict[str, asyncio.Future[Project]] = {}

    async def __call__(self, project_id: str) -> Project:
        future = self._in_flight.get(project_id)
        if future is None:
            future = asyncio.ensure_future(self._fetch(project_id))
            self._in_flight[project_id] = future
            future.add_done_callback(lambda _: self._in_flight.pop(project_id, None))
        return await asyncio.shield(future)
