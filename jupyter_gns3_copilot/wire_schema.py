"""The JSON Schema of the chat events as they travel to the front end (a lab check's
`check_result` / `check_summary` events included, with the result and score models).

The labextension's TypeScript types are generated from it, so the two languages cannot
drift: `make types` writes this schema to `labextension/src/generated/events.schema.json`
and compiles that into `labextension/src/generated/events.ts` (json-schema-to-typescript);
`tests/test_wire_schema.py` fails when the checked-in schema differs from a fresh export,
and the labextension's `generated.test.ts` when the TypeScript differs from a fresh
compile.

The schema describes the wire, not the Python constructors: an event goes out as
`model_dump_json(exclude_none=True)`, so a field whose default is None is optional (absent
when None) and every other field is required (a default that is not None is always sent).
Field titles are left out (each property would otherwise become a named TypeScript type).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import core_schema

from .events import ChatEvent


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

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _schema(kind: Any) -> dict[str, Any]:
    return TypeAdapter(kind).json_schema(mode="serialization", schema_generator=WireSchema)


def wire_schema() -> dict[str, Any]:
    """`ChatEvent` (the union of the events), with every model it names in `$defs`."""
    return {"title": "ChatEvent", **_schema(ChatEvent)}


def wire_schema_text() -> str:
    """`wire_schema()` as the checked-in file holds it (2-space JSON, final newline)."""
    return json.dumps(wire_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(wire_schema_text())
