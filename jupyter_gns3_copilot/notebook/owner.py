"""`CopilotOwner`: what the parts of a `Copilot` use of it, so that they need not import
`copilot.py` (which imports them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .turn_reading import TurnHolder

if TYPE_CHECKING:
    from ..chat.options import TurnOptions
    from .api_client import CopilotClient
    from .grading import Autograding
    from .models import ProjectInfo


class CopilotOwner(TurnHolder, Protocol):
    """The client, project and conversation in use of a `Copilot`, as its parts
    (`turn_runs.TurnRuns`, `session_routes.SessionRoutes`, `lab_checks.check_lab`) read
    them; each member is the `Copilot` one of the same name."""

    autograding: Autograding | None

    @property
    def client(self) -> CopilotClient: ...

    @property
    def session_id(self) -> str | None: ...

    def current_project(self) -> ProjectInfo: ...

    def new_session(self) -> None: ...

    def next_session(
        self, session: str | None = None, *, new: bool = False, project_id: str | None = None
    ) -> str: ...

    def chat_request(
        self, message: str, *, session_id: str, options: TurnOptions | None = None
    ) -> dict[str, Any]: ...

    def approvals(self, session: str | None = None) -> list[dict[str, Any]]: ...
