"""The JSON Schema of what the front end reads from the Python side, for its TypeScript
types: the chat events as they travel (a lab check's `check_result` / `check_summary`
included, with the result and score models), and the turn model a saved cell output holds
(`turns.TurnBundle`, whose turns the widget's operations carry too).

The labextension's types are generated from it, so the two languages cannot drift:
`make types` writes each schema of `SCHEMAS` to `labextension/src/generated/<name>.schema.json`
and compiles it into `labextension/src/generated/<name>.ts` (json-schema-to-typescript);
`tests/test_wire_schema.py` fails when a checked-in schema differs from a fresh export,
and the labextension's `generated.test.ts` when the TypeScript differs from a fresh
compile.

The schema describes the wire, not the Python constructors: an event goes out as
`model_dump_json(exclude_none=True)`, so a model's field whose default is None is optional
(absent when None) and every other field is required (a default that is not None is always
sent); a TypedDict's fields are required as the TypedDict says. Field titles are left out
(each property would otherwise become a named TypeScript type).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from .events import ChatEvent
from .turns import TurnBundle

SCHEMAS: dict[str, tuple[TypeAdapter[ChatEvent] | TypeAdapter[TurnBundle], str]] = {
    "events": (TypeAdapter(ChatEvent), "ChatEvent"),
    "turns": (TypeAdapter(TurnBundle), "TurnBundle"),
}
"""Each schema's file name, its root type (as a pydantic adapter) and the root's name in
TypeScript."""


class WireSchema(GenerateJsonSchema):
    """Pydantic's serialization schema, with `required` as `exclude_none` sends fields."""

    def field_is_required(
        self,
        field: core_schema.ModelField | core_schema.DataclassField | core_schema.TypedDictField,
        total: bool,
    ) -> bool:
        if field["type"] == "typed-dict-field":
            return super().field_is_required(field, total)
        schema = field["schema"]
        return schema["type"] != "default" or schema.get("default", ...) is not None

    def field_title_should_be_set(self, schema: object) -> bool:
        return False


def wire_schema(name: str) -> JsonSchemaValue:
    """The schema `name` of `SCHEMAS`: its root type, with every type it names in `$defs`."""
    root, title = SCHEMAS[name]
    schema = root.json_schema(mode="serialization", schema_generator=WireSchema)
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
