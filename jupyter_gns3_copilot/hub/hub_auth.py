"""Who is calling the hub service, by JupyterHub's own token check.

A caller sends a hub token (`Authorization: Bearer <token>` or `token <token>`): a
single-user server's `JUPYTERHUB_API_TOKEN`, or a user's API token. JupyterHub's
`HubAuth` asks the hub whose token it is (cached for a few minutes); the token must hold
the service's access scope (`access:services!service=<name>`, granted in
`jupyterhub_config.py`), and belong to a user (not a service).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from tornado.httputil import HTTPServerRequest

from .caller import Caller
from .gateway import bearer_token

if TYPE_CHECKING:
    from jupyterhub.services.auth import HubAuth

log = logging.getLogger(__name__)


class Identity(Protocol):
    """What the service's routes need to know who calls."""

    async def authenticate(self, request: HTTPServerRequest) -> Caller | None: ...


class HubIdentity:
    """`authenticate(request) -> Caller | None` over a `HubAuth` (the gateway's and the
    service routes' authenticator)."""

    def __init__(self, hub_auth: HubAuth) -> None:
        self.hub_auth = hub_auth

    async def caller_for_token(self, token: str) -> Caller | None:
        """The hub user owning `token` with their groups, if the token may use the service."""
        from jupyterhub.services.auth import check_scopes

        try:
            model = await self.hub_auth.user_for_token(token, sync=False)
        except Exception as exc:  # the hub did not answer: nobody is authenticated
            log.warning("Could not check a token with the hub: %s", exc)
            return None
        if not model or model.get("kind", "user") != "user" or not model.get("name"):
            return None
        required = self.hub_auth.access_scopes
        if required and not check_scopes(required, set(model.get("scopes") or ())):
            return None
        return Caller(name=model["name"], groups=frozenset(model.get("groups") or ()))

    async def authenticate(self, request: HTTPServerRequest) -> Caller | None:
        token = bearer_token(request)
        return await self.caller_for_token(token) if token else None
