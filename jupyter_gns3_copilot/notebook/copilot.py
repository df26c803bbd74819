"""`Copilot`: the copilot from Python code (and what the `%copilot` magics use).

::

    from jupyter_gns3_copilot import Copilot

    copilot = Copilot()                    # finds this kernel's Jupyter server
    copilot.use("OSPF lab")                # by name or id; opened if closed
    turn = copilot.ask("Why can't PC1 ping PC3?")
    turn.text, turn.tool_results["PC1"].output
    for event in copilot.stream("And PC2?"):
        print(event.type)
    copilot.run("PC1", "show ip").tool_results["PC1"]
    copilot.run_tool("create_snapshot", {"name": "before OSPF"})
    copilot.check_lab("addressing").assert_passed()   # the lab's objectives, on the devices

A lab assigned on a JupyterHub class is found by its template's name: `use("OSPF lab")`
is your copy, "OSPF lab - <you>". While nbgrader autogrades a notebook in hub mode
(`notebook/grading.py`), `Copilot(project=...).check_lab(...)` is the hub service's report of
the student being graded, and nothing else of the copilot is there.

One conversation (session) per project: `ask` and `stream` continue it until
`new_session()` (or `new=True`), and `use(project)` returns to that project's
conversation. Every call blocks until its answer is complete; interrupting the kernel
during a turn aborts the turn on the server, then raises `KeyboardInterrupt` as usual,
except while the turn waits for an approval: it then stays paused on the server, and
`approve()` / `reject()` decide it and return the rest of the turn.

In a kernel started for a notebook (`notebook`: its path, found by
`discovery.notebook_path`), the server keeps which project the notebook uses and its
conversation per project (`copilot/notebook-projects`): after a kernel restart, the first
call that needs a project takes the notebook's last one back (and its conversation)
instead of raising `NoProject`, and `use(project)` continues the notebook's conversation
in that project.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict

from ..chat.options import TurnOptions
from ..events import ApprovalRequiredEvent, ChatEvent
from ..turns import TurnFollower
from .api_client import CopilotClient
from .discovery import ServerInfo, discover, explicit_server, notebook_path
from .errors import ApiError, CopilotError, NoProject, ProjectNotFound, UsageError
from .grading import Autograding
from .turn import Turn, TurnRecorder

if TYPE_CHECKING:
    from ..objectives.results import ObjectiveResult
    from .lab_report import LabReport

MODE_ALIASES = {
    "teaching": "teaching_assistant",
    "teach": "teaching_assistant",
    "teaching_assistant": "teaching_assistant",
    "lab": "lab_automation_assistant",
    "automation": "lab_automation_assistant",
    "lab_automation": "lab_automation_assistant",
    "lab_automation_assistant": "lab_automation_assistant",
}
COMMAND_TOOLS = {
    "show": "run_show_commands",
    "config": "run_config_commands",
    "vpcs": "run_vpcs_commands",
}
"""`run(..., tool=...)` short names of the command tools."""

EventCallback = Callable[[ChatEvent], None] | TurnFollower
"""`on_event`: called with each event; or a `turns.TurnFollower` (the magics' chat widget
and text output), given each event with what the turn's one reduction made of it."""


class ProjectInfo(BaseModel):
    """A GNS3 project as `copilot/projects` lists it."""

    model_config = ConfigDict(extra="allow")

    project_id: str
    name: str
    status: str | None = None
    filename: str | None = None


class SessionInfo(BaseModel):
    """A chat session (as the server's `ChatSession`: id, title, counts, pinned, times...)."""

    model_config = ConfigDict(extra="allow")

    thread_id: str
    title: str | None = None
    message_count: int = 0
    llm_calls_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    pinned: bool = False
    updated_at: str | None = None
    created_at: str | None = None

    @property
    def session_id(self) -> str:
        return self.thread_id


class _GradingOnly:
    """The server client while nbgrader autogrades: there is none (`notebook/grading.py`)."""

    def close(self) -> None:
        """Nothing to close."""

    def __getattr__(self, name: str) -> Any:
        raise UsageError(
            "While nbgrader autogrades in hub mode, the copilot only grades the student's "
            "lab: Copilot(project=...).check_lab(...)."
        )


def _check(client: CopilotClient) -> None:
    # The user's model settings: a copilot route that needs neither GNS3 nor a model.
    client.get("llm-config")


def copilot_mode(mode: str | None) -> str | None:
    """The copilot mode named by `mode` ("teaching", "lab", or the full names)."""
    if mode is None:
        return None
    try:
        return MODE_ALIASES[mode.strip().lower().replace("-", "_")]
    except KeyError:
        raise UsageError(
            f"Unknown copilot mode {mode!r}: use teaching (teaching_assistant) or "
            "lab (lab_automation_assistant)."
        ) from None


def turn_options(
    options: TurnOptions | None = None,
    *,
    mode: str | None = None,
    max_iterations: int | None = None,
    max_tool_calls: int | None = None,
    max_execution_time_seconds: int | None = None,
    temperature: float | None = None,
) -> TurnOptions:
    """One turn's `TurnOptions`: `options`, else built from `mode` and the limits (both at
    once is a `UsageError`), its mode named in full (teaching, lab or the full names). The
    values are checked by the server (its 400 names the field)."""
    limits = (max_iterations, max_tool_calls, max_execution_time_seconds, temperature)
    if options is not None:
        if mode is not None or any(value is not None for value in limits):
            raise UsageError(
                "Give the turn's options either as `options` or as keyword arguments "
                "(mode, the limits), not both."
            )
        return dataclasses.replace(options, mode=copilot_mode(options.mode))
    return TurnOptions(
        mode=copilot_mode(mode),
        max_iterations=max_iterations,
        max_tool_calls=max_tool_calls,
        max_execution_time_seconds=max_execution_time_seconds,
        temperature=temperature,
    )


class Copilot:
    """The copilot of one Jupyter server, for one notebook (module docstring).

    `url`/`token`: the Jupyter server (default: found from this kernel, see
    `notebook.discovery`). `project`: a project to `use` at once. `notebook`: the path of
    the notebook whose project and conversations the server keeps (default: this
    kernel's notebook, if it was started for one; "" for none). `on_recall(project)` is
    called when the notebook's project is taken back after a restart.
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        project: str | None = None,
        server: ServerInfo | None = None,
        notebook: str | None = None,
        on_recall: Callable[[ProjectInfo], None] | None = None,
    ) -> None:
        self.autograding = Autograding.detect() if server is None and not url else None
        """The student nbgrader autogrades here (hub mode), else None."""
        self._client: CopilotClient
        if self.autograding is not None:
            # Stands in for the client: every use but close() is refused with a UsageError.
            self._client = _GradingOnly()  # type: ignore[assignment]
        else:
            if server is None:
                server = explicit_server(url, token) if url else discover()
            self._client = CopilotClient(server)
        self.project: ProjectInfo | None = None
        self._sessions: dict[str, str] = {}
        self._fresh_sessions: set[str] = set()
        self.notebook = notebook_path() if notebook is None else (notebook or None)
        """The notebook whose project the server keeps (None: none)."""
        self._on_recall = on_recall
        self._kept: dict[str, Any] | None = None
        """What the server kept for the notebook, read once (None: not read yet)."""
        self.last_turn: Turn | None = None
        self.waiting_approval: ApprovalRequiredEvent | None = None
        """The approval the last interrupted turn left waiting on the server (None: none)."""
        if project is not None:
            self.use(project)

    # -- connection ----------------------------------------------------------------------

    @property
    def server(self) -> ServerInfo:
        return self._client.server

    @property
    def client(self) -> CopilotClient:
        """The HTTP client (for routes this class has no method for)."""
        return self._client

    def connect(self, url: str | None = None, token: str | None = None) -> ServerInfo:
        """Talk to the server at `url` (None: find it again) and check that the copilot
        extension answers there. The project and conversations in use are kept."""
        server = explicit_server(url, token) if url else discover()
        client = CopilotClient(server)
        try:
            _check(client)
        except CopilotError:
            client.close()
            raise
        self._client.close()
        self._client = client
        return server

    def check(self) -> ServerInfo:
        """Check that the copilot extension answers on this server (and accepts the token);
        raise the `CopilotError` saying what to do otherwise."""
        _check(self._client)
        return self.server

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Copilot:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __repr__(self) -> str:
        project = f"project {self.project.name!r}" if self.project else "no project"
        return f"<Copilot {self.server.url} · {project} · session {self.session_id}>"

    # -- server-wide ---------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """The server's health report (versions, GNS3 reachable, model configured)."""
        return self._client.get("status")

    def config(self, **updates: Any) -> dict[str, Any]:
        """Your model settings (never the key: `api_key_set` says whether one is set).

        With keyword arguments, change them first (`model`, `base_url`, `temperature`,
        `copilot_mode`, `api_key`, ...; None resets a setting to the administrator's).
        """
        if updates:
            if "copilot_mode" in updates and updates["copilot_mode"] is not None:
                updates["copilot_mode"] = copilot_mode(updates["copilot_mode"])
            return self._client.put("llm-config", json=updates)
        return self._client.get("llm-config")

    def reload_skills(self) -> dict[str, Any]:
        """Re-read the device skills and the forbidden-command list on the server."""
        return self._client.post("reload", "skills")

    def projects(self) -> list[ProjectInfo]:
        """The GNS3 projects, with their status (opened or closed)."""
        return [ProjectInfo.model_validate(p) for p in self._client.get("projects")]

    # -- the project in use ----------------------------------------------------------------

    def use(self, project: str, *, session: str | None = None, new: bool = False) -> ProjectInfo:
        """Work on `project` (a name or id; opened if closed). Its conversation continues
        (the notebook's, after a kernel restart) unless `new`, or `session` names one to
        continue."""
        if self.autograding is not None:  # the service finds the student's copy
            self.project = ProjectInfo(project_id=project, name=project)
            return self.project
        found = self.find_project(project)
        # Opening is harmless when the project is open already, and the server then
        # prepares the project's chat service now rather than at the first question.
        found = ProjectInfo.model_validate(self._client.post("projects", found.project_id, "open"))
        self.project = found
        kept = self._kept_sessions().get(found.project_id)
        if session is not None:
            self._sessions[found.project_id] = session
        elif new:
            self.new_session()
        elif kept and found.project_id not in self._sessions:
            self._sessions[found.project_id] = kept
        self._keep()
        return found

    def current_project(self) -> ProjectInfo:
        """The project in use: after a kernel restart, the notebook's last one (with its
        conversation), taken back from the server; `NoProject` if there is none."""
        if self.project is None and self._recall() is None:
            raise NoProject(
                "No project in use: choose one with `%copilot use <name or id>` "
                "(or `Copilot.use(...)`); `%copilot projects` lists them."
            )
        assert self.project is not None
        return self.project

    # -- the notebook's project, kept by the server ------------------------------------------

    def _kept_record(self) -> dict[str, Any]:
        """What the server keeps for the notebook (read once; {} without a notebook, or
        from a server that does not keep it)."""
        if self._kept is None:
            self._kept = {}
            if self.notebook:
                with contextlib.suppress(CopilotError):
                    self._kept = self._client.get(
                        "notebook-projects", params={"path": self.notebook}
                    )
        return self._kept

    def _kept_sessions(self) -> dict[str, str]:
        sessions = self._kept_record().get("sessions")
        return dict(sessions) if isinstance(sessions, dict) else {}

    def _recall(self) -> ProjectInfo | None:
        """Take the notebook's last project back (None: nothing kept, or it is gone)."""
        project_id = self._kept_record().get("project_id")
        if not project_id:
            return None
        try:
            found = self.use(project_id)
        except CopilotError:
            return None
        if self._on_recall is not None:
            self._on_recall(found)
        return found

    def _keep(self) -> None:
        """Tell the server the notebook's project and conversation now (best effort: a
        failure here never stops the work)."""
        if not self.notebook or self.project is None:
            return
        project_id = self.project.project_id
        body: dict[str, Any] = {"path": self.notebook, "project_id": project_id}
        session = self._sessions.get(project_id)
        if session is not None:
            body["session_id"] = session
        unchanged = self._kept_record().get("project_id") == project_id
        if unchanged and self._kept_sessions().get(project_id) == session:
            return
        with contextlib.suppress(CopilotError):
            self._kept = self._client.put("notebook-projects", json=body)

    def find_project(self, project: str) -> ProjectInfo:
        """The project named `project` or with that id (or a unique id prefix)."""
        wanted = project.strip().strip("\"'")
        if not wanted:
            raise UsageError("Name the project: `%copilot use <name or id>`.")
        projects = self.projects()
        for matches in (
            lambda p: p.project_id == wanted,
            lambda p: p.name == wanted,
            lambda p: p.name.lower() == wanted.lower(),
        ):
            found = [p for p in projects if matches(p)]
            if len(found) == 1:
                return found[0]
        by_prefix = [p for p in projects if len(wanted) >= 4 and p.project_id.startswith(wanted)]
        if len(by_prefix) == 1:
            return by_prefix[0]
        copies = [p for p in projects if p.name.startswith(f"{wanted} - ")]
        if len(copies) == 1:  # a template's name: your copy of it (a hub class's lab)
            return copies[0]
        names = ", ".join(repr(p.name) for p in projects) or "none"
        raise ProjectNotFound(f"No GNS3 project named {wanted!r}. Projects: {names}.")

    def _project_id(self) -> str:
        return self.current_project().project_id

    def topology(self, format: Literal["json", "text", "svg"] = "json") -> Any:
        """The project's topology: a dict (json), the text the model reads, or SVG."""
        return self._client.get(
            "projects", self._project_id(), "topology", params={"format": format}
        )

    # -- conversations -------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The conversation that `ask` continues (None: the next `ask` starts one)."""
        if self.project is None:
            return None
        return self._sessions.get(self.project.project_id)

    def new_session(self) -> None:
        """Start a new conversation with the next message."""
        if self.project is not None:
            self._sessions.pop(self.project.project_id, None)

    def set_session(self, session_id: str) -> None:
        """Continue the conversation `session_id` with the next message."""
        self._sessions[self._project_id()] = session_id
        self._keep()

    def next_session(
        self, session: str | None = None, *, new: bool = False, project_id: str | None = None
    ) -> str:
        """The session id of the project's next turn, made its current conversation:
        `session` if given; a new id if `new` or the project has none yet; else the
        current one."""
        project_id = project_id or self._project_id()
        before = self._sessions.get(project_id)
        if session is not None:
            self._sessions[project_id] = session
        elif new or project_id not in self._sessions:
            fresh = str(uuid.uuid4())
            self._sessions[project_id] = fresh
            self._fresh_sessions.add(fresh)
        in_use = self.project is not None and self.project.project_id == project_id
        if in_use and self._sessions[project_id] != before:
            self._keep()
        return self._sessions[project_id]

    def chat_request(
        self, message: str, *, session_id: str, options: TurnOptions | None = None
    ) -> dict[str, Any]:
        """The ChatRequest body for `message` (options left to their default left out)."""
        if not message.strip():
            raise UsageError("The message is empty: write what to ask the copilot.")
        body: dict[str, Any] = {"message": message, "session_id": session_id}
        body.update((options or TurnOptions()).request_fields())
        return body

    def stream(
        self,
        message: str,
        *,
        mode: str | None = None,
        max_iterations: int | None = None,
        max_tool_calls: int | None = None,
        max_execution_time_seconds: int | None = None,
        temperature: float | None = None,
        options: TurnOptions | None = None,
        session: str | None = None,
        new: bool = False,
        project_id: str | None = None,
        on_open: Callable[[], None] | None = None,
    ) -> Iterator[ChatEvent]:
        """Send `message` and yield the turn's events as they arrive (heartbeats
        included). Leaving the loop early disconnects (the server then aborts the turn).
        The turn's options as `ask`'s; `project_id`: another project than the one in use
        (its own conversation); `on_open`: called when the server has accepted the
        message."""
        options = turn_options(
            options,
            mode=mode,
            max_iterations=max_iterations,
            max_tool_calls=max_tool_calls,
            max_execution_time_seconds=max_execution_time_seconds,
            temperature=temperature,
        )
        project_id = project_id or self._project_id()
        session_id = self.next_session(session, new=new, project_id=project_id)
        body = self.chat_request(message, session_id=session_id, options=options)
        self._fresh_sessions.discard(session_id)
        return self._client.stream(
            "projects", project_id, "chat", "stream", json=body, on_open=on_open
        )

    def ask(
        self,
        message: str,
        *,
        mode: str | None = None,
        max_iterations: int | None = None,
        max_tool_calls: int | None = None,
        max_execution_time_seconds: int | None = None,
        temperature: float | None = None,
        options: TurnOptions | None = None,
        session: str | None = None,
        new: bool = False,
        project_id: str | None = None,
        on_event: EventCallback | None = None,
        on_open: Callable[[], None] | None = None,
    ) -> Turn:
        """Send `message`, wait for the whole answer, return it as a `Turn`.

        `mode`: teaching / lab (this turn only); `max_iterations` (1-100),
        `max_tool_calls` (1-50), `max_execution_time_seconds` (1-3600), `temperature`
        (0-2): this turn's limits; or all of them as one `options` (`TurnOptions`, e.g.
        from the `%copilot` flags; not both); `session`:
        continue that conversation; `new`: start a new one; `project_id`: another project
        than the one in use. `on_open` is called when the server has accepted the message
        (a refusal raises a `CopilotError` before); `on_event` sees every event as it
        arrives (heartbeats included).
        """
        options = turn_options(
            options,
            mode=mode,
            max_iterations=max_iterations,
            max_tool_calls=max_tool_calls,
            max_execution_time_seconds=max_execution_time_seconds,
            temperature=temperature,
        )
        project_id = project_id or self._project_id()
        session_id = self.next_session(session, new=new, project_id=project_id)
        events = self.stream(
            message, options=options, session=session_id, project_id=project_id, on_open=on_open
        )
        recorder = TurnRecorder(message, session_id, project_id)
        return self._consume(events, recorder, on_event, abort=(project_id, session_id))

    def run(
        self,
        devices: str | list[str],
        commands: str | list[str],
        *,
        tool: str = "show",
        mode: str | None = None,
        on_event: EventCallback | None = None,
        on_open: Callable[[], None] | None = None,
    ) -> Turn:
        """Run `commands` on `devices` now, without the model, and return the result.

        `tool`: "show" (run_show_commands, default), "config" (run_config_commands),
        "vpcs" (run_vpcs_commands) or a tool's full name; the mode and command policy
        apply as for the model's calls. `commands` may be one string with commands
        separated by ";" or new lines. `on_open` and `on_event` as for `ask`.
        """
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
        arguments: dict[str, Any] | None = None,
        *,
        mode: str | None = None,
        message: str | None = None,
        on_event: EventCallback | None = None,
        on_open: Callable[[], None] | None = None,
    ) -> Turn:
        """Run the tool `tool` (its full name, as `GET copilot/tools` lists them) with
        `arguments` now, without the model, through the same mode, command policy and
        approvals as the model's calls; return the result as a `Turn` (`message`: what
        the turn says was asked; default the tool's name). `on_open` and `on_event` as for
        `ask`.

        E.g. `copilot.run_tool("create_snapshot", {"name": "before OSPF"})`.
        """
        project_id = self._project_id()
        run_id = str(uuid.uuid4())
        body: dict[str, Any] = {"arguments": arguments or {}, "session_id": run_id}
        if mode is not None:
            body["copilot_mode"] = copilot_mode(mode)
        events = self._client.stream(
            "projects", project_id, "tools", tool, json=body, on_open=on_open
        )
        recorder = TurnRecorder(message or tool.replace("_", " "), run_id, project_id)
        return self._consume(
            events, recorder, on_event, abort=(project_id, run_id), detachable=False
        )

    def _consume(
        self,
        events: Iterator[ChatEvent],
        recorder: TurnRecorder,
        on_event: EventCallback | None,
        *,
        abort: tuple[str, str],
        detachable: bool = True,
    ) -> Turn:
        """Read `events` into `recorder`; on a kernel interrupt, abort the turn on the
        server and re-raise, except a `detachable` turn (a chat turn) waiting for an
        approval: it stays waiting (a direct run lives only as long as its request)."""
        try:
            for event in events:
                ops = recorder.add(event)
                if isinstance(on_event, TurnFollower):
                    on_event.follow(event, ops, recorder.builder)
                elif on_event is not None:
                    on_event(event)
        except KeyboardInterrupt:
            self.waiting_approval = recorder.waiting_approval if detachable else None
            if self.waiting_approval is None:
                self._abort_quietly(*abort)
            self.last_turn = recorder.finish(aborted=True)
            raise
        self.waiting_approval = None
        self.last_turn = recorder.finish()
        return self.last_turn

    # -- approvals ---------------------------------------------------------------------------

    def approvals(self, session: str | None = None) -> list[dict[str, Any]]:
        """The conversation's changes waiting for a decision (`approval_id`, `summary`,
        `tool_name`, `tool_input`, `expires_at`, ...)."""
        target = self._target(session)
        return self._client.get(
            "projects", self._project_id(), "chat", "sessions", target, "approvals"
        )

    def approve(
        self,
        comment: str | None = None,
        *,
        session: str | None = None,
        on_event: EventCallback | None = None,
    ) -> Turn | dict[str, Any]:
        """Approve the change the conversation waits for. When a stream (the widget's,
        another cell's) waits for it, that stream goes on and the server's JSON answer is
        returned; otherwise (the waiting cell was interrupted, the server restarted) the
        rest of the turn is read here and returned as a `Turn`. `on_event` as for `ask`."""
        return self._decide("approve", comment, session, on_event)

    def reject(
        self,
        comment: str | None = None,
        *,
        session: str | None = None,
        on_event: EventCallback | None = None,
    ) -> Turn | dict[str, Any]:
        """Reject the change the conversation waits for (the model reads `comment`);
        returns as `approve` does."""
        return self._decide("reject", comment, session, on_event)

    def _decide(
        self,
        decision: str,
        comment: str | None,
        session: str | None,
        on_event: EventCallback | None,
    ) -> Turn | dict[str, Any]:
        target = self._target(session)
        pending = self.approvals(target)
        if not pending:
            raise UsageError(f"Nothing in conversation {target} waits for an approval.")
        request = pending[0]
        project_id = self._project_id()
        answer: list[Any] = []
        body = {"decision": decision, **({"comment": comment} if comment else {})}
        events = self._client.stream(
            *("projects", project_id, "chat", "sessions", target),
            *("approvals", request["approval_id"]),
            json=body,
            on_json=answer.append,
        )
        recorder = TurnRecorder(f"{decision}: {request['summary']}", target, project_id)
        turn = self._consume(events, recorder, on_event, abort=(project_id, target))
        return answer[0] if answer else turn

    def _abort_quietly(self, project_id: str, session_id: str) -> None:
        with contextlib.suppress(CopilotError):
            self._client.post("projects", project_id, "chat", "sessions", session_id, "abort")

    # -- lab objectives ------------------------------------------------------------------

    def lab(self) -> dict[str, Any]:
        """The project's lab as you see it: `title`, `max_score`, `current_stage`, `stages`
        (each `id`, `title`, `hints`, `catch_up`, `objectives` with `id`, `text`, `points`
        and your latest `status`)."""
        return self._client.get("projects", self._project_id(), "lab")

    def lab_stage(self, stage: str | None) -> dict[str, Any]:
        """Work on `stage` (the copilot's hints follow it; None: the first stage your checks
        have not passed); the lab as you see it."""
        return self._client.put(
            "projects", self._project_id(), "lab", "stage", json={"stage": stage}
        )

    def attach_lab(
        self, path: str | os.PathLike[str], *, mode: str | None = None
    ) -> dict[str, Any]:
        """Make the lab file at `path` (a `lab.yaml`) the project's lab, checked against
        the project first; the lab as you see it. It needs lab automation mode: `mode`
        ("lab") for this request, else your `copilot_mode` setting."""
        file = Path(path).expanduser()
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"Cannot read the lab file {file}: {exc}") from None
        body = {"text": text, "source": file.name}
        chosen = copilot_mode(mode)
        if chosen is not None:
            body["copilot_mode"] = chosen
        return self._client.put("projects", self._project_id(), "lab", json=body)

    def check_lab(
        self,
        stage: str | None = None,
        objectives: list[str] | None = None,
        *,
        lab: str | None = None,
        source: str | None = None,
        on_open: Callable[[], None] | None = None,
        on_result: Callable[[ObjectiveResult], None] | None = None,
    ) -> LabReport:
        """Check the lab's objectives on the devices (all, a `stage`'s, or those named)
        and return the `LabReport` (`.score`, `.max_score`, `.passed`, `.results` in the
        lab's order, `.assert_passed()`). `lab`: a lab file's text to check against
        instead of the project's (`source` names it in its problems). `on_open` is called
        once the checks begin (a refusal, e.g. an unknown stage, raises `ApiError` before
        it); `on_result` sees each objective as it is decided. (`check()` checks the
        connection to the server.)"""
        from ..events import CheckResultEvent, CheckSummaryEvent, ErrorEvent
        from .lab_report import LabReport, collect

        if self.autograding is not None:
            if lab is not None:
                raise UsageError("While nbgrader autogrades, labs are checked as assigned.")
            report = self.autograding.report(self.current_project().name, stage, objectives)
            if on_open is not None:
                on_open()
            for result in report.results:
                if on_result is not None:
                    on_result(result)
            return LabReport(report)
        project_id = self._project_id()
        run_id = str(uuid.uuid4())
        body: dict[str, Any] = {
            "session_id": run_id,
            "stage": stage,
            "objectives": objectives,
            "lab": lab,
            "source": source,
        }
        events = self._client.stream(
            "projects",
            project_id,
            "lab",
            "checks",
            json={k: v for k, v in body.items() if v is not None},
            on_open=on_open,
        )
        results: list[ObjectiveResult] = []
        summary = None
        try:
            for event in events:
                if isinstance(event, CheckResultEvent):
                    results.append(event.result)
                    if on_result is not None:
                        on_result(event.result)
                elif isinstance(event, CheckSummaryEvent):
                    summary = event.summary
                elif isinstance(event, ErrorEvent):
                    raise CopilotError(event.error)
        except KeyboardInterrupt:
            self._abort_quietly(project_id, run_id)
            raise
        if summary is None:
            raise CopilotError("The check ended before its score was sent; run it again.")
        return collect(results, summary)

    def catch_up(self, stage: str, *, confirm: bool = False) -> dict[str, Any]:
        """Restore the snapshot `stage` starts from (every change since is lost) and start
        the nodes. Without `confirm`, raises `ApiError` saying what would be restored."""
        return self._client.post(
            "projects",
            self._project_id(),
            "lab",
            "stages",
            stage,
            "catch-up",
            json={"confirm": confirm},
        )

    # -- sessions ------------------------------------------------------------------------

    def sessions(self, limit: int = 100) -> list[SessionInfo]:
        """Your conversations in this project: pinned first, then most recent."""
        listed = self._client.get(
            "projects", self._project_id(), "chat", "sessions", params={"limit": limit}
        )
        return [SessionInfo.model_validate(entry) for entry in listed]

    def _target(self, session: str | None) -> str:
        target = session or self.session_id
        if not target:
            raise NoProject(
                "No conversation yet in this project: ask something first, or name one "
                "with --session ID (`%copilot sessions` lists them)."
            )
        return target

    def history(self, session: str | None = None, limit: int = 100) -> dict[str, Any]:
        """The conversation's last `limit` messages (the history route's answer)."""
        return self._client.get(
            "projects",
            self._project_id(),
            "chat",
            "sessions",
            self._target(session),
            "history",
            params={"limit": limit},
        )

    def export(self, format: str = "ipynb", session: str | None = None) -> tuple[str, bytes]:
        """The conversation as a file: `(the server's file name, content)`; `format`
        "ipynb" (notebook cells to run again) or "md" (Markdown)."""
        response = self._client.request(
            "GET",
            "projects",
            self._project_id(),
            "chat",
            "sessions",
            self._target(session),
            "export",
            params={"format": format},
        )
        return attachment_filename(response.headers.get("content-disposition", "")), (
            response.content
        )

    def rename(self, title: str, session: str | None = None) -> SessionInfo:
        """Give the conversation a title (1-255 characters)."""
        path = ("projects", self._project_id(), "chat", "sessions", self._target(session))
        return SessionInfo.model_validate(self._client.patch(*path, json={"title": title}))

    def pin(self, session: str | None = None, *, pinned: bool = True) -> SessionInfo:
        """Pin the conversation (listed first), or unpin it with `pinned=False`."""
        path = ("projects", self._project_id(), "chat", "sessions", self._target(session), "pin")
        answer = self._client.put(*path) if pinned else self._client.delete(*path)
        return SessionInfo.model_validate(answer)

    def unpin(self, session: str | None = None) -> SessionInfo:
        return self.pin(session, pinned=False)

    def delete(self, session: str | None = None) -> str:
        """Delete the conversation and its memory; the next message starts a new one."""
        target = self._target(session)
        self._client.delete("projects", self._project_id(), "chat", "sessions", target)
        if self.session_id == target:
            self.new_session()
        return target

    def abort(self, session: str | None = None) -> dict[str, Any]:
        """Stop the conversation's running turn (`{"status": "ok" | "not_running"}`)."""
        target = self._target(session)
        try:
            return self._client.post(
                "projects", self._project_id(), "chat", "sessions", target, "abort"
            )
        except ApiError as exc:
            if exc.status == 404 and target in self._fresh_sessions:
                return {"status": "not_running", "session_id": target}
            raise


def attachment_filename(header: str) -> str:
    """The file name of a `Content-Disposition` header (its UTF-8 form first); "" if none."""
    encoded = re.search(r"filename\*=UTF-8''([^;\s]+)", header, re.IGNORECASE)
    if encoded:
        return unquote(encoded.group(1))
    plain = re.search(r'filename="([^"]*)"', header)
    return plain.group(1) if plain else ""
