"""The lab file's JSON Schema, generated from its models (`model.py`).

`python -m jupyter_gns3_copilot.objectives.schema` writes `lab.schema.json` beside this
module (shipped in the package, for editors and other tools); a test keeps the file equal
to what the models generate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .model import LabFile

SCHEMA_FILE = Path(__file__).with_name("lab.schema.json")
SCHEMA_ID = "urn:jupyter-gns3-copilot:lab:1"


def lab_schema() -> dict[str, Any]:
    """The JSON Schema of a `lab.yaml` (the names as written in the file)."""
    schema = LabFile.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def schema_text() -> str:
    """The schema as the shipped file holds it."""
    return json.dumps(lab_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
