"""Who is calling the hub service, by JupyterHub's own machinery.

A caller sends a hub token (`Authorization: Bearer <token>` or `token <token>`): a
single-user server's `JUPYTERHUB_API_TOKEN`, or a user's API token. A browser instead
carries the service's OAuth cookie, set by JupyterHub's `HubOAuthCallbackHandler` at
`{prefix}oauth_callback` after the hub's login (the dashboard). Either way JupyterHub's
`HubAuth` / `HubOAuth` asks the hub whose token it is (cached for `cache_max_age`, 5
minutes: a change of groups reaches the service within that). The token must hold the
service's access scope (`access:services!service=<name>`, granted in
`jupyterhub_config.py`) and belong to a user, not a service. The hub's identity model
always carries the user's name, groups and `admin` flag (JupyterHub's "identify" scopes):
no `oauth_client_allowed_scopes` are needed for them.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from tornado.httputil import HTTPServerRequest, url_concat

from .caller import Caller
from .gateway import bearer_token

if TYPE_CHECKING:
    from jupyterhub.services.auth import HubAuth, HubOAuth
    from tornado.web import RequestHandler

log = logging.getLogger(__name__)


class Identity(Protocol):
    """What the service's routes need to know who calls."""

    async def authenticate(self, request: HTTPServerRequest) -> Caller | None: ...


class HubIdentity:
    """`authenticate(request) -> Caller | None` over a `HubAuth` (the gateway's and the
    service routes' authenticator); with a `HubOAuth`, also the dashboard's browser login
    (`current_caller`, `log_in`, `oauth_callback_route`)."""

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
        return Caller(
            name=model["name"],
            groups=frozenset(model.get("groups") or ()),
            admin=bool(model.get("admin")),
        )

    async def authenticate(self, request: HTTPServerRequest) -> Caller | None:
        token = bearer_token(request)
        return await self.caller_for_token(token) if token else None

    async def current_caller(self, handler: RequestHandler) -> Caller | None:
        """The dashboard's caller: a hub token in the `Authorization` header (scripts,
        notebooks), else the OAuth cookie of the browser's hub login (needs a `HubOAuth`
        and the application's `cookie_secret`). A token the hub no longer accepts is no
        login: the browser is sent to log in again."""
        token = bearer_token(handler.request)
        if token:
            return await self.caller_for_token(token)
        cookie_name = getattr(self.hub_auth, "cookie_name", None)
        if not cookie_name:
            return None
        value = handler.get_secure_cookie(cookie_name)
        return await self.caller_for_token(value.decode("ascii", "replace")) if value else None

    async def group_members(self, group: str) -> list[str] | None:
        """The hub's members of `group`, asked with the service's own token (its role needs
        `read:groups`); None when the hub does not say (scope not granted, no such group,
        the hub did not answer): the dashboard then falls back on the usage records."""
        import httpx

        url = f"{self.hub_auth.api_url.rstrip('/')}/groups/{quote(group, safe='')}"
        headers = {"Authorization": f"token {self.hub_auth.api_token}"}
        try:
            async with httpx.AsyncClient(timeout=10, trust_env=False) as client:
                response = await client.get(url, headers=headers)
        except httpx.HTTPError as exc:
            log.warning("Could not ask the hub for the group %s: %s", group, exc)
            return None
        users = None
        if response.status_code == 200:
            with contextlib.suppress(ValueError):
                body = response.json()
                users = body.get("users") if isinstance(body, dict) else None
        if not isinstance(users, list):
            log.info(
                "The hub does not list the members of %s (HTTP %s; the service's role "
                "needs read:groups): using the usage records",
                group,
                response.status_code,
            )
            return None
        return [str(user) for user in users]

    def log_in(self, handler: RequestHandler) -> None:
        """Redirect a browser with no login to the hub's OAuth authorization (PKCE and the
        state cookie as JupyterHub's `HubAuthenticated.get_login_url` makes them); back at
        `oauth_callback`, it returns to the page it asked for."""
        oauth: HubOAuth = self.hub_auth
        params: dict[str, Any] = {}
        verifier = None
        if getattr(oauth, "pkce_enabled", False):  # JupyterHub >= 6
            verifier, challenge, method = oauth.generate_pkce_code_challenge()
            params |= {"code_challenge": challenge, "code_challenge_method": method}
        params["state"] = oauth.set_state_cookie(
            handler, next_url=handler.request.uri, code_verifier=verifier
        )
        handler.redirect(url_concat(oauth.login_url, params))


def oauth_callback_route(path: str, hub_auth: HubOAuth) -> tuple[str, Any, dict[str, Any]]:
    """JupyterHub's `HubOAuthCallbackHandler` at `path`, on the same `HubOAuth` as the
    service (the OAuth states it checks are kept in that instance)."""
    from jupyterhub.services.auth import HubOAuthCallbackHandler

    # jupyterhub ships no type information: its handler is `Any` to mypy.
    class OAuthCallback(HubOAuthCallbackHandler):  # type: ignore[misc]
        def initialize(self, hub_auth: HubOAuth) -> None:
            self.hub_auth = hub_auth

    return (path, OAuthCallback, {"hub_auth": hub_auth})
