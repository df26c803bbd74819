"""Per-student GNS3 identities: a user, a resource pool and one ACE per hub user.

    accounts = LabAccounts(admin_client, secret=SecretStr(service_secret))
    student = await accounts.ensure_student("alice")     # idempotent, safe when raced
    token = await accounts.student_token("alice")         # the student's own GNS3 JWT
    await accounts.create_project_for("alice", "OSPF lab")
    await accounts.assign_lab("OSPF template", ["alice", "bob"])
    await accounts.publish_template(None, "OSPF template")   # the dashboard's templates

The model (GNS3 3.0 RBAC, checked on gns3-server 3.0.6 by tests/test_hub_lab_accounts.py):

- Hub user `alice` gets the GNS3 user `hub-alice` (`account_name`: GNS3 allows
  [A-Za-z0-9_-]; other characters are escaped as `_hh` bytes and `_` as `__`, so two hub
  names never share an account), a pool of the same name and ONE ACE: the built-in role
  "User" on `/pools/<pool id>`. No ACE on `/projects` or `/`: GNS3 then shows the student
  only the pool's projects and refuses (403) every other project, its nodes, links and
  consoles. The student is also put in the group `hub-students` (for the instructor's
  view in GNS3, and for class-wide ACEs later); the group itself gets no ACE.
- The role: the least privileged built-in role holding `STUDENT_PRIVILEGES` (projects
  opened/closed, nodes created/renamed/started/stopped, consoles, links, capture,
  snapshots, drawings). In 3.0.6 that is "User"; Administrator is the only other fit. Its
  template/image/compute/appliance privileges grant nothing through a pool ACE: GNS3
  applies a pool ACE only to the pool's project paths (and `/pools/<id>` itself, where the
  role has no Pool.* privilege).
- Passwords are never stored: `HMAC-SHA256(secret, hub user)` in hex, recomputed when
  needed. A login refused with 401 (secret rotated, password changed) resets the
  password once with the admin client and retries.
- Projects are created (or duplicated) by the admin client and put in the student's pool:
  a student cannot create projects outside it (POST /projects needs Project.Allocate on
  `/projects`). A student CAN duplicate their own project (the copy stays in their pool)
  and delete it (GNS3 ties open, close and delete to the same Project.Allocate).

What 3.0.6 gets wrong, and the workarounds here:

- JWT expiry is not enforced (an expired token is accepted) and a password change does
  not revoke tokens. `student_token` still renews before the `exp` claim (default
  lifetime 1440 minutes, `[Controller] jwt_access_token_expire_minutes`, which the lab
  kit's config could set but which changes only the claim), and `set_student_active(...,
  False)` is the real revocation (GNS3 answers `401 Not an active user`).
- A login hashes with bcrypt inside GNS3's request handler (about 0.4 s of its event
  loop, during which GNS3 answers nobody): 30 students' first tokens took 20 s on two
  busy cores, the next ones come from the cache (1.5 ms for 30). Hence the long-lived,
  cached tokens rather than a login per request, kept across restarts of the service
  (encrypted, `hub/token_store.py`).
- Duplicate ACEs are accepted: `ensure_student` looks first, and after creating, keeps
  the entry with the smallest id and deletes the others, so racing services converge.
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
- GET /templates needs no privilege at all in 3.0.6 (Template.Audit is commented out
  upstream as a web-UI workaround), and creating a node from a template checks
  Node.Allocate on the project only: students need no ACE on /templates.
- Snapshots of a closed project answer `403 The project is not opened` (a state error
  sent as a permission error): `reset_lab(snapshot=...)` opens the project first.
- The console websocket (`/v3/projects/{p}/nodes/{n}/console/ws?token=JWT`) works and
  checks Node.Console with the project's pool: another student's JWT is accepted at the
  websocket level and then dropped without a close frame (1006, no console byte sent;
  the server logs an ASGI error), a bad token gets a `log.error` message and close 1008.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import re
import secrets
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, SecretStr

from ..gns3.access import AccessToken, GNS3Access, pools_of
from ..gns3.client import GNS3Client
from ..gns3.computes import move_closed_project, project_compute
from ..gns3.errors import GNS3APIError, GNS3AuthError, GNS3Conflict, GNS3Error, GNS3NotFound
from ..gns3.models import ACE, Project, ResourcePool, Role, User
from ..objectives.service import LAB_FILE

if TYPE_CHECKING:
    from .token_store import TokenStore

STUDENT_PRIVILEGES = frozenset(
    {
        "Project.Audit",
        "Project.Allocate",  # open and close (and, in GNS3 3.0, delete)
        "Node.Audit",
        "Node.Allocate",
        "Node.Modify",
        "Node.PowerMgmt",
        "Node.Console",
        "Link.Audit",
        "Link.Allocate",
        "Link.Modify",
        "Link.Capture",
        "Snapshot.Audit",
        "Snapshot.Allocate",
        "Snapshot.Restore",
        "Drawing.Audit",
        "Drawing.Allocate",
    }
)
"""What a student does in their own projects with the copilot or the GNS3 web UI."""

ComputeChoice = Callable[[str], Awaitable[str | None]]
"""A hub user -> the compute id their new copy of a lab goes on (None: the template's)."""

DEFAULT_PREFIX = "hub-"
DEFAULT_GROUP = "hub-students"
TEMPLATES_POOL = "_templates"
"""After the prefix, the GNS3 pool of the templates made on the dashboard: no account's pool
has that name (`account_name` writes `_` only before `_` or two hex digits)."""
DEFAULT_RENEW_BEFORE = timedelta(minutes=10)
HIDDEN_LAB_FILE = (
    b"# The objectives of this lab, and how they are checked, are kept by the copilot hub\n"
    b"# service: your copilot's Objectives panel shows them.\n"
)
"""A copy's lab file: comments only, which reads as no lab file."""
_GNS3_NAME = re.compile(r"[A-Za-z0-9_-]+")
_SAFE_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-")


def account_name(hub_user: str, prefix: str = DEFAULT_PREFIX) -> str:
    """The GNS3 username (and pool name) of a hub user: `prefix` + the name, where letters,
    digits and `-` stay, `_` becomes `__` and any other character its UTF-8 bytes as
    `_hh`. Different hub names always give different accounts."""
    if not hub_user:
        raise ValueError("a hub user name is needed")
    parts = []
    for char in hub_user:
        if char in _SAFE_CHARS:
            parts.append(char)
        elif char == "_":
            parts.append("__")
        else:
            parts.extend(f"_{byte:02x}" for byte in char.encode())
    return prefix + "".join(parts)


def lab_name(template_name: str, hub_user: str) -> str:
    """The name of a student's copy of a template project (GNS3 names are global)."""
    return f"{template_name} - {hub_user}"


class LabStudent(BaseModel):
    """A hub user's GNS3 identity as `ensure_student` found or made it."""

    model_config = ConfigDict(frozen=True)

    hub_user: str
    username: str
    user_id: str
    pool_id: str
    ace_id: str
    active: bool = True

    @property
    def pool_path(self) -> str:
        return f"/pools/{self.pool_id}"


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class LabAccounts:
    """GNS3 accounts, pools and labs of a class, driven by an administrator's `GNS3Client`.

    `secret` derives the students' passwords (keep it in the service's secrets; changing
    it makes the next `student_token` reset each password). `prefix` starts every account
    and pool name; `group` is the class's GNS3 group. Tokens are renewed `renew_before`
    their expiry. With `token_store`, the tokens outlive the process: those kept for the
    same GNS3 server and prefix and still fresh are loaded here, and the set is saved
    whenever a token is issued or dropped. One lock per hub user serialises this
    instance's work on that student; GNS3 itself settles races between instances (see
    the module docstring).
    """

    def __init__(
        self,
        admin: GNS3Client,
        secret: SecretStr | bytes,
        *,
        prefix: str = DEFAULT_PREFIX,
        group: str = DEFAULT_GROUP,
        renew_before: timedelta = DEFAULT_RENEW_BEFORE,
        clock: Callable[[], datetime] = _utcnow,
        token_store: TokenStore | None = None,
    ) -> None:
        key = secret.get_secret_value().encode() if isinstance(secret, SecretStr) else secret
        if not key:
            raise ValueError("the service secret for students' GNS3 passwords is empty")
        if not _GNS3_NAME.fullmatch(prefix):
            raise ValueError(f"prefix {prefix!r}: GNS3 names allow only letters, digits, _ and -")
        self.admin = admin
        self.access = GNS3Access(admin)
        self.prefix = prefix
        self.group = group
        self.renew_before = renew_before
        self._key = key
        self._clock = clock
        self._locks: dict[str, asyncio.Lock] = {}
        self._templates_lock = asyncio.Lock()
        self._copying: dict[str, asyncio.Lock] = {}
        self._token_store = token_store
        self._token_scope = f"{admin.url} {prefix}"
        self._tokens: dict[str, AccessToken] = {}
        if token_store is not None:
            kept = token_store.load(self._token_scope, now=clock())
            self._tokens = {user: t for user, t in kept.items() if self._fresh(t)}
        self._role: Role | None = None

    # -- identities ----------------------------------------------------------------------

    def username(self, hub_user: str) -> str:
        """The GNS3 username (also the pool name) of `hub_user`."""
        return account_name(hub_user, self.prefix)

    def _password(self, hub_user: str) -> SecretStr:
        return SecretStr(hmac.new(self._key, hub_user.encode(), hashlib.sha256).hexdigest())

    def _lock(self, hub_user: str) -> asyncio.Lock:
        return self._locks.setdefault(hub_user, asyncio.Lock())

    async def student_role(self) -> Role:
        """The least privileged built-in role holding `STUDENT_PRIVILEGES` (cached)."""
        if self._role is None:
            fits = [
                r
                for r in await self.access.list_roles()
                if r.is_builtin and r.privilege_names >= STUDENT_PRIVILEGES
            ]
            if not fits:
                raise GNS3NotFound(
                    "No built-in GNS3 role grants what a student needs: "
                    f"{', '.join(sorted(STUDENT_PRIVILEGES))}.",
                    kind="role",
                    name="student",
                )
            self._role = min(fits, key=lambda r: len(r.privileges))
        return self._role

    async def ensure_student(self, hub_user: str) -> LabStudent:
        """Find or create the GNS3 user, pool, pool ACE and group membership of `hub_user`.

        Idempotent; concurrent calls (here or in another process) end with one of each.
        Refuses (`GNS3Conflict`) to hand a GNS3 administrator account to a student.
        """
        async with self._lock(hub_user):
            return await self._ensure(hub_user)

    async def _ensure(self, hub_user: str) -> LabStudent:
        username = self.username(hub_user)
        user = await self._ensure_user(username, hub_user)
        pool = await self._ensure_pool(username)
        role = await self.student_role()
        ace = await self._ensure_ace(f"/pools/{pool.resource_pool_id}", role, user)
        await self._ensure_member(user)
        return LabStudent(
            hub_user=hub_user,
            username=username,
            user_id=user.user_id,
            pool_id=pool.resource_pool_id,
            ace_id=ace.ace_id,
            active=user.is_active,
        )

    async def _ensure_user(self, username: str, hub_user: str) -> User:
        user = await self.access.user_named(username)
        if user is None:
            try:
                user = await self.access.create_user(
                    username, self._password(hub_user), full_name=hub_user
                )
            except GNS3Error:
                # Created meanwhile by another service instance (GNS3 says 400 "already
                # registered", or fails on its unique index): use it.
                user = await self.access.user_named(username)
                if user is None:
                    raise
        if user.is_superadmin:
            raise GNS3Conflict(
                f"GNS3 user '{username}' is an administrator; it cannot be a student account."
            )
        return user

    async def _ensure_pool(self, name: str) -> ResourcePool:
        pool = await self.access.pool_named(name)
        if pool is None:
            try:
                pool = await self.access.create_pool(name)
            except GNS3Error:
                pool = await self.access.pool_named(name)
                if pool is None:
                    raise
        return pool

    async def _ensure_ace(self, path: str, role: Role, user: User) -> ACE:
        def matching(aces: list[ACE]) -> list[ACE]:
            return sorted(
                (
                    a
                    for a in aces
                    if a.path == path
                    and a.user_id == user.user_id
                    and a.role_id == role.role_id
                    and a.allowed
                ),
                key=lambda a: a.ace_id,
            )

        found = matching(await self.access.list_aces())
        if not found:
            await self.access.create_ace(path, role.role_id, user_id=user.user_id)
            found = matching(await self.access.list_aces())
        # GNS3 accepts duplicates: every racer keeps the smallest id and drops the rest.
        for extra in found[1:]:
            with contextlib.suppress(GNS3NotFound):
                await self.access.delete_ace(extra.ace_id)
        return found[0]

    async def _ensure_member(self, user: User) -> None:
        group = await self.access.group_named(self.group)
        if group is None:
            try:
                group = await self.access.create_group(self.group)
            except GNS3Error:
                group = await self.access.group_named(self.group)
                if group is None:
                    raise
        with contextlib.suppress(GNS3Conflict):
            await self.access.add_group_member(group.user_group_id, user.user_id)

    async def set_student_active(self, hub_user: str, active: bool) -> None:
        """Enable or disable a student's GNS3 account. Disabling is what revokes their
        tokens in GNS3 3.0.6 (expiry is not enforced). `GNS3NotFound` for an unknown one."""
        async with self._lock(hub_user):
            username = self.username(hub_user)
            user = await self.access.user_named(username)
            if user is None:
                raise GNS3NotFound(
                    f"Hub user '{hub_user}' has no GNS3 account ({username}).",
                    kind="user",
                    name=username,
                )
            self._drop_token(hub_user)
            await self.access.update_user(user.user_id, is_active=active)

    # -- tokens --------------------------------------------------------------------------

    def forget_token(self, hub_user: str) -> None:
        """Drop the cached token of `hub_user`: the next `student_token` logs in again
        (after GNS3 refused the cached one, e.g. its JWT secret changed)."""
        self._drop_token(hub_user)

    def _drop_token(self, hub_user: str) -> None:
        if self._tokens.pop(hub_user, None) is not None:
            self._keep_tokens()

    def _keep_tokens(self) -> None:
        if self._token_store is not None:
            self._token_store.save(self._token_scope, self._tokens)

    def _fresh(self, token: AccessToken) -> bool:
        return token.expires_at is None or self._clock() < token.expires_at - self.renew_before

    async def student_token(self, hub_user: str) -> AccessToken:
        """The student's own GNS3 JWT and its expiry, cached and renewed `renew_before`
        it expires. A call with no token cached (none issued in this process nor kept
        from an earlier one) also runs `ensure_student`.

        `GNS3AuthError` for a disabled account (GNS3 would issue a token that it then
        refuses on every call).
        """
        async with self._lock(hub_user):
            cached = self._tokens.get(hub_user)
            if cached is not None and self._fresh(cached):
                return cached
            student = await self._ensure(hub_user) if cached is None else None
            if student is not None and not student.active:
                raise GNS3AuthError(
                    f"The GNS3 account of '{hub_user}' ({student.username}) is disabled.",
                    status=403,
                )
            username = self.username(hub_user)
            try:
                token = await self.access.authenticate(username, self._password(hub_user))
            except GNS3AuthError as exc:
                if exc.status != 401:
                    raise
                student = student or await self._ensure(hub_user)
                await self.access.update_user(student.user_id, password=self._password(hub_user))
                token = await self.access.authenticate(username, self._password(hub_user))
            self._tokens[hub_user] = token
            self._keep_tokens()
            return token

    # -- projects ------------------------------------------------------------------------

    async def student_projects(self, hub_user: str) -> list[Project]:
        """The existing projects in the student's pool, by name ([] without a pool)."""
        pool = await self.access.pool_named(self.username(hub_user))
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
        group = await access.group_named(self.group)
        members = await access.group_members(group.user_group_id) if group else []
        hub_users = {
            m.username: m.full_name
            for m in members
            if m.full_name and self.username(m.full_name) == m.username
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
        async with self._lock(hub_user):
            student = await self._ensure(hub_user)
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
        return self.prefix + TEMPLATES_POOL

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
        pool = await self._ensure_pool(self.templates_pool_name)
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
            pool = await self._ensure_pool(self.templates_pool_name)
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
            pool = await self._ensure_pool(self.templates_pool_name)
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
            async with self._lock(hub_user):
                student = await self._ensure(hub_user)
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
        async with self._lock(hub_user):
            current = await self.student_project(hub_user, project)
            if snapshot is not None:
                return await self._restore(current, snapshot)
            source = await self.admin.resolve_project(template or "")
            pools = await pools_of(self.access, source.project_id)
            student = await self._ensure(hub_user)
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
