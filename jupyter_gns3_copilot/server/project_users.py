"""Who is using which GNS3 project in this server right now (for close and delete).

A user uses a project while one of their chat turns or direct tool runs on it is in
progress (while its answer streams). Closing or deleting a project
other users are using is refused (409, naming them by count): it would abort their work.
Memory only, per server; requests of the same user are counted, not told apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager


class ProjectUsers:
    """The requests in progress per (project, user)."""

    def __init__(self) -> None:
        self._active: Counter[tuple[str, str]] = Counter()

    @contextmanager
    def using(self, project_id: str, user_id: str) -> Iterator[None]:
        """Count `user_id` as using `project_id` for the duration of the block."""
        key = (project_id, user_id)
        self._active[key] += 1
        try:
            yield
        finally:
            self._active[key] -= 1
            if self._active[key] <= 0:
                del self._active[key]

    def others(self, project_id: str, user_id: str) -> set[str]:
        """The users other than `user_id` using `project_id` now."""
        return {user for (project, user) in self._active if project == project_id} - {user_id}
