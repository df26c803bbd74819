"""Async client for the GNS3 v3 REST API (controller endpoints under /v3).

    async with GNS3Client("http://127.0.0.1:3080", username="admin", password="admin") as gns3:
        project = await gns3.resolve_project("OSPF lab")
        print((await gns3.get_topology(project.project_id)).to_text())

`GNS3Client` is composed of one part per resource: `connection.py` (HTTP, authentication,
errors), `projects.py` (projects, their files and drawings), `nodes.py` (templates and
nodes), `links.py`, `captures.py`, `snapshots.py` and `computes.py` (where nodes run);
GNS3's access control is `access.py`'s `GNS3Access`, over a client.
"""

from __future__ import annotations

import asyncio

from .captures import CaptureCalls
from .computes import ComputeCalls
from .snapshots import SnapshotCalls
from .topology import Topology


class GNS3Client(CaptureCalls, SnapshotCalls, ComputeCalls):
    """Async client for one GNS3 server; use as `async with GNS3Client(...) as gns3:`.

    `url` is the server's base URL (e.g. "http://127.0.0.1:3080"; a trailing "/v3" and a
    missing "http://" are tolerated). `transport` replaces httpx's default transport (for
    instrumentation). Methods taking a `project_id`, `node_id`, `link_id`... expect GNS3's
    UUIDs; use `resolve_project`, `find_node` and `find_template` to look things up by name.
    """

    # -- topology ----------------------------------------------------------------------

    async def get_topology(self, project: str) -> Topology:
        """The topology (project, nodes, links) of the project with this id or name."""
        found = await self.resolve_project(project)
        nodes, links = await asyncio.gather(
            self.list_nodes(found.project_id), self.list_links(found.project_id)
        )
        return Topology(found, nodes, links)
