"""The request bodies of the copilot API (pydantic; unknown fields are refused).

Imported by the handlers when a request arrives, not when the extension loads. No tornado
here: a client may build its requests with these models too.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..agent.limits import MaxExecutionTime, MaxIterations, MaxToolCalls, Temperature
from ..chat.options import TurnOptions
from ..objectives.api import ID_PATTERN, RunNaming

MESSAGE_MAX_LENGTH = 32_000


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChatRequest(_Request):
    """`POST copilot/projects/{project_id}/chat/stream`: a message and its turn's limits.

    - `message`: 1-32,000 characters, not only whitespace;
    - `session_id`: continue this session (None: a new one; an id not used yet starts a
      session under that id);
    - `stream`: true for SSE, false for one JSON body when the turn is over;
    - `temperature` (0-2), `max_iterations` (1-100, default 20), `max_tool_calls` (1-50,
      default unlimited), `max_execution_time_seconds` (1-3600, default none: the turn
      is stopped like an abort at that many seconds, with an `error` naming the limit):
      this turn only;
    - `mode`: the interaction mode, always "text";
    - `copilot_mode`: teaching_assistant or lab_automation_assistant, within the modes
      the administrator allows (default: the user's setting, else the server's default);
    - `approval`: "auto" runs changes without asking (only where `allow_auto_approval`).
    """

    message: str = Field(min_length=1, max_length=MESSAGE_MAX_LENGTH)
    session_id: str | None = Field(default=None, pattern=ID_PATTERN)
    stream: bool = True
    temperature: Temperature | None = None
    mode: Literal["text"] = "text"
    max_iterations: MaxIterations | None = None
    max_tool_calls: MaxToolCalls | None = None
    max_execution_time_seconds: MaxExecutionTime | None = None
    copilot_mode: str | None = None
    approval: Literal["auto"] | None = None

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain more than whitespace")
        return value

    def turn_options(self, mode: str | None) -> TurnOptions:
        """The turn's options: this request's limits and approval, in copilot mode `mode`
        (the route's choice from `copilot_mode`, the user's setting and the server's)."""
        return TurnOptions(
            mode=mode,
            temperature=self.temperature,
            max_iterations=self.max_iterations,
            max_tool_calls=self.max_tool_calls,
            max_execution_time_seconds=self.max_execution_time_seconds,
            auto_approve=self.approval == "auto",
        )


class RenameRequest(_Request):
    """`PATCH copilot/projects/{project_id}/chat/sessions/{session_id}`: 1-255 characters."""

    title: str = Field(min_length=1, max_length=255)

    @field_validator("title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must contain more than whitespace")
        return value


class ApprovalDecisionRequest(_Request):
    """`POST .../chat/sessions/{session_id}/approvals/{approval_id}`: the decision, and an
    optional comment (up to 2,000 characters) the model reads with a rejection."""

    decision: Literal["approve", "reject"]
    comment: str | None = Field(default=None, max_length=2000)


class ToolRunRequest(RunNaming, _Request):
    """`POST copilot/projects/{project_id}/tools/{tool_name}`: run one tool, no model.

    `arguments` are the tool's arguments (as the model would send them); `copilot_mode`
    and `approval` as in `ChatRequest`; `run_id` as in `RunNaming`; `stream` false
    answers one JSON body.
    """

    arguments: dict[str, Any] = Field(default_factory=dict)
    copilot_mode: str | None = None
    stream: bool = True
    approval: Literal["auto"] | None = None


NOTEBOOK_PATH_MAX_LENGTH = 4096


class NotebookProjectRequest(_Request):
    """`PUT copilot/notebook-projects`: the notebook at `path` (as its kernel knows it)
    now uses project `project_id`, continuing conversation `session_id` there (if given)."""

    path: str = Field(min_length=1, max_length=NOTEBOOK_PATH_MAX_LENGTH)
    project_id: str
    session_id: str | None = Field(default=None, pattern=ID_PATTERN)
