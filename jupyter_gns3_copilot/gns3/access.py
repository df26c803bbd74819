"""GNS3 3.0 access control: users, groups, roles, ACL entries, resource pools.

    access = GNS3Access(admin_client)          # a GNS3Client logged in as an administrator
    user = await access.create_user("hub-alice", password)
    pool = await access.create_pool("hub-alice")
    role = await access.role_named("User")
    await access.create_ace(f"/pools/{pool.resource_pool_id}", role.role_id, user_id=user.user_id)

A thin, typed layer over the wrapped `GNS3Client`, one method per GNS3 call: requests
(`GNS3Client.request`), login, re-login on 401 and the error mapping are the client's (every
failure is a `GNS3Error`). What takes several calls is a function beside it (`pools_of`);
duplicating a project is the client's (`duplicate_project`). On top of that, GNS3's
"already exists" answers (HTTP 400 for users, groups, pools and memberships) become
`GNS3Conflict`. Lookups by name (`user_named`, `pool_named`...) return None when there is
no such object. Ids are GNS3's UUIDs, as strings.

What gns3-server 3.0.6 does here (measured on the lab kit; see hub/lab_accounts.py for what
the classroom relies on):

- Duplicate ACEs are accepted (the same user, path and role twice gives two entries).
- Removing a project from one pool deletes its resource row, so it leaves every pool; and
  deleting a project leaves its resource row in its pools (a stale entry).
- `POST /projects/{id}/duplicate` (`GNS3Client.duplicate_project`) puts the copy in the
  original's pools, and silently renames it ("name-1") when the name is taken.
- Tokens carry an `exp` claim (`[Controller] jwt_access_token_expire_minutes`, default
  1440) that 3.0.6 does not check when it decodes them; see `AccessToken`.
"""

from __future__ import annotations

import asyncio
import base64
import json
from datetime import datetime, timezone
from typing import Any, NamedTuple

from pydantic import SecretStr

from .client import GNS3Client
from .errors import GNS3APIError, GNS3AuthError, GNS3Conflict, GNS3NotFound
from .models import (
    ACE,
    PoolResource,
    ResourcePool,
    Role,
    User,
    UserGroup,
)


class AccessToken(NamedTuple):
    """A user's JWT and the expiry written in it (None when the token carries none).

    gns3-server 3.0.6 does not enforce the expiry: an expired token is still accepted, and
    changing the user's password does not revoke it. Deactivating the user does (`401 Not
    an active user`), as does changing the server's JWT secret (every token at once).
    """

    token: SecretStr
    expires_at: datetime | None


def jwt_expiry(token: str) -> datetime | None:
    """The `exp` claim of a JWT as an aware UTC datetime (read, not verified), or None."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return datetime.fromtimestamp(float(claims["exp"]), tz=timezone.utc)
    except (IndexError, KeyError, TypeError, ValueError):
        return None


def _password(value: SecretStr | str) -> str:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


class GNS3Access:
    """Typed calls for /v3/access/* and /v3/pools through `client` (an administrator's)."""

    def __init__(self, client: GNS3Client) -> None:
        self.client = client

    # -- users ---------------------------------------------------------------------------

    async def list_users(self) -> list[User]:
        """Every user (needs User.Audit)."""
        return [
            User.model_validate(u) for u in await self.client.request_json("GET", "/access/users")
        ]

    async def user_named(self, username: str) -> User | None:
        """The user with exactly this username, or None."""
        return next((u for u in await self.list_users() if u.username == username), None)

    async def create_user(
        self, username: str, password: SecretStr | str, *, full_name: str | None = None
    ) -> User:
        """Create a user (GNS3 wants 3+ characters of [A-Za-z0-9_-] and an 8-100 character
        password). `GNS3Conflict` when the username is taken."""
        body: dict[str, Any] = {"username": username, "password": _password(password)}
        if full_name is not None:
            body["full_name"] = full_name
        return User.model_validate(
            await _create(self.client, "/access/users", body, f"a user named '{username}'")
        )

    async def update_user(
        self,
        user_id: str,
        *,
        password: SecretStr | str | None = None,
        is_active: bool | None = None,
        full_name: str | None = None,
    ) -> User:
        """Change a user's password, active flag or full name (only the fields given)."""
        self.client.check_id("user", user_id)
        body: dict[str, Any] = {}
        if password is not None:
            body["password"] = _password(password)
        if is_active is not None:
            body["is_active"] = is_active
        if full_name is not None:
            body["full_name"] = full_name
        data = await self.client.request_json(
            "PUT", f"/access/users/{user_id}", json=body, subjects=[("user", user_id)]
        )
        return User.model_validate(data)

    async def delete_user(self, user_id: str) -> None:
        """Delete a user."""
        self.client.check_id("user", user_id)
        await self.client.request(
            "DELETE", f"/access/users/{user_id}", subjects=[("user", user_id)]
        )

    async def authenticate(self, username: str, password: SecretStr | str) -> AccessToken:
        """Log in as `username` and return its JWT (the admin client's token is untouched).

        Raises `GNS3AuthError` when GNS3 refuses the username or password. About 0.4 s of
        the server's time (bcrypt): cache the result.
        """
        try:
            data = await self.client.request_json(
                "POST",
                "/access/users/authenticate",
                json={"username": username, "password": _password(password)},
                auth=False,
            )
        except GNS3AuthError as exc:
            if exc.status != 401:
                raise
            raise GNS3AuthError(
                f"GNS3 at {self.client.url} refused the login of user '{username}'.",
                status=exc.status,
                url=exc.url,
                detail=exc.detail,
            ) from exc
        token = str(data["access_token"])
        return AccessToken(SecretStr(token), jwt_expiry(token))

    # -- groups --------------------------------------------------------------------------

    async def list_groups(self) -> list[UserGroup]:
        """Every user group (needs Group.Audit)."""
        return [
            UserGroup.model_validate(g)
            for g in await self.client.request_json("GET", "/access/groups")
        ]

    async def group_named(self, name: str) -> UserGroup | None:
        """The group with exactly this name, or None."""
        return next((g for g in await self.list_groups() if g.name == name), None)

    async def create_group(self, name: str) -> UserGroup:
        """Create a group; `GNS3Conflict` when the name is taken."""
        return UserGroup.model_validate(
            await _create(self.client, "/access/groups", {"name": name}, f"a group named '{name}'")
        )

    async def group_members(self, group_id: str) -> list[User]:
        """The members of a group."""
        self.client.check_id("group", group_id)
        data = await self.client.request_json(
            "GET", f"/access/groups/{group_id}/members", subjects=[("group", group_id)]
        )
        return [User.model_validate(u) for u in data]

    async def add_group_member(self, group_id: str, user_id: str) -> None:
        """Add a user to a group; `GNS3Conflict` when it is already a member."""
        self.client.check_id("group", group_id)
        self.client.check_id("user", user_id)
        try:
            await self.client.request(
                "PUT",
                f"/access/groups/{group_id}/members/{user_id}",
                subjects=[("group", group_id), ("user", user_id)],
            )
        except GNS3APIError as exc:
            if exc.status == 400 and "already" in (exc.detail or ""):
                raise GNS3Conflict(
                    "The user is already a member of the group.", status=400, detail=exc.detail
                ) from exc
            raise

    async def remove_group_member(self, group_id: str, user_id: str) -> None:
        """Remove a user from a group."""
        self.client.check_id("group", group_id)
        self.client.check_id("user", user_id)
        await self.client.request(
            "DELETE",
            f"/access/groups/{group_id}/members/{user_id}",
            subjects=[("group", group_id), ("user", user_id)],
        )

    # -- roles and ACL -------------------------------------------------------------------

    async def list_roles(self) -> list[Role]:
        """Every role with its privileges (needs Role.Audit)."""
        return [
            Role.model_validate(r) for r in await self.client.request_json("GET", "/access/roles")
        ]

    async def role_named(self, name: str) -> Role:
        """The role with this name (e.g. the built-in "User"); `GNS3NotFound` listing the
        roles when there is none."""
        roles = await self.list_roles()
        for role in roles:
            if role.name == name:
                return role
        raise GNS3NotFound(
            f"No GNS3 role named '{name}'. Roles: {', '.join(r.name for r in roles)}.",
            kind="role",
            name=name,
            available=[r.name for r in roles],
        )

    async def list_aces(self) -> list[ACE]:
        """Every ACL entry (needs ACE.Audit)."""
        return [ACE.model_validate(a) for a in await self.client.request_json("GET", "/access/acl")]

    async def create_ace(
        self,
        path: str,
        role_id: str,
        *,
        user_id: str | None = None,
        group_id: str | None = None,
        propagate: bool = True,
        allowed: bool = True,
    ) -> ACE:
        """Grant (or with `allowed=False` deny) `role_id` on `path` to exactly one of a user
        or a group. GNS3 accepts duplicates: look before creating."""
        if (user_id is None) == (group_id is None):
            raise ValueError("an ACE names exactly one of user_id or group_id")
        body: dict[str, Any] = {
            "ace_type": "user" if user_id else "group",
            "path": path,
            "role_id": role_id,
            "propagate": propagate,
            "allowed": allowed,
        }
        body["user_id" if user_id else "group_id"] = user_id or group_id
        return ACE.model_validate(await self.client.request_json("POST", "/access/acl", json=body))

    async def delete_ace(self, ace_id: str) -> None:
        """Delete an ACL entry."""
        self.client.check_id("ACE", ace_id)
        await self.client.request("DELETE", f"/access/acl/{ace_id}", subjects=[("ACE", ace_id)])

    # -- resource pools ------------------------------------------------------------------

    async def list_pools(self) -> list[ResourcePool]:
        """Every resource pool (needs Pool.Audit)."""
        return [
            ResourcePool.model_validate(p) for p in await self.client.request_json("GET", "/pools")
        ]

    async def pool_named(self, name: str) -> ResourcePool | None:
        """The pool with exactly this name, or None."""
        return next((p for p in await self.list_pools() if p.name == name), None)

    async def create_pool(self, name: str) -> ResourcePool:
        """Create a pool; `GNS3Conflict` when the name is taken."""
        return ResourcePool.model_validate(
            await _create(self.client, "/pools", {"name": name}, f"a resource pool named '{name}'")
        )

    async def delete_pool(self, pool_id: str) -> None:
        """Delete a pool (its projects stay, outside any pool)."""
        self.client.check_id("pool", pool_id)
        await self.client.request("DELETE", f"/pools/{pool_id}", subjects=[("pool", pool_id)])

    async def pool_resources(self, pool_id: str) -> list[PoolResource]:
        """The resources (projects) of a pool, including stale entries of deleted projects."""
        self.client.check_id("pool", pool_id)
        data = await self.client.request_json(
            "GET", f"/pools/{pool_id}/resources", subjects=[("pool", pool_id)]
        )
        return [PoolResource.model_validate(r) for r in data]

    async def add_to_pool(self, pool_id: str, project_id: str) -> None:
        """Put a project in a pool; `GNS3Conflict` when it is already there."""
        self.client.check_id("pool", pool_id)
        self.client.check_id("project", project_id)
        try:
            await self.client.request(
                "PUT",
                f"/pools/{pool_id}/resources/{project_id}",
                subjects=[("pool", pool_id), ("project", project_id)],
            )
        except GNS3APIError as exc:
            if exc.status == 400 and "already" in (exc.detail or ""):
                raise GNS3Conflict(
                    "The project is already in the pool.", status=400, detail=exc.detail
                ) from exc
            raise

    async def remove_from_pool(self, pool_id: str, project_id: str) -> None:
        """Take a project out of a pool. GNS3 3.0.6 deletes the project's resource row, so
        the project leaves EVERY pool it was in."""
        self.client.check_id("pool", pool_id)
        self.client.check_id("project", project_id)
        await self.client.request(
            "DELETE",
            f"/pools/{pool_id}/resources/{project_id}",
            subjects=[("pool", pool_id), ("project", project_id)],
        )


async def pools_of(access: GNS3Access, project_id: str) -> list[ResourcePool]:
    """The pools a project is in (GNS3 has no direct call: one request per pool)."""
    pools = await access.list_pools()
    contents = await asyncio.gather(*(access.pool_resources(p.resource_pool_id) for p in pools))
    return [
        pool
        for pool, resources in zip(pools, contents, strict=True)
        if any(r.resource_id == project_id for r in resources)
    ]


async def _create(client: GNS3Client, path: str, body: dict[str, Any], what: str) -> Any:
    """POST `body`; GNS3's 400 "... already exists/registered" becomes `GNS3Conflict`."""
    try:
        return await client.request_json("POST", path, json=body)
    except GNS3APIError as exc:
        if exc.status == 400 and "already" in (exc.detail or ""):
            raise GNS3Conflict(
                f"GNS3 already has {what}.", status=400, url=exc.url, detail=exc.detail
            ) from exc
        raise
