"""Turning raw terminal output into plain text.

Telnet commands (IAC ...) are already removed by the telnet client (`telnet.py`) before
text reaches this module. What remains are terminal effects: ANSI/VT escape sequences
(colours, cursor moves, window titles), carriage returns, backspaces used to erase
`--More--` markers, bells and other control characters. `clean_terminal_text` removes or
applies them, so the result holds only printable text and `\\n` line breaks.
"""

from __future__ import annotations

import re

_ESCAPE_SEQUENCE = re.compile(
    r"""
      \x1b\[[0-?]*[ -/]*[@-~]               # CSI: colours, cursor moves, erase line
    | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)     # OSC: window title and friends
    | \x1b[PX^_][^\x1b]*\x1b\\              # DCS, SOS, PM, APC strings
    | \x1b[ -/]+[0-~]                       # nF: character set selection
    | \x1b[0-~]                             # two-character escapes
    | \x9b[0-?]*[ -/]*[@-~]                 # 8-bit CSI
    """,
    re.VERBOSE,
)
# Control characters other than \n, \t and \b (backspace is applied, not dropped).
_CONTROL = re.compile(r"[\x00-\x07\x0b-\x1f\x7f]")


def clean_terminal_text(raw: str) -> str:
    """Return `raw` as plain text: escapes removed, backspaces applied, only `\\n` breaks.

    `\\r\\n`, `\\r\\r\\n` and `\\n\\r` all become a single `\\n`; a backspace erases the
    character before it on the same line.
    """
    text = _ESCAPE_SEQUENCE.sub("", raw)
    text = text.replace("\r", "")
    text = _CONTROL.sub("", text)
    if "\b" in text:
        text = _apply_backspaces(text)
    return text


def _apply_backspaces(text: str) -> str:
    kept: list[str] = []
    for char in text:
        if char == "\b":
            if kept and kept[-1] != "\n":
                kept.pop()
        else:
            kept.append(char)
    return "".join(kept)


class TerminalText:
    """An incrementally cleaned view of a terminal stream.

    Cleaning never crosses a line break (escape sequences and backspaces stay within a
    line), so complete lines are cleaned once and only the current line is re-cleaned as
    chunks arrive. `text` is always `clean_terminal_text` of everything fed so far.
    """

    def __init__(self, log_line: re.Pattern[str] | None = None) -> None:
        self._done = ""
        self._tail = ""
        self._log_line = log_line

    def feed(self, chunk: str) -> None:
        """Append a chunk of raw terminal output. Complete lines lose what `log_line`
        matches in them: messages the device's software logs onto its console at any
        time, even right after a prompt, which are nobody's output."""
        self._tail += chunk
        cut = self._tail.rfind("\n")
        if cut >= 0:
            done = clean_terminal_text(self._tail[: cut + 1])
            if self._log_line is not None:
                done = self._log_line.sub("", done)
            self._done += done
            self._tail = self._tail[cut + 1 :]

    @property
    def text(self) -> str:
        """The cleaned text received so far."""
        return self._done + clean_terminal_text(self._tail)


def tidy_output(text: str, pager: re.Pattern[str] | None = None) -> str:
    """Final touches for a command's output: pager markers, trailing spaces, blank edges."""
    if pager is not None:
        text = pager.sub("", text)
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)
