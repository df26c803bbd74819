"""Tell kernels where this server is: environment variables set once the server listens.

jupyter_server exports no URL to kernels, but kernels inherit the server's environment, so
`_start_jupyter_server_extension` sets, for every kernel started afterwards:

- `GNS3_COPILOT_SERVER_URL`: the server's base URL as reachable from this machine
  (`http://127.0.0.1:8888/` plus any base_url; a wildcard or localhost bind address
  becomes 127.0.0.1, a unix socket gives `http+unix://<quoted path>/`);
- `GNS3_COPILOT_SERVER_TOKEN`: a token the server accepts in `Authorization: token <...>`.
  Under JupyterHub it is the single-user server's `JUPYTERHUB_API_TOKEN` (which kernels
  already inherit; the hub accepts it for this server's owner); otherwise the server's own
  token (`IdentityProvider.token`, generated or configured). Empty when the server has no
  token (password-only login or authentication disabled): clients then send none.

Kernels started before the server listened (none, normally) do not see them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

SERVER_URL_ENV = "GNS3_COPILOT_SERVER_URL"
SERVER_TOKEN_ENV = "GNS3_COPILOT_SERVER_TOKEN"
HUB_TOKEN_ENV = "JUPYTERHUB_API_TOKEN"
_WILDCARD_HOSTS = {"", "0.0.0.0", "::", "*", "localhost"}


@dataclass(frozen=True)
class PublishedServer:
    """What was published: the URL and the names of the variables set."""

    url: str
    token_source: str
    variables: dict[str, str] = field(repr=False)


def local_server_url(serverapp: Any) -> str:
    """The server's URL (with base_url) as a client on this machine reaches it."""
    base_url = serverapp.base_url or "/"
    if serverapp.sock:
        return f"http+unix://{quote(serverapp.sock, safe='')}{base_url}"
    scheme = "https" if serverapp.certfile else "http"
    ip = serverapp.ip or ""
    if ip in _WILDCARD_HOSTS:
        host = "[::1]" if ip == "::" else "127.0.0.1"
    else:
        host = f"[{ip}]" if ":" in ip else ip
    return f"{scheme}://{host}:{serverapp.port}{base_url}"


def server_token(serverapp: Any) -> tuple[str, str]:
    """A token the server accepts and where it comes from ("jupyterhub", "server", "none")."""
    hub_token = os.environ.get(HUB_TOKEN_ENV)
    if hub_token:
        return hub_token, "jupyterhub"
    token = getattr(serverapp.identity_provider, "token", "") or ""
    return token, "server" if token else "none"


def publish_server_to_kernels(serverapp: Any) -> PublishedServer:
    """Set the variables in this process's environment (inherited by new kernels)."""
    url = local_server_url(serverapp)
    token, source = server_token(serverapp)
    variables = {SERVER_URL_ENV: url, SERVER_TOKEN_ENV: token}
    os.environ.update(variables)
    return PublishedServer(url=url, token_source=source, variables=variables)
