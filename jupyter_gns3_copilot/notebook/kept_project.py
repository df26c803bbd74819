"""What the server keeps for a notebook: its project and its conversation per project
(`copilot/notebook-projects`), so that a restarted kernel takes them back."""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

from .api_client import CopilotClient
from .errors import CopilotError


class NotebookClient(Protocol):
    """What `KeptProject` reads of its owner (a `Copilot`)."""

    notebook: str | None

    @property
    def client(self) -> CopilotClient: ...


class KeptProject:
    """The record on the server of `owner.notebook` (None: no notebook, nothing kept),
    read once through `owner.client` (the client in use) and updated best effort."""

    def __init__(self, owner: NotebookClient) -> None:
        self._owner = owner
        self._kept: dict[str, Any] | None = None
        """What the server kept for the notebook, read once (None: not read yet)."""

    def record(self) -> dict[str, Any]:
        """What the server keeps for the notebook (read once; {} without a notebook, or
        from a server that does not keep it)."""
        if self._kept is None:
            self._kept = {}
            notebook = self._owner.notebook
            if notebook:
                with contextlib.suppress(CopilotError):
                    self._kept = self._owner.client.get(
                        "notebook-projects", params={"path": notebook}
                    )
        return self._kept

    def project_id(self) -> str | None:
        """The notebook's last project (None: none kept)."""
        return self.record().get("project_id") or None

    def sessions(self) -> dict[str, str]:
        """The notebook's conversation per project id."""
        sessions = self.record().get("sessions")
        return dict(sessions) if isinstance(sessions, dict) else {}

    def keep(self, project_id: str, session: str | None) -> None:
        """Tell the server the notebook's project and conversation now (best effort: a
        failure here never stops the work); nothing to tell if the server has them."""
        notebook = self._owner.notebook
        if not notebook:
            return
        body: dict[str, Any] = {"path": notebook, "project_id": project_id}
        if session is not None:
            body["session_id"] = session
        unchanged = self.record().get("project_id") == project_id
        if unchanged and self.sessions().get(project_id) == session:
            return
        with contextlib.suppress(CopilotError):
            self._kept = self._owner.client.put("notebook-projects", json=body)
