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

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal, cast

from ..chat.options import TurnOptions
from ..events import ApprovalRequiredEvent, ChatEvent
from .api_client import CopilotClient, JsonObject
from .conversations import Conversations
from .discovery import ServerInfo, discover, explicit_server, notebook_path
from .errors import CopilotError, NoProject, UsageError
from .grading import Autograding, GradingOnlyClient
from .kept_project import KeptProject
from .models import ProjectInfo, SessionInfo, match_project
from .options import copilot_mode, turn_options
from .session_routes import SessionRoutes
from .turn import Turn
from .turn_reading import EventCallback
from .turn_runs import TurnRuns

if TYPE_CHECKING:
    from ..objectives.results import ObjectiveResult
    from .lab_report import LabReport


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
            self._client = GradingOnlyClient()  # type: ignore[assignment]
        else:
            if server is None:
                server = explicit_server(url, token) if url else discover()
            self._client = CopilotClient(server)
        self.project: ProjectInfo | None = None
        self._conversations = Conversations()
        self.notebook = notebook_path() if notebook is None else (notebook or None)
        """The notebook whose project the server keeps (None: none)."""
        self._on_recall = on_recall
        self._kept = KeptProject(self)
        self._runs = TurnRuns(self, self._conversations)
        self._sessions = SessionRoutes(self, self._conversations)
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
        client = CopilotClient.checked(explicit_server(url, token) if url else discover())
        self._client.close()
        self._client = client
        return client.server

    def check(self) -> ServerInfo:
        """Check that the copilot extension answers on this server (and accepts the token);
        raise the `CopilotError` saying what to do otherwise."""
        self._client.check()
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
        return cast(JsonObject, self._client.get("status"))

    def config(self, **updates: Any) -> dict[str, Any]:
        """Your model settings (never the key: `api_key_set` says whether one is set).

        With keyword arguments, change them first (`model`, `base_url`, `temperature`,
        `copilot_mode`, `api_key`, ...; None resets a setting to the administrator's).
        """
        if updates:
            if "copilot_mode" in updates and updates["copilot_mode"] is not None:
                updates["copilot_mode"] = copilot_mode(updates["copilot_mode"])
            return cast(JsonObject, self._client.put("llm-config", json=updates))
        return cast(JsonObject, self._client.get("llm-config"))

    def reload_skills(self) -> dict[str, Any]:
        """Re-read the device skills and the forbidden-command list on the server."""
        return cast(JsonObject, self._client.post("reload", "skills"))

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
        kept = self._kept.sessions().get(found.project_id)
        chosen = self._conversations.choose(found.project_id, session, new=new, kept=kept)
        self._kept.keep(found.project_id, chosen)
        return found

    def current_project(self) -> ProjectInfo:
        """The project in use: after a kernel restart, the notebook's last one (with its
        conversation), taken back from the server; `NoProject` if there is none."""
        kept = self._kept.project_id() if self.project is None else None
        if kept:  # the notebook's last project, unless it is gone
            try:
                found = self.use(kept)
            except CopilotError:
                pass
            else:
                if self._on_recall is not None:
                    self._on_recall(found)
        if self.project is None:
            raise NoProject(
                "No project in use: choose one with `%copilot use <name or id>` "
                "(or `Copilot.use(...)`); `%copilot projects` lists them."
            )
        return self.project

    def find_project(self, project: str) -> ProjectInfo:
        """The project named `project` or with that id (or a unique id prefix)."""
        wanted = project.strip().strip("\"'")
        if not wanted:
            raise UsageError("Name the project: `%copilot use <name or id>`.")
        return match_project(self.projects(), wanted)

    def topology(
        self, format: Literal["json", "text", "svg"] = "json", *, addresses: bool = False
    ) -> Any:
        """The project's topology: a dict (json), the text the model reads (with
        `addresses`, followed by the running devices' addresses, read on their consoles),
        or SVG."""
        params = {"format": format, **({"addresses": "true"} if addresses else {})}
        return self._client.get(
            "projects", self.current_project().project_id, "topology", params=params
        )

    # -- conversations -------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The conversation that `ask` continues (None: the next `ask` starts one)."""
        if self.project is None:
            return None
        return self._conversations.get(self.project.project_id)

    def new_session(self) -> None:
        """Start a new conversation with the next message."""
        if self.project is not None:
            self._conversations.forget(self.project.project_id)

    def set_session(self, session_id: str) -> None:
        """Continue the conversation `session_id` with the next message."""
        project_id = self.current_project().project_id
        self._conversations.set(project_id, session_id)
        self._kept.keep(project_id, session_id)

    def next_session(
        self, session: str | None = None, *, new: bool = False, project_id: str | None = None
    ) -> str:
        """The session id of the project's next turn, made its current conversation:
        `session` if given; a new id if `new` or the project has none yet; else the
        current one."""
        project_id = project_id or self.current_project().project_id
        before = self._conversations.get(project_id)
        chosen = self._conversations.next(project_id, session, new=new)
        in_use = self.project is not None and self.project.project_id == project_id
        if in_use and chosen != before:
            self._kept.keep(project_id, chosen)
        return chosen

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
        return self._runs.stream(message, options, session, new, project_id, on_open)

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
        return self._runs.ask(message, options, session, new, project_id, on_event, on_open)

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
        return self._runs.run(
            devices, commands, tool=tool, mode=mode, on_event=on_event, on_open=on_open
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
        return self._runs.run_tool(
            tool, arguments, mode=mode, message=message, on_event=on_event, on_open=on_open
        )

    # -- approvals ---------------------------------------------------------------------------

    def approvals(self, session: str | None = None) -> list[dict[str, Any]]:
        """The conversation's changes waiting for a decision (`approval_id`, `summary`,
        `tool_name`, `tool_input`, `expires_at`, ...); during a direct run (`run`,
        `run_tool`: its id, as its events carry it), the run's."""
        return self._runs.approvals(session)

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
        return self._runs.decide("approve", comment, session, on_event)

    def reject(
        self,
        comment: str | None = None,
        *,
        session: str | None = None,
        on_event: EventCallback | None = None,
    ) -> Turn | dict[str, Any]:
        """Reject the change the conversation waits for (the model reads `comment`);
        returns as `approve` does."""
        return self._runs.decide("reject", comment, session, on_event)

    # -- lab objectives ------------------------------------------------------------------

    def lab(self) -> dict[str, Any]:
        """The project's lab as you see it: `title`, `max_score`, `current_stage`, `stages`
        (each `id`, `title`, `hints`, `catch_up`, `objectives` with `id`, `text`, `points`
        and your latest `status`)."""
        path = ("projects", self.current_project().project_id, "lab")
        return cast(JsonObject, self._client.get(*path))

    def lab_stage(self, stage: str | None) -> dict[str, Any]:
        """Work on `stage` (the copilot's hints follow it; None: the first stage your checks
        have not passed); the lab as you see it."""
        path = ("projects", self.current_project().project_id, "lab", "stage")
        return cast(JsonObject, self._client.put(*path, json={"stage": stage}))

    def attach_lab(
        self, path: str | os.PathLike[str], *, mode: str | None = None
    ) -> dict[str, Any]:
        """Make the lab file at `path` (a `lab.yaml`) the project's lab, checked against
        the project first; the lab as you see it. It needs automation mode: `mode`
        ("lab") for this request, else your `copilot_mode` setting."""
        from .lab_checks import lab_file_body

        body = lab_file_body(path, mode)
        route = ("projects", self.current_project().project_id, "lab")
        return cast(JsonObject, self._client.put(*route, json=body))

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
        from .lab_checks import check_lab

        request = {"stage": stage, "objectives": objectives, "lab": lab, "source": source}
        return check_lab(self, request, on_open=on_open, on_result=on_result)

    def catch_up(self, stage: str, *, confirm: bool = False) -> dict[str, Any]:
        """Restore the snapshot `stage` starts from (every change since is lost) and start
        the nodes. Without `confirm`, raises `ApiError` saying what would be restored."""
        path = ("projects", self.current_project().project_id, "lab", "stages", stage)
        return cast(JsonObject, self._client.post(*path, "catch-up", json={"confirm": confirm}))

    def start_exercise(self, fault: str | None = None) -> dict[str, Any]:
        """Start a troubleshooting exercise: your working lab's configurations are
        saved, then the fault `fault` (the instructor's id; None: one drawn for you) is put in.
        Returns `started_at`, `active` and the `symptom` (the objectives now failing, each
        `id` and `text`); `%copilot check` grades it. Raises `ApiError` (409: finish the
        lab first, or an exercise is going already)."""
        body: dict[str, Any] = {"fault": fault} if fault is not None else {"random": True}
        path = ("projects", self.current_project().project_id, "lab", "exercises")
        return cast(JsonObject, self._client.post(*path, json=body))

    def exercise(self) -> dict[str, Any]:
        """Your latest exercise in the project (as `start_exercise` returns it, with its
        latest `grade`: `fixed`, `still_failing`, `regressions`, `seconds`,
        `copilot_calls`, `done`). Raises `ApiError` (404) when you never started one."""
        path = ("projects", self.current_project().project_id, "lab", "exercises", "current")
        return cast(JsonObject, self._client.get(*path))

    def give_up(self) -> dict[str, Any]:
        """Give up your exercise: returns what the fault was (`description`, `device`,
        `interface`, `cause`) and takes the fault out (`not_undone`: what stays)."""
        path = ("projects", self.current_project().project_id, "lab", "exercises")
        return cast(JsonObject, self._client.post(*path, "current", "give-up", json={}))

    # -- sessions ------------------------------------------------------------------------

    def sessions(self, limit: int = 100) -> list[SessionInfo]:
        """Your conversations in this project: pinned first, then most recent."""
        return self._sessions.sessions(limit)

    def history(self, session: str | None = None, limit: int = 100) -> dict[str, Any]:
        """The conversation's last `limit` messages (the history route's answer)."""
        return self._sessions.history(session, limit)

    def export(self, format: str = "ipynb", session: str | None = None) -> tuple[str, bytes]:
        """The conversation as a file: `(the server's file name, content)`; `format`
        "ipynb" (notebook cells to run again) or "md" (Markdown)."""
        return self._sessions.export(format, session)

    def rename(self, title: str, session: str | None = None) -> SessionInfo:
        """Give the conversation a title (1-255 characters)."""
        return self._sessions.rename(title, session)

    def pin(self, session: str | None = None, *, pinned: bool = True) -> SessionInfo:
        """Pin the conversation (listed first), or unpin it with `pinned=False`."""
        return self._sessions.pin(session, pinned=pinned)

    def unpin(self, session: str | None = None) -> SessionInfo:
        return self.pin(session, pinned=False)

    def delete(self, session: str | None = None) -> str:
        """Delete the conversation and its memory; the next message starts a new one."""
        return self._sessions.delete(session)

    def abort(self, session: str | None = None) -> dict[str, Any]:
        """Stop the conversation's running turn (`{"status": "ok" | "not_running"}`)."""
        return self._sessions.abort(session)
