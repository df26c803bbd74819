"""Which tool calls wait for a person's approval: the `require_approval` setting's policy.

Kept apart from `approval` (requests, decisions: pydantic models) so that checking the
setting when the server extension loads imports nothing heavy. No Jupyter import here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CHANGES = "changes"
NONE = "none"


@dataclass(frozen=True)
class ApprovalPolicy:
    """Which tool calls ask first: `CHANGES` (every call that would change the lab or a
    device's configuration, judged per call by `tools.changes.planned_change`: a console
    command tool asks when one of its lines is no diagnostic), `NONE`, or the named tools
    only (whatever their arguments)."""

    setting: str | frozenset[str] = CHANGES

    @classmethod
    def parse(cls, value: str | Sequence[str]) -> ApprovalPolicy:
        """The policy of the `require_approval` setting; ValueError for anything else."""
        if isinstance(value, str):
            if value in (CHANGES, NONE):
                return cls(value)
            raise ValueError(
                f"must be {CHANGES!r}, {NONE!r} or a list of tool names, not {value!r}"
            )
        names = frozenset(str(name).strip() for name in value)
        if "" in names:
            raise ValueError("a tool name in the list is empty")
        return cls(names)

    def considers(self, tool_name: str) -> bool:
        """Whether a call of `tool_name` may ask at all (so its changes are worth working
        out before it runs)."""
        if self.setting == NONE:
            return False
        return self.setting == CHANGES or tool_name in self.setting

    def needs(self, tool_name: str, changes: bool) -> bool:
        """Whether a call of `tool_name` asks first; `changes`: it would change the lab or
        a device's configuration."""
        if self.setting == NONE:
            return False
        if self.setting == CHANGES:
            return changes
        return tool_name in self.setting


NO_APPROVAL = ApprovalPolicy(NONE)
