"""Per-student GNS3 identities on the real gns3-server 3.0.6 of the lab kit.

Two students, alice and bob, each with their own GNS3 user, pool and ACE: GNS3 itself must
refuse bob everything of alice's (listing, project, nodes, console), while alice can work
on hers. Every test uses its own account prefix and removes what it made.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Awaitable
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import SecretStr
from support.http_counting import CountingTransport
from tornado.httpclient import HTTPClientError
from tornado.websocket import WebSocketClosedError, websocket_connect

from jupyter_gns3_copilot.gns3 import GNS3AuthError, GNS3Client, GNS3Conflict, GNS3NotFound
from jupyter_gns3_copilot.gns3.access import GNS3Access, jwt_expiry
from jupyter_gns3_copilot.gns3.errors import GNS3APIError
from jupyter_gns3_copilot.hub.lab_accounts import LabAccounts, lab_name
from jupyter_gns3_copilot.hub.student_accounts import (
    STUDENT_PRIVILEGES,
    StudentAccounts,
    account_name,
)

SECRET = SecretStr("service-secret-for-tests")
READ_TIMEOUT = 20.0


def admin_client(lab: Any, **kwargs: Any) -> GNS3Client:
    return GNS3Client(lab.url, username=lab.username, password=lab.password, **kwargs)


def students_for(admin: GNS3Client, prefix: str, **kwargs: Any) -> StudentAccounts:
    return StudentAccounts(
        admin, kwargs.pop("secret", SECRET), prefix=prefix, group=f"{prefix}students", **kwargs
    )


def accounts_for(admin: GNS3Client, prefix: str, **kwargs: Any) -> LabAccounts:
    return LabAccounts(students_for(admin, prefix, **kwargs))


def student_client(lab: Any, token: Any) -> GNS3Client:
    return GNS3Client(lab.url, token=token.token.get_secret_value())


async def refused(call: Awaitable[Any]) -> None:
    """GNS3 refuses the call as forbidden or not found."""
    with pytest.raises((GNS3AuthError, GNS3NotFound)) as info:
        await call
    assert info.value.status in (403, 404), info.value


def test_account_names_are_gns3_safe_and_never_shared() -> None:
    names = ["alice", "Alice", "a.b", "a-b", "a_b", "a__b", "a_2eb", "émile", "x@y.org", "ab"]
    accounts = [account_name(n) for n in names]
    assert accounts[0] == "hub-alice" and accounts[1] == "hub-Alice"
    assert len(set(accounts)) == len(names)
    assert all(a.replace("-", "").replace("_", "").isalnum() and a.isascii() for a in accounts)
    with pytest.raises(ValueError, match="hub user"):
        account_name("")


def test_the_expiry_is_read_from_the_jwt_and_absent_when_unreadable() -> None:
    def jwt(claims: dict[str, Any]) -> str:
        payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        return f"eyJhbGciOiJIUzI1NiJ9.{payload}.signature"

    assert jwt_expiry(jwt({"sub": "x", "exp": 1796226360})) == datetime(
        2026, 12, 2, 15, 46, tzinfo=timezone.utc
    )
    for broken in ("not-a-jwt", jwt({"sub": "x"}), "a.!!!.b", jwt({"exp": "soon"})):
        assert jwt_expiry(broken) is None


def test_bad_settings_are_refused_with_a_reason() -> None:
    admin = GNS3Client("http://127.0.0.1:9")
    with pytest.raises(ValueError, match="secret"):
        StudentAccounts(admin, b"")
    with pytest.raises(ValueError, match="letters, digits"):
        StudentAccounts(admin, SECRET, prefix="hub students/")


@pytest.mark.lab
async def test_each_student_gets_a_user_a_pool_and_one_ace(gns3_lab: Any, prefix: str) -> None:
    async with admin_client(gns3_lab) as admin:
        accounts = students_for(admin, prefix)
        alice = await accounts.ensure_student("alice")
        bob = await accounts.ensure_student("bob")
        again = await accounts.ensure_student("alice")
        assert again == alice
        assert alice.username == f"{prefix}alice" and alice.pool_id != bob.pool_id

        access = GNS3Access(admin)
        role = await accounts.student_role()
        assert role.name == "User"
        for student in (alice, bob):
            user = await access.user_named(student.username)
            assert user is not None and not user.is_superadmin and user.is_active
            pool = await access.pool_named(student.username)
            assert pool is not None and pool.resource_pool_id == student.pool_id
            aces = [a for a in await access.list_aces() if a.user_id == student.user_id]
            assert [(a.path, a.role_id, a.allowed) for a in aces] == [
                (student.pool_path, role.role_id, True)
            ]
        group = await access.group_named(f"{prefix}students")
        assert group is not None
        members = {u.username for u in await access.group_members(group.user_group_id)}
        assert members == {alice.username, bob.username}


@pytest.mark.lab
async def test_racing_services_end_with_one_user_pool_and_ace(gns3_lab: Any, prefix: str) -> None:
    async with admin_client(gns3_lab) as first, admin_client(gns3_lab) as second:
        # Two instances stand for two service processes: no shared lock between them.
        one, two = students_for(first, prefix), students_for(second, prefix)
        students = await asyncio.gather(
            one.ensure_student("carol"), two.ensure_student("carol"), one.ensure_student("carol")
        )
        assert len({(s.user_id, s.pool_id) for s in students}) == 1
        access = GNS3Access(first)
        users = [u for u in await access.list_users() if u.username == f"{prefix}carol"]
        pools = [p for p in await access.list_pools() if p.name == f"{prefix}carol"]
        assert len(users) == 1 and len(pools) == 1
        aces = [a for a in await access.list_aces() if a.user_id == users[0].user_id]
        assert len(aces) == 1 and aces[0].path == f"/pools/{pools[0].resource_pool_id}"
        settled = await one.ensure_student("carol")
        assert settled.ace_id == aces[0].ace_id


@pytest.mark.lab
async def test_the_student_role_is_the_least_privileged_builtin_fit(gns3_lab: Any) -> None:
    async with admin_client(gns3_lab) as admin:
        roles = await GNS3Access(admin).list_roles()
        fits = sorted(
            (r for r in roles if r.is_builtin and r.privilege_names >= STUDENT_PRIVILEGES),
            key=lambda r: len(r.privileges),
        )
        assert [r.name for r in fits] == ["User", "Administrator"]
        assert (await students_for(admin, "unused-").student_role()).name == "User"


@pytest.mark.lab
async def test_gns3_refuses_bob_everything_of_alices(gns3_lab: Any, prefix: str) -> None:
    async with admin_client(gns3_lab) as admin:
        accounts = accounts_for(admin, prefix)
        project = await accounts.create_project_for("alice", f"{prefix}alice-lab")
        assert [p.project_id for p in await accounts.student_projects("alice")] == [
            project.project_id
        ]
        assert await accounts.student_projects("bob") == []
        alice_token = await accounts.students.student_token("alice")
        bob_token = await accounts.students.student_token("bob")

    pid = project.project_id
    async with (
        student_client(gns3_lab, alice_token) as alice,
        student_client(gns3_lab, bob_token) as bob,
    ):
        assert [p.project_id for p in await alice.list_projects()] == [pid]
        assert pid not in {p.project_id for p in await bob.list_projects()}
        await refused(bob.get_project(pid))
        await refused(bob.close_project(pid))
        await refused(bob.open_project(pid))
        await refused(bob.list_nodes(pid))

        # Alice works on her own project, templates included (no ACE on /templates).
        await alice.close_project(pid)
        assert (await alice.open_project(pid)).status == "opened"
        node = await alice.create_node_from_template(pid, "VPCS", "APC1")  # + a rename
        await refused(bob.get_node(pid, node.node_id))
        await refused(bob.start_node(pid, node.node_id))
        await alice.start_node(pid, node.node_id)
        assert (await alice.get_node(pid, node.node_id)).status == "started"
        await refused(bob.stop_node(pid, node.node_id))
        await refused(bob.delete_node(pid, node.node_id))
        await alice.stop_node(pid, node.node_id)
        await alice.delete_node(pid, node.node_id)
        assert await alice.list_nodes(pid) == []

        await refused(bob.delete_project(pid))
        for student in (alice, bob):
            with pytest.raises(GNS3AuthError) as info:
                await student.create_project(f"{prefix}outside-{uuid.uuid4().hex[:4]}")
            assert info.value.status == 403
    async with admin_client(gns3_lab) as admin:
        assert (await admin.get_project(pid)).name == f"{prefix}alice-lab"


@pytest.mark.lab
async def test_the_console_websocket_serves_alice_and_drops_bob(gns3_lab: Any, prefix: str) -> None:
    async with admin_client(gns3_lab) as admin:
        accounts = accounts_for(admin, prefix)
        project = await accounts.create_project_for("alice", f"{prefix}console-lab")
        node = await admin.create_node_from_template(project.project_id, "VPCS", "PC1")
        await admin.start_node(project.project_id, node.node_id)
        tokens = {who: await accounts.students.student_token(who) for who in ("alice", "bob")}
    path = f"/v3/projects/{project.project_id}/nodes/{node.node_id}/console/ws"
    base = gns3_lab.url.replace("http://", "ws://", 1)

    async def console_bytes(who: str, until: bytes) -> bytes:
        url = f"{base}{path}?token={tokens[who].token.get_secret_value()}"
        try:
            ws = await websocket_connect(url, connect_timeout=READ_TIMEOUT)
        except (HTTPClientError, WebSocketClosedError, OSError):
            return b""
        received = b""
        try:
            ws.write_message("\n")
            while until not in received:
                message = await asyncio.wait_for(ws.read_message(), READ_TIMEOUT)
                if message is None:
                    break
                received += message if isinstance(message, bytes) else message.encode()
        except WebSocketClosedError:
            pass
        finally:
            ws.close()
        return received

    assert b"PC1>" in await console_bytes("alice", b"PC1>")
    assert await console_bytes("bob", b"PC1>") == b""


@pytest.mark.lab
async def test_assign_lab_copies_the_template_into_each_pool(gns3_lab: Any, prefix: str) -> None:
    async with admin_client(gns3_lab) as admin:
        access = GNS3Access(admin)
        accounts = accounts_for(admin, prefix)
        template = await admin.create_project(f"{prefix}ospf")
        await admin.create_node_from_template(template.project_id, "VPCS", "R1")
        await admin.close_project(template.project_id)
        # A template kept in a pool of its own: GNS3 puts copies in the same pools.
        shelf = await access.create_pool(f"{prefix}templates")
        await access.add_to_pool(shelf.resource_pool_id, template.project_id)

        copies = await accounts.assign_lab(template.name, ["alice", "bob"])
        assert {who: p.name for who, p in copies.items()} == {
            who: lab_name(template.name, who) for who in ("alice", "bob")
        }
        for who, copy in copies.items():
            assert [p.project_id for p in await accounts.student_projects(who)] == [copy.project_id]
            assert [n.name for n in await admin.list_nodes(copy.project_id)] == ["R1"]
        shelf_ids = [r.resource_id for r in await access.pool_resources(shelf.resource_pool_id)]
        assert shelf_ids == [template.project_id]
        assert await accounts.assign_lab(template.project_id, ["alice", "bob"]) == copies

        alice_token = await accounts.students.student_token("alice")
        async with student_client(gns3_lab, alice_token) as alice:
            assert [p.project_id for p in await alice.list_projects()] == [
                copies["alice"].project_id
            ]
            await refused(alice.get_project(template.project_id))
            await refused(alice.get_project(copies["bob"].project_id))


@pytest.mark.lab
async def test_labs_assigned_at_once_to_several_groups_all_get_their_copy(
    gns3_lab: Any, prefix: str
) -> None:
    # GNS3 fails two duplicates of one project at once (both write its .gns3.tmp): two
    # instructors assigning the same lab to their groups together must still both succeed.
    async with admin_client(gns3_lab) as admin:
        accounts = accounts_for(admin, prefix)
        template = await admin.create_project(f"{prefix}rip")
        await admin.create_node_from_template(template.project_id, "VPCS", "PC1")
        await admin.close_project(template.project_id)
        groups = [[f"g{g}s{s}" for s in range(2)] for g in range(4)]
        assigned = await asyncio.gather(
            *(accounts.assign_lab(template.name, group) for group in groups)
        )
        for group, copies in zip(groups, assigned, strict=True):
            assert sorted(copies) == group
            for who, copy in copies.items():
                assert copy.name == lab_name(template.name, who)
                assert [p.project_id for p in await accounts.student_projects(who)] == [
                    copy.project_id
                ]


@pytest.mark.lab
async def test_reset_lab_from_the_template_or_a_snapshot(gns3_lab: Any, prefix: str) -> None:
    async with admin_client(gns3_lab) as admin:
        accounts = accounts_for(admin, prefix)
        template = await admin.create_project(f"{prefix}base")
        await admin.create_node_from_template(template.project_id, "VPCS", "R1")
        await admin.close_project(template.project_id)
        copies = await accounts.assign_lab(template.name, ["alice", "bob"])
        mine = copies["alice"].project_id
        token = await accounts.students.student_token("alice")
        async with student_client(gns3_lab, token) as alice:
            await alice.open_project(mine)
            await alice.create_snapshot(mine, "start")
            await alice.create_node_from_template(mine, "VPCS", "Extra")

            restored = await accounts.reset_lab("alice", mine, snapshot="start")
            assert restored.project_id == mine
            assert [n.name for n in await alice.list_nodes(mine)] == ["R1"]

            await alice.create_node_from_template(mine, "VPCS", "Extra")
            fresh = await accounts.reset_lab("alice", copies["alice"].name, template=template.name)
            assert fresh.project_id != mine and fresh.name == copies["alice"].name
            assert [p.project_id for p in await alice.list_projects()] == [fresh.project_id]
            assert [n.name for n in await alice.list_nodes(fresh.project_id)] == ["R1"]
        assert [p.project_id for p in await accounts.student_projects("alice")] == [
            fresh.project_id
        ]
        assert [p.project_id for p in await accounts.student_projects("bob")] == [
            copies["bob"].project_id
        ]

        with pytest.raises(ValueError, match="exactly one"):
            await accounts.reset_lab("alice", fresh.project_id)
        with pytest.raises(GNS3NotFound, match="has no project") as info:
            await accounts.reset_lab("alice", copies["bob"].project_id, template=template.name)
        assert info.value.available == (fresh.name,)
        with pytest.raises(GNS3NotFound, match="no snapshot 'nope'"):
            await accounts.reset_lab("alice", fresh.project_id, snapshot="nope")
        with pytest.raises(GNS3Conflict):
            await accounts.create_project_for("bob", template.name)


@pytest.mark.lab
async def test_student_tokens_are_cached_renewed_and_revocable(gns3_lab: Any, prefix: str) -> None:
    clock = [datetime.now(timezone.utc)]
    transport = CountingTransport()
    async with admin_client(gns3_lab, transport=transport) as admin:
        accounts = students_for(admin, prefix, clock=lambda: clock[0])
        first = await accounts.student_token("alice")
        issued_by = datetime.now(timezone.utc)
        logins = transport.logins
        assert await accounts.student_token("alice") is first
        assert transport.logins == logins
        # gns3-server 3.0.6 issues tokens for 1440 minutes by default.
        assert first.expires_at is not None
        # Bounded by the clock before and after the login, whatever the machine's load.
        assert clock[0] + timedelta(hours=23) < first.expires_at
        assert first.expires_at <= issued_by + timedelta(hours=24, seconds=1)

        clock[0] = first.expires_at - accounts.renew_before + timedelta(seconds=1)
        renewed = await accounts.student_token("alice")
        assert renewed is not first and transport.logins == logins + 1

        # A rotated service secret: the next login is refused, the password reset, retried.
        rotated = students_for(admin, prefix, secret=SecretStr("rotated-secret"))
        after_rotation = await rotated.student_token("alice")
        async with student_client(gns3_lab, after_rotation) as alice:
            await alice.list_projects()

        # 3.0.6 does not revoke tokens on a password change; disabling the user does.
        async with student_client(gns3_lab, first) as old:
            await old.list_projects()
            await rotated.set_student_active("alice", False)
            with pytest.raises(GNS3AuthError) as info:
                await old.list_projects()
            assert info.value.status == 401
            with pytest.raises(GNS3AuthError, match="is disabled"):
                await rotated.student_token("alice")
            await rotated.set_student_active("alice", True)
            await old.list_projects()
        with pytest.raises(GNS3NotFound, match="no GNS3 account"):
            await rotated.set_student_active("nobody", False)


@pytest.mark.lab
async def test_access_errors_are_typed_and_readable(gns3_lab: Any, prefix: str) -> None:
    async with admin_client(gns3_lab) as admin:
        access = GNS3Access(admin)
        await access.create_user(f"{prefix}dave", "long-enough-password")
        with pytest.raises(GNS3Conflict, match="already has a user"):
            await access.create_user(f"{prefix}dave", "long-enough-password")
        with pytest.raises(GNS3APIError) as info:
            await access.create_user(f"{prefix}eve", "short")
        assert info.value.status == 422
        with pytest.raises(GNS3AuthError, match=f"refused the login of user '{prefix}dave'"):
            await access.authenticate(f"{prefix}dave", "wrong-password")
        with pytest.raises(GNS3NotFound, match="No GNS3 role named 'Teacher'"):
            await access.role_named("Teacher")
        with pytest.raises(ValueError, match="exactly one"):
            await access.create_ace("/pools", "role", user_id=None, group_id=None)
