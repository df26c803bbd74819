"""A class's labs in GNS3: each student's projects, copies of template projects, and the
templates made on the dashboard, over the students' accounts (`student_accounts.py`).

    accounts = LabAccounts(StudentAccounts(admin_client, secret=SecretStr(service_secret)))
    await accounts.create_project_for("alice", "OSPF lab")
    await accounts.assign_lab("OSPF template", ["alice", "bob"])
    await accounts.publish_template(None, "OSPF template")   # the dashboard's templates

- Projects are created (or duplicated) by the admin client and put in the student's pool:
  a student cannot create projects outside it (POST /projects needs Project.Allocate on
  `/projects`). A student CAN duplicate their own project (the copy stays in their pool)
  and delete it (GNS3 ties open, close and delete to the same Project.Allocate).

What 3.0.6 gets wrong, and the workarounds here:

- `duplicate` puts the copy in the original's pools; removing a project from one pool
  removes it from all (its resource row is deleted); deleting a project leaves a stale
  row in its pools. `assign_lab`/`reset_lab` take the copy out of the template's pools
  before adding it to the student's, and drop the stale row after a delete;
  `student_projects` lists only projects that exist.
- Two duplicates of one project at once fail ("Cannot duplicate project": both write the
  source's `<name>.gns3.tmp`), so this instance makes one copy of a project at a time
  (`_duplicate`); copies of different projects still go in parallel.
- `duplicate` copies every file of the project, its `lab.yaml` (the lab's objectives AND
  their checks) too, and a student's token may read any file of their projects
  (`GET /v3/projects/{id}/files/{path}` needs only Project.Audit): `_copy` replaces the
  copy's lab file with comments (`hide_lab_file`); the service checks copies against the
  template's lab file, kept where no student reaches (`class_labs.py`).
- `duplicate` renames silently when the name is taken, so copies are named
  "<template> - <hub user>" and `assign_lab` keeps a student's existing copy.
- Renaming a project (`PUT /projects/{id}` with a new name) leaves its `.gns3` file under
  the old name, and every later duplicate of it fails ("No such file or directory"): no
  project is ever renamed here, so a template is replaced by deleting it and copying the
  new version under its name (`replace_template`).
- Snapshots of a closed project answer `403 The project is not opened` (a state error
  sent as a permission error): `reset_lab(snapshot=...)` opens the project first.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Awaitable, Callable, Sequence

from ..gns3.access import pools_of
from ..gns3.computes import move_closed_project, project_compute
from ..gns3.errors import GNS3APIError, GNS3Conflict, GNS3Error, GNS3NotFound
from ..gns3.models import Project, ResourcePool
from ..objectives.service import LAB_FILE
from .student_accounts import LabStudent, StudentAccounts

ComputeChoice = Callable[[str], Awaitable[str | None]]
"""A hub user -> the compute id their new copy of a lab goes on (None: the template's)."""

TEMPLATES_POOL = "_templates"
"""After the prefix, the GNS3 pool of the templates made on the dashboard: no account's pool
has that name (`account_name` writes `_` only before `_` or two hex digits)."""
HIDDEN_LAB_FILE = (
    b"# The objectives of this lab, and how they are checked, are kept by the copilot hub\n"
    b"# service: your copilot's Objectives panel shows them.\n"
)
"""A copy's lab file: comments only, which reads as no lab file."""


def lab_name(template_name: str, hub_user: str) -> str:
    """The name of a student's copy of a template project (GNS3 names are global)."""
    return f"{template_name} - {hub_user}"


class LabAccounts:
    """The projects and labs of a class in GNS3, driven by the administrator's `GNS3Client`
    of `students`: each student's projects in their pool, copies of template projects,
    and the templates made on the dashboard in the class's templates pool. Work on one
    student holds that student's lock (`StudentAccounts.lock`); one lock serialises the
    templates; GNS3 itself settles races between instances (see the module docstring).
    """

    def __init__(self, students: StudentAccounts) -> None:
        self.students = students
        self.admin = students.admin
        self.access = students.access
        self._templates_lock = asyncio.Lock()
        self._copying: dict[str, asyncio.Lock] = {}

    async def student_projects(self, hub_user: str) -> list[Project]:
        """The existing projects in the student's pool, by name ([] without a pool)."""
        pool = await self.access.pool_named(self.students.username(hub_user))
        if pool is None:
            return []
        ids = {r.resource_id for r in await self.access.pool_resources(pool.resource_pool_id)}
        projects = [p for p in await self.admin.list_projects() if p.project_id in ids]
        return sorted(projects, key=lambda p: p.name)

    async def student_project(self, hub_user: str, project: str) -> Project:
        """One of the student's projects, by id or exact name; `GNS3NotFound` naming the
        student's projects otherwise."""
        projects = await self.student_projects(hub_user)
        for matches in (
            [p for p in projects if p.project_id == project],
            [p for p in projects if p.name == project],
        ):
            if len(matches) == 1:
                return matches[0]
        raise GNS3NotFound(
            f"'{hub_user}' has no project '{project}'. Their projects: "
            f"{', '.join(p.name for p in projects) or 'none'}.",
            kind="project",
            name=project,
            available=[p.name for p in projects],
        )

    async def class_projects(self) -> tuple[dict[str, list[Project]], list[Project]]:
        """The projects in each student account's pool (by hub user, every account of the
        class's group listed, by name) and the template projects (those in no student's
        pool), by name."""
        access = self.access
        group = await access.group_named(self.students.group)
        members = await access.group_members(group.user_group_id) if group else []
        hub_users = {
            m.username: m.full_name
            for m in members
            if m.full_name and self.students.username(m.full_name) == m.username
        }
        pools = [p for p in await access.list_pools() if p.name in hub_users]
        contents = await asyncio.gather(*(access.pool_resources(p.resource_pool_id) for p in pools))
        projects = {p.project_id: p for p in await self.admin.list_projects()}
        owned: dict[str, list[Project]] = {user: [] for user in hub_users.values()}
        for pool, rows in zip(pools, contents, strict=True):
            owned[hub_users[pool.name]] = sorted(
                (projects[r.resource_id] for r in rows if r.resource_id in projects),
                key=lambda p: p.name,
            )
        pooled = {p.project_id for mine in owned.values() for p in mine}
        templates = sorted(
            (p for p in projects.values() if p.project_id not in pooled),
            key=lambda p: p.name.lower(),
        )
        return owned, templates

    async def create_project_for(self, hub_user: str, name: str) -> Project:
        """Create a project (opened) as the admin and put it in the student's pool.
        `GNS3Conflict` when the name is taken (GNS3 project names are global)."""
        async with self.students.lock(hub_user):
            student = await self.students.ensure_locked(hub_user)
            project = await self.admin.create_project(name)
            await self._into_pool(project, student.pool_id, ())
            return project

    async def _into_pool(
        self, project: Project, pool_id: str, leave: Sequence[ResourcePool]
    ) -> None:
        """Take `project` out of the pools `leave`, put it in the pool `pool_id`; delete
        the project if that fails, so that no half-assigned copy stays behind."""
        try:
            for pool in leave:
                with contextlib.suppress(GNS3NotFound):
                    await self.access.remove_from_pool(pool.resource_pool_id, project.project_id)
            await self.access.add_to_pool(pool_id, project.project_id)
        except GNS3Error:
            with contextlib.suppress(GNS3Error):
                await self.admin.delete_project(project.project_id)
            raise

    async def _copy(
        self,
        template: Project,
        pools: Sequence[ResourcePool],
        student: LabStudent,
        name: str,
        compute_id: str | None = None,
    ) -> Project:
        """Duplicate `template` as `name` into the student's pool; with `compute_id`, its
        nodes are put on that compute (`move_closed_project`)."""
        copy = await self._duplicate(template.project_id, name)
        try:
            if compute_id is not None:
                await move_closed_project(self.admin, copy, compute_id)
            await self.hide_lab_file(copy.project_id)
        except GNS3Error:
            with contextlib.suppress(GNS3Error):
                await self.admin.delete_project(copy.project_id)
            raise
        await self._into_pool(copy, student.pool_id, pools)
        return copy

    async def hide_lab_file(self, project_id: str) -> None:
        """Replace the project's lab file, if it has one, with `HIDDEN_LAB_FILE`: a copy
        of a template carries the template's, checks included, which its student's GNS3
        token could read (the service checks copies against the template's own)."""
        try:
            await self.admin.read_project_file(project_id, LAB_FILE)
        except GNS3NotFound:
            return
        await self.admin.write_project_file(project_id, LAB_FILE, HIDDEN_LAB_FILE)

    async def _duplicate(self, project_id: str, name: str) -> Project:
        """A copy of the project `project_id` named `name`, one copy of it at a time (see
        the module docstring)."""
        async with self._copying.setdefault(project_id, asyncio.Lock()):
            return await self.admin.duplicate_project(project_id, name)

    async def _delete(self, project: Project, pool_id: str) -> None:
        """Delete a project, and the row GNS3 keeps of it in its pool `pool_id`."""
        await self.admin.delete_project(project.project_id)
        with contextlib.suppress(GNS3NotFound):
            await self.access.remove_from_pool(pool_id, project.project_id)

    # -- templates made on the dashboard -------------------------------------------------

    @property
    def templates_pool_name(self) -> str:
        """The GNS3 pool holding the templates made here (see `TEMPLATES_POOL`)."""
        return self.students.prefix + TEMPLATES_POOL

    async def made_templates(self) -> set[str]:
        """The ids of the projects in the templates pool (made by `publish_template`)."""
        pool = await self.access.pool_named(self.templates_pool_name)
        if pool is None:
            return set()
        return {r.resource_id for r in await self.access.pool_resources(pool.resource_pool_id)}

    async def publish_template(self, source: Project | None, name: str) -> Project:
        """A new template project named `name`, closed, in the templates pool only (no
        student's or instructor's GNS3 token reaches it): a copy of `source`, or empty.
        `GNS3Conflict` when GNS3 already has a project of that name."""
        async with self._templates_lock:
            return await self._publish(source, name)

    async def _publish(self, source: Project | None, name: str) -> Project:
        if any(p.name == name for p in await self.admin.list_projects()):
            raise GNS3Conflict(f"GNS3 already has a project named '{name}'.")
        pool = await self.students.ensure_pool(self.templates_pool_name)
        if source is None:
            made = await self.admin.create_project(name)
            await self.admin.close_project(made.project_id)
            leave: list[ResourcePool] = []
        else:
            made = await self._duplicate(source.project_id, name)
            leave = await pools_of(self.access, made.project_id)
        await self._into_pool(made, pool.resource_pool_id, leave)
        return await self.admin.get_project(made.project_id)

    async def replace_template(self, template: Project, source: Project) -> Project:
        """Make `template` (one of `made_templates`) a copy of `source`, under the same
        name: a new project id; students' copies are left as they are. The new version is
        copied first under a staging name: if GNS3 fails after the old one is deleted, the
        `GNS3Error` names the staging template that holds it."""
        async with self._templates_lock:
            staging = await self._publish(source, f"{template.name} (new {secrets.token_hex(2)})")
            pool = await self.students.ensure_pool(self.templates_pool_name)
            await self._delete(template, pool.resource_pool_id)
            try:
                replaced = await self._publish(staging, template.name)
            except GNS3Error as exc:
                raise GNS3APIError(
                    f"{exc} The new version of '{template.name}' is kept as the template "
                    f"'{staging.name}'.",
                    status=exc.status,
                ) from exc
            await self._delete(staging, pool.resource_pool_id)
            return replaced

    async def delete_template(self, template: Project) -> None:
        """Delete a template (one of `made_templates`); students' copies stay theirs."""
        async with self._templates_lock:
            pool = await self.students.ensure_pool(self.templates_pool_name)
            await self._delete(template, pool.resource_pool_id)

    async def assign_lab(
        self,
        template_project: str,
        hub_users: Sequence[str],
        compute_for: ComputeChoice | None = None,
    ) -> dict[str, Project]:
        """Give each student a copy of the template project (id or name) in their pool,
        named `lab_name(template, hub user)`; a student who already has that copy keeps it
        (use `reset_lab` to start over). `compute_for(hub user)` says on which compute a
        new copy's nodes go (None, or no function: where the template's are). Returns
        each hub user's copy."""
        template = await self.admin.resolve_project(template_project)
        template_pools = await pools_of(self.access, template.project_id)
        copies: dict[str, Project] = {}
        for hub_user in hub_users:
            async with self.students.lock(hub_user):
                student = await self.students.ensure_locked(hub_user)
                name = lab_name(template.name, hub_user)
                existing = [p for p in await self.student_projects(hub_user) if p.name == name]
                if existing:
                    copies[hub_user] = existing[0]
                    continue
                compute_id = await compute_for(hub_user) if compute_for else None
                copies[hub_user] = await self._copy(
                    template, template_pools, student, name, compute_id
                )
        return copies

    async def reset_lab(
        self,
        hub_user: str,
        project: str,
        *,
        template: str | None = None,
        snapshot: str | None = None,
    ) -> Project:
        """Bring one of the student's projects (id or name) back to a known state.

        `template=` (id or name of the template project): the project is deleted and the
        template duplicated again under the same name, into the student's pool, on the
        compute the project's nodes were on: a new project id, and everything the student
        made (snapshots included) is gone.
        `snapshot=` (name or id of one of the project's snapshots, e.g. one the template
        carried): the project is opened if needed and restored in place: same project id,
        other snapshots kept, node ids change. Give exactly one of the two.
        """
        if (template is None) == (snapshot is None):
            raise ValueError("reset_lab needs exactly one of template= or snapshot=")
        async with self.students.lock(hub_user):
            current = await self.student_project(hub_user, project)
            if snapshot is not None:
                return await self._restore(current, snapshot)
            source = await self.admin.resolve_project(template or "")
            pools = await pools_of(self.access, source.project_id)
            student = await self.students.ensure_locked(hub_user)
            compute_id = await project_compute(self.admin, current)
            await self._delete(current, student.pool_id)
            return await self._copy(source, pools, student, current.name, compute_id)

    async def _restore(self, project: Project, snapshot: str) -> Project:
        if project.status != "opened":
            await self.admin.open_project(project.project_id)
        snapshots = await self.admin.list_snapshots(project.project_id)
        for matches in (
            [s for s in snapshots if s.snapshot_id == snapshot],
            [s for s in snapshots if s.name == snapshot],
        ):
            if matches:
                return await self.admin.restore_snapshot(project.project_id, matches[0].snapshot_id)
        raise GNS3NotFound(
            f"Project {project.name} has no snapshot '{snapshot}'. Snapshots: "
            f"{', '.join(s.name for s in snapshots) or 'none'}.",
            kind="snapshot",
            name=snapshot,
            available=[s.name for s in snapshots],
        )
