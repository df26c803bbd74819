"""Who wants to hear that a student's progress in a project changed (a check decided an
objective, a stage was chosen, a catch-up forgot the results): the Objectives panel's live
stream (`server/handlers/lab.py` `LabEventsHandler`).

A watcher is an `asyncio.Event` set at each change of its (project, user); the watcher
clears it, then reads the progress afresh, so changes that come while it reads are not
lost and a burst of them costs one read. Changes are told within this process only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

Key = tuple[str, str]
"""(project id, user)."""


class ProgressWatch:
    """The watchers of every (project, user) (module docstring)."""

    def __init__(self) -> None:
        self._watchers: dict[Key, set[asyncio.Event]] = {}

    def changed(self, project_id: str, user: str | None = None) -> None:
        """The user's progress in the project changed (None: every user's)."""
        for (project, who), events in self._watchers.items():
            if project == project_id and user in (None, who):
                for event in events:
                    event.set()

    @contextmanager
    def watching(self, project_id: str, user: str) -> Iterator[asyncio.Event]:
        """An event set at each change of the user's progress in the project, while the
        block runs."""
        key = (project_id, user)
        event = asyncio.Event()
        self._watchers.setdefault(key, set()).add(event)
        try:
            yield event
        finally:
            events = self._watchers.get(key)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._watchers[key]
