"""The benchmark's results written out: `runs.jsonl` (one `RunScore` per line),
`report.md` (a table per fault and in all) and `report.html` (the same table and an inline
SVG plot: the share of runs diagnosed, fixed and safe per fault, and the tokens spent per
fix). No plotting library: the SVG is written here.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from .scoring import FaultTotals, RunScore, per_fault

JSONL, MARKDOWN, HTML = "runs.jsonl", "report.md", "report.html"
"""The files `write_reports` writes."""
SCORES = (("diagnosed", "#4e79a7"), ("fixed", "#59a14f"), ("safe", "#f28e2b"))
"""The scores plotted per fault, with their colours."""
COLUMNS = (
    "Fault",
    "Runs",
    "Diagnosed",
    "Fixed",
    "Safe",
    "Turns",
    "Tool calls",
    "Tokens in",
    "Tokens out",
    "Tokens per fix",
    "Seconds",
    "Cost",
)


def rows(runs: Sequence[RunScore]) -> list[list[str]]:
    """The table's rows: one per fault, then "all" (scores as counts of scored runs)."""
    return [_row(t) for t in per_fault(runs)]


def _row(t: FaultTotals) -> list[str]:
    def share(count: int) -> str:
        return f"{count}/{t.scored}"

    runs = str(t.runs) if t.scored == t.runs else f"{t.runs} ({t.runs - t.scored} not scored)"
    per_fix = t.tokens_per_fix
    return [
        t.fault,
        runs,
        share(t.diagnosed),
        share(t.fixed),
        share(t.safe),
        str(t.turns),
        str(t.tool_calls),
        str(t.tokens_in),
        str(t.tokens_out),
        "-" if per_fix is None else f"{per_fix:.0f}",
        f"{t.seconds:.1f}",
        "-" if t.cost is None else f"{t.cost:.4f}",
    ]


def markdown(runs: Sequence[RunScore]) -> str:
    """The table in Markdown, and the runs that were not scored with why."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows(runs)]
    skipped = [r for r in runs if r.status != "scored"]
    if skipped:
        lines += ["", "Not scored:", ""]
        lines += [f"- {r.fault} (run {r.run}): {r.status}: {r.explanation}" for r in skipped]
    return "\n".join(lines) + "\n"


def svg(runs: Sequence[RunScore]) -> str:
    """Two bar charts side by side: per fault, the share of scored runs diagnosed, fixed
    and safe; and the tokens spent per fix (no bar: nothing fixed)."""
    faults = per_fault(runs)[:-1]
    band, top, height = 90, 44, 160
    width = 60 + band * max(len(faults), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width + 40}" '
        f'height="{top + height + 60}" font-family="sans-serif" font-size="11">',
        '<text x="10" y="16" font-size="13">Scores by fault (share of runs)</text>',
        f'<text x="{width + 50}" y="16" font-size="13">Tokens per fix</text>',
        f'<text x="10" y="{top + 4}">100%</text>',
    ]
    for i, (name, colour) in enumerate(SCORES):
        parts.append(
            f'<rect x="{10 + 80 * i}" y="{top + height + 40}" width="10" height="10" '
            f'fill="{colour}"/><text x="{24 + 80 * i}" y="{top + height + 49}">{name}</text>'
        )
    most = max((t.tokens_per_fix or 0 for t in faults), default=0) or 1
    for index, t in enumerate(faults):
        x = 50 + band * index
        label = html.escape(t.fault)
        for j, (name, colour) in enumerate(SCORES):
            share = getattr(t, name) / t.scored if t.scored else 0.0
            bar = round(height * share)
            parts.append(
                f'<rect x="{x + 22 * j}" y="{top + height - bar}" width="20" height="{bar}" '
                f'fill="{colour}"><title>{label}: {name} {share:.0%}</title></rect>'
            )
        per_fix = t.tokens_per_fix
        bar = round(height * (per_fix or 0) / most)
        parts += [
            f'<text x="{x}" y="{top + height + 14}">{label[:14]}</text>',
            f'<rect x="{width + x + 10}" y="{top + height - bar}" width="40" height="{bar}" '
            f'fill="#76b7b2"><title>{label}: '
            f"{'nothing fixed' if per_fix is None else f'{per_fix:.0f} tokens per fix'}"
            "</title></rect>",
            f'<text x="{width + x + 10}" y="{top + height + 14}">{label[:14]}</text>',
        ]
        if per_fix is not None:
            parts.append(
                f'<text x="{width + x + 10}" y="{top + height - bar - 4}">{per_fix:.0f}</text>'
            )
    for x in (45, width + 55):
        parts.append(
            f'<line x1="{x}" y1="{top + height}" x2="{x + band * len(faults)}" '
            f'y2="{top + height}" stroke="#333"/>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def html_report(runs: Sequence[RunScore], title: str) -> str:
    """A page with the plot, the table and every run's symptom, scores and answer."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
        for row in rows(runs)
    )
    details = "".join(
        f"<details><summary>{html.escape(r.fault)} run {r.run}: {html.escape(r.status)}"
        f"</summary><p><b>Asked:</b> {html.escape(r.symptom)}</p>"
        f"<p><b>Regressions:</b> {html.escape(', '.join(r.regressions) or 'none')}</p>"
        f"<p>{html.escape(r.explanation)}</p><pre>{html.escape(r.answer)}</pre></details>"
        for r in runs
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
        "</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
        "collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
        "pre{white-space:pre-wrap;background:#f6f6f6;padding:8px}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{svg(runs)}<table><tr>{head}</tr>{body}</table>"
        f"<h2>Runs</h2>{details}</body></html>\n"
    )


def write_reports(runs: Sequence[RunScore], directory: Path, title: str) -> list[Path]:
    """Write the three files (module docstring) into `directory` (made if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = {
        JSONL: "".join(r.model_dump_json() + "\n" for r in runs),
        MARKDOWN: f"# {title}\n\n" + markdown(runs),
        HTML: html_report(runs, title),
    }
    for name, text in written.items():
        (directory / name).write_text(text, encoding="utf-8")
    return [directory / name for name in written]
