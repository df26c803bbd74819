"""What the `%copilot` subcommands share: the notebook's `Copilot`, the shell, the options.

A subcommand handler takes the line after its word and the options that led the line
(as argv) and returns the cell's result, or `NOT_A_SUBCOMMAND` when the line is a message
after all (e.g. "show me the routes").
"""

from __future__ import annotations

from argparse import Namespace
from collections.abc import Callable
from typing import Any

from ..cell_display import ShownInCell
from ..copilot import Copilot
from ..models import ProjectInfo
from .parsing import split_options

NOT_A_SUBCOMMAND: Any = object()
"""A subcommand handler's answer when the line is a message after all (e.g. "show me...")."""

Subcommand = Callable[[str, list[str]], Any]
"""A subcommand handler: (the rest of the line, the leading options as argv) -> result."""


def in_kernel(shell: Any) -> bool:
    """Whether widgets can render: a Jupyter kernel (not terminal IPython)."""
    return getattr(shell, "kernel", None) is not None


def say_recalled(project: ProjectInfo) -> None:
    """Say which project the magics took back after a kernel restart."""
    print(
        f"Using project {project.name!r} again: this notebook's project "
        "(`%copilot use` chooses another)."
    )


class MagicContext:
    """The magics' shared state: `shell`, the notebook's `Copilot` (`api`, found on first
    use; `copilot` is None until then) and `parse`, the magic's own argument parser."""

    def __init__(self, shell: Any, parse: Callable[[list[str]], Namespace]) -> None:
        self.shell = shell
        self.parse = parse
        self.copilot: Copilot | None = None

    @property
    def api(self) -> Copilot:
        """The notebook's `Copilot` (finding the server on first use)."""
        if self.copilot is None:
            self.copilot = Copilot(on_recall=say_recalled)
        return self.copilot

    def close(self) -> None:
        """Close the HTTP client (the extension is being unloaded)."""
        if self.copilot is not None:
            self.copilot.close()
            self.copilot = None

    @property
    def widgets(self) -> bool:
        """Whether widgets can render here (`in_kernel`)."""
        return in_kernel(self.shell)

    def options(self, argv: list[str], tail: str = "") -> tuple[Namespace, list[str]]:
        """The options of `argv` and of `tail` (anywhere in it) parsed, and `tail`'s words."""
        more, words = split_options(tail)
        return self.parse([*argv, *more]), words

    def shown_in_this_cell(self, shown: ShownInCell) -> None:
        """Say that the running cell shows `shown` live (its `Out[]` shows nothing more)."""
        assert self.shell is not None  # a registered magic has its shell
        shown.shown_in_cell(self.shell.execution_count)
