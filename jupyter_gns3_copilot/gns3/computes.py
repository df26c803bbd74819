"""`ComputeCalls`: the controller's computes (where nodes run) and the load they report.

GNS3 3.0's `GET /computes` lists the computes registered in the controller's database:
never its own `local` compute (always there), and without their load. The load comes
from `GET /statistics`, which asks every connected compute, `local` included.
`move_closed_project` puts a fresh copy of a project on one compute; `project_compute`
says where a project's nodes are.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from .connection import GNS3Connection, names_text
from .errors import GNS3Conflict, GNS3NotFound
from .models import Node, Project
from .projects import ProjectCalls

LOCAL_COMPUTE = "local"
"""The id of the controller's own compute."""


class Compute(BaseModel):
    """A compute nodes can be created on: its id (a UUID, or `local`) and its name."""

    model_config = ConfigDict(extra="ignore")

    compute_id: str
    name: str
    host: str | None = None
    """Where the controller reaches it (None for `local`)."""
    port: int | None = None


class ComputeLoad(BaseModel):
    """What a connected compute reports about its host (percentages 0-100, bytes)."""

    compute_id: str
    name: str
    cpu_usage_percent: float
    memory_usage_percent: float
    memory_total: int = 0
    memory_used: int = 0


def find_compute(computes: Sequence[Compute], wanted: str) -> Compute:
    """The compute whose id is `wanted`, or whose name is (case-insensitively).

    Raises `GNS3NotFound` (kind "compute") naming the valid computes.
    """
    for matches in (
        [c for c in computes if c.compute_id == wanted],
        [c for c in computes if c.name.lower() == wanted.strip().lower()],
    ):
        if len(matches) == 1:
            return matches[0]
    names = [c.name for c in computes]
    raise GNS3NotFound(
        f"No compute named '{wanted}'. Computes: {names_text(names)}.",
        kind="compute",
        name=wanted,
        available=names,
    )


def busiest_compute(nodes: Iterable[Node]) -> str:
    """The id of the compute most of `nodes` are on; `local` when there are none. A tie
    goes to `local`, then to the smallest id, so the answer never depends on order."""
    return _most_common(node.compute_id or LOCAL_COMPUTE for node in nodes)


def _most_common(compute_ids: Iterable[str]) -> str:
    counts = Counter(compute_ids)
    if not counts:
        return LOCAL_COMPUTE
    return min(counts, key=lambda cid: (-counts[cid], cid != LOCAL_COMPUTE, cid))


class ComputeCalls(GNS3Connection):
    """The compute part of `GNS3Client`."""

    # -- computes ----------------------------------------------------------------------

    async def list_computes(self) -> list[Compute]:
        """Every compute of the controller, `local` first (named "local"), then the
        registered ones in the controller's order."""
        data = await self.request_json("GET", "/computes")
        registered = [Compute.model_validate(entry) for entry in data]
        return [
            Compute(compute_id=LOCAL_COMPUTE, name=LOCAL_COMPUTE),
            *(c for c in registered if c.compute_id != LOCAL_COMPUTE),
        ]

    async def compute_loads(self) -> list[ComputeLoad]:
        """The load each connected compute reports now (`local` named "local"); a compute
        that does not answer is left out (GNS3 logs why)."""
        data = await self.request_json("GET", "/statistics")
        loads = []
        for entry in data:
            statistics = entry.get("statistics") or {}
            compute_id = str(entry.get("compute_id"))
            loads.append(
                ComputeLoad(
                    compute_id=compute_id,
                    name=LOCAL_COMPUTE
                    if compute_id == LOCAL_COMPUTE
                    else str(entry.get("compute_name")),
                    cpu_usage_percent=float(statistics.get("cpu_usage_percent", 0)),
                    memory_usage_percent=float(statistics.get("memory_usage_percent", 0)),
                    memory_total=int(statistics.get("memory_total", 0)),
                    memory_used=int(statistics.get("memory_used", 0)),
                )
            )
        return loads


async def _topology_nodes(gns3: ProjectCalls, project: Project) -> tuple[str, dict[str, Any]]:
    filename = project.filename or f"{project.name}.gns3"
    return filename, json.loads(await gns3.read_project_file(project.project_id, filename))


async def project_compute(gns3: ProjectCalls, project: Project) -> str:
    """The compute most of `project`'s nodes are on (`busiest_compute`), read from its
    topology file, so that it works for a closed project too."""
    _, topology = await _topology_nodes(gns3, project)
    nodes = topology.get("topology", {}).get("nodes", [])
    return _most_common(str(node.get("compute_id") or LOCAL_COMPUTE) for node in nodes)


async def move_closed_project(gns3: ProjectCalls, project: Project, compute_id: str) -> int:
    """Put every node of the CLOSED `project` on the compute `compute_id`; the number of
    nodes. GNS3 has no call to move a node, so the project's topology file is rewritten:
    the nodes are made on that compute when the project is next opened. Node files (e.g.
    saved startup configurations) stay with the controller: use this for fresh copies.
    Raises `GNS3Conflict` for an opened project.
    """
    if project.status == "opened":
        raise GNS3Conflict(f"Project {project.name} is open; close it to move its nodes.")
    filename, topology = await _topology_nodes(gns3, project)
    nodes = topology.get("topology", {}).get("nodes", [])
    for node in nodes:
        node["compute_id"] = compute_id
    content = json.dumps(topology, indent=4).encode()
    await gns3.write_project_file(project.project_id, filename, content)
    return len(nodes)
