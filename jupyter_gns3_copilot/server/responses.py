"""Models of the copilot API's answers that the handlers write as plain JSON.

The other answers are models of their own modules (`status.StatusReport`,
`llm_config.LLMConfigView`, `store.sessions.ChatSession`, ...). These describe the rest,
for the OpenAPI document (`server.openapi`); `tests/test_openapi.py` checks real answers
of a Jupyter server against them. No tornado here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..devices.policy import PolicyStatus

if TYPE_CHECKING:
    from ..agent.approval import ApprovalRequest


class ErrorDetail(BaseModel):
    """One error: what went wrong, and where it applies the field, rule, setting or URL."""

    message: str
    type: str
    """A short name of the kind of error, e.g. "ValidationError", "SessionNotFound"."""
    field: str | None = None
    """The request field at fault (bad input)."""
    rule: str | None = None
    """The rule that field broke."""
    setting: str | None = None
    """The server setting to fix (e.g. `llm_model`)."""
    url: str | None = None
    """The GNS3 URL that failed."""
    errors: list[dict[str, Any]] | None = None
    """Every `{field, rule}` of a bad body, the first one repeated in `field` and `rule`;
    for an invalid lab file every `{source, line, field, message}`."""


class ErrorBody(BaseModel):
    """The body of every error answer (what `server.errors.ErrorAnswer.body` writes)."""

    error: ErrorDetail


class ProjectSummary(BaseModel):
    """A GNS3 project as the project routes answer it."""

    project_id: str
    name: str
    status: str | None = None
    """"opened" or "closed"."""
    filename: str | None = None


class ToolInfo(BaseModel):
    """One tool of the catalogue (`GET copilot/tools`), in the model's function format."""

    name: str
    description: str
    parameters: dict[str, Any]
    """The arguments' JSON schema."""
    modes: list[str]
    """The copilot modes that may run it."""
    changes_lab: bool
    """Whether it changes the lab (such calls wait for approval by default)."""


class SkillsReloaded(BaseModel):
    """`POST copilot/reload/skills`: what was read again."""

    status: Literal["ok"]
    skills: int
    """How many skill topics were found."""
    device_types: list[str]
    """The device types that have at least one topic."""
    command_policy: PolicyStatus


class AbortAnswer(BaseModel):
    """`POST .../chat/sessions/{session_id}/abort`: "ok" when a turn (or, deprecated, a
    run named by its id) was stopped, else "not_running"."""

    status: Literal["ok", "not_running"]
    session_id: str


class RunAbortAnswer(BaseModel):
    """`POST .../runs/{run_id}/abort`: the run was told to stop."""

    status: Literal["ok"]
    run_id: str


class PendingApproval(BaseModel):
    """A change a session waits for a person to approve or reject."""

    approval_id: str
    tool_call_id: str
    tool_name: str
    tool_input: dict[str, Any]
    summary: str
    """The plan in words ("create PC3 (VPCS)")."""
    asked_at: str
    """ISO 8601 time."""
    expires_at: str
    """ISO 8601 time; unanswered by then, it counts as rejected."""

    @classmethod
    def of(cls, request: ApprovalRequest) -> PendingApproval:
        """The answer's view of the waiting `request`."""
        internal = {"mode", "temperature", "timeout", "time_limit", "time_used"}
        return cls(
            **request.model_dump(mode="json", exclude=internal),
            expires_at=request.expires_at.isoformat(),
        )


class DecisionTaken(BaseModel):
    """`POST .../approvals/{approval_id}` while a stream waits for the decision."""

    status: Literal["ok"]
    approval_id: str
    decision: Literal["approve", "reject"]


class TurnToolCall(BaseModel):
    """One tool call of a turn summed up (`"stream": false`)."""

    id: str
    name: str
    arguments: str
    """The arguments as the JSON text the model sent."""
    output: str | None = None
    """The tool's result text; null when the tool never ran."""
    status: str | None = None
    """The result's own `status` when it is a JSON object with one."""
    summary: str | None = None
    outcome: Literal["ok", "partial", "failed", "refused"] | None = None
    note: str | None = None


class TurnMessage(BaseModel):
    content: str


class WaitingApproval(BaseModel):
    """The change a `"stream": false` turn paused at, and how to decide it."""

    approval_id: str
    tool_call_id: str
    tool_name: str
    summary: str
    """The plan in words ("on PC3: ip 10.0.0.73/24")."""
    decide: str
    """`POST <path>`: the approval route, answered with the rest of the turn."""


class TurnSummary(BaseModel):
    """A whole turn in one JSON body: the answer of a chat or tool request with
    `"stream": false` (`server.turn_result`)."""

    session_id: str | None
    status: Literal["done", "aborted", "error", "incomplete", "waiting_approval"]
    """"incomplete": the stream ended without its `done` event; "waiting_approval": the
    chat turn paused for a person's decision (`approval`), answered at once."""
    message: str
    """The text of the turn's last assistant message."""
    messages: list[TurnMessage]
    tool_calls: list[TurnToolCall]
    errors: list[str]
    statistics: dict[str, int | float] | None = None
    title: str | None = None
    approval: WaitingApproval | None = None


class NotebookProjectAnswer(BaseModel):
    """What a notebook uses (`copilot/notebook-projects`): the project it used last (None:
    none remembered) and its conversation there, and its conversation per project."""

    path: str
    """The notebook's path, as its kernel knows it (`JPY_SESSION_NAME`)."""
    project_id: str | None = None
    session_id: str | None = None
    sessions: dict[str, str] = Field(default_factory=dict)
    """The notebook's conversation in each project it used, by project id."""
    updated_at: str | None = None


class OpenAPIDocument(BaseModel):
    """`GET copilot/openapi.json`: this API as an OpenAPI 3.1 document."""

    model_config = ConfigDict(extra="allow")

    openapi: str
    info: dict[str, Any]
    paths: dict[str, Any] = Field(default_factory=dict)
