"""Which tool calls wait for a person's approval: the `require_approval` setting's policy.

Kept apart from `approval` (requests, decisions: pydantic models) so that checking the
setting when the server extension loads imports nothing heavy. No Jupyter import here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CHANGES = "changes"
NONE = "none"
CONFIG_TOOLS = frozenset({"run_config_commands"})
"""Tools that change a device's configuration (they do not change the GNS3 project, so
`ToolSpec.changes_lab` does not mark them)."""


@dataclass(frozen=True)
class ApprovalPolicy:
    """Which tool calls ask first: `CHANGES` (those with `changes_lab` and
    `CONFIG_TOOLS`), `NONE`, or the named tools only."""

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

    def needs(self, tool_name: str, changes_lab: bool) -> bool:
        """Whether a call of `tool_name` (whose spec says `changes_lab`) asks first."""
        if self.setting == NONE:
            return False
        if self.setting == CHANGES:
            return changes_lab or tool_name in CONFIG_TOOLS
        return tool_name in self.setting


NO_APPROVAL = ApprovalPolicy(NONE)
