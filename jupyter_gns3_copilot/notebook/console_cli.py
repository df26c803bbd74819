"""`gns3-copilot-console`: a device's console in a terminal (JupyterLab's Terminal).

::

    gns3-copilot-console PC1 [--project "OSPF lab"] [--server http://127.0.0.1:8888/ --token T]

It talks to the Jupyter server's copilot API, found as `gns3-copilot-check` finds it (a
JupyterLab terminal has the variables the extension publishes), and opens the node's
console through the server (`server/handlers/console.py`: the server reaches the console
with its own GNS3 settings, so no telnet client and no GNS3 password are needed here).
The project is `--project` (name or id), else the one project GNS3 has open. What is
typed goes to the device as typed (the terminal is in raw mode); Ctrl+] quits.

Exit status: 0 once the console is left (Ctrl+]) or closed by the device's end, 2 when it
could not be opened (no such node, the node stopped, the server unreachable).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import select
import shutil
import sys
import termios
import threading
import tty
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from ..server.kernel_env import SERVER_TOKEN_ENV
from .copilot import Copilot
from .discovery import ServerInfo, discover, explicit_server
from .errors import CopilotError, UsageError
from .models import ProjectInfo

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

_END_OF_LINE = re.compile(r"\r\n?|\n")
QUIT_KEY = b"\x1d"
"""Ctrl+], as telnet clients use it."""
OPEN_TIMEOUT = 30.0
"""Seconds the server may take to open the console (it waits up to 10 s for the device)."""
COULD_NOT_OPEN = 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (module docstring); returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        server = (
            explicit_server(args.server, args.token or os.environ.get(SERVER_TOKEN_ENV))
            if args.server
            else discover()
        )
        project = _project(server, args.project)
        socket = open_console(server, project.project_id, args.node)
    except (CopilotError, OSError) as exc:
        print(f"gns3-copilot-console: {exc}", file=sys.stderr)
        return COULD_NOT_OPEN
    stdin = sys.stdin.fileno()
    with socket, _raw(stdin):  # raw before the banner: keys typed after it go as typed
        _write_out(
            f"Connected to the console of {args.node} in {project.name!r}. "
            "Press Enter for its prompt; Ctrl+] quits.\r\n"
        )
        bridge(socket, stdin, _write_out)
        _write_out("\r\nConsole closed.\r\n")
    return 0


def _project(server: ServerInfo, wanted: str | None) -> ProjectInfo:
    with Copilot(server=server, notebook="") as copilot:
        if wanted:
            return copilot.find_project(wanted)
        opened = [p for p in copilot.projects() if p.status == "opened"]
    if len(opened) == 1:
        return opened[0]
    names = ", ".join(repr(p.name) for p in opened) or "none"
    raise UsageError(f"Name the project: --project NAME (projects open in GNS3: {names}).")


def open_console(server: ServerInfo, project_id: str, node: str) -> ClientConnection:
    """The websocket of `node`'s console in the project (the copilot's console route);
    `CopilotError` with the server's reason when it refuses."""
    from websockets.exceptions import InvalidHandshake, InvalidStatus
    from websockets.sync.client import connect

    parts = urlsplit(server.url)
    if parts.scheme not in ("http", "https"):
        raise UsageError(f"The console needs an http(s) server URL, not {server.url}.")
    columns, rows = shutil.get_terminal_size()
    path = parts.path.rstrip("/") + (
        f"/copilot/projects/{quote(project_id)}/nodes/{quote(node, safe='')}/console"
    )
    scheme = "wss" if parts.scheme == "https" else "ws"
    query = urlencode({"columns": columns, "rows": rows})
    url = urlunsplit((scheme, parts.netloc, path, query, ""))
    try:
        return connect(url, additional_headers=server.headers(), open_timeout=OPEN_TIMEOUT)
    except InvalidStatus as exc:
        raise CopilotError(_refusal(exc.response.status_code, exc.response.body)) from None
    except (InvalidHandshake, TimeoutError) as exc:
        raise CopilotError(f"The console could not be opened: {exc}") from None


def bridge(socket: ClientConnection, stdin: int, write: Callable[[str], None]) -> None:
    """Relay `stdin` to the console and its output to `write`, until Ctrl+], the end of
    `stdin`, or the console closing. The end of a line (Enter in raw mode: a carriage
    return; a newline from a pipe) is sent as telnet sends it: CR NUL."""
    closed = threading.Event()

    def receive() -> None:
        with contextlib.suppress(Exception):  # the connection closed, whichever way
            for message in socket:
                write(message if isinstance(message, str) else message.decode("utf-8", "replace"))
        closed.set()

    reader = threading.Thread(target=receive, name="console-output", daemon=True)
    reader.start()
    while not closed.is_set():
        ready, _, _ = select.select([stdin], [], [], 0.2)
        if not ready:
            continue
        data = os.read(stdin, 1024)
        typed, quit_key, _ = data.partition(QUIT_KEY)
        if typed and not closed.is_set():
            with contextlib.suppress(Exception):
                socket.send(_END_OF_LINE.sub("\r\0", typed.decode("utf-8", "replace")))
        if quit_key or not data:
            break
    socket.close()
    reader.join(timeout=5)


@contextlib.contextmanager
def _raw(fd: int) -> Iterator[None]:
    """`fd` in raw mode while inside (keys go to the device as typed), if a terminal."""
    if not os.isatty(fd):
        yield
        return
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _write_out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _refusal(status: int, body: bytes | bytearray | None) -> str:
    """The copilot's reason for refusing the console (its JSON error), or the status."""
    try:
        return str(json.loads(body or b"")["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"The server refused the console (HTTP {status})."


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gns3-copilot-console",
        description="Open a GNS3 device's console in this terminal (Ctrl+] quits).",
        epilog="Exit status: 0 console left or closed, 2 it could not be opened.",
    )
    parser.add_argument("node", help="the device, by its name in GNS3 (e.g. PC1)")
    parser.add_argument("--project", help="the GNS3 project, by name or id (default: the one open)")
    parser.add_argument("--server", help="the Jupyter server's URL (default: found)")
    parser.add_argument("--token", help=f"its token (default: ${SERVER_TOKEN_ENV})")
    return parser


if __name__ == "__main__":
    sys.exit(main())
