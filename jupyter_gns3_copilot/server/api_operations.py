"""The copilot's REST/SSE API, route by route: `operations()`, what `server.openapi` documents.

Each `Operation` is one verb of one route: its path under `{base_url}`, summary, request
model, success `Answer`s (their bodies per media type: a pydantic model, `Many` of one, a
`Raw` body or the turn's events, `EVENTS`) and the error statuses it may answer besides
those every route may. `operations()` names every route of `handlers.default_handlers` and
every verb its handler implements, no more (`tests/test_openapi.py` checks both ways); it
imports the models when called.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

EVENT_STREAM = "text/event-stream"
JSON = "application/json"


@dataclass(frozen=True)
class Many:
    """A JSON array of `model`."""

    model: type[BaseModel]


@dataclass(frozen=True)
class Raw:
    """A body that is not JSON described by a model (text, a drawing, a file)."""

    description: str
    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "string"})


EVENTS = "ChatEvent"
"""The Server-Sent Events of a turn: each `data:` line is one `events.ChatEvent`."""

Body = type[BaseModel] | Many | Raw | str


@dataclass(frozen=True)
class Answer:
    """A success answer: its status, what it means, its body per media type."""

    status: int
    description: str
    content: Mapping[str, Body] = field(default_factory=dict)


@dataclass(frozen=True)
class Query:
    name: str
    description: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class Operation:
    """One verb of one route (the path under `{base_url}`, placeholders in braces)."""

    method: str
    path: str
    summary: str
    answers: tuple[Answer, ...]
    errors: tuple[int, ...] = ()
    request: type[BaseModel] | None = None
    query: tuple[Query, ...] = ()


def _limit(default: int) -> Query:
    return Query(
        "limit",
        f"How many to return (1-1000, default {default}).",
        {"type": "integer", "minimum": 1, "maximum": 1000, "default": default},
    )


def operations() -> tuple[Operation, ...]:
    """The API, route by route (imports the models)."""
    from ..agent.history import ConversationHistory
    from ..events import LabEvent
    from ..gns3.topology import Topology
    from ..objectives.api import (
        CatchUpDone,
        CatchUpRequest,
        ExerciseRequest,
        ExerciseView,
        GiveUpAnswer,
        LabAttachRequest,
        LabCheckRequest,
        LabStageRequest,
        LabView,
    )
    from ..objectives.results import CheckReport
    from ..store.sessions import ChatSession
    from . import responses as r
    from .llm_config import LLMConfigUpdate, LLMConfigView
    from .schemas import (
        ApprovalDecisionRequest,
        ChatRequest,
        NotebookProjectRequest,
        RenameRequest,
        ToolRunRequest,
    )
    from .status import StatusReport

    project = "/copilot/projects/{project_id}"
    session = project + "/chat/sessions/{session_id}"
    run = project + "/runs/{run_id}"
    turn = Answer(
        200,
        'The turn as Server-Sent Events; with `"stream": false`, one JSON summary.',
        {EVENT_STREAM: EVENTS, JSON: r.TurnSummary},
    )
    no_content = Answer(204, "Done.")
    notebook = r.NotebookProjectAnswer
    return (
        Operation(
            "get",
            "/copilot/status",
            "Health report",
            (Answer(200, "The report.", {JSON: StatusReport}),),
        ),
        Operation(
            "get",
            "/copilot/openapi.json",
            "This API as an OpenAPI document",
            (Answer(200, "The document.", {JSON: r.OpenAPIDocument}),),
        ),
        Operation(
            "get",
            "/copilot/llm-config",
            "The caller's model settings",
            (Answer(200, "The settings in force.", {JSON: LLMConfigView}),),
        ),
        Operation(
            "put",
            "/copilot/llm-config",
            "Change the caller's model settings",
            (Answer(200, "The settings in force afterwards.", {JSON: LLMConfigView}),),
            errors=(400,),
            request=LLMConfigUpdate,
        ),
        Operation(
            "post",
            "/copilot/reload/skills",
            "Read the skills and the forbidden commands again",
            (Answer(200, "What was read.", {JSON: r.SkillsReloaded}),),
        ),
        Operation(
            "get",
            "/copilot/tools",
            "The tool catalogue",
            (Answer(200, "Every tool, in catalogue order.", {JSON: Many(r.ToolInfo)}),),
        ),
        Operation(
            "get",
            "/copilot/notebook-projects",
            "What a notebook uses, kept across kernel restarts",
            (Answer(200, "The notebook's project and conversations.", {JSON: notebook}),),
            errors=(400,),
            query=(
                Query(
                    "path",
                    "The notebook's path, as its kernel knows it (`JPY_SESSION_NAME`).",
                    {"type": "string"},
                ),
                Query(
                    "notebook",
                    "Instead of `path`: the notebook's contents path, as JupyterLab names it.",
                    {"type": "string"},
                ),
            ),
        ),
        Operation(
            "put",
            "/copilot/notebook-projects",
            "Remember what a notebook uses",
            (Answer(200, "What is kept for the notebook now.", {JSON: notebook}),),
            errors=(400, 413),
            request=NotebookProjectRequest,
        ),
        Operation(
            "get",
            "/copilot/projects",
            "The GNS3 projects",
            (Answer(200, "The projects, sorted by name.", {JSON: Many(r.ProjectSummary)}),),
            errors=(502,),
        ),
        Operation(
            "delete",
            project,
            "Delete a project and its chats",
            (no_content,),
            errors=(409, 502),
        ),
        Operation(
            "post",
            project + "/open",
            "Open a project in GNS3",
            (Answer(200, "The project.", {JSON: r.ProjectSummary}),),
            errors=(404, 409, 502),
        ),
        Operation(
            "post",
            project + "/close",
            "Close a project in GNS3",
            (no_content,),
            errors=(409, 502),
        ),
        Operation(
            "get",
            project + "/topology",
            "The project's topology",
            (
                Answer(
                    200,
                    "The topology in the format asked for.",
                    {
                        JSON: Topology,
                        "text/plain": Raw("The compact text the model reads."),
                        "image/svg+xml": Raw("A drawing of the topology."),
                    },
                ),
            ),
            errors=(400, 409, 502),
            query=(
                Query(
                    "format",
                    "json (default), text or svg.",
                    {"type": "string", "enum": ["json", "text", "svg"], "default": "json"},
                ),
                Query(
                    "addresses",
                    "With text: also the running devices' addresses, read on their consoles.",
                    {"type": "boolean", "default": False},
                ),
            ),
        ),
        Operation(
            "post",
            project + "/tools/{tool_name}",
            "Run one tool, without the model",
            (turn,),
            errors=(400, 404, 409, 413, 502),
            request=ToolRunRequest,
        ),
        Operation(
            "get",
            project + "/lab",
            "The project's lab as the caller sees it",
            (Answer(200, "Stages and objective texts with the caller's values.", {JSON: LabView}),),
            errors=(404, 422, 502),
        ),
        Operation(
            "put",
            project + "/lab",
            "Attach a lab file to the project",
            (Answer(200, "The lab as the caller sees it.", {JSON: LabView}),),
            errors=(400, 422, 502),
            request=LabAttachRequest,
        ),
        Operation(
            "put",
            project + "/lab/stage",
            "Choose the stage the caller works on",
            (Answer(200, "The lab as the caller sees it.", {JSON: LabView}),),
            errors=(400, 404, 422, 502),
            request=LabStageRequest,
        ),
        Operation(
            "post",
            project + "/lab/checks",
            "Check the lab's objectives on the devices",
            (
                Answer(
                    200,
                    "A `check_result` event per objective, `check_summary`, `done`; with "
                    '`"stream": false`, one report.',
                    {EVENT_STREAM: EVENTS, JSON: CheckReport},
                ),
            ),
            errors=(400, 404, 409, 422, 502),
            request=LabCheckRequest,
        ),
        Operation(
            "get",
            project + "/nodes/{node}/console",
            "A node's console as a websocket (text both ways), by the node's name",
            (
                Answer(
                    101,
                    "Switching to the websocket: each message is typed on the console, "
                    "the console's output comes back as text messages.",
                ),
            ),
            errors=(400, 403, 404, 409, 502),
            query=(
                Query("columns", "The terminal's width (default 80).", {"type": "integer"}),
                Query("rows", "The terminal's height (default 24).", {"type": "integer"}),
            ),
        ),
        Operation(
            "get",
            project + "/lab/events",
            "Follow the caller's lab as their checks and stage change",
            (
                Answer(
                    200,
                    "Server-Sent Events until the client leaves: `lab_view` at once and after "
                    "each change, `lab_error` when the lab cannot be read after one.",
                    {EVENT_STREAM: LabEvent},
                ),
            ),
            errors=(404, 422, 502),
        ),
        Operation(
            "post",
            project + "/lab/stages/{stage}/catch-up",
            "Restore the snapshot a stage starts from",
            (Answer(200, "Restored.", {JSON: CatchUpDone}),),
            errors=(400, 404, 409, 422, 502),
            request=CatchUpRequest,
        ),
        Operation(
            "post",
            project + "/lab/exercises",
            "Start a troubleshooting exercise: one of the lab's faults put into the lab",
            (Answer(200, "The exercise's symptom.", {JSON: ExerciseView}),),
            errors=(400, 404, 409, 422, 502),
            request=ExerciseRequest,
        ),
        Operation(
            "get",
            project + "/lab/exercises/current",
            "The caller's latest exercise and its grade",
            (Answer(200, "The exercise.", {JSON: ExerciseView}),),
            errors=(404, 422, 502),
        ),
        Operation(
            "post",
            project + "/lab/exercises/current/give-up",
            "Give up the exercise: what the fault was, taken out of the lab",
            (Answer(200, "The fault, and what could not be undone.", {JSON: GiveUpAnswer}),),
            errors=(404, 409, 422, 502),
        ),
        Operation(
            "post",
            run + "/abort",
            "Stop a run (a direct tool run or a lab check)",
            (Answer(200, "The run was told to stop.", {JSON: r.RunAbortAnswer}),),
            errors=(404,),
        ),
        Operation(
            "get",
            run + "/approvals",
            "Changes a run waits for a decision on",
            (Answer(200, "The run's pending approvals.", {JSON: Many(r.PendingApproval)}),),
            errors=(404,),
        ),
        Operation(
            "post",
            run + "/approvals/{approval_id}",
            "Approve or reject a run's change",
            (Answer(200, "The run's stream takes the decision.", {JSON: r.DecisionTaken}),),
            errors=(400, 404, 409, 413),
            request=ApprovalDecisionRequest,
        ),
        Operation(
            "post",
            project + "/chat/stream",
            "One turn of the copilot",
            (turn,),
            errors=(400, 404, 409, 413, 502),
            request=ChatRequest,
        ),
        Operation(
            "get",
            project + "/chat/sessions",
            "The caller's chat sessions",
            (Answer(200, "Pinned first, then the most recent.", {JSON: Many(ChatSession)}),),
            errors=(400,),
            query=(
                _limit(100),
                Query("user_id", "Only the caller's own user id is accepted.", {"type": "string"}),
            ),
        ),
        Operation(
            "patch",
            session,
            "Rename a session",
            (Answer(200, "The renamed session.", {JSON: ChatSession}),),
            errors=(400, 404),
            request=RenameRequest,
        ),
        Operation(
            "delete",
            session,
            "Delete a session with its checkpoints",
            (no_content,),
            errors=(404, 409),
        ),
        Operation(
            "get",
            session + "/history",
            "A session's messages",
            (Answer(200, "The last `limit` messages.", {JSON: ConversationHistory}),),
            errors=(400, 404),
            query=(_limit(100),),
        ),
        Operation(
            "post",
            session + "/abort",
            "Stop the session's running turn",
            (Answer(200, "Stopped, or nothing was running.", {JSON: r.AbortAnswer}),),
            errors=(404,),
        ),
        Operation(
            "put",
            session + "/pin",
            "Pin a session",
            (Answer(200, "The session.", {JSON: ChatSession}),),
            errors=(404,),
        ),
        Operation(
            "delete",
            session + "/pin",
            "Unpin a session",
            (Answer(200, "The session.", {JSON: ChatSession}),),
            errors=(404,),
        ),
        Operation(
            "get",
            session + "/export",
            "A session as a notebook or Markdown file",
            (
                Answer(
                    200,
                    "An attachment named after the session's title.",
                    {
                        "application/x-ipynb+json": Raw(
                            "An nbformat 4 notebook.", {"type": "object"}
                        ),
                        "text/markdown": Raw("The conversation as Markdown."),
                    },
                ),
            ),
            errors=(400, 404),
            query=(
                Query(
                    "format",
                    "ipynb (default) or md.",
                    {"type": "string", "enum": ["ipynb", "md"], "default": "ipynb"},
                ),
            ),
        ),
        Operation(
            "get",
            session + "/approvals",
            "Changes waiting for a decision",
            (Answer(200, "The session's pending approvals.", {JSON: Many(r.PendingApproval)}),),
            errors=(404,),
        ),
        Operation(
            "post",
            session + "/approvals/{approval_id}",
            "Approve or reject a change",
            (
                Answer(
                    200,
                    "JSON when a stream of this server waits for the decision (that stream "
                    "goes on); otherwise the rest of the turn as Server-Sent Events.",
                    {JSON: r.DecisionTaken, EVENT_STREAM: EVENTS},
                ),
            ),
            errors=(400, 404, 409, 413),
            request=ApprovalDecisionRequest,
        ),
    )
