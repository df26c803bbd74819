"""The JSON Schema of what the front end reads from the Python side, for its TypeScript
types: the chat events as they travel (a lab check's `check_result` / `check_summary`
included, with the result and score models), the turn model a saved cell output holds
(`turns.TurnBundle`, whose turns the widget's operations carry too), the widget's
operations (`turns.Op`), a `%copilot check` output (`notebook.lab_report.ChecksBundle`),
the REST answers it reads (`ANSWERS`, the lab events stream's messages among them) and the
request bodies it sends (`REQUESTS`).

The labextension's types are generated from it, so the two languages cannot drift:
`make types` writes each schema of `SCHEMAS` to `labextension/src/generated/<name>.schema.json`
and compiles it into `labextension/src/generated/<name>.ts` (json-schema-to-typescript);
`tests/test_wire_schema.py` fails when a checked-in schema differs from a fresh export,
and the labextension's `generated.test.ts` when the TypeScript differs from a fresh
compile.

The schema describes the wire, not the Python constructors: an event goes out as
`model_dump_json(exclude_none=True)`, so a model's field whose default is None is optional
(absent when None) and every other field is required (a default that is not None is always
sent); a TypedDict's fields are required as the TypedDict says. A REST answer is written
with every field (`model_dump_json()`), so the same rule describes it too, if loosely (a
field whose default is None may be absent, and never is). A request body is described as
the server reads it (validation: a field with a default may be left out). Field titles
are left out (each property would otherwise become a named TypeScript type).

It reads models of every layer (`server/` and `notebook/` included), so only `make types`
and the tests import it, never the running code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Union

from pydantic import BaseModel, Field, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, JsonSchemaValue
from pydantic_core import core_schema

from .agent.history import ConversationHistory
from .events import ChatEvent, LabEvent
from .mode_labels import MODE_LABELS, MODE_NAMES, OLD_MODE_NAMES
from .notebook.lab_report import ChecksBundle
from .objectives.api import (
    CatchUpDone,
    CatchUpRequest,
    ExerciseRequest,
    ExerciseView,
    GiveUpAnswer,
    LabCheckRequest,
    LabView,
)
from .objectives.results import CheckReport
from .server.llm_config import LLMConfigUpdate, LLMConfigView
from .server.responses import (
    AbortAnswer,
    ErrorBody,
    NotebookProjectAnswer,
    PendingApproval,
    ProjectSummary,
)
from .server.schemas import ApprovalDecisionRequest, ChatRequest, RenameRequest
from .server.status import StatusReport
from .store.sessions import ChatSession
from .tools.modes import Mode
from .turns import Op, TurnBundle

ANSWERS: tuple[type[BaseModel], ...] = (
    StatusReport,
    ProjectSummary,
    ChatSession,
    ConversationHistory,
    PendingApproval,
    AbortAnswer,
    NotebookProjectAnswer,
    LLMConfigView,
    LabView,
    LabEvent,
    CheckReport,
    CatchUpDone,
    ExerciseView,
    GiveUpAnswer,
    ErrorBody,
)
"""The models of the REST answers (bodies and stream messages) the front end reads; the
`openapi.operations()` answers it does not read are `tests/test_wire_schema.py`'s list."""
REQUESTS: tuple[type[BaseModel], ...] = (
    ChatRequest,
    LLMConfigUpdate,
    RenameRequest,
    ApprovalDecisionRequest,
    LabCheckRequest,
    CatchUpRequest,
    ExerciseRequest,
)
"""The models of the request bodies the front end sends."""


def _union(models: tuple[type[BaseModel], ...]) -> TypeAdapter[Any]:
    union: Any = Union[models]  # noqa: UP007 (a union of a runtime tuple)
    return TypeAdapter(union)


MODES = Annotated[
    Mode,
    Field(
        json_schema_extra={
            "labels": dict(MODE_LABELS),
            "names": dict(MODE_NAMES),
            "old_names": dict(OLD_MODE_NAMES),
        }
    ),
]
"""The mode ids, with `mode_labels`' tables for the views (labels, words, old words)."""

SCHEMAS: dict[str, tuple[TypeAdapter[Any], str, JsonSchemaMode]] = {
    "events": (TypeAdapter(ChatEvent), "ChatEvent", "serialization"),
    "turns": (TypeAdapter(TurnBundle), "TurnBundle", "serialization"),
    "ops": (TypeAdapter(Op), "Op", "serialization"),
    "checks": (TypeAdapter(ChecksBundle), "ChecksBundle", "serialization"),
    "answers": (_union(ANSWERS), "Answer", "serialization"),
    "requests": (_union(REQUESTS), "Request", "validation"),
    "modes": (TypeAdapter(MODES), "Mode", "serialization"),
}
"""Each schema's file name, its root type (as a pydantic adapter), the root's name in
TypeScript, and whether it describes data the server writes or reads."""


class WireSchema(GenerateJsonSchema):
    """Pydantic's serialization schema, with `required` as `exclude_none` sends fields."""

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        if field["type"] == "typed-dict-field" or self.mode == "validation":
            return super().field_is_required(field, total)
        schema = field["schema"]
        return schema["type"] != "default" or schema.get("default", ...) is not None

    def field_title_should_be_set(self, schema: object) -> bool:
        return False


def wire_schema(name: str) -> JsonSchemaValue:
    """The schema `name` of `SCHEMAS`: its root type, with every type it names in `$defs`."""
    root, title, mode = SCHEMAS[name]
    schema = root.json_schema(mode=mode, schema_generator=WireSchema)
    return {**schema, "title": title}


def wire_schema_text(name: str) -> str:
    """`wire_schema(name)` as the checked-in file holds it (2-space JSON, final newline)."""
    return json.dumps(wire_schema(name), indent=2, ensure_ascii=False) + "\n"


def write_schemas(directory: Path) -> None:
    """Write every schema of `SCHEMAS` into `directory` as `<name>.schema.json`."""
    for name in SCHEMAS:
        (directory / f"{name}.schema.json").write_text(wire_schema_text(name), encoding="utf-8")


if __name__ == "__main__":
    write_schemas(Path(sys.argv[1]))
