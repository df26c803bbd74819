"""The kernel client's errors: one readable line in a notebook, never a traceback.

Every error the client expects (no server found, the extension not loaded, a refused
token, an HTTP error answer, a project that does not exist) is a `CopilotError`. IPython
shows an exception through its `_render_traceback_` when it has one, so these errors show
as one line saying what happened and what to do (the copilot's own error answers without
the class name: they are sentences for the student), and a cell that raised one still
stops "Run All".
"""

from __future__ import annotations

from typing import Any

ENABLE_HINT = "jupyter server extension enable jupyter_gns3_copilot"


class CopilotError(Exception):
    """An expected failure, with what to do about it in the message."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31m{type(self).__name__}\x1b[0m: {self}"]


class ServerNotFound(CopilotError):
    """No Jupyter server could be found from this kernel."""


class ServerUnreachable(CopilotError):
    """The Jupyter server did not answer (connection refused, timeout)."""


class ExtensionNotLoaded(CopilotError):
    """The Jupyter server answers, but the copilot extension is not loaded on it."""


class NotAuthorized(CopilotError):
    """The server refused the token (401/403)."""


class ApiError(CopilotError):
    """An error answer of the copilot API (`{"error": {message, type, ...}}`).

    `status` is the HTTP status, `type` the server's error type (e.g. "ProjectNotOpened",
    "SessionNotFound", "ModelNotConfigured"), `details` the rest of the error body
    (`field`, `rule`, `setting`, `url`, ...).
    """

    def __init__(self, status: int, message: str, type: str = "", **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.details = details

    def _render_traceback_(self) -> list[str]:
        # The copilot's own answers are written for the person in front of the notebook
        # ("Your course allows teaching mode only."): shown as they are, in red. Other
        # answers (no JSON error: a proxy, another server) keep the class name.
        if self.type:
            return [f"\x1b[0;31m{self}\x1b[0m"]
        return super()._render_traceback_()


class NoProject(CopilotError):
    """A request needs a project and none is in use."""


class ProjectNotFound(CopilotError):
    """No GNS3 project has the given name or id."""


class UsageError(CopilotError):
    """A magic or method was called the wrong way."""
