"""A node's console as a websocket, for a person at a terminal (`gns3-copilot-console`).

`GET copilot/projects/{project_id}/nodes/{node}/console` (a websocket upgrade; `node` is
the node's name): the server opens the node's console as the copilot's tools reach it
(telnet to its port, or GNS3's console websocket with the server's own GNS3 credentials,
which never leave the server) and relays text both ways: each message from the client is
typed on the console, the console's output comes back as text messages. The socket closes
when the console does. Refused before the upgrade, as JSON like every copilot route: 404
for a node the project does not have (its nodes named, and the closest one), 409 for a
closed project or a stopped node, 502 when the console cannot be opened. It needs the
"write" permission on the copilot resource: typing on a device changes it.

The person types as they would in GNS3's own console window: the copilot's command
policy judges what the copilot runs, not what people type.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import ws_authenticated
from jupyter_server.base.websocket import WebSocketMixin
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from ..errors import ErrorAnswer
from .base import AUTH_RESOURCE, CopilotHandler

if TYPE_CHECKING:
    from ...console.telnet import TelnetReader, TelnetWriter
    from ...console.websocket import WebSocketConsole

CONNECT_TIMEOUT = 10.0
"""Seconds the console may take to open."""
READ_SIZE = 4096
TERMINAL_TYPE = "vt100"


class NodeConsoleHandler(WebSocketMixin, WebSocketHandler, CopilotHandler):
    """The websocket of one node's console (module docstring)."""

    warm_up_stage = "core"

    def initialize(self, **kwargs: Any) -> None:
        super().initialize(**kwargs)
        self._reader: TelnetReader | None = None
        self._writer: TelnetWriter | None = None
        self._link: WebSocketConsole | None = None
        self._relay: asyncio.Future[None] | None = None

    def set_default_headers(self) -> None:
        """No Jupyter page headers on a websocket."""

    async def prepare(self) -> None:  # type: ignore[override]
        # The copilot's refusals (not WebSocketMixin's): an API handler never redirects to
        # a login page, which is all the mixin's version changes.
        await CopilotHandler.prepare(self)

    @ws_authenticated
    async def get(self, project_id: str, node: str) -> None:
        from ...console import connect_console
        from ...tools.modes import TEACHING

        authorizer = self.authorizer
        if not await ensure_async(
            authorizer.is_authorized(self, self.current_user, "write", AUTH_RESOURCE)
        ):
            raise ErrorAnswer(403, "You may not open device consoles here.", type="Forbidden")
        project_id = self.project_id_from(project_id)
        project = await self.opened_project(project_id)
        ctx = self.copilot.lab().tool_context(project_id, TEACHING, asyncio.Event())
        nodes = await ctx.nodes()
        found = _named(nodes, node)
        if found is None:
            names = [n.name for n in nodes]
            close = difflib.get_close_matches(node, names, n=1)
            guess = f"; did you mean {close[0]}?" if close else ""
            raise ErrorAnswer(
                404,
                f"Project {project.name!r} has no node {node!r} "
                f"(nodes: {', '.join(names) or 'none'}){guess}",
                type="NodeNotFound",
            )
        if found.status != "started":
            raise ErrorAnswer(
                409,
                f"{found.name} is {found.status or 'not started'}: start it first (its "
                "console is open only while it runs).",
                type="NodeNotStarted",
            )
        target = await ctx.console_target(found)
        self._reader, self._writer, self._link = await connect_console(
            target,
            timeout=CONNECT_TIMEOUT,
            terminal_type=TERMINAL_TYPE,
            columns=self.query_int("columns", 80, high=500),
            rows=self.query_int("rows", 24, high=200),
        )
        try:
            await super().get(project_id, node)
        except BaseException:
            self._close_console()
            raise

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        self._relay = asyncio.ensure_future(self._console_to_socket())

    def on_message(self, message: str | bytes) -> None:
        text = message if isinstance(message, str) else message.decode("utf-8", "replace")
        if self._writer is not None:
            self._writer.write(text)

    def on_close(self) -> None:
        if self._relay is not None:
            self._relay.cancel()
        self._close_console()

    async def _console_to_socket(self) -> None:
        assert self._reader is not None
        with contextlib.suppress(ConnectionError, OSError, WebSocketClosedError):
            while text := await self._reader.read(READ_SIZE):
                await self.write_message(text)
        self.close(1000, "The console closed.")

    def _close_console(self) -> None:
        writer, link = self._writer, self._link
        self._reader = self._writer = self._link = None
        if writer is not None:
            writer.close()
        if link is not None:
            task = asyncio.ensure_future(link.wait_closed())
            task.add_done_callback(lambda done: done.exception())


def _named(nodes: list[Any], name: str) -> Any:
    """The node called `name` (else the one whose name differs only in case), or None."""
    for exact in (True, False):
        found = [
            n for n in nodes if n.name == name or (not exact and n.name.lower() == name.lower())
        ]
        if len(found) == 1:
            return found[0]
    return None
