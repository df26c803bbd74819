"""The turn's read of the lab topology: `TopologySource` (what the system prompt shows and
the tools look nodes up in) and `read_topology` (project, nodes and links in one round
trip).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ..gns3 import GNS3Client, Node, Project, Topology

log = logging.getLogger(__name__)

TOPOLOGY_TIMEOUT = 10.0
"""Seconds the topology fetch may take before the model is called without it."""


class TopologySource:
    """The turn's one read of the lab topology: the system prompt's text and the nodes
    the tools look devices up in; read once, again when stale.

    `fetch` returns the project's `Topology`. `prefetch()` starts fetching in the
    background (the service calls it as a turn starts, so the fetch overlaps the
    session bookkeeping); `text()` and `nodes()` wait for it; `invalidate()` marks it
    stale after a tool changed the lab, and calls `on_lab_changed` (the service then
    stops sharing reads begun before the change with other turns). A failed or slow
    fetch yields None (the prompt then says no topology is available, the tools read the
    nodes themselves) and is logged.

    `annotate` (optional) returns text to add after the topology's (the console dialects'
    notes, `device_notes`); when it fails or outlasts `timeout`, the text goes without it
    (logged).
    """

    def __init__(
        self,
        fetch: Callable[[], Awaitable[Topology]],
        timeout: float = TOPOLOGY_TIMEOUT,
        *,
        on_lab_changed: Callable[[], object] | None = None,
        annotate: Callable[[Topology], Awaitable[str]] | None = None,
    ) -> None:
        self._fetch = fetch
        self._timeout = timeout
        self._on_lab_changed = on_lab_changed
        self._annotate = annotate
        self._task: asyncio.Task[tuple[Topology, str] | None] | None = None

    async def _load(self) -> tuple[Topology, str] | None:
        try:
            topology = await asyncio.wait_for(self._fetch(), self._timeout)
        except Exception as exc:
            log.warning("Could not read the lab topology: %s", exc)
            return None
        text = topology.to_text()
        if self._annotate is not None:
            try:
                text += await asyncio.wait_for(self._annotate(topology), self._timeout)
            except Exception as exc:
                log.warning("Could not add the device notes to the topology: %s", exc)
        return topology, text

    def prefetch(self) -> None:
        """Start fetching unless a fetch is under way or done."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._load())

    async def _read(self) -> tuple[Topology, str] | None:
        self.prefetch()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def text(self) -> str | None:
        """The topology text (None if it could not be fetched)."""
        read = await self._read()
        return None if read is None else read[1]

    async def nodes(self) -> list[Node] | None:
        """The project's nodes (None if the topology could not be fetched)."""
        read = await self._read()
        return None if read is None else read[0].nodes

    def invalidate(self) -> None:
        """Fetch again on the next `text()` or `nodes()` (a tool changed the lab)."""
        self._task = None
        if self._on_lab_changed is not None:
            self._on_lab_changed()

    def close(self) -> None:
        """Cancel a fetch still running (the turn is over)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


async def read_topology(
    gns3: GNS3Client,
    project_id: str,
    read_project: Callable[[str], Awaitable[Project]] | None = None,
) -> Topology:
    """The project's topology in one round trip (project, nodes and links read at once).

    `read_project` reads the project (default `gns3.get_project`): the server passes its
    shared lookup, so a request checking the project while this read runs costs no
    second GNS3 request.
    """
    project, nodes, links = await asyncio.gather(
        (read_project or gns3.get_project)(project_id),
        gns3.list_nodes(project_id),
        gns3.list_links(project_id),
    )
    return Topology(project, nodes, links)
