"""The copilot's REST/SSE API as an OpenAPI 3.1 document, generated from its models.

`openapi_document(base_url)` builds the document from `OPERATIONS` (each route's verbs,
request model, answers and error statuses), the handlers' docstrings (the operations'
descriptions) and the pydantic models of the bodies (`server.schemas`, `events`,
`server.responses`, `status`, `llm_config`, `store.sessions`, `agent.history`,
`gns3.topology`), whose JSON schemas become the document's components. It is served at
`GET {base_url}copilot/openapi.json` and rendered into the documentation's API page.

`OPERATIONS` names every route of `handlers.default_handlers` and every verb its handler
implements, no more (`tests/test_openapi.py` checks both ways). Building the document
imports the history model, hence LangChain: the route waits for the "agent" warm-up.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .._version import __version__

REF_TEMPLATE = "#/components/schemas/{model}"
EVENT_STREAM = "text/event-stream"
JSON = "application/json"

ERROR_STATUSES: Mapping[int, str] = {
    400: "Bad input: the error names the field and the rule it broke.",
    403: "Not allowed for this user, mode or server setting (the error says which).",
    404: "No such project data, session, approval or tool for this user.",
    409: "A conflict with the current state (the project is not opened, the session is "
    "still answering, no model is configured, others are using the project...).",
    413: "The request body is over 1,000,000 bytes.",
    422: "The lab file is not valid: `error.errors` lists every problem with its file, "
    "line and field.",
    502: "GNS3 cannot be reached, timed out, refused the credentials or failed.",
    503: "The copilot is closed by its configuration (`error.setting` names the setting), "
    "or in hub mode the hub service gives no session.",
}
"""What each error status means on every route (`server.errors`)."""
ALWAYS = (403, 503)
"""Statuses any route may answer: a caller jupyter_server refuses, a closed copilot."""


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
    from ..llm_config import LLMConfigUpdate, LLMConfigView
    from ..objectives.api import (
        CatchUpDone,
        CatchUpRequest,
        LabAttachRequest,
        LabCheckRequest,
        LabStageRequest,
        LabView,
    )
    from ..objectives.results import CheckReport
    from ..status import StatusReport
    from ..store.sessions import ChatSession
    from . import responses as r
    from .schemas import (
        ApprovalDecisionRequest,
        ChatRequest,
        NotebookProjectRequest,
        RenameRequest,
        ToolRunRequest,
    )

    project = "/copilot/projects/{project_id}"
    session = project + "/chat/sessions/{session_id}"
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


def _handler_docs() -> dict[str, str]:
    """Each route's handler docstring, by OpenAPI path."""
    from .handlers import default_handlers

    return {
        route_template(pattern): inspect.cleandoc(handler.__doc__ or "")
        for pattern, handler in default_handlers
    }


def route_template(pattern: str) -> str:
    """A route's tornado pattern as an OpenAPI path: `(?P<name>[^/]+)` -> `{name}`."""
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern)


def _event_models() -> list[type[BaseModel]]:
    from ..events import ChatEvent

    union = typing.get_args(ChatEvent)[0]
    return list(typing.get_args(union))


def openapi_document(base_url: str = "/") -> dict[str, Any]:
    """The API as an OpenAPI 3.1 document, its paths under `base_url`."""
    ops = operations()
    events = _event_models()
    wanted: list[tuple[type[BaseModel], Any]] = [(model, "serialization") for model in events]
    wanted.append((_error_model(), "serialization"))
    for op in ops:
        if op.request is not None:
            wanted.append((op.request, "validation"))
        for answer in op.answers:
            for body in answer.content.values():
                model = body.model if isinstance(body, Many) else body
                if isinstance(model, type):
                    wanted.append((model, "serialization"))
    refs, definitions = models_json_schema(list(dict.fromkeys(wanted)), ref_template=REF_TEMPLATE)
    schemas: dict[str, Any] = dict(definitions.get("$defs", {}))
    schemas[EVENTS] = {
        "description": "One event of a turn's stream, sent as `data: <json>` and a blank line.",
        "oneOf": [refs[(model, "serialization")] for model in events],
        "discriminator": {
            "propertyName": "type",
            "mapping": {
                model.model_fields["type"].default: refs[(model, "serialization")]["$ref"]
                for model in events
            },
        },
    }

    def schema_of(body: Body) -> Mapping[str, Any]:
        if isinstance(body, str):  # EVENTS, the one body named by a string
            return {"$ref": REF_TEMPLATE.format(model=EVENTS)}
        if isinstance(body, Raw):
            return {**body.schema, "description": body.description}
        if isinstance(body, Many):
            return {"type": "array", "items": refs[(body.model, "serialization")]}
        return refs[(body, "serialization")]

    error = {JSON: {"schema": refs[(_error_model(), "serialization")]}}
    docs = _handler_docs()
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        responses: dict[str, Any] = {}
        for answer in op.answers:
            responses[str(answer.status)] = {"description": answer.description} | (
                {
                    "content": {
                        media: {"schema": schema_of(body)} for media, body in answer.content.items()
                    }
                }
                if answer.content
                else {}
            )
        for status in sorted({*op.errors, *ALWAYS}):
            responses[str(status)] = {"description": ERROR_STATUSES[status], "content": error}
        parameters = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", op.path)
        ] + [
            {"name": q.name, "in": "query", "description": q.description, "schema": q.schema}
            for q in op.query
        ]
        operation: dict[str, Any] = {
            "summary": op.summary,
            "description": docs[op.path],
            "operationId": _operation_id(op),
            "responses": responses,
        }
        if parameters:
            operation["parameters"] = parameters
        if op.request is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {JSON: {"schema": refs[(op.request, "validation")]}},
            }
        paths.setdefault(op.path, {})[op.method] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "jupyter_gns3_copilot API",
            "version": __version__,
            "description": "The GNS3 copilot's routes on a Jupyter server. Every route "
            'needs a logged-in Jupyter user; errors are JSON `{"error": {...}}`.',
        },
        "servers": [{"url": base_url, "description": "The Jupyter server's base URL."}],
        "security": [{"jupyterToken": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "jupyterToken": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "Authorization",
                    "description": "`token <the Jupyter server's token>`; a browser's "
                    "Jupyter login cookie (with the XSRF token) works too.",
                }
            },
        },
    }


def _error_model() -> type[BaseModel]:
    from .responses import ErrorAnswer

    return ErrorAnswer


def _operation_id(op: Operation) -> str:
    words = re.sub(r"[{}]", "", op.path.removeprefix("/copilot/"))
    return op.method + "_" + re.sub(r"[^A-Za-z0-9]+", "_", words).strip("_")
