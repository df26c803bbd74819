"""Which GNS3 project and conversations each notebook uses, per user, kept by the server.

A kernel forgets everything when it restarts; the notebook does not. The magics record
here the project a notebook works on and its conversation per project (`remember`), keyed
by the notebook's path as its kernel knows it (`JPY_SESSION_NAME`, which jupyter_server
gives every kernel it starts for a notebook, and which stays the same across restarts);
a restarted kernel asks for it back (`recall`) instead of starting with no project.

One small JSON file per user under `<data_dir>/users/` (named after a hash of the user
id), written whole (temporary file, then rename) and cached in memory; a user's most
recent `MAX_NOTEBOOKS` notebooks are kept. No Jupyter import.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from .llm_store import USERS_DIR_NAME

log = logging.getLogger(__name__)

MAX_NOTEBOOKS = 200
"""Notebooks remembered per user; the least recently used are forgotten first."""


class NotebookProject(BaseModel):
    """What a notebook uses: `project_id` (the project in use last; None: none yet) and
    `sessions`, the conversation it continues in each project it used."""

    project_id: str | None = None
    sessions: dict[str, str] = Field(default_factory=dict)
    updated_at: str | None = None

    @property
    def session_id(self) -> str | None:
        """The conversation in the project in use."""
        return self.sessions.get(self.project_id) if self.project_id else None


class _UserFile(BaseModel):
    notebooks: dict[str, NotebookProject] = Field(default_factory=dict)


class NotebookProjects:
    """The notebooks' projects of every user under `data_dir` (module docstring).
    Safe to share between threads."""

    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.users_dir = Path(data_dir).expanduser() / USERS_DIR_NAME
        self._lock = threading.Lock()
        self._cache: dict[str, _UserFile] = {}

    def path_for(self, user_id: str) -> Path:
        """The file holding `user_id`'s notebooks."""
        digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]
        return self.users_dir / f"{digest}.notebooks.json"

    def recall(self, user_id: str, notebook: str) -> NotebookProject:
        """What `notebook` used (an empty record when nothing is remembered)."""
        with self._lock:
            found = self._load(user_id).notebooks.get(notebook)
            return found.model_copy(deep=True) if found else NotebookProject()

    def remember(
        self, user_id: str, notebook: str, project_id: str, session_id: str | None = None
    ) -> NotebookProject:
        """`notebook` now uses `project_id` (and continues `session_id` there, when given);
        returns the record as kept."""
        with self._lock:
            records = self._load(user_id)
            record = records.notebooks.pop(notebook, None) or NotebookProject()
            record.project_id = project_id
            if session_id is not None:
                record.sessions[project_id] = session_id
            record.updated_at = datetime.now(timezone.utc).isoformat()
            records.notebooks[notebook] = record  # last: the most recent
            while len(records.notebooks) > MAX_NOTEBOOKS:
                del records.notebooks[next(iter(records.notebooks))]
            self._write(user_id, records)
            return record.model_copy(deep=True)

    def _load(self, user_id: str) -> _UserFile:
        cached = self._cache.get(user_id)
        if cached is None:
            path = self.path_for(user_id)
            try:
                cached = _UserFile.model_validate_json(path.read_bytes())
            except FileNotFoundError:
                cached = _UserFile()
            except (OSError, ValidationError, ValueError) as exc:
                log.warning("Notebook projects in %s cannot be read (%s): starting over", path, exc)
                cached = _UserFile()
            self._cache[user_id] = cached
        return cached

    def _write(self, user_id: str, records: _UserFile) -> None:
        path = self.path_for(user_id)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".notebooks-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(records.model_dump(), file, ensure_ascii=False)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
