"""Results a magic displays live in its cell and also returns (`Turn`, `LabReport`).

Returned as the cell's last expression, such a result would show a second time under the
live display (IPython's `Out[]`). `ShownInCell` displays nothing when the cell that
displayed it returns it, and its `_display_bundle()` anywhere else (a later cell's
`report`, `display(turn)`), so `report = %copilot check` and a bare `%copilot check`
both leave one output.
"""

from __future__ import annotations

from typing import Any


class ShownInCell:
    """Mixin: the subclass keeps `_shown_in` (the execution count of the cell showing it
    live, or None) and gives `_display_bundle()` (a raw MIME bundle)."""

    _shown_in: int | None

    def shown_in_cell(self, execution_count: int) -> None:
        """Say that cell `execution_count` already shows this result (the magic displayed
        it live), so that returning it as the cell's result displays nothing more."""
        self._shown_in = execution_count

    def _display_bundle(self) -> dict[str, Any]:
        raise NotImplementedError

    def _ipython_display_(self) -> None:
        from IPython import get_ipython
        from IPython.display import display

        shell = get_ipython()
        if shell is not None and self._shown_in == shell.execution_count:
            self._shown_in = None
            return
        display(self._display_bundle(), raw=True)
