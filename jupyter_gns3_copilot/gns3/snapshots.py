"""`SnapshotCalls`: GNS3 project snapshots (list, create, restore)."""

from __future__ import annotations

from .connection import GNS3Connection
from .models import Project, Snapshot


class SnapshotCalls(GNS3Connection):
    """The snapshot part of `GNS3Client`."""

    # -- snapshots ---------------------------------------------------------------------

    async def list_snapshots(self, project_id: str) -> list[Snapshot]:
        """The project's snapshots, oldest first."""
        self.check_id("project", project_id)
        data = await self.request_json(
            "GET", f"/projects/{project_id}/snapshots", subjects=[("project", project_id)]
        )
        return [Snapshot.model_validate(s) for s in data]

    async def create_snapshot(self, project_id: str, name: str) -> Snapshot:
        """Save the project's current state as snapshot `name` (names are unique)."""
        self.check_id("project", project_id)
        data = await self.request_json(
            "POST",
            f"/projects/{project_id}/snapshots",
            json={"name": name},
            subjects=[("project", project_id)],
        )
        return Snapshot.model_validate(data)

    async def restore_snapshot(self, project_id: str, snapshot_id: str) -> Project:
        """Bring the project back to a snapshot (its nodes are stopped and recreated).

        GNS3 gives every restored node, link and drawing a NEW id (names stay): look them
        up again afterwards. Capture files are deleted.
        """
        self.check_id("project", project_id)
        self.check_id("snapshot", snapshot_id)
        data = await self.request_json(
            "POST",
            f"/projects/{project_id}/snapshots/{snapshot_id}/restore",
            subjects=[("project", project_id), ("snapshot", snapshot_id)],
        )
        return Project.model_validate(data)
