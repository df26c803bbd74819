"""Reading an executed notebook (nbclient's result): `Executed` finds a code cell by its
source and gives what it showed (text, MIME types, the saved turns), `tool_items` and
`device_outputs` pick a saved turn's tool calls and each device's output."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jupyter_gns3_copilot.turns import TURN_MIME_TYPE

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@dataclass
class Executed:
    """An executed notebook and what its cells show."""

    notebook: Any

    def cell(self, source_start: str) -> Any:
        """The code cell whose source is `source_start`, else the first starting with it."""
        code = [cell for cell in self.notebook.cells if cell.cell_type == "code"]
        for cell in code:
            if cell.source == source_start:
                return cell
        for cell in code:
            if cell.source.startswith(source_start):
                return cell
        raise AssertionError(f"no code cell starts with {source_start!r}")

    def text(self, source_start: str) -> str:
        """Everything the cell printed or displayed as text."""
        parts = []
        for output in self.cell(source_start).outputs:
            if output.output_type == "stream":
                parts.append(output.text)
            elif output.output_type == "error":
                parts.append(f"{output.ename}: {output.evalue}")
            else:
                parts.append(output.get("data", {}).get("text/plain", ""))
        return "\n".join(parts)

    def mimetypes(self, source_start: str) -> set[str]:
        return {
            mimetype
            for output in self.cell(source_start).outputs
            for mimetype in output.get("data", {})
        }

    def saved_turns(self, source_start: str) -> list[dict[str, Any]]:
        """The turns the cell's finished output saved (its `TurnBundle`): what a reopened
        notebook shows with no kernel and no widget state."""
        return self.saved_bundle(source_start)["turns"]

    def saved_bundle(self, source_start: str) -> dict[str, Any]:
        """The `TurnBundle` the cell's finished output saved."""
        outputs = self.cell(source_start).outputs
        assert not any(WIDGET_VIEW in output.get("data", {}) for output in outputs), (
            f"a finished turn leaves no widget view in {source_start!r}"
        )
        bundles = [
            output["data"][TURN_MIME_TYPE]
            for output in outputs
            if TURN_MIME_TYPE in output.get("data", {})
        ]
        assert len(bundles) == 1, f"expected one saved conversation in {source_start!r}"
        [bundle] = bundles
        assert bundle["version"] == 1 and bundle["project_id"]
        return bundle


def tool_items(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in turn["items"] if item["kind"] == "tool"]


def device_outputs(item: dict[str, Any]) -> dict[str, str]:
    return {entry["device_name"]: entry["output"] for entry in json.loads(item["output"])}
