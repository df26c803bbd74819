"""`ChatSettings`: how every project's chat runs, set once where the server builds the
chat service (`ProjectAgentManager`) and shared, unchanged, by each project's service
and its parts (the turn engine, the sessions, the approvals)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..agent.approval import DEFAULT_TIMEOUT
from ..agent.approval_policy import NO_APPROVAL, ApprovalPolicy
from ..tools.modes import DEFAULT_MODE, check_mode


@dataclass(frozen=True)
class ChatSettings:
    """The chat service's settings.

    `data_dir`: each project's data lives under `<data_dir>/projects/<project_id>/`;
    `default_mode`: the copilot mode of a turn that names none (`ValueError` for an
    unknown mode); `approval`: which tool calls wait for a person (default: none; the
    server passes its `require_approval`); `approval_timeout`: how many seconds they
    wait (default 600); `system_prompt`: replaces the built-in prompt template (see
    `agent.prompts`).
    """

    data_dir: Path
    default_mode: str = DEFAULT_MODE
    approval: ApprovalPolicy = NO_APPROVAL
    approval_timeout: float = DEFAULT_TIMEOUT
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        check_mode(self.default_mode)
