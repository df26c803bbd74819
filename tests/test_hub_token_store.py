"""Students' GNS3 tokens outlive a restart of the hub service, encrypted at rest.

`TokenStore` alone (a real file, real Fernet): what it keeps, what it refuses. Then
`LabAccounts` on the lab kit's real gns3-server 3.0.6, with logins counted on the wire:
a second instance (a restarted service) issues no login; a wrong secret, a changed file,
an expired token or another account prefix each give one fresh login and no error. Last,
the real service of the instructor guide's recipe hub restarted in place (SIGHUP): the
student's session after the restart has the same token and GNS3's own record of the
account's last login does not move; with another secret or a changed file the service
logs the students in again and goes on; a renewal asked after GNS3 refused a token is
what is kept next.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from support.http_counting import CountingTransport
from support.hub import proxy_command

from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.gns3.access import AccessToken
from jupyter_gns3_copilot.hub.student_accounts import StudentAccounts
from jupyter_gns3_copilot.hub.token_store import TOKENS_FILE, TokenStore
from jupyter_gns3_copilot.testing.hub_recipe import RecipeHub, wait_for

SECRET = SecretStr("service-secret-for-tests")
SCOPE = "http://gns3.example:3080 hub-"
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
PAGE = Path(__file__).resolve().parents[1] / "docs" / "instructor" / "jupyterhub.md"
START_LINE = "Copilot hub service on"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJodWItYWxpY2UiLCJleHAiOjE4MDAwMDAwMDB9.c2lnbmF0dXJl"


def token(value: str = JWT, expires: datetime | None = NOW + timedelta(hours=20)) -> AccessToken:
    return AccessToken(SecretStr(value), expires)


def test_tokens_are_kept_encrypted_in_a_private_file(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "data" / TOKENS_FILE, SECRET)
    store.save(SCOPE, {"alice": token(), "bob": token("bob.jwt.value", None)})

    raw = store.path.read_bytes()
    assert store.path.stat().st_mode & 0o777 == 0o600
    assert store.path.parent.stat().st_mode & 0o777 == 0o700
    for clear in (JWT, *JWT.split("."), "bob.jwt.value", "alice", SCOPE):
        assert clear.encode() not in raw
    again = TokenStore(store.path, SecretStr(SECRET.get_secret_value())).load(SCOPE, now=NOW)
    assert {u: (t.token.get_secret_value(), t.expires_at) for u, t in again.items()} == {
        "alice": (JWT, NOW + timedelta(hours=20)),
        "bob": ("bob.jwt.value", None),
    }
    assert repr(again["alice"]).count(JWT) == 0  # a SecretStr, never printed


def test_expired_tokens_and_other_scopes_are_not_loaded(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / TOKENS_FILE, SECRET)
    store.save(SCOPE, {"alice": token(expires=NOW - timedelta(seconds=1)), "bob": token()})
    assert list(store.load(SCOPE, now=NOW)) == ["bob"]
    assert store.load("http://another-gns3:3080 hub-", now=NOW) == {}
    assert store.load(SCOPE.replace("hub-", "class2-"), now=NOW) == {}


@pytest.mark.parametrize("damage", ["wrong secret", "changed byte", "truncated", "not ours"])
def test_an_unusable_file_is_an_empty_store_and_names_no_token(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / TOKENS_FILE
    TokenStore(path, SECRET).save(SCOPE, {"alice": token()})
    raw = bytearray(path.read_bytes())
    secret = SECRET
    if damage == "wrong secret":
        secret = SecretStr("another-secret")
    elif damage == "changed byte":
        raw[len(raw) // 2] ^= 0x01
    elif damage == "truncated":
        raw = raw[: len(raw) // 2]
    else:
        raw = bytearray(b"alice=" + JWT.encode())
    path.write_bytes(bytes(raw))
    with caplog.at_level(logging.INFO, logger="jupyter_gns3_copilot.hub.token_store"):
        assert TokenStore(path, secret).load(SCOPE, now=NOW) == {}
    assert "students log in again" in caplog.text
    assert JWT not in caplog.text and JWT.split(".")[1] not in caplog.text


def test_an_empty_secret_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="secret"):
        TokenStore(tmp_path / TOKENS_FILE, SecretStr(""))


# -- LabAccounts on the real GNS3 ---------------------------------------------------------


@pytest.mark.lab
async def test_a_restarted_service_reuses_the_kept_token_and_renews_when_it_must(
    gns3_lab: Any, prefix: str, tmp_path: Path
) -> None:
    path = tmp_path / TOKENS_FILE
    transport = CountingTransport()
    async with GNS3Client(
        gns3_lab.url, username=gns3_lab.username, password=gns3_lab.password, transport=transport
    ) as admin:

        def accounts(secret: SecretStr = SECRET, **kwargs: Any) -> StudentAccounts:
            return StudentAccounts(
                admin,
                secret,
                prefix=kwargs.pop("account_prefix", prefix),
                group=f"{prefix}students",
                token_store=TokenStore(path, secret),
                **kwargs,
            )

        first = await accounts().student_token("alice")
        assert path.stat().st_mode & 0o777 == 0o600
        assert first.token.get_secret_value().encode() not in path.read_bytes()

        # The restarted service: the same token, no login.
        before = transport.logins
        kept = await accounts().student_token("alice")
        assert kept == first and transport.logins == before

        # Another secret (the file does not open): a fresh login, which is kept in turn.
        rotated = SecretStr("a-rotated-secret")
        fresh = await accounts(rotated).student_token("alice")
        assert transport.logins > before
        async with GNS3Client(gns3_lab.url, token=fresh.token.get_secret_value()) as alice:
            await alice.list_projects()
        before = transport.logins
        assert await accounts(rotated).student_token("alice") == fresh
        assert transport.logins == before

        # A changed byte: a fresh login, no error.
        raw = bytearray(path.read_bytes())
        raw[40] ^= 0x01
        path.write_bytes(bytes(raw))
        await accounts(rotated).student_token("alice")
        assert transport.logins == before + 1

        # A kept token due for renewal: a fresh login.
        assert fresh.expires_at is not None
        late = fresh.expires_at - timedelta(minutes=5)
        before = transport.logins
        renewed = await accounts(rotated, clock=lambda: late).student_token("alice")
        assert transport.logins == before + 1 and renewed.expires_at is not None

        # Another account prefix (another class on the same GNS3): its own logins.
        before = transport.logins
        await accounts(rotated, account_prefix=f"{prefix}b-").student_token("alice")
        assert transport.logins == before + 1

        # Dropped (GNS3 refused it, the student's server asked a renewal): gone from the
        # file too, so the next start logs in.
        dropping = accounts(rotated, account_prefix=f"{prefix}b-")
        dropping.forget_token("alice")
        before = transport.logins
        await accounts(rotated, account_prefix=f"{prefix}b-").student_token("alice")
        assert transport.logins == before + 1


# -- the real service, restarted in place -------------------------------------------------


def _gns3_admin(lab: Any) -> httpx.Client:
    client = httpx.Client(base_url=f"{lab.url}/v3", timeout=30, trust_env=False)
    answer = client.post(
        "/access/users/authenticate", json={"username": lab.username, "password": lab.password}
    )
    answer.raise_for_status()
    client.headers["Authorization"] = f"Bearer {answer.json()['access_token']}"
    return client


@pytest.fixture
def recipe_hub(gns3_lab: Any, tmp_path: Path) -> Iterator[RecipeHub]:
    values = {
        "GNS3_URL": gns3_lab.url,
        "GNS3_USER": gns3_lab.username,
        "GNS3_PASSWORD": gns3_lab.password,
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # no model call here
        "OPENAI_API_KEY": "sk-not-used-here",
        "GNS3_COPILOT_MODEL": "not-used-here",
        "HUB_SHARED_PASSWORD": "a-class-password",
    }
    with RecipeHub(PAGE, tmp_path / "srv", values, proxy=proxy_command()) as hub:
        yield hub


@pytest.mark.lab
@pytest.mark.hub
@pytest.mark.slow
def test_the_real_service_keeps_tokens_across_a_restart_in_place(
    recipe_hub: RecipeHub, gns3_lab: Any
) -> None:
    hub = recipe_hub
    student = f"keeper{uuid.uuid4().hex[:6]}"
    hub.api.post("/users", json={"usernames": [student]}).raise_for_status()
    hub_token = hub.api.post(f"/users/{student}/tokens", json={"note": "tokens kept"}).json()
    headers = {"Authorization": f"token {hub_token['token']}"}
    data_dir = hub.directory / "gns3-copilot"
    kept_file = data_dir / TOKENS_FILE
    config = hub.directory / "jupyter_gns3_copilot_hub_config.py"  # the service runs there
    gns3 = _gns3_admin(gns3_lab)

    def session(**params: str) -> str:
        answer = httpx.get(
            f"{hub.service_url}api/session",
            headers=headers,
            params=params,
            timeout=60,
            trust_env=False,
        )
        assert answer.status_code == 200, answer.text
        return str(answer.json()["gns3_token"])

    def last_login() -> str:
        users = gns3.get("/access/users").json()
        return next(u["last_login"] for u in users if u["username"] == f"hub-{student}")

    def restart() -> None:
        started = hub.log_text().count(START_LINE)
        hub.run_block("recipe-restart")
        wait_for(lambda: hub.log_text().count(START_LINE) == started + 1, "the restart", 60)

    try:
        first = session()
        logged_in = last_login()
        assert kept_file.stat().st_mode & 0o777 == 0o600
        assert first.encode() not in kept_file.read_bytes()
        assert first.split(".")[1].encode() not in kept_file.read_bytes()
        time.sleep(1.1)  # GNS3 writes last_login to the second: a new login would show

        restart()
        assert session() == first
        assert last_login() == logged_in  # GNS3 saw no login

        # GNS3 refused the token (the student's server asks a renewal): a new login, and
        # the new token is the one kept.
        time.sleep(1.1)
        renewed = session(renew="1")
        assert renewed != first and last_login() != logged_in
        logged_in = last_login()
        time.sleep(1.1)
        restart()
        assert session() == renewed and last_login() == logged_in

        # Another secret in the service's configuration: the kept file does not open; the
        # student is logged in again (their password reset to the new secret's), no error.
        config.write_text('c.CopilotHubService.account_secret = "a-new-class-secret"\n')
        restart()
        after_new_secret = session()
        assert after_new_secret != renewed and last_login() != logged_in
        logged_in = last_login()
        time.sleep(1.1)

        # A changed file: the same.
        raw = bytearray(kept_file.read_bytes())
        raw[len(raw) // 2] ^= 0x01
        kept_file.write_bytes(bytes(raw))
        os.chmod(kept_file, 0o600)
        restart()
        assert session() != after_new_secret and last_login() != logged_in

        log = hub.log_text()
        assert log.count("do not open with the service's secret") == 2
        assert "Traceback" not in log
        for value in (first, renewed, after_new_secret):
            assert value not in log and value.split(".")[1] not in log
    finally:
        for user in gns3.get("/access/users").json():
            if user["username"] == f"hub-{student}":
                for ace in gns3.get("/access/acl").json():
                    if ace["user_id"] == user["user_id"]:
                        gns3.delete(f"/access/acl/{ace['ace_id']}")
                gns3.delete(f"/access/users/{user['user_id']}")
        for pool in gns3.get("/pools").json():
            if pool["name"] == f"hub-{student}":
                gns3.delete(f"/pools/{pool['resource_pool_id']}")
        gns3.close()
