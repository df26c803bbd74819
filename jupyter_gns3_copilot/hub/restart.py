"""Restarting the hub service in place, keeping its listening socket (on SIGHUP).

JupyterHub starts a managed service and notices that it exited only at its next poll of
the process, every 30 s (the `poll_interval` of the spawner it makes for services, which
takes none of the hub's configuration), so a service that stops is gone for up to about
33 s before the hub starts it again. A restart in place avoids that: the process runs
itself again with `exec` (same pid, so the hub sees nothing), handing the listening
sockets over through `LISTEN_FDS_ENV`. Connections that arrive meanwhile wait in the
kernel's backlog and are answered by the new process; none is refused. Requests in
progress at that moment are answered first (`draining_server.DrainingHTTPServer.drain`,
up to `DRAIN_SECONDS`); only those still running then are cut.

    sockets = listening_sockets(port, address)       # inherited after a restart, else bound
    ...
    keep = keep_open(sockets)                         # before the server closes them
    exec_again(keep)                                  # does not return

`PID_FILE` in the data directory names the process to signal:
`kill -HUP "$(cat <data_dir>/service.pid)"`.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from pathlib import Path

log = logging.getLogger(__name__)

LISTEN_FDS_ENV = "GNS3_COPILOT_HUB_LISTEN_FDS"
PID_FILE = "service.pid"


def listening_sockets(port: int, address: str) -> list[socket.socket]:
    """The sockets handed over by the process this one replaced, else new ones bound to
    `address`:`port`. The hand-over variable is removed from the environment."""
    import tornado.netutil

    handed = os.environ.pop(LISTEN_FDS_ENV, "")
    sockets = []
    for fd in filter(None, handed.split(",")):
        try:
            sock = socket.socket(fileno=int(fd))
        except (OSError, ValueError) as exc:
            log.warning(
                "%s names %r, which is no socket (%s): binding anew", LISTEN_FDS_ENV, fd, exc
            )
            return tornado.netutil.bind_sockets(port, address)
        sock.setblocking(False)
        sockets.append(sock)
    return sockets or tornado.netutil.bind_sockets(port, address)


def keep_open(sockets: list[socket.socket]) -> list[int]:
    """Duplicates of the sockets' descriptors, inheritable, which stay open (and keep
    listening) when the server closes the sockets."""
    kept = [os.dup(sock.fileno()) for sock in sockets]
    for fd in kept:
        os.set_inheritable(fd, True)
    return kept


def exec_again(fds: list[int]) -> None:
    """Run this process's command again in place, handing over `fds`."""
    os.environ[LISTEN_FDS_ENV] = ",".join(str(fd) for fd in fds)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, sys.orig_argv)


def write_pid_file(data_dir: str) -> Path:
    """`PID_FILE` in `data_dir` with this process's id."""
    path = Path(data_dir) / PID_FILE
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(f"{os.getpid()}\n")
    return path
