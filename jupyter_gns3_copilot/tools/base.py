"""What every tool is made of: its spec, the context it runs in, and what it returns.

Tools are plain async functions `run(ctx, args) -> dict | list` over the foundation (the
GNS3 client and the console pool); they know nothing of LangChain. A tool returns a
JSON-serialisable result for expected outcomes, including failures of single items (one
device unreachable, one port taken); for a problem that stops the whole call it raises
`ToolError` (or lets a `GNS3Error`/`ConsoleError` through), which `execute_tool` turns into
an error result. Cancellation (`asyncio.CancelledError`) always propagates.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from ..console import (
    ConsoleAborted,
    ConsoleCredentials,
    ConsolePool,
    ConsoleTarget,
    ConsoleTransport,
)
from ..console.pool import abortable
from ..devices.access import Devices
from ..devices.policy import CommandPolicy
from ..devices.template_cache import TemplateCache
from ..gns3 import GNS3Client, Node, Template
from ..gns3.topology import natural_key
from .modes import DEFAULT_MODE, check_mode
from .skills import SkillsLibrary

log = logging.getLogger(__name__)

ToolResult = dict[str, Any] | list[Any]
"""A tool's JSON-serialisable result."""

ProgressSink = Callable[[dict[str, Any]], None]
"""Receives progress events: `{"tool", "message", "elapsed"[, "node"]}`."""

_T = TypeVar("_T")


class LabObjectives(Protocol):
    """The turn's lab objectives as the `check_objectives` tool reaches them
    (`objectives.hints.TurnObjectives`)."""

    async def check(
        self, stage: str | None = None, abort: asyncio.Event | None = None
    ) -> dict[str, Any]: ...


class ToolArguments(BaseModel):
    """Base of every tool's argument model: unknown arguments are errors the model sees."""

    model_config = ConfigDict(extra="forbid")


class NoArguments(ToolArguments):
    """For tools that take no arguments."""


class ToolError(Exception):
    """An expected problem that stops a whole tool call; `str()` is shown to the model."""


class ToolAborted(ToolError):
    """The context's abort event was set while the tool was waiting."""

    def __init__(self, message: str = "Stopped: the request was aborted.") -> None:
        super().__init__(message)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name and description for the model, its argument model, its code.

    `changes_lab` marks tools that change the GNS3 project (nodes, links, node states), so
    that a cached topology must be fetched again after they ran. `configures` (the
    console command tools) says which command lines of a call (its validated arguments)
    would change a device's configuration, by device; what asks for a person's approval
    (`tools.changes`).

    A tool that with some arguments also does another tool's work (`create_snapshot`
    with `stop_running` stops and starts nodes) names those tools in `also_does` (for a
    call's validated arguments): the mode must allow each of them too, and the call
    changes the lab when one of them does. Its `plans` says what such a call would do in
    the lab as it is, in words for the person asked to approve it (None: it changes
    nothing).
    """

    name: str
    description: str
    args_model: type[BaseModel]
    run: Callable[[ToolContext, Any], Awaitable[ToolResult]]
    changes_lab: bool = False
    configures: Callable[[ToolContext, Any], Awaitable[dict[str, list[str]]]] | None = None
    also_does: Callable[[Any], frozenset[str]] | None = None
    plans: Callable[[ToolContext, Any], Awaitable[str | None]] | None = None


@dataclass(frozen=True)
class ToolOutcome:
    """What `execute_tool` returns: the result, whether the lab may have changed, and
    whether the call did what was asked (False when refused, invalid, failed or aborted).
    """

    result: ToolResult
    changed_lab: bool
    ok: bool


@dataclass
class ToolContext:
    """Everything a tool call needs, for one chat's project.

    - `gns3`, `project_id`: the project the chat is about (never a tool argument).
    - `consoles`: the console pool (one lock per console, kept sessions).
    - `mode`: the copilot mode, enforced by `execute_tool`.
    - `policy`, `skills`: the command policy and the skills library (shareable).
    - `abort`: set to stop long waits (node boot, console commands) promptly.
    - `progress`: receives progress events from long tools (see `reporter`).
    - `console_targets`, `console_credentials`, `console_transport`, `templates`: how
      consoles are reached, given to the context's `devices` (`devices.access.Devices`
      says what each means; read them there).
    - `boot_timeout`, `command_timeout`: bounds in seconds for a console prompt after a
      node start, and for one command's answer.
    - `max_output_chars`: longest output kept per device; the middle of longer output is
      cut and the cut is reported.
    - `objectives`: the student's lab objectives in this turn (None: the project has no
      lab file), for `check_objectives`.

    - `read_nodes`: the turn's shared read of the topology (`TopologySource.nodes`,
      None when it failed): the node cache is filled from it rather than by a GNS3 read of
      its own, so a turn reads its lab once (again after a tool changed it).

    `devices` is the device layer's `Devices` (the GNS3 client, the console pool, the
    policy and how consoles are reached): what the tools share with lab checks. Keeps a
    cache of the project's nodes, dropped after every tool that changes the lab.
    """

    gns3: GNS3Client
    project_id: str
    consoles: ConsolePool
    mode: str = DEFAULT_MODE
    policy: CommandPolicy = field(default_factory=CommandPolicy)
    skills: SkillsLibrary = field(default_factory=SkillsLibrary)
    abort: asyncio.Event | None = None
    progress: ProgressSink | None = None
    console_targets: InitVar[Mapping[str, ConsoleTarget] | None] = None
    console_credentials: InitVar[ConsoleCredentials | None] = None
    console_transport: InitVar[ConsoleTransport] = "telnet"
    boot_timeout: float = 120.0
    command_timeout: float = 30.0
    max_output_chars: int = 12_000
    objectives: LabObjectives | None = None
    read_nodes: Callable[[], Awaitable[Sequence[Node] | None]] | None = None
    templates: InitVar[TemplateCache | None] = None
    devices: Devices = field(init=False, repr=False)
    _nodes: list[Node] | None = field(default=None, init=False, repr=False)

    def __post_init__(
        self,
        console_targets: Mapping[str, ConsoleTarget] | None,
        console_credentials: ConsoleCredentials | None,
        console_transport: ConsoleTransport,
        templates: TemplateCache | None,
    ) -> None:
        self.mode = check_mode(self.mode)
        self.devices = Devices(
            gns3=self.gns3,
            consoles=self.consoles,
            policy=self.policy,
            console_credentials=console_credentials,
            console_transport=console_transport,
            console_targets=console_targets or {},
            templates=templates,
        )

    @property
    def aborted(self) -> bool:
        """Whether the abort event is set."""
        return self.abort is not None and self.abort.is_set()

    # -- nodes ---------------------------------------------------------------------------

    async def nodes(self, *, refresh: bool = False) -> list[Node]:
        """The project's nodes (cached until `forget_nodes` or `refresh`; first taken from
        `read_nodes` when there is one)."""
        if self._nodes is None and not refresh and self.read_nodes is not None:
            shared = await self.until_aborted(self.read_nodes())
            if shared is not None:
                self._nodes = list(shared)
        if self._nodes is None or refresh:
            self._nodes = await self.until_aborted(self.gns3.list_nodes(self.project_id))
        return self._nodes

    def remember_nodes(self, nodes: Sequence[Node]) -> None:
        """Use `nodes` (just fetched elsewhere) as the cached node list."""
        self._nodes = list(nodes)

    def forget_nodes(self) -> None:
        """Drop the cached node list (the lab changed)."""
        self._nodes = None

    async def lookup_nodes(self, names: Sequence[str]) -> dict[str, Node]:
        """The nodes named in `names`, by requested name; names that match none are absent.

        Exact names win, then a unique case-insensitive match. The cached list is fetched
        again once when a name is missing (someone may have changed the lab in GNS3).
        """
        if not names:
            return {}
        cached = self._nodes is not None or self.read_nodes is not None
        found = _match_names(names, await self.nodes())
        if cached and len(found) < len(set(names)):
            found = _match_names(names, await self.nodes(refresh=True))
        return found

    async def unknown_node_message(self, name: str) -> str:
        """A message saying no node is called `name`, listing the names that exist."""
        names = sorted(
            {n.name for n in await self.nodes()} | set(self.devices.console_targets),
            key=natural_key,
        )
        return f"No node named {name!r} in this project. Nodes: {', '.join(names) or 'none'}."

    async def console_target(self, node: Node) -> ConsoleTarget:
        """The console of `node` (`Devices.console_target`). Raises
        `ConsoleTargetError`/`DialectError` when the node has no usable console."""
        return await self.until_aborted(self.devices.console_target(node))

    async def template(self, node: Node) -> Template | None:
        """`node`'s template (`Devices.template`)."""
        return await self.until_aborted(self.devices.template(node))

    # -- waiting and progress ------------------------------------------------------------

    async def until_aborted(self, awaitable: Awaitable[_T]) -> _T:
        """Await `awaitable`, or cancel it and raise `ToolAborted` once `abort` is set."""
        try:
            return await abortable(awaitable, self.abort)
        except ConsoleAborted:
            raise ToolAborted() from None

    def reporter(self, tool: str) -> Callable[..., None]:
        """A `report(message, node=None)` function for one call of `tool`.

        Each event is `{"tool", "message", "elapsed"}` (seconds since `reporter` was
        called) plus `"node"` when given. A failing progress sink is logged, never raised.
        """
        started = time.monotonic()

        def report(message: str, node: str | None = None) -> None:
            if self.progress is None:
                return
            event: dict[str, Any] = {
                "tool": tool,
                "message": message,
                "elapsed": round(time.monotonic() - started, 3),
            }
            if node is not None:
                event["node"] = node
            try:
                self.progress(event)
            except Exception:
                log.exception("Progress callback failed for %s", tool)

        return report


def _match_names(names: Sequence[str], nodes: Sequence[Node]) -> dict[str, Node]:
    found: dict[str, Node] = {}
    for name in names:
        for matches in (
            [n for n in nodes if n.name == name],
            [n for n in nodes if n.name.lower() == name.lower()],
        ):
            if len(matches) == 1:
                found[name] = matches[0]
                break
    return found


def summary_status(statuses: Sequence[str]) -> str:
    """One status for many items: `success`, `failed`, `aborted` or `partial_success`."""
    if not statuses or all(s == "success" for s in statuses):
        return "success"
    if "aborted" in statuses:
        return "aborted"
    if all(s == "failed" for s in statuses):
        return "failed"
    return "partial_success"
