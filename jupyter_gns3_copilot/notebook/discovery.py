"""Finding the Jupyter server from inside a kernel.

jupyter_server tells its kernels nothing about itself, so the client looks, in order:

1. an explicit URL and token (`%copilot connect URL --token T`, `Copilot(url, token)`);
2. JupyterHub's variables, which a single-user server passes to its kernels:
   `JUPYTERHUB_SERVICE_URL` (the server's own bind URL, with its prefix), or
   `JUPYTERHUB_SERVICE_PREFIX` on the host and port of the server found by 3 or 4, with
   `JUPYTERHUB_API_TOKEN` as the token;
3. the variables the copilot extension sets when its server starts
   (`GNS3_COPILOT_SERVER_URL`, `GNS3_COPILOT_SERVER_TOKEN`; `server/kernel_env.py`);
4. the running server (`jupyter_server.serverapp.list_running_servers()`) whose pid is
   this kernel's parent process.

The token always travels as `Authorization: token <token>` (Jupyter's and JupyterHub's
scheme). Nothing here talks to the network.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from ..server.kernel_env import HUB_TOKEN_ENV, SERVER_TOKEN_ENV, SERVER_URL_ENV
from .errors import ENABLE_HINT, ServerNotFound

HUB_SERVICE_URL_ENV = "JUPYTERHUB_SERVICE_URL"
HUB_SERVICE_PREFIX_ENV = "JUPYTERHUB_SERVICE_PREFIX"
NOTEBOOK_ENV = "JPY_SESSION_NAME"
"""The notebook's path, which jupyter_server gives each kernel it starts for a notebook
(kept across restarts; ipykernel also sets it as `__session__`)."""

Source = Literal["explicit", "jupyterhub", "extension", "running-server"]
_WILDCARD_HOSTS = {"", "0.0.0.0", "::", "*", "localhost"}


def notebook_path(env: Mapping[str, str] | None = None) -> str | None:
    """The path of the notebook this kernel runs for (None: not started for a notebook,
    e.g. a console, a script or a kernel started by nbclient)."""
    env = os.environ if env is None else env
    return env.get(NOTEBOOK_ENV, "").strip() or None


@dataclass(frozen=True)
class ServerInfo:
    """Where the Jupyter server is and how to authenticate (the token is not in repr).

    `url` is the server's base URL ending in "/" (`http://127.0.0.1:8888/` plus any
    base_url), or `http+unix://<quoted socket path>/<base_url>` for a unix socket.
    """

    url: str
    token: str = field(default="", repr=False)
    source: Source = "explicit"

    def headers(self) -> dict[str, str]:
        """The request headers carrying the token (none without a token)."""
        return {"Authorization": f"token {self.token}"} if self.token else {}

    def describe(self) -> str:
        """E.g. `http://127.0.0.1:8888/ (published by the copilot extension, with a token)`."""
        how = {
            "explicit": "given explicitly",
            "jupyterhub": "from JupyterHub's variables",
            "extension": "published by the copilot extension",
            "running-server": "the server that started this kernel",
        }[self.source]
        token = "with a token" if self.token else "without a token"
        return f"{self.url} ({how}, {token})"


def normalize_url(url: str) -> str:
    """`url` with a trailing "/" and a wildcard or localhost host made 127.0.0.1."""
    url = url.strip()
    if not url:
        raise ServerNotFound("The server URL is empty.")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "http+unix"):
        raise ServerNotFound(f"Unsupported server URL {url!r}: use http:// or https://.")
    netloc = parts.netloc
    if parts.scheme != "http+unix":
        host = parts.hostname or ""
        if host in _WILDCARD_HOSTS:
            new_host = "[::1]" if host == "::" else "127.0.0.1"
            netloc = new_host + (f":{parts.port}" if parts.port else "")
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return urlunsplit((parts.scheme, netloc, path, "", ""))


def explicit_server(url: str, token: str | None = None) -> ServerInfo:
    """The server at `url` (token: the given one, else none)."""
    return ServerInfo(url=normalize_url(url), token=token or "", source="explicit")


def running_servers(runtime_dir: str | None = None) -> list[dict[str, Any]]:
    """jupyter_server's running-server entries (imported only when needed)."""
    from jupyter_server.serverapp import list_running_servers

    return list(list_running_servers(runtime_dir=runtime_dir))


def parent_server(
    servers: Iterable[Mapping[str, Any]], parent_pid: int
) -> Mapping[str, Any] | None:
    """The running-server entry whose pid is `parent_pid`, if any."""
    return next((s for s in servers if s.get("pid") == parent_pid), None)


def discover(
    env: Mapping[str, str] | None = None,
    *,
    parent_pid: int | None = None,
    list_servers: Callable[[], Iterable[Mapping[str, Any]]] = running_servers,
) -> ServerInfo:
    """The Jupyter server this kernel should talk to (module docstring, steps 2-4).

    `env`, `parent_pid` and `list_servers` default to this process's environment, parent
    and jupyter_server's runtime directory (given only by tests). Raises `ServerNotFound`
    saying what was tried and how to connect by hand.
    """
    env = os.environ if env is None else env
    parent_pid = os.getppid() if parent_pid is None else parent_pid
    servers: list[Mapping[str, Any]] | None = None

    def parent_entry() -> Mapping[str, Any] | None:
        nonlocal servers
        if servers is None:
            try:
                servers = list(list_servers())
            except Exception:
                servers = []
        return parent_server(servers, parent_pid)

    hub_token = env.get(HUB_TOKEN_ENV, "")
    if env.get(HUB_SERVICE_URL_ENV):
        return ServerInfo(normalize_url(env[HUB_SERVICE_URL_ENV]), hub_token, "jupyterhub")
    published = env.get(SERVER_URL_ENV, "")
    if env.get(HUB_SERVICE_PREFIX_ENV):
        base = published or (parent_entry() or {}).get("url", "")
        if base and not base.startswith("http+unix"):
            parts = urlsplit(normalize_url(base))
            url = urlunsplit((parts.scheme, parts.netloc, env[HUB_SERVICE_PREFIX_ENV], "", ""))
            return ServerInfo(normalize_url(url), hub_token, "jupyterhub")
    if published:
        return ServerInfo(normalize_url(published), env.get(SERVER_TOKEN_ENV, ""), "extension")
    entry = parent_entry()
    if entry is not None:
        return ServerInfo(
            normalize_url(str(entry.get("url", ""))),
            str(entry.get("token") or ""),
            "running-server",
        )
    raise ServerNotFound(
        "No Jupyter server found for this kernel: no JupyterHub variables, no "
        f"{SERVER_URL_ENV} (the copilot extension sets it when its server starts: is it "
        f"enabled? `{ENABLE_HINT}`), and no running Jupyter server is this kernel's parent "
        "(a kernel started outside Jupyter, e.g. terminal IPython?). Connect by hand: "
        "`%copilot connect http://127.0.0.1:8888/ --token <token>`."
    )
