"""What the informational magics show: tables of records, the status and the settings.

`Records` is a list (of projects, sessions...) that displays as a table: Markdown in a
notebook, aligned text in a terminal, so `projects = %copilot projects` is both shown and
usable. `status_text` and `config_text` render the server's reports; the model's API key
never appears in them (the server never sends it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..mode_labels import mode_label

Column = tuple[str, Callable[[Any], object]]


class Records(list[Any]):
    """A list that displays as a table of `columns` (header, value of an item)."""

    def __init__(self, items: Iterable[Any], columns: Sequence[Column], *, empty: str) -> None:
        super().__init__(items)
        self._columns = list(columns)
        self._empty = empty

    def _rows(self) -> list[list[str]]:
        return [[_cell(value(item)) for _, value in self._columns] for item in self]

    def __repr__(self) -> str:
        if not self:
            return self._empty
        rows = [[header for header, _ in self._columns], *self._rows()]
        widths = [max(len(row[i]) for row in rows) for i in range(len(self._columns))]
        lines = [
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            for row in rows
        ]
        lines.insert(1, "  ".join("-" * width for width in widths))
        return "\n".join(line.rstrip() for line in lines)

    def _repr_markdown_(self) -> str:
        if not self:
            return f"*{_escape(self._empty)}*"
        headers = [header for header, _ in self._columns]
        lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
        lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in self._rows()]
        return "\n".join(lines)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    return " ".join(str(value).split())


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")


def status_text(report: Mapping[str, Any], server: str) -> str:
    """The `copilot/status` report as lines of text."""
    gns3 = report.get("gns3") or {}
    if gns3.get("reachable"):
        state = f"reachable, version {gns3.get('version')}"
        if gns3.get("authenticated") is False:
            state += ", credentials refused"
    else:
        state = "NOT reachable"
    lines = [
        f"GNS3 Copilot {report.get('version')} (Python {report.get('python')})",
        f"Jupyter server: {server}",
    ]
    if report.get("mode") == "hub":
        lines.append(f"Settings: {report.get('mode_summary')}")
    lines.append(f"GNS3: {gns3.get('url')} {state}")
    if gns3.get("error"):
        lines.append(f"  {gns3['error']}")
    model = report.get("model")
    if model:
        key = "key set" if model.get("api_key_set") else "no key"
        configured = "" if model.get("configured") else " - NOT configured"
        lines.append(
            f"Model: {model.get('model') or '(none)'} at {model.get('base_url')} ({key}), "
            f"{mode_label(str(model.get('copilot_mode')))}{configured}"
        )
        lines += [f"  {problem}" for problem in model.get("problems") or []]
        context = model.get("context") or {}
        if context.get("guessed") and context.get("note"):
            lines.append(f"  {context['note']}")
    lines.append(f"User: {report.get('user')} · data: {report.get('data_dir')}")
    packages = report.get("packages") or {}
    lines.append(
        "Packages: " + ", ".join(f"{name} {ver or 'missing'}" for name, ver in packages.items())
    )
    return "\n".join(lines)


CONFIG_FIELDS = (
    "provider",
    "base_url",
    "model",
    "title_model",
    "temperature",
    "context_limit",
    "context_strategy",
    "copilot_mode",
)


def config_text(view: Mapping[str, Any]) -> str:
    """The `copilot/llm-config` view as lines of text (where each value comes from)."""
    sources = view.get("sources") or {}
    lines = []
    for name in CONFIG_FIELDS:
        value = view.get(name)
        source = sources.get(name)
        shown = "(default)" if value in (None, "") else value
        lines.append(f"{name}: {shown}" + (f"  [{source}]" if source else ""))
    key = "set" if view.get("api_key_set") else "not set"
    key_source = view.get("api_key_source")
    lines.append(f"api_key: {key}" + (f"  [{key_source}]" if key_source else ""))
    lines.append(f"allowed modes: {', '.join(view.get('allowed_modes') or [])}")
    for missing in view.get("missing") or []:
        lines.append(f"missing {missing.get('setting')}: {missing.get('message')}")
    if view.get("ignored"):
        lines.append(f"ignored (not allowed by the administrator): {', '.join(view['ignored'])}")
    return "\n".join(lines)
