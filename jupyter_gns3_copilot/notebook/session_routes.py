"""What `Copilot`'s conversation calls do: the chat session routes of the project in use
(`copilot/projects/{p}/chat/sessions/...`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote

from .api_client import JsonObject
from .conversations import Conversations, conversation
from .errors import ApiError
from .models import SessionInfo

if TYPE_CHECKING:
    from .owner import CopilotOwner


class SessionRoutes:
    """The conversations of `copilot`'s project; `session` None names its current one.
    Each call finds the project and the conversation in the order it always did (the
    project first may take the notebook's back after a kernel restart)."""

    def __init__(self, copilot: CopilotOwner, conversations: Conversations) -> None:
        self.copilot = copilot
        self.conversations = conversations

    def _target(self, session: str | None) -> str:
        return conversation(session, self.copilot.session_id)

    def _project_id(self) -> str:
        return self.copilot.current_project().project_id

    def sessions(self, limit: int) -> list[SessionInfo]:
        listed = self.copilot.client.get(
            "projects", self._project_id(), "chat", "sessions", params={"limit": limit}
        )
        return [SessionInfo.model_validate(entry) for entry in listed]

    def history(self, session: str | None, limit: int) -> dict[str, Any]:
        project_id = self._project_id()
        target = self._target(session)
        path = ("projects", project_id, "chat", "sessions", target, "history")
        return cast(JsonObject, self.copilot.client.get(*path, params={"limit": limit}))

    def export(self, format: str, session: str | None) -> tuple[str, bytes]:
        project_id = self._project_id()
        target = self._target(session)
        response = self.copilot.client.request(
            *("GET", "projects", project_id, "chat", "sessions", target, "export"),
            params={"format": format},
        )
        disposition = response.headers.get("content-disposition", "")
        return attachment_filename(disposition), response.content

    def rename(self, title: str, session: str | None) -> SessionInfo:
        project_id = self._project_id()
        path = ("projects", project_id, "chat", "sessions", self._target(session))
        return SessionInfo.model_validate(self.copilot.client.patch(*path, json={"title": title}))

    def pin(self, session: str | None, *, pinned: bool) -> SessionInfo:
        project_id = self._project_id()
        path = ("projects", project_id, "chat", "sessions", self._target(session), "pin")
        client = self.copilot.client
        answer = client.put(*path) if pinned else client.delete(*path)
        return SessionInfo.model_validate(answer)

    def delete(self, session: str | None) -> str:
        target = self._target(session)
        self.copilot.client.delete("projects", self._project_id(), "chat", "sessions", target)
        if self.copilot.session_id == target:
            self.copilot.new_session()
        return target

    def abort(self, session: str | None) -> dict[str, Any]:
        """A 404 for a conversation made here and never sent is "not_running"."""
        target = self._target(session)
        try:
            path = ("projects", self._project_id(), "chat", "sessions", target, "abort")
            return cast(JsonObject, self.copilot.client.post(*path))
        except ApiError as exc:
            if exc.status == 404 and self.conversations.unsent(target):
                return {"status": "not_running", "session_id": target}
            raise


def attachment_filename(header: str) -> str:
    """The file name of a `Content-Disposition` header (its UTF-8 form first); "" if none."""
    encoded = re.search(r"filename\*=UTF-8''([^;\s]+)", header, re.IGNORECASE)
    if encoded:
        return unquote(encoded.group(1))
    plain = re.search(r'filename="([^"]*)"', header)
    return plain.group(1) if plain else ""
