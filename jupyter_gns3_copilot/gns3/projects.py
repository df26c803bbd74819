"""`ProjectCalls`: GNS3 projects (list, look up by name or id, create, open, close,
delete), their files and their drawings."""

from __future__ import annotations

from urllib.parse import quote

from .connection import GNS3Connection, is_uuid, names_text
from .errors import GNS3NotFound
from .models import Drawing, Project
from .svg import text_note_svg
from .topology import natural_key


class ProjectCalls(GNS3Connection):
    """The project part of `GNS3Client`."""

    # -- projects ----------------------------------------------------------------------

    async def list_projects(self) -> list[Project]:
        """All projects the user can see, opened or closed."""
        return [Project.model_validate(p) for p in await self.request_json("GET", "/projects")]

    async def get_project(self, project_id: str) -> Project:
        """The project with this id; `GNS3NotFound` when there is none."""
        self.check_id("project", project_id)
        data = await self.request_json(
            "GET", f"/projects/{project_id}", subjects=[("project", project_id)]
        )
        return Project.model_validate(data)

    async def find_project(self, name: str) -> Project:
        """The project named `name` (exact, else the only case-insensitive match).

        Raises `GNS3NotFound` listing the existing project names.
        """
        projects = await self.list_projects()
        exact = [p for p in projects if p.name == name]
        folded = [p for p in projects if p.name.lower() == name.lower()]
        for matches in (exact, folded):
            if len(matches) == 1:
                return matches[0]
        raise GNS3NotFound(
            f"No GNS3 project named '{name}'. Projects: {names_text([p.name for p in projects])}.",
            kind="project",
            name=name,
            available=sorted((p.name for p in projects), key=natural_key),
        )

    async def resolve_project(self, project: str) -> Project:
        """The project whose id or name is `project`."""
        if is_uuid(project):
            try:
                return await self.get_project(project)
            except GNS3NotFound:
                pass
        return await self.find_project(project)

    async def create_project(self, name: str) -> Project:
        """Create a project (GNS3 opens it at once); `GNS3Conflict` if the name is taken."""
        return Project.model_validate(
            await self.request_json("POST", "/projects", json={"name": name})
        )

    async def duplicate_project(
        self, project_id: str, name: str, *, reset_mac_addresses: bool = False
    ) -> Project:
        """Copy a project (opened or closed) under `name`; the copy comes back closed.

        GNS3 puts the copy in the original's resource pools (see `access.pools_of`), and
        renames it ("name-1") when `name` is taken.
        """
        self.check_id("project", project_id)
        data = await self.request_json(
            "POST",
            f"/projects/{project_id}/duplicate",
            json={"name": name, "reset_mac_addresses": reset_mac_addresses},
            subjects=[("project", project_id)],
        )
        return Project.model_validate(data)

    async def open_project(self, project_id: str) -> Project:
        """Open a closed project (opening an opened one is harmless)."""
        self.check_id("project", project_id)
        data = await self.request_json(
            "POST", f"/projects/{project_id}/open", subjects=[("project", project_id)]
        )
        return Project.model_validate(data)

    async def close_project(self, project_id: str) -> None:
        """Close a project; GNS3 stops its nodes first."""
        self.check_id("project", project_id)
        await self.request(
            "POST", f"/projects/{project_id}/close", subjects=[("project", project_id)]
        )

    async def delete_project(self, project_id: str) -> None:
        """Delete a project and its files."""
        self.check_id("project", project_id)
        await self.request("DELETE", f"/projects/{project_id}", subjects=[("project", project_id)])

    async def read_project_file(self, project_id: str, path: str) -> bytes:
        """The bytes of the file at `path` in the project's directory (e.g. `lab.yaml`).

        Raises `GNS3NotFound` (kind "file") when there is none.
        """
        self.check_id("project", project_id)
        response = await self.request(
            "GET",
            f"/projects/{project_id}/files/{quote(path)}",
            subjects=[("project", project_id), ("file", path)],
        )
        return response.content

    async def write_project_file(self, project_id: str, path: str, content: bytes) -> None:
        """Write `content` to `path` in the project's directory (created or replaced)."""
        self.check_id("project", project_id)
        await self.request(
            "POST",
            f"/projects/{project_id}/files/{quote(path)}",
            content=content,
            subjects=[("project", project_id), ("file", path)],
        )

    # -- drawings ----------------------------------------------------------------------

    async def list_drawings(self, project_id: str) -> list[Drawing]:
        """The project's drawings (shapes and text notes)."""
        self.check_id("project", project_id)
        data = await self.request_json(
            "GET", f"/projects/{project_id}/drawings", subjects=[("project", project_id)]
        )
        return [Drawing.model_validate(d) for d in data]

    async def create_drawing(
        self, project_id: str, svg: str, *, x: int = 0, y: int = 0, z: int = 1
    ) -> Drawing:
        """Add a drawing given as an SVG document at x/y.

        GNS3 silently replaces an SVG of 500+ characters that does not parse as XML by an
        empty one, so pass well-formed SVG.
        """
        self.check_id("project", project_id)
        data = await self.request_json(
            "POST",
            f"/projects/{project_id}/drawings",
            json={"svg": svg, "x": x, "y": y, "z": z},
            subjects=[("project", project_id)],
        )
        return Drawing.model_validate(data)

    async def create_text_note(
        self, project_id: str, text: str, *, x: int = 0, y: int = 0
    ) -> Drawing:
        """Add a text note (drawn like the GNS3 GUI's text tool) at x/y."""
        return await self.create_drawing(project_id, text_note_svg(text), x=x, y=y)
