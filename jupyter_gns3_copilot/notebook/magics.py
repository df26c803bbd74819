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

import shlex
from argparse import Namespace
from collections.abc import Callable
from typing import Any, cast

from IPython.core import magic_arguments as ipython_arguments
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from .copilot import Copilot
from .errors import UsageError
from .subcommands.connection import ConnectionCommands
from .subcommands.context import NOT_A_SUBCOMMAND, MagicContext, Subcommand
from .subcommands.conversation import ConversationCommands
from .subcommands.lab import LabCommands
from .subcommands.parsing import mistyped_subcommand, split_leading_options
from .subcommands.projects import DeviceCommands, ProjectCommands
from .subcommands.turns import TurnOutput

_Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
# IPython's argument decorators, which ship no types.
magic_arguments = cast("Callable[[], _Decorator]", ipython_arguments.magic_arguments)
argument = cast("Callable[..., _Decorator]", ipython_arguments.argument)

USAGE = """\
Ask:        %copilot <message>          (or %%copilot with the message in the cell body)
            %copilot ask <message>      (a message that starts like a subcommand)
Options:    --mode teaching|automation  --max-iterations N  --max-tool-calls N  --max-time S
            --temperature T  --new (new conversation)  --session ID  --quiet (text only)
Projects:   %copilot projects | use <name or id> | show topology
Sessions:   %copilot sessions | history | rename <title> | pin | unpin | delete | abort
            %copilot export [PATH] [--format md] [--force]
Approvals:  %copilot approve [comment] | reject [comment]  (the change a turn waits for)
Devices:    %copilot run <device>[, <device>]: <command>[; <command>]  [--tool show|config|vpcs]
Capture:    %copilot capture start|stop|show <node> <port> - <node> <port>  [--filter F --limit N]
Snapshots:  %copilot snapshot list | create <name> [--stop] | restore <name>
Lab:        %copilot lab | lab attach <lab.yaml> [--mode automation] | lab stage <stage>|auto
            %copilot check [<stage>] | catch-up <stage> [--confirm]
Exercises:  %copilot exercise start [<fault>|--random] | exercise | exercise give-up
Modes:      --mode for one message; `%copilot config copilot_mode=automation|teaching` to switch
Setup:      %copilot status | config [key=value ...] | config api_key | connect [URL] [--token T]
"""


@magics_class
class CopilotMagics(Magics):
    """`%copilot` / `%%copilot` (see `%copilot?`): reads the line and hands it to the
    subcommand parts (`notebook/subcommands/`), or sends it to the copilot as a message."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._context = MagicContext(shell, self._options)
        self._turns = TurnOutput(self._context)
        self._subcommands: dict[str, Subcommand] = {
            **ConversationCommands(self._context, self._turns).handlers(),
            **ProjectCommands(self._context).handlers(),
            **DeviceCommands(self._context, self._turns).handlers(),
            **LabCommands(self._context).handlers(),
            **ConnectionCommands(self._context).handlers(),
        }

    @property
    def api(self) -> Copilot:
        """The notebook's `Copilot` (finding the server on first use)."""
        return self._context.api

    def close(self) -> None:
        """Close the HTTP client (the extension is being unloaded)."""
        self._context.close()

    @magic_arguments()
    @argument("--mode", help="copilot mode for this turn: teaching or automation (old word: lab)")
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
    @argument("--random", action="store_true", help="exercise start: a fault drawn for you")
    @argument(
        "--stop",
        action="store_true",
        help="snapshot create: stop the running nodes and start them again (automation mode)",
    )
    @argument(
        "words",
        nargs="*",
        help="a message to the copilot, or a subcommand: ask, use, projects, show topology, "
        "sessions, history, rename, pin, unpin, delete, abort, export, approve, reject, run, "
        "capture, snapshot, lab, check, catch-up, exercise, status, config, connect",
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
                                     stops them and starts them again, automation mode)
          lab                        the lab's stages and objectives (your values)
          lab attach PATH [--mode automation]
                                     make a lab.yaml the project's lab (needs
                                     automation mode: --mode automation, or the setting)
          lab stage STAGE|auto       the stage you work on (the copilot's hints follow it)
          check [STAGE]              check the objectives on the devices: a checklist
                                     that fills in; returns the report (.score,
                                     .passed, .assert_passed())
          catch-up STAGE [--confirm] restore the snapshot the stage starts from
                                     (then check again once the nodes are up)
          exercise start [FAULT|--random]
                                     a troubleshooting exercise: a fault is put into
                                     your working lab; you see what fails, find and
                                     fix it, then `check` grades it
          exercise                   your exercise: what fails, its latest grade
          exercise give-up           what the fault was; your lab is restored
          status                     versions, GNS3 and model checks
          config [key=value ...]     your settings (the key is never shown;
                                     copilot_mode=automation|teaching switches modes);
                                     `config api_key` asks for a key without echoing it
          connect [URL] [--token T]  talk to this Jupyter server (default: find it again)
          ask <message>              a message that starts like a subcommand

        Examples:
          %copilot use "OSPF lab"
          turn = %copilot --mode automation address PC1 as 10.0.0.1/24 and ping PC2
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
            return self._turns.chat(cell.strip(), self._options(argv))
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
            if result is not NOT_A_SUBCOMMAND:
                return result
        suggestion = mistyped_subcommand(rest)
        if suggestion is not None:
            raise UsageError(
                f"Did you mean `%copilot {suggestion}`? Nothing was sent to the model; to "
                f"ask it this, write `%copilot ask {rest}`."
            )
        return self._turns.chat(rest, self._options(argv))

    def _options(self, argv: list[str]) -> Namespace:
        argstring = " ".join(shlex.quote(arg) for arg in argv)
        return cast(Namespace, ipython_arguments.parse_argstring(self.copilot, argstring))
