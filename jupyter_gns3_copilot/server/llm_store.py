"""The users' model settings on disk, encrypted at rest.

`LLMConfigStore`: one file per user under `<data_dir>/users/`, each encrypted as a whole
with Fernet (AES-128-CBC + HMAC-SHA256) under a key kept in `<data_dir>/llm-config.key`
(created 0600, readable only by the server's user). Nothing of a user's settings, the key
least of all, is on disk in clear. What the settings mean is `server.llm_config`.

No Jupyter imports; `cryptography` is imported when a store is first used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ..private_files import write_private
from .llm_config import UserLLMSettings

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

log = logging.getLogger(__name__)

KEY_FILE_NAME = "llm-config.key"
USERS_DIR_NAME = "users"


class LLMConfigStore:
    """The users' model settings under `data_dir`, encrypted at rest (see module docstring).

    Files are named after a hash of the user id, so any user name is a safe file name.
    Settings are cached in memory after the first read; `put`/`delete` update both. A file
    that cannot be decrypted (the key file was replaced) is logged and treated as empty:
    the user sets their settings again. Safe to share between threads. `data_dir` must be
    absolute (ValueError otherwise): an empty or relative one would write into whatever
    directory the server runs in, such as the notebook root.
    """

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        if not str(data_dir).strip() or not Path(data_dir).expanduser().is_absolute():
            raise ValueError(f"data_dir must be an absolute path, got {str(data_dir)!r}")
        self.data_dir = Path(data_dir).expanduser()
        self.users_dir = self.data_dir / USERS_DIR_NAME
        self.key_file = self.data_dir / KEY_FILE_NAME
        self._lock = threading.Lock()
        self._fernet: Fernet | None = None
        self._cache: dict[str, UserLLMSettings] = {}

    def _cipher(self) -> Fernet:
        if self._fernet is None:
            from cryptography.fernet import Fernet

            self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                fd = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                key = self.key_file.read_bytes().strip()
            else:
                key = Fernet.generate_key()
                with os.fdopen(fd, "wb") as file:
                    file.write(key)
            self._fernet = Fernet(key)
        return self._fernet

    def path_for(self, user_id: str) -> Path:
        """The file holding `user_id`'s settings."""
        digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]
        return self.users_dir / f"{digest}.llm-config"

    def get(self, user_id: str) -> UserLLMSettings:
        """`user_id`'s settings (empty settings when they set nothing)."""
        with self._lock:
            cached = self._cache.get(user_id)
            if cached is not None:
                return cached
            settings = self._read(user_id)
            self._cache[user_id] = settings
            return settings

    def put(self, user_id: str, settings: UserLLMSettings) -> None:
        """Store `user_id`'s settings (an empty settings object deletes the file)."""
        with self._lock:
            path = self.path_for(user_id)
            if settings.is_empty():
                path.unlink(missing_ok=True)
            else:
                record = settings.model_dump(exclude_none=True)
                if settings.api_key is not None:
                    record["api_key"] = settings.api_key.get_secret_value()
                record["user_id"] = user_id
                token = self._cipher().encrypt(json.dumps(record).encode("utf-8"))
                self.users_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
                write_private(path, token)
            self._cache[user_id] = settings

    def delete(self, user_id: str) -> None:
        """Forget `user_id`'s settings."""
        self.put(user_id, UserLLMSettings())

    def _read(self, user_id: str) -> UserLLMSettings:
        path = self.path_for(user_id)
        try:
            token = path.read_bytes()
        except FileNotFoundError:
            return UserLLMSettings()
        from cryptography.fernet import InvalidToken

        try:
            record = json.loads(self._cipher().decrypt(token))
        except (InvalidToken, ValueError):
            log.warning(
                "The model settings in %s cannot be decrypted with %s (was the key file "
                "replaced?); the user's settings are ignored until they are set again.",
                path,
                self.key_file,
            )
            return UserLLMSettings()
        if record.pop("user_id", None) != user_id:
            log.warning("%s belongs to another user id; ignored.", path)
            return UserLLMSettings()
        try:
            return UserLLMSettings.model_validate(record)
        except ValidationError as exc:
            log.warning(
                "Ignoring unreadable model settings in %s: %d problems", path, len(exc.errors())
            )
            return UserLLMSettings()
