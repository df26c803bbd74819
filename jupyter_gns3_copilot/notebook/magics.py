"""The `%copilot` and `%%copilot` magics (`%load_ext jupyter_gns3_copilot`).

Every magic blocks until it is done (so "Run All" runs in order). A message streams into
a chat widget (text where widgets cannot render, or with `--quiet`) and the magic returns
the `Turn`: `turn = %copilot ...` then `turn.tool_results["PC1"]`. The conversation
continues across cells: one session per notebook (kernel) and project, unless `--new` or
`--session ID` says otherwise. The widget has no input box: when the turn ends its output
becomes the saved answer, so the next cell (or the saved answer's "Continue in the Copilot
sidebar" button) continues the conversation.
"""

from __future__ import annotations

import difflib
import getpass
import re
import shlex
import sys
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core.error import StdinNotImplementedError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..events import AbortEvent, ApprovalRequiredEvent
from .copilot import Copilot, EventCallback, ProjectInfo, SessionInfo, copilot_mode, turn_options
from .errors import ApiError, CopilotError, ProjectNotFound, UsageError
from .lab_report import Checklist, checklist_markdown, lab_markdown
from .reports import Records, config_text, status_text
from .transcript import APPROVAL_OUTCOMES, TextStream, history_text
from .turn import Turn

VALUE_OPTIONS = frozenset(
    {
        "--mode",
        "--max-iterations",
        "--max-tool-calls",
        "--max-time",
        "--temperature",
        "--session",
        "--token",
        "--limit",
        "--tool",
        "--format",
        "--filter",
    }
)
FLAG_OPTIONS = frozenset({"--new", "--quiet", "--force", "--confirm", "--stop", "-h", "--help"})
RUN_DECISION_HINT = "Answer y to approve it, anything else to reject it (nothing changes)."
"""How a direct run's change is decided with text output: on the console (the run ends
when its cell is interrupted)."""
_TOKEN = re.compile(r"\s*(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S+)")
_URL_LIKE = re.compile(r"^(https?|http\+unix)://|^[\w.-]+:\d+(/|$)|^\[[0-9a-f:]+\]:\d+", re.I)
CONFIG_NUMBERS = {"temperature": float, "context_limit": int}
SUGGESTED_SUBCOMMANDS = (
    "projects",
    "show topology",
    "sessions",
    "history",
    "pin",
    "unpin",
    "delete",
    "abort",
    "status",
    "config",
    "config api_key",
    "snapshot list",
    "lab",
    "check",
)
"""The subcommands a short mistyped line is matched against (`mistyped_subcommand`)."""
TYPO_CUTOFF = 0.8
TurnRunner = Callable[[Callable[[], None] | None, EventCallback], Turn]
"""Runs a turn given its `on_open` and `on_event` callbacks (`Copilot.ask` / `run`)."""
_QUESTION_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<assign>(?:[A-Za-z_][\w.]*[ \t]*=[ \t]*)?)%copilot[ \t]+"
    r"(?P<message>[^?\s].*\?)[ \t]*(?P<end>\r?\n?)$"
)

USAGE = """\
Ask:        %copilot <message>          (or %%copilot with the message in the cell body)
            %copilot ask <message>      (a message that starts like a subcommand)
Options:    --mode teaching|lab  --max-iterations N  --max-tool-calls N  --max-time S
            --temperature T  --new (new conversation)  --session ID  --quiet (text only)
Projects:   %copilot projects | use <name or id> | show topology
Sessions:   %copilot sessions | history | rename <title> | pin | unpin | delete | abort
            %copilot export [PATH] [--format md] [--force]
Approvals:  %copilot approve [comment] | reject [comment]  (the change a turn waits for)
Devices:    %copilot run <device>[, <device>]: <command>[; <command>]  [--tool show|config|vpcs]
Capture:    %copilot capture start|stop|show <node> <port> - <node> <port>  [--filter F --limit N]
Snapshots:  %copilot snapshot list | create <name> [--stop] | restore <name>
Lab:        %copilot lab | lab attach <lab.yaml> [--mode lab] | lab stage <stage>|auto
            %copilot check [<stage>] | catch-up <stage> [--confirm]
Modes:      --mode for one message; `%copilot config copilot_mode=lab|teaching` to switch
Setup:      %copilot status | config [key=value ...] | config api_key | connect [URL] [--token T]
"""


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        inner = token[1:-1]
        return re.sub(r"\\(.)", r"\1", inner) if token[0] == '"' else inner
    return token


def tokens(text: str) -> list[str]:
    """`text` split on spaces, a token starting with a quote running to its closing one."""
    return [_unquote(match.group(1)) for match in _TOKEN.finditer(text)]


def split_leading_options(line: str) -> tuple[list[str], str]:
    """The options at the start of `line` (as argv) and the rest of the line, untouched
    (a message keeps its quotes and dashes). `--` ends the options."""
    argv: list[str] = []
    rest = line
    while True:
        match = _TOKEN.match(rest)
        if match is None or not match.group(1).startswith("-"):
            return argv, rest.strip()
        token = match.group(1)
        rest = rest[match.end() :]
        if token == "--":
            return argv, rest.strip()
        name = token.split("=", 1)[0]
        if name in FLAG_OPTIONS or (name in VALUE_OPTIONS and "=" in token):
            argv.append(token)
        elif name in VALUE_OPTIONS:
            value = _TOKEN.match(rest)
            if value is None:
                raise UsageError(f"Option {name} needs a value.")
            argv += [token, _unquote(value.group(1))]
            rest = rest[value.end() :]
        else:
            raise UsageError(
                f"Unknown option {token}. For a message that starts with '-', put `--` "
                "before it: `%copilot -- <message>`."
            )


def split_options(text: str) -> tuple[list[str], list[str]]:
    """Options anywhere in `text` (as argv) and the other tokens."""
    argv: list[str] = []
    words: list[str] = []
    items = tokens(text)
    index = 0
    while index < len(items):
        token = items[index]
        name = token.split("=", 1)[0]
        if name in VALUE_OPTIONS and "=" not in token:
            if index + 1 >= len(items):
                raise UsageError(f"Option {name} needs a value.")
            argv += [token, items[index + 1]]
            index += 2
            continue
        if name in FLAG_OPTIONS or name in VALUE_OPTIONS:
            argv.append(token)
        elif token.startswith("--"):
            raise UsageError(f"Unknown option {token}. See `%copilot?`.")
        else:
            words.append(token)
        index += 1
    return argv, words


def keep_question_marks(lines: list[str]) -> list[str]:
    """IPython input transformer: `%copilot why can't PC1 ping PC3?` is a question.

    IPython reads a line ending in "?" as a help request (`obj?`) before it sees the
    magic; this rewrites such `%copilot` lines into the magic call itself. `%copilot?`
    (nothing between) still shows the magic's help.
    """
    return [_keep_question_mark(line) for line in lines]


def _keep_question_mark(line: str) -> str:
    match = _QUESTION_LINE.match(line)
    if match is None:
        return line
    call = f"get_ipython().run_line_magic('copilot', {match['message']!r})"
    return f"{match['indent']}{match['assign']}{call}{match['end']}"


def mistyped_subcommand(message: str) -> str | None:
    """The subcommand `message` looks like a typo of (`show topolgy` -> `show topology`),
    or None.

    Only a short line can be a typo: one or two words (options aside), no question mark,
    close to a subcommand that takes no free text (`SUGGESTED_SUBCOMMANDS`, difflib ratio
    at least `TYPO_CUTOFF`). A real question has more words or a "?" and goes to the
    model; subcommands followed by free text (use, rename, run, ask) are never guessed.
    """
    if "?" in message:
        return None
    words = [word.lower() for word in message.split() if not word.startswith("-")]
    if not 1 <= len(words) <= 2:
        return None
    matches = difflib.get_close_matches(
        " ".join(words), SUGGESTED_SUBCOMMANDS, n=1, cutoff=TYPO_CUTOFF
    )
    return matches[0] if matches else None


def _in_kernel(shell: Any) -> bool:
    """Whether widgets can render: a Jupyter kernel (not terminal IPython)."""
    return getattr(shell, "kernel", None) is not None


@magics_class
class CopilotMagics(Magics):
    """`%copilot` / `%%copilot` (see `%copilot?`)."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._copilot: Copilot | None = None
        self._subcommands: dict[str, Callable[[str, list[str]], Any]] = {
            "ask": self._ask,
            "use": self._use,
            "projects": self._projects,
            "show": self._show,
            "sessions": self._sessions,
            "history": self._history,
            "rename": self._rename,
            "pin": self._pin,
            "unpin": self._unpin,
            "delete": self._delete,
            "abort": self._abort,
            "export": self._export,
            "approve": self._approve,
            "reject": self._reject,
            "run": self._run,
            "capture": self._capture,
            "snapshot": self._snapshot,
            "lab": self._lab,
            "check": self._check,
            "catch-up": self._catch_up,
            "status": self._status,
            "config": self._config,
            "connect": self._connect,
        }

    @property
    def api(self) -> Copilot:
        """The notebook's `Copilot` (finding the server on first use)."""
        if self._copilot is None:
            self._copilot = Copilot(on_recall=_say_recalled)
        return self._copilot

    def close(self) -> None:
        """Close the HTTP client (the extension is being unloaded)."""
        if self._copilot is not None:
            self._copilot.close()
            self._copilot = None

    @magic_arguments()
    @argument("--mode", help="copilot mode for this turn: teaching or lab (lab automation)")
    @argument("--max-iterations", type=int, help="most model calls in this turn (1-100)")
    @argument("--max-tool-calls", type=int, help="most tool calls in this turn (1-50)")
    @argument("--max-time", type=int, help="most seconds this turn may run (1-3600)")
    @argument("--temperature", type=float, help="sampling temperature for this turn (0-2)")
    @argument("--new", action="store_true", help="start a new conversation")
    @argument("--session", help="continue the conversation with this session id")
    @argument("--quiet", action="store_true", help="plain text instead of the chat widget")
    @argument("--token", help="connect: the Jupyter server's token")
    @argument("--limit", type=int, help="sessions, history, capture show: how many to show")
    @argument("--tool", help="run: show (default), config, vpcs, or a tool's name")
    @argument("--format", help="export: ipynb (default) or md")
    @argument("--filter", help="capture show: a Wireshark display filter, e.g. icmp")
    @argument("--force", action="store_true", help="export: overwrite an existing file")
    @argument("--confirm", action="store_true", help="catch-up: restore the stage's snapshot")
    @argument(
        "--stop",
        action="store_true",
        help="snapshot create: stop the running nodes for it and start them again (lab mode)",
    )
    @argument(
        "words",
        nargs="*",
        help="a message to the copilot, or a subcommand: ask, use, projects, show topology, "
        "sessions, history, rename, pin, unpin, delete, abort, export, approve, reject, run, "
        "capture, snapshot, lab, check, catch-up, status, config, connect",
    )
    @no_var_expand
    @line_cell_magic
    def copilot(self, line: str, cell: str | None = None) -> Any:
        """Talk to the GNS3 copilot from a notebook.

        %copilot <message> asks the copilot about the project in use and shows the
        answer as it streams (a chat widget: text, each tool call and each device's
        output); the cell returns the Turn (text, tool_calls, tool_results by device,
        statistics, session_id). With %%copilot the cell body is the message. The
        conversation continues across cells until --new.

        Subcommands:
          use <project name or id>   work on this GNS3 project (opened if closed)
          projects                   list the GNS3 projects
          show topology              the project's diagram and its node/link table
          sessions                   your conversations in this project
          history                    the conversation's messages (--session ID, --limit N)
          rename <title>             rename the conversation
          pin, unpin, delete, abort  the conversation (or --session ID)
          export [PATH]              the conversation as a notebook to run again
                                     (--format md: Markdown; default file: its title;
                                     --force overwrites)
          approve, reject [comment]  the change the conversation waits for
          run <device>: <command>    run commands now, without the model
                                     (devices: "PC1, PC2"; commands: "show ip; ping 10.0.0.2")
          capture start|stop|show LINK
                                     a packet capture on a link, without the model (LINK:
                                     "PC1 e0 - Switch1 e0"; show: --filter F, --limit N)
          snapshot list|create|restore NAME
                                     the project's snapshots, without the model
                                     (GNS3 needs the nodes stopped: create --stop
                                     stops them and starts them again, lab mode)
          lab                        the lab's stages and objectives (your values)
          lab attach PATH [--mode lab]
                                     make a lab.yaml the project's lab (needs lab
                                     automation mode: --mode lab, or the setting)
          lab stage STAGE|auto       the stage you work on (the copilot's hints follow it)
          check [STAGE]              check the objectives on the devices: a checklist
                                     that fills in; returns the report (.score,
                                     .passed, .assert_passed())
          catch-up STAGE [--confirm] restore the snapshot the stage starts from
                                     (then check again once the nodes are up)
          status                     versions, GNS3 and model checks
          config [key=value ...]     your settings (the key is never shown;
                                     copilot_mode=lab|teaching switches modes);
                                     `config api_key` asks for a key without echoing it
          connect [URL] [--token T]  talk to this Jupyter server (default: find it again)
          ask <message>              a message that starts like a subcommand

        Examples:
          %copilot use "OSPF lab"
          turn = %copilot --mode lab address PC1 as 10.0.0.1/24 and ping PC2
          %copilot run PC1: show ip
        """
        argv, rest = split_leading_options(line)
        if {"-h", "--help"} & set(argv):
            print(self.copilot.__doc__)
            return None
        if cell is not None:
            if rest:
                raise UsageError(
                    "With %%copilot the message is the cell body: the first line takes "
                    "options only (e.g. `%%copilot --new`)."
                )
            return self._chat(cell.strip(), self._options(argv))
        if not rest:
            if argv:
                self._options(argv)
                raise UsageError("Options given, but no message. See `%copilot?`.")
            print(USAGE)
            return None
        word, _, tail = rest.partition(" ")
        handler = self._subcommands.get(word.lower())
        if handler is not None:
            result = handler(tail.strip(), argv)
            if result is not _NOT_A_SUBCOMMAND:
                return result
        suggestion = mistyped_subcommand(rest)
        if suggestion is not None:
            raise UsageError(
                f"Did you mean `%copilot {suggestion}`? Nothing was sent to the model; to "
                f"ask it this, write `%copilot ask {rest}`."
            )
        return self._chat(rest, self._options(argv))

    def _options(self, argv: list[str]) -> Namespace:
        return parse_argstring(self.copilot, " ".join(shlex.quote(arg) for arg in argv))

    def _subcommand_options(self, argv: list[str], tail: str) -> tuple[Namespace, list[str]]:
        more, words = split_options(tail)
        return self._options([*argv, *more]), words

    # -- conversation ------------------------------------------------------------------------

    def _ask(self, tail: str, argv: list[str]) -> Any:
        if not tail:
            raise UsageError("Write the message after `ask`.")
        return self._chat(tail, self._options(argv))

    def _chat(self, message: str, options: Namespace) -> Turn:
        copilot = self.api
        project = copilot.current_project()
        session_id = copilot.next_session(options.session, new=options.new)
        choices = turn_options(
            mode=options.mode,
            max_iterations=options.max_iterations,
            max_tool_calls=options.max_tool_calls,
            max_execution_time_seconds=options.max_time,
            temperature=options.temperature,
        )
        copilot.chat_request(message, session_id=session_id)  # refuses an empty message

        def ask(on_open: Callable[[], None] | None, on_event: EventCallback) -> Turn:
            return copilot.ask(
                message,
                session=session_id,
                project_id=project.project_id,
                on_open=on_open,
                on_event=on_event,
                options=choices,
            )

        if options.quiet or not _in_kernel(self.shell):
            turn = self._text_turn(ask, copilot_mode(options.mode))
        else:
            widget = self._widget(project, session_id, options.mode)
            turn = self._widget_turn(widget, message, ask)
        self._shown_in_this_cell(turn)
        return turn

    def _shown_in_this_cell(self, turn: Turn) -> None:
        assert self.shell is not None  # a registered magic has its shell
        turn.shown_in_cell(self.shell.execution_count)

    def _widget(
        self,
        project: ProjectInfo,
        session_id: str | None,
        mode: str | None,
        *,
        direct_run: bool = False,
    ) -> Any:
        from .widget import ChatWidget

        return ChatWidget(
            project.project_id,
            project_name=project.name,
            session_id=session_id,
            mode=copilot_mode(mode),
            direct_run=direct_run,
        )

    def _widget_turn(self, widget: Any, message: str, run: TurnRunner) -> Turn:
        """Run a turn into `widget`; the widget is displayed and the turn begun once the
        server accepts the request, so a refusal shows only as the cell's error."""
        begun = False

        def on_open() -> None:
            nonlocal begun
            from IPython.display import display

            display(widget)
            widget.begin_turn(message)
            begun = True

        try:
            turn = run(on_open, widget)  # follows the one reduction (`turns.TurnFollower`)
        except KeyboardInterrupt:
            if begun:
                if self.api.waiting_approval is None:
                    widget.push(AbortEvent(session_id=widget.session_id))
                widget.end_turn()
            if self.api.waiting_approval is not None:
                print(
                    "The change still waits for your approval: run `%copilot approve "
                    "[comment]` or `%copilot reject [comment]`."
                )
            raise
        except CopilotError as exc:
            if begun:
                widget.show_error(str(exc))
                widget.end_turn()
            raise
        widget.end_turn()
        return turn

    def _text_turn(
        self,
        run: TurnRunner,
        mode: str | None,
        decide: Callable[[ApprovalRequiredEvent], None] | None = None,
    ) -> Turn:
        """Run a turn with text output; `mode`: the mode id the cell named (its footer
        names it); `decide` takes a change the turn waits for (a direct run cannot be
        interrupted to decide in another cell: it would end)."""
        if decide is None:
            printer = TextStream(sys.stdout.write, flush=sys.stdout.flush, mode=mode)
        else:
            printer = TextStream(
                sys.stdout.write,
                flush=sys.stdout.flush,
                decision_hint=RUN_DECISION_HINT,
                decide=decide,
                mode=mode,
            )
        turn = run(None, printer)
        printer.finish(turn)
        return turn

    def _decide_on_the_console(self, event: ApprovalRequiredEvent) -> None:
        """Ask on the console whether to make the change a direct run waits for; without
        a console to ask on, it is rejected (nothing changes)."""
        try:
            answer = input("Approve this change? [y/N] ")
        except (EOFError, StdinNotImplementedError):
            answer = ""
            print(
                "(no console to answer on: rejected; run it without --quiet in a notebook "
                "to decide with the buttons)"
            )
        decide = self.api.approve if answer.strip().lower() in ("y", "yes") else self.api.reject
        decide(session=event.session_id)

    # -- projects ------------------------------------------------------------------------------

    def _use(self, tail: str, argv: list[str]) -> None:
        options, words = self._subcommand_options(argv, tail)
        if not words:
            raise UsageError("Name the project: `%copilot use <name or id>`.")
        try:
            project = self.api.use(" ".join(words), session=options.session, new=options.new)
        except ProjectNotFound as exc:
            raise ProjectNotFound(
                f"{exc} (To ask the copilot something that starts with 'use', write "
                "`%copilot ask use ...`.)"
            ) from None
        session = self.api.session_id
        conversation = f"continuing conversation {session}" if session else "new conversation"
        print(
            f"Using project {project.name!r} ({project.status}, id {project.project_id}); "
            f"{conversation}."
        )

    def _projects(self, tail: str, argv: list[str]) -> Any:
        _, words = self._subcommand_options(argv, tail)
        if words:
            return _NOT_A_SUBCOMMAND
        current = self.api.project.project_id if self.api.project else None
        return Records(
            self.api.projects(),
            [
                ("", lambda p: "*" if p.project_id == current else ""),
                ("name", lambda p: p.name),
                ("status", lambda p: p.status),
                ("project_id", lambda p: p.project_id),
            ],
            empty="No GNS3 projects.",
        )

    def _show(self, tail: str, argv: list[str]) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if [w.lower() for w in words] not in (["topology"], ["topo"]):
            return _NOT_A_SUBCOMMAND
        copilot = self.api
        svg = copilot.topology("svg")
        text = copilot.topology("text")
        if _in_kernel(self.shell) and not options.quiet:
            from IPython.display import display

            # HTML first: JupyterLab puts it inline, where the drawing takes the theme's
            # colours; its image/svg+xml renderer uses an <img> (light fallback colours).
            display({"text/html": svg, "image/svg+xml": svg}, raw=True)
        print(text)
        return None

    # -- sessions ------------------------------------------------------------------------------

    def _sessions(self, tail: str, argv: list[str]) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if words:
            return _NOT_A_SUBCOMMAND
        current = self.api.session_id

        def tokens_of(s: SessionInfo) -> str:
            return f"{s.input_tokens:,} / {s.output_tokens:,}"

        return Records(
            self.api.sessions(limit=options.limit or 100),
            [
                ("", lambda s: "*" if s.thread_id == current else ""),
                ("session_id", lambda s: s.thread_id),
                ("title", lambda s: s.title),
                ("messages", lambda s: s.message_count),
                ("tokens in / out", tokens_of),
                ("pinned", lambda s: s.pinned),
                ("updated", lambda s: (s.updated_at or "")[:19].replace("T", " ")),
            ],
            empty="No conversations in this project yet.",
        )

    def _history(self, tail: str, argv: list[str]) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if words:
            return _NOT_A_SUBCOMMAND
        print(history_text(self.api.history(options.session, limit=options.limit or 100)))
        return None

    def _rename(self, tail: str, argv: list[str]) -> None:
        options, words = self._subcommand_options(argv, tail)
        title = " ".join(words).strip()
        if not title:
            raise UsageError("Give the new title: `%copilot rename <title>`.")
        session = self.api.rename(title, options.session)
        print(f"Conversation {session.thread_id} is now titled {session.title!r}.")

    def _pin(self, tail: str, argv: list[str], *, pinned: bool = True) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if words:
            return _NOT_A_SUBCOMMAND
        session = self.api.pin(options.session, pinned=pinned)
        print(f"Conversation {session.thread_id} {'pinned' if pinned else 'unpinned'}.")
        return None

    def _unpin(self, tail: str, argv: list[str]) -> Any:
        return self._pin(tail, argv, pinned=False)

    def _delete(self, tail: str, argv: list[str]) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if words:
            return _NOT_A_SUBCOMMAND
        deleted = self.api.delete(options.session)
        print(f"Conversation {deleted} deleted; the next message starts a new one.")
        return None

    def _approve(self, tail: str, argv: list[str]) -> Any:
        return self._decide("approve", tail, argv)

    def _reject(self, tail: str, argv: list[str]) -> Any:
        return self._decide("reject", tail, argv)

    def _decide(self, decision: str, tail: str, argv: list[str]) -> Any:
        """`%copilot approve|reject [comment]`: decide the change the conversation waits
        for; with no stream waiting for it, the rest of the turn is shown here."""
        options, words = self._subcommand_options(argv, tail)
        comment = " ".join(words) or None
        copilot = self.api
        decide = copilot.approve if decision == "approve" else copilot.reject
        printer = TextStream(sys.stdout.write, flush=sys.stdout.flush)
        answer = decide(comment, session=options.session, on_event=printer)
        if isinstance(answer, dict):
            print(f"{APPROVAL_OUTCOMES[decision].capitalize()}; the waiting cell goes on.")
            return None
        printer.finish(answer)
        return answer

    def _abort(self, tail: str, argv: list[str]) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if words:
            return _NOT_A_SUBCOMMAND
        answer = self.api.abort(options.session)
        if answer.get("status") == "ok":
            print(f"Stopping the turn of conversation {answer.get('session_id')}.")
        else:
            print(f"Nothing is running in conversation {answer.get('session_id')}.")
        return None

    def _export(self, tail: str, argv: list[str]) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if len(words) > 1:
            return _NOT_A_SUBCOMMAND
        export_format = (options.format or "ipynb").lower()
        if export_format not in ("ipynb", "md"):
            raise UsageError(f"--format is ipynb or md, got {options.format!r}.")
        filename, content = self.api.export(export_format, options.session)
        # Only the name of the server's suggestion: it never picks the directory.
        default = Path(filename).name or f"copilot.{export_format}"
        path = Path(words[0]).expanduser() if words else Path(default)
        if path.is_dir():
            path = path / default
        if path.exists() and not options.force:
            raise UsageError(f"{path} exists: give another path, or add --force to replace it.")
        path.write_bytes(content)
        print(f"Conversation exported to {path}.")
        return None

    # -- devices -------------------------------------------------------------------------------

    def _run(self, tail: str, argv: list[str]) -> Any:
        head, colon, commands = tail.partition(":")
        if not colon:
            return _NOT_A_SUBCOMMAND
        options, words = self._subcommand_options(argv, head)
        devices = [name for word in words for name in word.split(",") if name.strip()]
        if not devices or not commands.strip():
            raise UsageError("Usage: `%copilot run <device>[, <device>]: <command>[; <command>]`.")
        copilot = self.api
        tool = options.tool or "show"

        def run(on_open: Callable[[], None] | None, on_event: EventCallback) -> Turn:
            return copilot.run(
                devices, commands, tool=tool, mode=options.mode, on_open=on_open, on_event=on_event
            )

        return self._direct_turn(f"run {', '.join(devices)}: {commands.strip()}", options, run)

    def _capture(self, tail: str, argv: list[str]) -> Any:
        """`%copilot capture start|stop|show LINK`: a capture on a link, without the model."""
        options, words = self._subcommand_options(argv, tail)
        action = words[0].lower() if words else ""
        if action not in CAPTURE_TOOLS:
            return _NOT_A_SUBCOMMAND
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
        return self._tool_turn(
            CAPTURE_TOOLS[action], arguments, f"capture {action} {text}", options
        )

    def _snapshot(self, tail: str, argv: list[str]) -> Any:
        """`%copilot snapshot list|create NAME [--stop]|restore NAME`, without the model
        (`--stop`: the running nodes are stopped for the snapshot and started again)."""
        options, words = self._subcommand_options(argv, tail)
        action = words[0].lower() if words else ""
        if action not in SNAPSHOT_TOOLS:
            return _NOT_A_SUBCOMMAND
        name = " ".join(words[1:]).strip()
        if options.stop and action != "create":
            raise UsageError("--stop goes with `%copilot snapshot create <name>` only.")
        if action == "list":
            if name:
                return _NOT_A_SUBCOMMAND
            return self._tool_turn(SNAPSHOT_TOOLS[action], {}, "snapshot list", options)
        if not name:
            raise UsageError(f"Name the snapshot: `%copilot snapshot {action} <name>`.")
        arguments: dict[str, Any] = {"name": name}
        message = f"snapshot {action} {name}"
        if options.stop:
            arguments["stop_running"] = True
            message += " --stop"
        return self._tool_turn(SNAPSHOT_TOOLS[action], arguments, message, options)

    def _tool_turn(
        self, tool: str, arguments: dict[str, Any], message: str, options: Namespace
    ) -> Turn:
        copilot = self.api

        def run(on_open: Callable[[], None] | None, on_event: EventCallback) -> Turn:
            return copilot.run_tool(
                tool,
                arguments,
                mode=options.mode,
                message=message,
                on_open=on_open,
                on_event=on_event,
            )

        return self._direct_turn(message, options, run)

    def _direct_turn(self, message: str, options: Namespace, run: TurnRunner) -> Turn:
        """A direct run (no model) shown as a turn: in a widget of its own, or as text."""
        project = self.api.current_project()
        if options.quiet or not _in_kernel(self.shell):
            turn = self._text_turn(
                run, copilot_mode(options.mode), decide=self._decide_on_the_console
            )
        else:
            widget = self._widget(project, None, options.mode, direct_run=True)
            turn = self._widget_turn(widget, message, run)
        self._shown_in_this_cell(turn)
        return turn

    # -- lab objectives ----------------------------------------------------------------------

    def _lab(self, tail: str, argv: list[str]) -> Any:
        """`%copilot lab` shows the lab; `%copilot lab attach PATH [--mode lab]` attaches
        a file (in lab automation mode: `--mode`, else the `copilot_mode` setting)."""
        options, words = self._subcommand_options(argv, tail)
        if not words:
            text = lab_markdown(self.api.lab())
            if _in_kernel(self.shell):
                # text/plain too: a plain-text front end (a console, nbconvert's text
                # output) shows the list, not the display object's repr.
                display({"text/markdown": text, "text/plain": text}, raw=True)
            else:
                print(text)
            return None
        if words[0].lower() == "stage" and len(words) == 2:
            stage = None if words[1].lower() == "auto" else words[1]
            lab = self.api.lab_stage(stage)
            current = next(s for s in lab["stages"] if s["id"] == lab["current_stage"])
            how = "your choice" if stage else "the first stage your checks have not passed"
            print(f"Working on stage {current['id']} ({current['title']}): {how}.")
            return None
        if words[0].lower() == "attach" and len(words) == 2:
            try:
                lab = self.api.attach_lab(words[1], mode=options.mode)
            except ApiError as exc:
                if exc.type != "ModeNotAllowed":
                    raise
                raise UsageError(
                    "Attaching a lab file needs lab automation mode: add `--mode lab` "
                    f"(`%copilot lab attach {words[1]} --mode lab`), or switch your mode "
                    "with `%copilot config copilot_mode=lab`."
                ) from None
            count = sum(len(stage["objectives"]) for stage in lab["stages"])
            print(
                f"Attached {words[1]} to {self.api.current_project().name}: "
                f"{len(lab['stages'])} stages, {count} objectives."
            )
            return None
        return _NOT_A_SUBCOMMAND

    def _check(self, tail: str, argv: list[str]) -> Any:
        """`%copilot check [STAGE]`: a checklist that fills in, shown once the checks
        begin (an unknown stage is only an error); returns the `LabReport`, which shows
        nothing more in this cell."""
        _, words = self._subcommand_options(argv, tail)
        if len(words) > 1:
            return _NOT_A_SUBCOMMAND
        stage = words[0] if words else None
        if not _in_kernel(self.shell):
            report = self.api.check_lab(stage)
            print(checklist_markdown(report.results, [], report.report))
        else:
            lab = self.api.lab()
            stages = [s for s in lab["stages"] if stage in (None, s["id"])]
            title = lab["title"] + (f" · {stages[0]['title']}" if stage and stages else "")
            shown: list[Checklist] = []

            def on_open() -> None:
                shown.append(Checklist(title, stages))

            report = self.api.check_lab(
                stage, on_open=on_open, on_result=lambda result: shown[0].add(result)
            )
            shown[0].finish(report.report)
        assert self.shell is not None  # a registered magic has its shell
        report.shown_in_cell(self.shell.execution_count)
        return report

    def _catch_up(self, tail: str, argv: list[str]) -> Any:
        """`%copilot catch-up STAGE [--confirm]`: restore the stage's snapshot."""
        options, words = self._subcommand_options(argv, tail)
        if len(words) != 1:
            raise UsageError(
                "Name the stage: `%copilot catch-up <stage>` (`%copilot lab` lists them)."
            )
        stage = words[0]
        if not options.confirm:
            try:
                self.api.catch_up(stage)
            except ApiError as exc:
                if exc.type != "ConfirmationNeeded":
                    raise
                what = str(exc).split(" Send {")[0]
                print(f"{what}\nTo do it: %copilot catch-up {stage} --confirm")
                return None
        done = self.api.catch_up(stage, confirm=True)
        print(
            f"Caught up to stage {done['stage']}: restored snapshot {done['snapshot']!r}. "
            "The nodes are starting again: once they are up (a few seconds), check again "
            f"with `%copilot check {done['stage']}`."
        )
        return None

    # -- setup -----------------------------------------------------------------------------------

    def _status(self, tail: str, argv: list[str]) -> Any:
        _, words = self._subcommand_options(argv, tail)
        if words:
            return _NOT_A_SUBCOMMAND
        print(status_text(self.api.status(), self.api.server.describe()))
        return None

    def _config(self, tail: str, argv: list[str]) -> Any:
        _, words = self._subcommand_options(argv, tail)
        updates: dict[str, Any] = {}
        for word in words:
            key, equals, value = word.partition("=")
            key = key.strip().replace("-", "_")
            if key == "api_key" and not equals:
                value = getpass.getpass("API key for the model endpoint (not shown): ")
            elif not equals:
                if len(words) == 1 and not updates:
                    return _NOT_A_SUBCOMMAND
                raise UsageError(f"Write settings as key=value (got {word!r}).")
            elif key == "api_key":
                print(
                    "Note: the key is now in this notebook's source; `%copilot config "
                    "api_key` asks for it without showing it."
                )
            updates[key] = _config_value(key, value)
        print(config_text(self.api.config(**updates)))
        return None

    def _connect(self, tail: str, argv: list[str]) -> Any:
        options, words = self._subcommand_options(argv, tail)
        if len(words) > 1 or (words and not _URL_LIKE.search(words[0])):
            return _NOT_A_SUBCOMMAND
        url = words[0] if words else None
        if self._copilot is None:
            copilot = (
                Copilot(url, options.token, on_recall=_say_recalled)
                if url
                else Copilot(on_recall=_say_recalled)
            )
            copilot.check()
            self._copilot = copilot
            server = copilot.server
        else:
            server = self._copilot.connect(url, options.token)
        print(f"Connected to {server.describe()}: the GNS3 Copilot extension answers.")
        return None


CAPTURE_TOOLS = {"start": "start_capture", "stop": "stop_capture", "show": "analyze_capture"}
SNAPSHOT_TOOLS = {
    "list": "list_snapshots",
    "create": "create_snapshot",
    "restore": "restore_snapshot",
}
_LINK_SEPARATORS = frozenset({"-", "--", "<->", "<-->", "to", "and"})


def link_ends(words: list[str]) -> dict[str, str] | None:
    """A link named by both ends, as the link tools take it (`{a, a_port, b, b_port}`),
    from `PC1 e0 - Switch1 e0` (separator optional: -, <->, to) or `PC1:e0 Switch1:e0`;
    None if `words` name no link that way."""
    ends = [word for word in words if word.lower() not in _LINK_SEPARATORS]
    if len(ends) == 2 and all(":" in end for end in ends):
        ends = [part for end in ends for part in end.rsplit(":", 1)]
    if len(ends) != 4 or not all(end.strip() for end in ends):
        return None
    return dict(zip(("a", "a_port", "b", "b_port"), (end.strip() for end in ends), strict=True))


def _say_recalled(project: ProjectInfo) -> None:
    """Say which project the magics took back after a kernel restart."""
    print(
        f"Using project {project.name!r} again: this notebook's project "
        "(`%copilot use` chooses another)."
    )


def _config_value(key: str, value: str) -> Any:
    value = value.strip()
    if value.lower() in ("none", "null", "default", ""):
        return None
    convert = CONFIG_NUMBERS.get(key)
    if convert is None:
        return value
    try:
        return convert(value)
    except ValueError:
        raise UsageError(f"{key} must be a number, got {value!r}.") from None


_NOT_A_SUBCOMMAND: Any = object()
"""A subcommand handler's answer when the line is a message after all (e.g. "show me...")."""
