"""The conversation (chat session) each project continues in a kernel."""

from __future__ import annotations

import uuid

from .errors import NoProject


class Conversations:
    """Per project id, the session its next turn continues; and the ids made here that no
    message has been sent with yet (the server does not know them)."""

    def __init__(self) -> None:
        self._current: dict[str, str] = {}
        self._unsent: set[str] = set()

    def get(self, project_id: str) -> str | None:
        """The project's conversation (None: its next turn starts one)."""
        return self._current.get(project_id)

    def set(self, project_id: str, session: str) -> None:
        """Continue `session` in the project."""
        self._current[project_id] = session

    def forget(self, project_id: str) -> None:
        """Start a new conversation with the project's next turn."""
        self._current.pop(project_id, None)

    def choose(
        self, project_id: str, session: str | None, *, new: bool, kept: str | None
    ) -> str | None:
        """The project's conversation when it is chosen (`Copilot.use`): `session` if
        given; none if `new`; else the one it has, or else `kept` (the notebook's)."""
        if session is not None:
            self._current[project_id] = session
        elif new:
            self.forget(project_id)
        elif kept and project_id not in self._current:
            self._current[project_id] = kept
        return self.get(project_id)

    def next(self, project_id: str, session: str | None, *, new: bool) -> str:
        """The session of the project's next turn, made its conversation: `session` if
        given; a new id if `new` or the project has none yet; else the current one."""
        if session is not None:
            self._current[project_id] = session
        elif new or project_id not in self._current:
            fresh = str(uuid.uuid4())
            self._current[project_id] = fresh
            self._unsent.add(fresh)
        return self._current[project_id]

    def sent(self, session: str) -> None:
        """A message went with `session`: the server knows it from now on."""
        self._unsent.discard(session)

    def unsent(self, session: str) -> bool:
        """Whether `session` was made here and no message was sent with it yet."""
        return session in self._unsent


def conversation(session: str | None, current: str | None) -> str:
    """The conversation a call names: `session`, else `current`; `NoProject` if neither."""
    target = session or current
    if not target:
        raise NoProject(
            "No conversation yet in this project: ask something first, or name one "
            "with --session ID (`%copilot sessions` lists them)."
        )
    return target
