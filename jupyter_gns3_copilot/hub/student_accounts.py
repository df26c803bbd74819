"""Per-student GNS3 identities: a user, a resource pool and one ACE per hub user, and
each student's own GNS3 token.

    students = StudentAccounts(admin_client, secret=SecretStr(service_secret))
    student = await students.ensure_student("alice")     # idempotent, safe when raced
    token = await students.student_token("alice")         # the student's own GNS3 JWT

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
- GET /templates needs no privilege at all in 3.0.6 (Template.Audit is commented out
  upstream as a web-UI workaround), and creating a node from a template checks
  Node.Allocate on the project only: students need no ACE on /templates.
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
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, SecretStr

from ..gns3.access import AccessToken, GNS3Access
from ..gns3.client import GNS3Client
from ..gns3.errors import GNS3AuthError, GNS3Conflict, GNS3Error, GNS3NotFound
from ..gns3.models import ACE, ResourcePool, Role, User

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

DEFAULT_PREFIX = "hub-"
DEFAULT_GROUP = "hub-students"
DEFAULT_RENEW_BEFORE = timedelta(minutes=10)
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


class StudentAccounts:
    """GNS3 accounts and pools of a class's students, and their tokens, driven by an
    administrator's `GNS3Client`.

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

    def lock(self, hub_user: str) -> asyncio.Lock:
        """This instance's lock on work on `hub_user` (their account, tokens, projects)."""
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
        async with self.lock(hub_user):
            return await self.ensure_locked(hub_user)

    async def ensure_locked(self, hub_user: str) -> LabStudent:
        """`ensure_student` for a caller holding `lock(hub_user)`."""
        username = self.username(hub_user)
        user = await self._ensure_user(username, hub_user)
        pool = await self.ensure_pool(username)
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

    async def ensure_pool(self, name: str) -> ResourcePool:
        """Find or create the GNS3 pool `name` (safe when raced)."""
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
        async with self.lock(hub_user):
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
        async with self.lock(hub_user):
            cached = self._tokens.get(hub_user)
            if cached is not None and self._fresh(cached):
                return cached
            student = await self.ensure_locked(hub_user) if cached is None else None
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
                student = student or await self.ensure_locked(hub_user)
                await self.access.update_user(student.user_id, password=self._password(hub_user))
                token = await self.access.authenticate(username, self._password(hub_user))
            self._tokens[hub_user] = token
            self._keep_tokens()
            return token

    # -- projects ------------------------------------------------------------------------
