"""Students' GNS3 tokens kept across restarts of the hub service, encrypted at rest.

    store = TokenStore(Path(data_dir) / TOKENS_FILE, secret)
    tokens = store.load(scope)           # {} without a file, or one that cannot be read
    store.save(scope, {"alice": token})  # the whole set, atomically, mode 0600

Why: a GNS3 login hashes the password with bcrypt inside GNS3's request handler (about
0.4 s of its event loop, during which GNS3 answers nobody), so a service that forgot its
tokens when it restarted made each student's next session a login: about 20 s of GNS3's
time for 30 students. `LabAccounts` loads the kept tokens when it starts and saves the
set whenever a token is issued or dropped.

The file holds each hub user's token and expiry, with the `scope` they were issued in (the
GNS3 server and the account prefix), as ONE Fernet token (AES-128-CBC with HMAC-SHA256)
under a key derived with HKDF-SHA256 from the service's account secret: nothing in it is
readable without the secret, and any change to it is detected. A file that cannot be used
(another secret, changed bytes, another scope, an unknown layout) is logged in one line,
naming no token, and taken as empty: the students log in again. Tokens are never logged.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from ..gns3.access import AccessToken
from ..private_files import write_private

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

log = logging.getLogger(__name__)

TOKENS_FILE = "gns3-tokens.enc"
_KEY_INFO = b"jupyter_gns3_copilot hub service: students' GNS3 tokens at rest"
_LAYOUT = 1


class _KeptToken(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: str
    expires_at: datetime | None


class _KeptTokens(BaseModel):
    model_config = ConfigDict(extra="forbid")

    layout: int
    scope: str
    tokens: dict[str, _KeptToken]


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class TokenStore:
    """The students' GNS3 tokens in `path`, encrypted with a key derived from `secret`
    (the service's account secret; see the module docstring). Not safe to share between
    processes: one service owns its data directory."""

    def __init__(self, path: Path, secret: SecretStr | bytes) -> None:
        key = secret.get_secret_value().encode() if isinstance(secret, SecretStr) else secret
        if not key:
            raise ValueError("the service secret that encrypts the GNS3 tokens is empty")
        self.path = path
        self._secret = key
        self._fernet: Fernet | None = None

    def _cipher(self) -> Fernet:
        if self._fernet is None:
            from cryptography.fernet import Fernet
            from cryptography.hazmat.primitives import hashes
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF

            derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_KEY_INFO)
            self._fernet = Fernet(base64.urlsafe_b64encode(derived.derive(self._secret)))
        return self._fernet

    def load(self, scope: str, now: datetime | None = None) -> dict[str, AccessToken]:
        """The tokens kept for `scope` that have not expired at `now` (default: the clock),
        by hub user; {} when there are none or the file cannot be used (logged)."""
        from cryptography.fernet import InvalidToken

        try:
            sealed = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            log.warning(
                "The kept GNS3 tokens in %s cannot be read (%s): students log in again.",
                self.path,
                exc.strerror or type(exc).__name__,
            )
            return {}
        try:
            kept = _KeptTokens.model_validate_json(self._cipher().decrypt(sealed))
        except InvalidToken:
            log.warning(
                "The kept GNS3 tokens in %s do not open with the service's secret (the "
                "secret changed, or the file was altered): students log in again.",
                self.path,
            )
            return {}
        except ValidationError:
            log.warning(
                "The kept GNS3 tokens in %s are of an unknown layout: students log in again.",
                self.path,
            )
            return {}
        if kept.layout != _LAYOUT or kept.scope != scope:
            log.info(
                "The kept GNS3 tokens in %s were issued for another GNS3 server or account "
                "prefix: students log in again.",
                self.path,
            )
            return {}
        moment = now or _utcnow()
        return {
            user: AccessToken(SecretStr(t.token), t.expires_at)
            for user, t in kept.tokens.items()
            if t.expires_at is None or t.expires_at > moment
        }

    def save(self, scope: str, tokens: Mapping[str, AccessToken]) -> None:
        """Replace the kept tokens with `tokens` (issued in `scope`), atomically; the file
        and a directory made for it are readable by this user only."""
        kept = _KeptTokens(
            layout=_LAYOUT,
            scope=scope,
            tokens={
                user: _KeptToken(token=t.token.get_secret_value(), expires_at=t.expires_at)
                for user, t in tokens.items()
            },
        )
        sealed = self._cipher().encrypt(kept.model_dump_json().encode())
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(self.path, sealed)
