"""The copilot's REST/SSE API as an OpenAPI 3.1 document, generated from its models.

`openapi_document(base_url)` builds the document from `operations()`
(`server.api_operations`: each route's verbs, request model, answers and error statuses),
the handlers' docstrings (the operations' descriptions) and the pydantic models of the
bodies (`server.schemas`, `events`, `server.responses`, `server.status`,
`server.llm_config`, `store.sessions`, `agent.history`, `gns3.topology`), whose JSON
schemas become the document's components. It is served at
`GET {base_url}copilot/openapi.json` and rendered into the documentation's API page.

Building the document imports the history model, hence LangChain: the route waits for
the "agent" warm-up.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from .._version import __version__
from .api_operations import EVENTS, JSON, Body, Many, Operation, Raw, operations

REF_TEMPLATE = "#/components/schemas/{model}"

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
    from .responses import ErrorBody

    return ErrorBody


def _operation_id(op: Operation) -> str:
    words = re.sub(r"[{}]", "", op.path.removeprefix("/copilot/"))
    return op.method + "_" + re.sub(r"[^A-Za-z0-9]+", "_", words).strip("_")
