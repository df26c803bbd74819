"""Consoles to test against: VPCS nodes of a real GNS3 project (`build_pcs`,
`console_targets`, `UNUSED_ADDRESS`), a started router's open session (`router_console`)
and `linux_shell`, a real `/bin/sh` on a pseudo-terminal behind a telnet server,
optionally in a network namespace of its own."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import telnetlib3

from jupyter_gns3_copilot.console import ConsoleSession, ConsoleTarget, ConsoleTransport
from jupyter_gns3_copilot.gns3 import GNS3Client

UNUSED_ADDRESS = "10.0.0.99"
ROUTER_BOOT_TIMEOUT = 180.0
"""Seconds a lab kit router may take to show its prompt (about 10 s when idle)."""


async def router_console(gns3: GNS3Client, project_id: str, name: str, url: str) -> ConsoleSession:
    """An open telnet console session to the started node `name`, its dialect decided
    the way the tools decide it (its template's usage notes included)."""
    notes = {t.template_id: t.notes for t in await gns3.list_templates()}
    [node] = [n for n in await gns3.list_nodes(project_id) if n.name == name]
    target = ConsoleTarget.from_node(
        node, server_host=urlsplit(url).hostname, inherited=notes.get(node.template_id or "", [])
    )
    session = ConsoleSession(target, prompt_timeout=ROUTER_BOOT_TIMEOUT)
    await session.open()
    return session


async def console_targets(
    gns3: GNS3Client, project: Any, transport: ConsoleTransport
) -> dict[str, ConsoleTarget]:
    """Each node's console target, the way the tools layer builds them."""
    host = urlsplit(project.url).hostname
    nodes = await gns3.list_nodes(project.project_id)
    return {
        node.name: ConsoleTarget.from_node(
            node,
            server_host=host,
            transport=transport,
            gns3_url=gns3.url,
            token_provider=gns3.access_token,
        )
        for node in nodes
        if node.node_type == "vpcs"
    }


async def build_pcs(gns3: GNS3Client, project: Any, names: list[str], *, switch: bool) -> None:
    for index, name in enumerate(names):
        await gns3.create_node_from_template(project.project_id, "VPCS", name, x=index * 150)
    if switch:
        await gns3.create_node_from_template(
            project.project_id, "ethernet_switch", "Switch1", x=150, y=150
        )
        for index, name in enumerate(names):
            await gns3.create_link(project.project_id, name, "e0", "Switch1", f"e{index}")


SHELL_ON_A_PTY = "exec script -qfc '/bin/sh -i' /dev/null"
"""util-linux `script` gives the shell a pseudo-terminal (so it echoes and prompts)."""


async def shell_on_a_pty(
    reader: telnetlib3.TelnetReaderUnicode,
    writer: telnetlib3.TelnetWriterUnicode,
    network: str | None = None,
) -> None:
    """Telnet shell callback: bridge the connection to `/bin/sh -i` on a pseudo-terminal.
    With `network` (shell commands), the shell runs in a network namespace of its own
    (`unshare -rn`: nothing of the host's network changes) set up by those commands."""
    line = SHELL_ON_A_PTY if network is None else f"{network}\n{SHELL_ON_A_PTY}"
    argv = ["sh", "-c", line] if network is None else ["unshare", "-rn", "sh", "-ec", line]
    shell = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "PS1": "$ ", "TERM": "dumb"},
    )
    assert shell.stdin is not None and shell.stdout is not None
    stdout = shell.stdout

    async def to_client() -> None:
        while chunk := await stdout.read(4096):
            writer.write(chunk.decode(errors="replace"))

    pumping = asyncio.ensure_future(to_client())
    try:
        while typed := await reader.read(4096):
            shell.stdin.write(typed.encode())
            await shell.stdin.drain()
    finally:
        pumping.cancel()
        if shell.returncode is None:
            shell.kill()
        await shell.wait()


@contextlib.asynccontextmanager
async def linux_shell(network: str | None = None) -> AsyncIterator[ConsoleTarget]:
    """A telnet server on 127.0.0.1 giving each connection a real shell (in a network
    namespace set up by `network`, see `shell_on_a_pty`); its target."""
    shells: list[asyncio.Future[None]] = []

    async def shell(
        reader: telnetlib3.TelnetReaderUnicode, writer: telnetlib3.TelnetWriterUnicode
    ) -> None:
        shells.append(asyncio.ensure_future(shell_on_a_pty(reader, writer, network)))
        await shells[-1]

    server = await telnetlib3.create_server(
        "127.0.0.1",
        0,
        shell=shell,
        encoding="utf-8",
        force_binary=True,
        connect_maxwait=0.5,
    )
    try:
        port = server.sockets[0].getsockname()[1]
        yield ConsoleTarget(name="host1", host="127.0.0.1", port=port, dialect="linux")
    finally:
        server.close()
        await server.wait_closed()
        await asyncio.wait_for(asyncio.gather(*shells), 10)
