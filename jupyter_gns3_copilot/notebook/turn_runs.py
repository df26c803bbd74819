"""What `Copilot.stream`, `ask`, `run`, `run_tool`, `approve` and `reject` do: a turn
sent to the server and read back as a `Turn`."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

from ..chat.options import TurnOptions
from ..events import ChatEvent
from .conversations import Conversations, conversation
from .errors import UsageError
from .options import copilot_mode
from .turn import Turn, TurnRecorder
from .turn_reading import EventCallback, read_turn, run_abort, session_abort

if TYPE_CHECKING:
    from .owner import CopilotOwner

COMMAND_TOOLS = {
    "show": "run_show_commands",
    "config": "run_config_commands",
    "vpcs": "run_vpcs_commands",
}
"""`run(..., tool=...)` short names of the command tools."""
OpenCallback = Callable[[], None] | None


class TurnRuns:
    """The turns of `copilot` (its public calls), its `conversations` told which session
    a message went with."""

    def __init__(self, copilot: CopilotOwner, conversations: Conversations) -> None:
        self.copilot = copilot
        self.conversations = conversations
        self.running_run: str | None = None
        """The run id of the direct run being read (its approvals are on the run routes)."""

    def _owner(self, project_id: str, target: str) -> tuple[str, ...]:
        """The path of `target`'s routes: the running direct run's, else the chat
        session's."""
        if target == self.running_run:
            return ("projects", project_id, "runs", target)
        return ("projects", project_id, "chat", "sessions", target)

    def approvals(self, session: str | None) -> list[dict[str, Any]]:
        """`Copilot.approvals`."""
        copilot = self.copilot
        target = conversation(session, copilot.session_id)
        path = self._owner(copilot.current_project().project_id, target)
        return cast("list[dict[str, Any]]", copilot.client.get(*path, "approvals"))

    def stream(
        self,
        message: str,
        options: TurnOptions,
        session: str | None,
        new: bool,
        project_id: str | None,
        on_open: OpenCallback,
    ) -> Iterator[ChatEvent]:
        """`Copilot.stream` with its options built."""
        copilot = self.copilot
        project_id = project_id or copilot.current_project().project_id
        session_id = copilot.next_session(session, new=new, project_id=project_id)
        body = copilot.chat_request(message, session_id=session_id, options=options)
        self.conversations.sent(session_id)
        return copilot.client.stream(
            "projects", project_id, "chat", "stream", json=body, on_open=on_open
        )

    def ask(
        self,
        message: str,
        options: TurnOptions,
        session: str | None,
        new: bool,
        project_id: str | None,
        on_event: EventCallback | None,
        on_open: OpenCallback,
    ) -> Turn:
        """`Copilot.ask` with its options built: its `stream` read into the `Turn`."""
        copilot = self.copilot
        project_id = project_id or copilot.current_project().project_id
        session_id = copilot.next_session(session, new=new, project_id=project_id)
        events = self.stream(message, options, session_id, False, project_id, on_open)
        recorder = TurnRecorder(message, session_id, project_id)
        abort = session_abort(project_id, session_id)
        return read_turn(copilot, copilot.client, events, recorder, on_event, abort=abort)

    def run(
        self,
        devices: str | list[str],
        commands: str | list[str],
        *,
        tool: str,
        mode: str | None,
        on_event: EventCallback | None,
        on_open: OpenCallback,
    ) -> Turn:
        """`Copilot.run`: the command tool `tool` names, through `run_tool`."""
        names = [devices] if isinstance(devices, str) else list(devices)
        lines = commands.replace(";", "\n").splitlines() if isinstance(commands, str) else commands
        lines = [line.strip() for line in lines if line.strip()]
        if not names or not lines:
            raise UsageError("Name a device and a command, e.g. `%copilot run PC1: show ip`.")
        return self.run_tool(
            COMMAND_TOOLS.get(tool, tool),
            {"devices": [{"device": name, "commands": lines} for name in names]},
            mode=mode,
            message=f"run {', '.join(names)}: {'; '.join(lines)}",
            on_event=on_event,
            on_open=on_open,
        )

    def run_tool(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        *,
        mode: str | None,
        message: str | None,
        on_event: EventCallback | None,
        on_open: OpenCallback,
    ) -> Turn:
        """`Copilot.run_tool`: a direct run, aborted by a kernel interrupt even while it
        waits for an approval (it lives only as long as its request)."""
        copilot = self.copilot
        project_id = copilot.current_project().project_id
        run_id = str(uuid.uuid4())
        body: dict[str, Any] = {"arguments": arguments or {}, "run_id": run_id}
        if mode is not None:
            body["copilot_mode"] = copilot_mode(mode)
        events = copilot.client.stream(
            "projects", project_id, "tools", tool, json=body, on_open=on_open
        )
        recorder = TurnRecorder(message or tool.replace("_", " "), run_id, project_id)
        abort = run_abort(project_id, run_id)
        self.running_run = run_id
        try:
            return read_turn(
                copilot, copilot.client, events, recorder, on_event, abort=abort, detachable=False
            )
        finally:
            self.running_run = None

    def decide(
        self,
        decision: str,
        comment: str | None,
        session: str | None,
        on_event: EventCallback | None,
    ) -> Turn | dict[str, Any]:
        """`Copilot.approve` / `reject`: send `decision` on the change the conversation
        waits for; the server's JSON answer when a stream waits for it, else the rest of
        the turn read here."""
        copilot = self.copilot
        target = conversation(session, copilot.session_id)
        pending = copilot.approvals(target)
        if not pending:
            raise UsageError(f"Nothing in conversation {target} waits for an approval.")
        request = pending[0]
        project_id = copilot.current_project().project_id
        answer: list[Any] = []
        body = {"decision": decision, **({"comment": comment} if comment else {})}
        events = copilot.client.stream(
            *self._owner(project_id, target),
            *("approvals", request["approval_id"]),
            json=body,
            on_json=answer.append,
        )
        recorder = TurnRecorder(f"{decision}: {request['summary']}", target, project_id)
        abort = (*self._owner(project_id, target), "abort")
        turn = read_turn(copilot, copilot.client, events, recorder, on_event, abort=abort)
        return answer[0] if answer else turn
