"""`%copilot` subcommands of the project and its devices: use, projects, show topology,
and the direct runs without the model (run, capture, snapshot)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from IPython.display import display

from ..errors import ProjectNotFound, UsageError
from ..reports import Records
from ..turn import Turn
from ..turn_reading import EventCallback
from .context import NOT_A_SUBCOMMAND, MagicContext, Subcommand
from .parsing import link_ends
from .turns import TurnOutput

CAPTURE_TOOLS = {"start": "start_capture", "stop": "stop_capture", "show": "analyze_capture"}
SNAPSHOT_TOOLS = {
    "list": "list_snapshots",
    "create": "create_snapshot",
    "restore": "restore_snapshot",
}


class ProjectCommands:
    """The subcommands that choose, list and show the GNS3 project."""

    def __init__(self, context: MagicContext) -> None:
        self.context = context

    def handlers(self) -> dict[str, Subcommand]:
        """Each subcommand's word and handler."""
        return {"use": self.use, "projects": self.projects, "show": self.show}

    def use(self, tail: str, argv: list[str]) -> None:
        options, words = self.context.options(argv, tail)
        if not words:
            raise UsageError("Name the project: `%copilot use <name or id>`.")
        api = self.context.api
        try:
            project = api.use(" ".join(words), session=options.session, new=options.new)
        except ProjectNotFound as exc:
            raise ProjectNotFound(
                f"{exc} (To ask the copilot something that starts with 'use', write "
                "`%copilot ask use ...`.)"
            ) from None
        session = api.session_id
        conversation = f"continuing conversation {session}" if session else "new conversation"
        print(
            f"Using project {project.name!r} ({project.status}, id {project.project_id}); "
            f"{conversation}."
        )

    def projects(self, tail: str, argv: list[str]) -> Any:
        _, words = self.context.options(argv, tail)
        if words:
            return NOT_A_SUBCOMMAND
        api = self.context.api
        current = api.project.project_id if api.project else None
        return Records(
            api.projects(),
            [
                ("", lambda p: "*" if p.project_id == current else ""),
                ("name", lambda p: p.name),
                ("status", lambda p: p.status),
                ("project_id", lambda p: p.project_id),
            ],
            empty="No GNS3 projects.",
        )

    def show(self, tail: str, argv: list[str]) -> Any:
        options, words = self.context.options(argv, tail)
        if [w.lower() for w in words] not in (["topology"], ["topo"]):
            return NOT_A_SUBCOMMAND
        copilot = self.context.api
        svg = copilot.topology("svg")
        text = copilot.topology("text", addresses=True)
        if self.context.widgets and not options.quiet:
            # HTML first: JupyterLab puts it inline, where the drawing takes the theme's
            # colours; its image/svg+xml renderer uses an <img> (light fallback colours).
            display({"text/html": svg, "image/svg+xml": svg}, raw=True)
        print(text)
        return None


class DeviceCommands:
    """The direct runs on the project's devices, without the model (`TurnOutput.direct`)."""

    def __init__(self, context: MagicContext, turns: TurnOutput) -> None:
        self.context = context
        self.turns = turns

    def handlers(self) -> dict[str, Subcommand]:
        """Each subcommand's word and handler."""
        return {"run": self.run, "capture": self.capture, "snapshot": self.snapshot}

    def run(self, tail: str, argv: list[str]) -> Any:
        head, colon, commands = tail.partition(":")
        if not colon:
            return NOT_A_SUBCOMMAND
        options, words = self.context.options(argv, head)
        devices = [name for word in words for name in word.split(",") if name.strip()]
        if not devices or not commands.strip():
            raise UsageError("Usage: `%copilot run <device>[, <device>]: <command>[; <command>]`.")
        copilot = self.context.api
        tool = options.tool or "show"

        def run(on_open: Callable[[], None] | None, on_event: EventCallback) -> Turn:
            return copilot.run(
                devices, commands, tool=tool, mode=options.mode, on_open=on_open, on_event=on_event
            )

        return self.turns.direct(f"run {', '.join(devices)}: {commands.strip()}", options, run)

    def capture(self, tail: str, argv: list[str]) -> Any:
        """`%copilot capture start|stop|show LINK`: a capture on a link, without the model."""
        options, words = self.context.options(argv, tail)
        action = words[0].lower() if words else ""
        if action not in CAPTURE_TOOLS:
            return NOT_A_SUBCOMMAND
        link = link_ends(words[1:])
        if link is None:
            raise UsageError(
                f"Name the link by both ends: `%copilot capture {action} PC1 e0 - Switch1 e0`."
            )
        arguments: dict[str, Any] = {"link": link}
        if action == "show":
            if options.filter:
                arguments["display_filter"] = options.filter
            if options.limit:
                arguments["limit"] = options.limit
        text = f"{link['a']} {link['a_port']} - {link['b']} {link['b_port']}"
        return self.turns.tool(
            CAPTURE_TOOLS[action], arguments, f"capture {action} {text}", options
        )

    def snapshot(self, tail: str, argv: list[str]) -> Any:
        """`%copilot snapshot list|create NAME [--stop]|restore NAME`, without the model
        (`--stop`: the running nodes are stopped for the snapshot and started again)."""
        options, words = self.context.options(argv, tail)
        action = words[0].lower() if words else ""
        if action not in SNAPSHOT_TOOLS:
            return NOT_A_SUBCOMMAND
        name = " ".join(words[1:]).strip()
        if options.stop and action != "create":
            raise UsageError("--stop goes with `%copilot snapshot create <name>` only.")
        if action == "list":
            if name:
                return NOT_A_SUBCOMMAND
            return self.turns.tool(SNAPSHOT_TOOLS[action], {}, "snapshot list", options)
        if not name:
            raise UsageError(f"Name the snapshot: `%copilot snapshot {action} <name>`.")
        arguments: dict[str, Any] = {"name": name}
        message = f"snapshot {action} {name}"
        if options.stop:
            arguments["stop_running"] = True
            message += " --stop"
        return self.turns.tool(SNAPSHOT_TOOLS[action], arguments, message, options)
