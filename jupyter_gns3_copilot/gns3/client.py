"""Async client for the GNS3 v3 REST API (controller endpoints under /v3).

    async with GNS3Client("http://127.0.0.1:3080", username="admin", password="admin") as gns3:
        project = await gns3.resolve_project("OSPF lab")
        print((await gns3.get_topology(project.project_id)).to_text())

Authentication: with a username and password the client logs in on its first authenticated
request (POST /v3/access/users/authenticate), caches the JWT, and logs in again once when
GNS3 answers 401 (expired or revoked token); a second 401 is a `GNS3AuthError`. A `token`
given to the constructor is used as is (and replaced by a fresh login on 401 when
credentials are also given). A `token_provider` (an async callable, `force` -> JWT) is asked
before every request (it caches and renews the token itself, e.g. the hub service's
per-student token) and once more with `force=True` on a 401.

Every failure is a `GNS3Error` subclass (see errors.py); no httpx exception escapes. Every
request is bounded by `timeout` seconds.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

from ..tls import shared_tls_context
from .errors import (
    CREDENTIALS_HELP,
    URL_HELP,
    GNS3APIError,
    GNS3AuthError,
    GNS3Conflict,
    GNS3Error,
    GNS3NotFound,
    GNS3Timeout,
    GNS3Unreachable,
)
from .models import Drawing, Link, LinkEnd, Node, Port, Project, Snapshot, Template, Version
from .svg import text_note_svg
from .topology import Topology, natural_key, resolve_link_end

DEFAULT_TIMEOUT = 30.0
"""Seconds a request may take (starting many nodes or restoring a snapshot takes a while)."""
CONNECT_TIMEOUT = 5.0
"""Seconds to wait for the TCP connection itself."""
CAPTURE_QUIET = 0.3
"""Seconds without new bytes after which a capture stream has sent all there was (GNS3
sends the file in 8 KB chunks, then polls it every 0.1 s for more)."""

_NO_OP_FILTER = {"frequency_drop": ["0"]}
"""A packet filter that drops nothing; as a string, because GNS3's controller discards a
filter whose first value is the number 0 (see `GNS3Client._update_link`)."""

TokenProvider = Callable[[bool], Awaitable[str]]
"""`provider(force)` -> a GNS3 JWT; `force=True` after GNS3 refused the last one."""

_Subject = tuple[str, str]
"""What a request is about, for not-found errors: (kind, name or id), e.g. ("node", "PC1")."""


def _names(names: Sequence[str]) -> str:
    return ", ".join(sorted(names, key=natural_key)) or "none"


def _detail(response: httpx.Response) -> str:
    """GNS3's own error message: the `message` of its JSON body, else the body text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:500]
    if isinstance(body, dict) and "message" in body:
        return str(body["message"])
    return str(body)[:500]


def _short(detail: str, limit: int = 200) -> str:
    """The first line of `detail`, cut to `limit` characters (the error keeps it whole)."""
    line = detail.strip().splitlines()[0] if detail.strip() else "(no message)"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _transport_reason(exc: BaseException) -> str:
    """A short reason for a transport failure ("connection refused", "unknown host"...)."""
    cause: BaseException | None = exc
    for _ in range(10):
        if cause is None:
            break
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return f"unknown host: {cause.strerror}"
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__


def _is_port(end: LinkEnd, node: Node, port: Port) -> bool:
    return (end.node_id, end.adapter_number, end.port_number) == (
        node.node_id,
        port.adapter_number,
        port.port_number,
    )


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


class GNS3Client:
    """Async client for one GNS3 server; use as `async with GNS3Client(...) as gns3:`.

    `url` is the server's base URL (e.g. "http://127.0.0.1:3080"; a trailing "/v3" and a
    missing "http://" are tolerated). `transport` replaces httpx's default transport (for
    instrumentation). Methods taking a `project_id`, `node_id`, `link_id`... expect GNS3's
    UUIDs; use `resolve_project`, `find_node` and `find_template` to look things up by name.
    """

    def __init__(
        self,
        url: str,
        *,
        username: str | None = None,
        password: str | None = None,
        token: str | None = None,
        token_provider: TokenProvider | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        base = url.strip().rstrip("/")
        if "://" not in base:
            base = f"http://{base}"
        self.url = base.removesuffix("/v3")
        self.username = username
        self._password = password
        self._token = token
        self._token_provider = token_provider
        self.timeout = timeout
        self._auth_lock = asyncio.Lock()
        self._http = httpx.AsyncClient(
            base_url=f"{self.url}/v3",
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            transport=transport,
            verify=shared_tls_context(),
        )

    async def __aenter__(self) -> GNS3Client:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP connections. The client cannot be used afterwards."""
        await self._http.aclose()

    @property
    def token(self) -> str | None:
        """The JWT currently used, or None before the first login."""
        return self._token

    # -- transport and errors ------------------------------------------------------------

    @property
    def _can_login(self) -> bool:
        return self.username is not None and self._password is not None

    @property
    def _can_renew(self) -> bool:
        return self._token_provider is not None or self._can_login

    async def _send(
        self,
        method: str,
        path: str,
        json: Any,
        token: str | None,
        *,
        stream: bool = False,
        content: bytes | None = None,
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            request = self._http.build_request(
                method, path, json=json, content=content, headers=headers
            )
            return await self._http.send(request, stream=stream)
        except httpx.ConnectTimeout as exc:
            raise GNS3Unreachable(
                f"Cannot reach the GNS3 server at {self.url} (no answer to the connection "
                f"within {CONNECT_TIMEOUT:g} s). {URL_HELP}.",
                url=self.url,
                detail=str(exc) or type(exc).__name__,
            ) from exc
        except httpx.TimeoutException as exc:
            raise GNS3Timeout(
                f"GNS3 at {self.url} did not answer {method} {path} within {self.timeout:g} s.",
                url=f"{self.url}/v3{path}",
                detail=str(exc) or type(exc).__name__,
            ) from exc
        except httpx.TransportError as exc:
            reason = _transport_reason(exc)
            raise GNS3Unreachable(
                f"Cannot reach the GNS3 server at {self.url} ({reason}). {URL_HELP}.",
                url=self.url,
                detail=reason,
            ) from exc

    async def _login(self) -> str:
        response = await self._send(
            "POST",
            "/access/users/authenticate",
            {"username": self.username, "password": self._password},
            None,
        )
        if response.status_code == 401:
            raise GNS3AuthError(
                f"GNS3 at {self.url} refused the login of user '{self.username}'. "
                f"{CREDENTIALS_HELP}.",
                status=401,
                url=str(response.request.url),
                detail=_detail(response),
            )
        if response.is_error:
            raise self._error(response, ())
        return str(response.json()["access_token"])

    async def authenticate(self) -> str:
        """Log in with the username and password now and return the new JWT.

        Not needed before other calls (they log in when needed); useful to check
        credentials early. Raises `GNS3AuthError` when they are wrong or missing. With a
        `token_provider`, the provider's current token.
        """
        if self._token_provider is not None:
            self._token = await self._token_provider(False)
            return self._token
        if not self._can_login:
            raise GNS3AuthError(
                f"No GNS3 username and password to log in to {self.url} with. "
                f"Set GNS3_USER and GNS3_PASSWORD.",
                url=self.url,
            )
        async with self._auth_lock:
            self._token = await self._login()
            return self._token

    async def access_token(self, renew: bool = False) -> str | None:
        """The JWT this client sends (logging in, or asking the token provider, when
        needed), for GNS3 routes outside this client such as a console websocket.

        `renew=True` after GNS3 did not accept it: a new one when this client can get
        one (credentials or a token provider), else the same. None without any means to
        authenticate. Raises `GNS3Error` when the login or the provider fails.
        """
        token = await self._current_token()
        if renew and self._can_renew:
            token = await self._renewed_token(token)
        return token

    async def _current_token(self) -> str | None:
        if self._token_provider is not None:
            self._token = await self._token_provider(False)
            return self._token
        if self._token is None and self._can_login:
            async with self._auth_lock:
                if self._token is None:
                    self._token = await self._login()
        return self._token

    async def _renewed_token(self, rejected: str | None) -> str:
        async with self._auth_lock:
            # Another request may already have logged in again while we waited.
            if self._token is None or self._token == rejected:
                self._token = (
                    await self._token_provider(True)
                    if self._token_provider is not None
                    else await self._login()
                )
            return self._token

    async def _request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        auth: bool = True,
        subjects: Sequence[_Subject] = (),
        stream: bool = False,
        content: bytes | None = None,
    ) -> httpx.Response:
        """Send one request and return the successful response; raise a `GNS3Error` else.

        `subjects` names what the request is about, most general first (e.g. the project,
        then the node) so that a 404 can say which one GNS3 did not find. With `stream`
        the body is not read yet: the caller reads it and closes the response. `content`
        is a raw body (instead of `json`).
        """
        token = await self._current_token() if auth else None
        response = await self._send(method, path, json, token, stream=stream, content=content)
        if response.status_code == 401 and auth and self._can_renew:
            await response.aclose()
            token = await self._renewed_token(token)
            response = await self._send(method, path, json, token, stream=stream, content=content)
        if response.is_error:
            if stream:
                await response.aread()
                await response.aclose()
            raise self._error(response, subjects)
        return response

    def _error(self, response: httpx.Response, subjects: Sequence[_Subject]) -> GNS3Error:
        status = response.status_code
        detail = _detail(response)
        url = str(response.request.url)
        request = f"{response.request.method} {response.request.url.path}"
        if status == 401:
            if self._can_login:
                message = (
                    f"GNS3 at {self.url} still refused the request after logging in again "
                    f"as '{self.username}'."
                )
            elif self._token:
                message = f"GNS3 at {self.url} refused the access token. {CREDENTIALS_HELP}."
            else:
                message = f"GNS3 at {self.url} requires a login. Set GNS3_USER and GNS3_PASSWORD."
            return GNS3AuthError(message, status=status, url=url, detail=detail)
        if status == 403:
            who = f"User '{self.username}'" if self.username else "This token"
            return GNS3AuthError(
                f"{who} may not do that on GNS3 ({request}): {_short(detail)}",
                status=status,
                url=url,
                detail=detail,
            )
        if status == 404:
            kind, name = next(
                (s for s in subjects if s[1] in detail),
                subjects[-1] if subjects else ("resource", request),
            )
            return GNS3NotFound(
                f"GNS3 {kind} '{name}' not found.",
                kind=kind,
                name=name,
                status=status,
                url=url,
                detail=detail,
            )
        if status == 408:
            return GNS3Timeout(
                f"GNS3 timed out: {_short(detail)}", status=status, url=url, detail=detail
            )
        if status == 409:
            return GNS3Conflict(
                f"GNS3 refused: {_short(detail)}", status=status, url=url, detail=detail
            )
        return GNS3APIError(
            f"GNS3 answered HTTP {status} to {request}: {_short(detail)}",
            status=status,
            url=url,
            detail=detail,
        )

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return (await self._request(method, path, **kwargs)).json()

    @staticmethod
    def _check_id(kind: str, value: str) -> None:
        """Refuse a name where GNS3 wants a UUID (GNS3 itself would answer an opaque 422)."""
        if not _is_uuid(value):
            raise GNS3NotFound(
                f"'{value}' is not a GNS3 {kind} id (ids are UUIDs); "
                f"look the {kind} up by name first.",
                kind=kind,
                name=value,
            )

    # -- server ------------------------------------------------------------------------

    async def version(self) -> Version:
        """The server's version (needs no login)."""
        return Version.model_validate(await self._json("GET", "/version", auth=False))

    # -- projects ----------------------------------------------------------------------

    async def list_projects(self) -> list[Project]:
        """All projects the user can see, opened or closed."""
        return [Project.model_validate(p) for p in await self._json("GET", "/projects")]

    async def get_project(self, project_id: str) -> Project:
        """The project with this id; `GNS3NotFound` when there is none."""
        self._check_id("project", project_id)
        data = await self._json(
            "GET", f"/projects/{project_id}", subjects=[("project", project_id)]
        )
        return Project.model_validate(data)

    async def find_project(self, name: str) -> Project:
        """The project named `name` (exact, else the only case-insensitive match).

        Raises `GNS3NotFound` listing the existing project names.
        """
        projects = await self.list_projects()
        exact = [p for p in projects if p.name == name]
        folded = [p for p in projects if p.name.lower() == name.lower()]
        for matches in (exact, folded):
            if len(matches) == 1:
                return matches[0]
        raise GNS3NotFound(
            f"No GNS3 project named '{name}'. Projects: {_names([p.name for p in projects])}.",
            kind="project",
            name=name,
            available=sorted((p.name for p in projects), key=natural_key),
        )

    async def resolve_project(self, project: str) -> Project:
        """The project whose id or name is `project`."""
        if _is_uuid(project):
            try:
                return await self.get_project(project)
            except GNS3NotFound:
                pass
        return await self.find_project(project)

    async def create_project(self, name: str) -> Project:
        """Create a project (GNS3 opens it at once); `GNS3Conflict` if the name is taken."""
        return Project.model_validate(await self._json("POST", "/projects", json={"name": name}))

    async def open_project(self, project_id: str) -> Project:
        """Open a closed project (opening an opened one is harmless)."""
        self._check_id("project", project_id)
        data = await self._json(
            "POST", f"/projects/{project_id}/open", subjects=[("project", project_id)]
        )
        return Project.model_validate(data)

    async def close_project(self, project_id: str) -> None:
        """Close a project; GNS3 stops its nodes first."""
        self._check_id("project", project_id)
        await self._request(
            "POST", f"/projects/{project_id}/close", subjects=[("project", project_id)]
        )

    async def delete_project(self, project_id: str) -> None:
        """Delete a project and its files."""
        self._check_id("project", project_id)
        await self._request("DELETE", f"/projects/{project_id}", subjects=[("project", project_id)])

    # -- templates ---------------------------------------------------------------------

    async def list_templates(self) -> list[Template]:
        """All node templates (builtin ones such as "VPCS" and "Ethernet switch" included)."""
        return [Template.model_validate(t) for t in await self._json("GET", "/templates")]

    async def find_template(self, template: str) -> Template:
        """The template whose id, name or template_type is `template` (case-insensitive).

        A name match wins over a type match; among several templates of one type, builtin
        ones come first, then by name. Raises `GNS3NotFound` listing the template names.
        """
        templates = await self.list_templates()
        wanted = template.strip().lower()
        for matches in (
            [t for t in templates if t.template_id == template],
            [t for t in templates if t.name.lower() == wanted],
            sorted(
                (t for t in templates if t.template_type.lower() == wanted),
                key=lambda t: (not t.builtin, natural_key(t.name)),
            ),
        ):
            if matches:
                return matches[0]
        raise GNS3NotFound(
            f"No GNS3 template named '{template}'. "
            f"Templates: {_names([t.name for t in templates])}.",
            kind="template",
            name=template,
            available=sorted((t.name for t in templates), key=natural_key),
        )

    # -- nodes -------------------------------------------------------------------------

    def _node_path(self, project_id: str, node_id: str, action: str = "") -> str:
        self._check_id("project", project_id)
        self._check_id("node", node_id)
        return f"/projects/{project_id}/nodes/{node_id}{action}"

    async def list_nodes(self, project_id: str) -> list[Node]:
        """The nodes of a project."""
        self._check_id("project", project_id)
        data = await self._json(
            "GET", f"/projects/{project_id}/nodes", subjects=[("project", project_id)]
        )
        return [Node.model_validate(n) for n in data]

    async def get_node(self, project_id: str, node_id: str) -> Node:
        """One node by id."""
        data = await self._json(
            "GET",
            self._node_path(project_id, node_id),
            subjects=[("project", project_id), ("node", node_id)],
        )
        return Node.model_validate(data)

    async def find_node(self, project_id: str, node: str) -> Node:
        """The node whose id or name is `node` (exact name, else the only case-insensitive one).

        Raises `GNS3NotFound` naming the project and listing its node names.
        """
        return await self._pick_node(project_id, await self.list_nodes(project_id), node)

    async def _pick_node(self, project_id: str, nodes: Sequence[Node], node: str) -> Node:
        for matches in (
            [n for n in nodes if n.node_id == node],
            [n for n in nodes if n.name == node],
            [n for n in nodes if n.name.lower() == node.lower()],
        ):
            if len(matches) == 1:
                return matches[0]
        project = await self.get_project(project_id)
        names = [n.name for n in nodes]
        raise GNS3NotFound(
            f"No node named '{node}' in project {project.name}. Nodes: {_names(names)}.",
            kind="node",
            name=node,
            available=sorted(names, key=natural_key),
        )

    async def create_node_from_template(
        self,
        project_id: str,
        template: str | Template,
        name: str | None = None,
        x: int = 0,
        y: int = 0,
        *,
        compute_id: str = "local",
    ) -> Node:
        """Add a node made from `template` (a Template, or its id, name or type) at x/y.

        Without `name` GNS3 picks one from the template (PC1, PC2...). GNS3 3.0 ignores a
        name at creation, so the node is renamed right after; GNS3 removes spaces from
        names. Raises `GNS3Conflict` when the project already has a node named `name`.
        """
        self._check_id("project", project_id)
        if not isinstance(template, Template):
            template = await self.find_template(template)
        if name is not None:
            existing = [n.name for n in await self.list_nodes(project_id)]
            if name in existing:
                raise GNS3Conflict(
                    f"Project already has a node named {name}; node names must be unique.",
                    detail=f"existing nodes: {_names(existing)}",
                )
        data = await self._json(
            "POST",
            f"/projects/{project_id}/templates/{template.template_id}",
            json={"x": x, "y": y, "compute_id": compute_id},
            subjects=[("project", project_id), ("template", template.name)],
        )
        node = Node.model_validate(data)
        if name is None or node.name == name:
            return node
        try:
            return await self.update_node(project_id, node.node_id, name=name)
        except GNS3Error:
            await self.delete_node(project_id, node.node_id)
            raise

    async def update_node(
        self,
        project_id: str,
        node_id: str,
        *,
        name: str | None = None,
        x: int | None = None,
        y: int | None = None,
        z: int | None = None,
        locked: bool | None = None,
        properties: dict[str, Any] | None = None,
    ) -> Node:
        """Change the given fields of a node (rename, move...) and return it updated.

        Renaming a started VPCS/router gives `GNS3Conflict` with GNS3's message; switches
        and hubs can be renamed while started.
        """
        changes = {
            key: value
            for key, value in (
                ("name", name),
                ("x", x),
                ("y", y),
                ("z", z),
                ("locked", locked),
                ("properties", properties),
            )
            if value is not None
        }
        data = await self._json(
            "PUT",
            self._node_path(project_id, node_id),
            json=changes,
            subjects=[("project", project_id), ("node", node_id)],
        )
        return Node.model_validate(data)

    async def delete_node(self, project_id: str, node_id: str) -> None:
        """Delete a node and its links."""
        await self._request(
            "DELETE",
            self._node_path(project_id, node_id),
            subjects=[("project", project_id), ("node", node_id)],
        )

    async def _node_action(self, project_id: str, node_id: str, action: str) -> None:
        await self._request(
            "POST",
            self._node_path(project_id, node_id, f"/{action}"),
            json={},
            subjects=[("project", project_id), ("node", node_id)],
        )

    async def start_node(self, project_id: str, node_id: str) -> None:
        """Start a node. The call returns once GNS3 has started it, not when it has booted."""
        await self._node_action(project_id, node_id, "start")

    async def stop_node(self, project_id: str, node_id: str) -> None:
        """Stop a node."""
        await self._node_action(project_id, node_id, "stop")

    async def suspend_node(self, project_id: str, node_id: str) -> None:
        """Suspend a node (VPCS accepts it but stays "started")."""
        await self._node_action(project_id, node_id, "suspend")

    async def reload_node(self, project_id: str, node_id: str) -> None:
        """Reload (restart) a node."""
        await self._node_action(project_id, node_id, "reload")

    async def start_all(self, project_id: str) -> None:
        """Start every node of the project."""
        self._check_id("project", project_id)
        await self._request(
            "POST", f"/projects/{project_id}/nodes/start", subjects=[("project", project_id)]
        )

    async def stop_all(self, project_id: str) -> None:
        """Stop every node of the project."""
        self._check_id("project", project_id)
        await self._request(
            "POST", f"/projects/{project_id}/nodes/stop", subjects=[("project", project_id)]
        )

    # -- links -------------------------------------------------------------------------

    def _link_path(self, project_id: str, link_id: str, action: str = "") -> str:
        self._check_id("project", project_id)
        self._check_id("link", link_id)
        return f"/projects/{project_id}/links/{link_id}{action}"

    async def list_links(self, project_id: str) -> list[Link]:
        """The links of a project."""
        self._check_id("project", project_id)
        data = await self._json(
            "GET", f"/projects/{project_id}/links", subjects=[("project", project_id)]
        )
        return [Link.model_validate(link) for link in data]

    async def get_link(self, project_id: str, link_id: str) -> Link:
        """One link by id."""
        data = await self._json(
            "GET",
            self._link_path(project_id, link_id),
            subjects=[("project", project_id), ("link", link_id)],
        )
        return Link.model_validate(data)

    async def create_link(
        self, project_id: str, a_node: str, a_port: str, b_node: str, b_port: str
    ) -> Link:
        """Link port `a_port` of node `a_node` to port `b_port` of node `b_node`.

        Nodes are given by name (or id), ports by name or short name, case-insensitively
        ("e0", "Ethernet0", "eth0"). Raises `GNS3NotFound` for an unknown node or port (the
        error lists the node's ports) and `GNS3Conflict` when a port is already linked.
        """
        nodes, links = await asyncio.gather(
            self.list_nodes(project_id), self.list_links(project_id)
        )
        ends: list[tuple[Node, Port]] = []
        for node_ref, port_ref in ((a_node, a_port), (b_node, b_port)):
            node = await self._pick_node(project_id, nodes, node_ref)
            ends.append((node, node.find_port(port_ref)))
        nodes_by_id = {n.node_id: n for n in nodes}
        for node, port in ends:
            for link in links:
                if any(_is_port(end, node, port) for end in link.nodes):
                    peers = [
                        resolve_link_end(end, nodes_by_id).to_text()
                        for end in link.nodes
                        if not _is_port(end, node, port)
                    ]
                    raise GNS3Conflict(
                        f"{node.name} {port.short_name} is already linked"
                        f"{' to ' + ', '.join(peers) if peers else ''}; "
                        "delete that link first or pick a free port.",
                        detail=f"link {link.link_id}",
                    )
        data = await self._json(
            "POST",
            f"/projects/{project_id}/links",
            json={
                "nodes": [
                    {
                        "node_id": node.node_id,
                        "adapter_number": port.adapter_number,
                        "port_number": port.port_number,
                    }
                    for node, port in ends
                ]
            },
            subjects=[("project", project_id)],
        )
        return Link.model_validate(data)

    async def delete_link(self, project_id: str, link_id: str) -> None:
        """Delete a link."""
        await self._request(
            "DELETE",
            self._link_path(project_id, link_id),
            subjects=[("project", project_id), ("link", link_id)],
        )

    async def find_link(
        self, project_id: str, a_node: str, a_port: str, b_node: str, b_port: str
    ) -> Link:
        """The link between port `a_port` of `a_node` and port `b_port` of `b_node` (in
        either order), named as `create_link` takes them.

        Raises `GNS3NotFound` for an unknown node or port, and (kind "link") when no link
        joins the two ports, listing the project's links (`PC1 e0 <-> Switch1 e0`).
        """
        nodes, links = await asyncio.gather(
            self.list_nodes(project_id), self.list_links(project_id)
        )
        wanted = set()
        for node_ref, port_ref in ((a_node, a_port), (b_node, b_port)):
            node = await self._pick_node(project_id, nodes, node_ref)
            port = node.find_port(port_ref)
            wanted.add((node.node_id, port.adapter_number, port.port_number))
        for link in links:
            if {(e.node_id, e.adapter_number, e.port_number) for e in link.nodes} == wanted:
                return link
        project = Project(project_id=project_id, name="")
        existing = [c.to_text() for c in Topology(project, nodes, links).connections]
        asked = f"{a_node} {a_port} and {b_node} {b_port}"
        raise GNS3NotFound(
            f"No link between {asked}. Links: {'; '.join(existing) or 'none'}.",
            kind="link",
            name=asked,
            available=existing,
        )

    async def _put_link(self, project_id: str, link_id: str, changes: dict[str, Any]) -> Link:
        data = await self._json(
            "PUT",
            self._link_path(project_id, link_id),
            json=changes,
            subjects=[("project", project_id), ("link", link_id)],
        )
        return Link.model_validate(data)

    async def _update_link(self, project_id: str, link_id: str, changes: dict[str, Any]) -> Link:
        """PUT `changes` (`suspend`, `filters`) to the link, so that the node applying the
        link's filters ends with no filter when the link ends with none.

        GNS3 3.0.6's compute ignores a NIO update whose filters are empty (VPCS and
        others keep the previous ones: resuming a link or removing its last filter left
        the drop or loss filter in place). Then the link first gets `_NO_OP_FILTER`, a
        filter that drops nothing, which the compute applies, and then no filter: the
        controller reports none and the compute keeps the no-op until the link is
        created again (project reopened).
        """
        before = await self.get_link(project_id, link_id)
        suspended = changes.get("suspend", before.suspend)
        filters = changes.get("filters", before.filters)
        if not suspended and not filters and (before.suspend or before.filters):
            await self._put_link(project_id, link_id, {**changes, "filters": _NO_OP_FILTER})
            changes = {"filters": {}}
        return await self._put_link(project_id, link_id, changes)

    async def suspend_link(self, project_id: str, link_id: str) -> Link:
        """Suspend a link (no traffic crosses it until resumed)."""
        return await self._update_link(project_id, link_id, {"suspend": True})

    async def resume_link(self, project_id: str, link_id: str) -> Link:
        """Resume a suspended link (its packet filters, if any, apply again)."""
        return await self._update_link(project_id, link_id, {"suspend": False})

    async def set_link_filters(
        self, project_id: str, link_id: str, filters: dict[str, list[int]]
    ) -> Link:
        """Replace the link's packet filters by `filters` (`{}` removes them all), e.g.
        `{"packet_loss": [30], "delay": [100, 10]}`: GNS3's types `frequency_drop`
        [N], `packet_loss` [percent], `delay` [ms, jitter ms], `corrupt` [percent]. GNS3
        drops a filter whose first value is 0. A suspended link keeps dropping everything
        until resumed; its filters apply then.
        """
        return await self._update_link(project_id, link_id, {"filters": filters})

    async def link_filter_types(self, project_id: str, link_id: str) -> list[str]:
        """The filter types GNS3 can apply on this link: none when neither end is a node
        type that filters (e.g. a link between two Ethernet switches), and then a
        suspend has no effect on traffic either."""
        data = await self._json(
            "GET",
            self._link_path(project_id, link_id, "/available_filters"),
            subjects=[("project", project_id), ("link", link_id)],
        )
        return [str(item["type"]) for item in data]

    # -- packet capture ----------------------------------------------------------------

    async def start_capture(
        self,
        project_id: str,
        link_id: str,
        *,
        capture_file_name: str | None = None,
        data_link_type: str = "DLT_EN10MB",
    ) -> Link:
        """Start capturing the link's packets to a pcap file; returns the link (capturing).

        GNS3 needs a started node on the link. Without `capture_file_name` GNS3 picks one
        (e.g. "PC1_0-0_to_Switch1_0-0.pcap").
        """
        body: dict[str, Any] = {"data_link_type": data_link_type}
        if capture_file_name is not None:
            body["capture_file_name"] = capture_file_name
        data = await self._json(
            "POST",
            self._link_path(project_id, link_id, "/capture/start"),
            json=body,
            subjects=[("project", project_id), ("link", link_id)],
        )
        return Link.model_validate(data)

    async def stop_capture(self, project_id: str, link_id: str) -> None:
        """Stop the link's capture; the file stays readable with `read_capture`."""
        await self._request(
            "POST",
            self._link_path(project_id, link_id, "/capture/stop"),
            subjects=[("project", project_id), ("link", link_id)],
        )

    async def read_capture(self, project_id: str, link_id: str) -> bytes:
        """The bytes of the link's latest capture file (pcap), running or stopped.

        Read from the project's files (project-files/captures/NAME), which is where the
        local compute writes them. Raises `GNS3NotFound` (kind "capture") when the link has
        never been captured or the file is gone (e.g. after a snapshot restore).
        """
        link = await self.get_link(project_id, link_id)
        if not link.capture_file_name:
            raise GNS3NotFound(
                f"Link {link_id} has no packet capture; start one first.",
                kind="capture",
                name=link_id,
            )
        path = f"project-files/captures/{link.capture_file_name}"
        response = await self._request(
            "GET",
            f"/projects/{project_id}/files/{quote(path)}",
            subjects=[("project", project_id), ("capture", link.capture_file_name)],
        )
        return response.content

    async def read_project_file(self, project_id: str, path: str) -> bytes:
        """The bytes of the file at `path` in the project's directory (e.g. `lab.yaml`).

        Raises `GNS3NotFound` (kind "file") when there is none.
        """
        self._check_id("project", project_id)
        response = await self._request(
            "GET",
            f"/projects/{project_id}/files/{quote(path)}",
            subjects=[("project", project_id), ("file", path)],
        )
        return response.content

    async def write_project_file(self, project_id: str, path: str, content: bytes) -> None:
        """Write `content` to `path` in the project's directory (created or replaced)."""
        self._check_id("project", project_id)
        await self._request(
            "POST",
            f"/projects/{project_id}/files/{quote(path)}",
            content=content,
            subjects=[("project", project_id), ("file", path)],
        )

    async def stream_capture(
        self,
        project_id: str,
        link_id: str,
        *,
        max_bytes: int,
        quiet: float = CAPTURE_QUIET,
    ) -> bytes:
        """The link's RUNNING capture (pcap) as GNS3's capture stream serves it: the file
        from its start, then new packets as they come; read until nothing came for
        `quiet` seconds after the first bytes (all there was), `max_bytes` arrived, or
        the client's `timeout` passed in all. The last packet may be cut off.

        Raises `GNS3Conflict` when the link is not being captured (GNS3's 409).
        """
        response = await self._request(
            "GET",
            self._link_path(project_id, link_id, "/capture/stream"),
            subjects=[("project", project_id), ("link", link_id)],
            stream=True,
        )
        loop = asyncio.get_running_loop()
        data = bytearray()
        chunks = response.aiter_raw()
        wait, deadline = self.timeout, loop.time() + self.timeout
        try:
            while len(data) < max_bytes and loop.time() < deadline:
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), wait)
                except (asyncio.TimeoutError, StopAsyncIteration):
                    break
                data += chunk
                wait = quiet
        except httpx.TransportError as exc:
            raise GNS3Unreachable(
                f"The capture stream from GNS3 at {self.url} broke ({_transport_reason(exc)}).",
                url=self.url,
                detail=_transport_reason(exc),
            ) from exc
        finally:
            await response.aclose()
        return bytes(data[:max_bytes])

    # -- snapshots ---------------------------------------------------------------------

    async def list_snapshots(self, project_id: str) -> list[Snapshot]:
        """The project's snapshots, oldest first."""
        self._check_id("project", project_id)
        data = await self._json(
            "GET", f"/projects/{project_id}/snapshots", subjects=[("project", project_id)]
        )
        return [Snapshot.model_validate(s) for s in data]

    async def create_snapshot(self, project_id: str, name: str) -> Snapshot:
        """Save the project's current state as snapshot `name` (names are unique)."""
        self._check_id("project", project_id)
        data = await self._json(
            "POST",
            f"/projects/{project_id}/snapshots",
            json={"name": name},
            subjects=[("project", project_id)],
        )
        return Snapshot.model_validate(data)

    async def restore_snapshot(self, project_id: str, snapshot_id: str) -> Project:
        """Bring the project back to a snapshot (its nodes are stopped and recreated).

        GNS3 gives every restored node, link and drawing a NEW id (names stay): look them
        up again afterwards. Capture files are deleted.
        """
        self._check_id("project", project_id)
        self._check_id("snapshot", snapshot_id)
        data = await self._json(
            "POST",
            f"/projects/{project_id}/snapshots/{snapshot_id}/restore",
            subjects=[("project", project_id), ("snapshot", snapshot_id)],
        )
        return Project.model_validate(data)

    # -- drawings ----------------------------------------------------------------------

    async def list_drawings(self, project_id: str) -> list[Drawing]:
        """The project's drawings (shapes and text notes)."""
        self._check_id("project", project_id)
        data = await self._json(
            "GET", f"/projects/{project_id}/drawings", subjects=[("project", project_id)]
        )
        return [Drawing.model_validate(d) for d in data]

    async def create_drawing(
        self, project_id: str, svg: str, *, x: int = 0, y: int = 0, z: int = 1
    ) -> Drawing:
        """Add a drawing given as an SVG document at x/y.

        GNS3 silently replaces an SVG of 500+ characters that does not parse as XML by an
        empty one, so pass well-formed SVG.
        """
        self._check_id("project", project_id)
        data = await self._json(
            "POST",
            f"/projects/{project_id}/drawings",
            json={"svg": svg, "x": x, "y": y, "z": z},
            subjects=[("project", project_id)],
        )
        return Drawing.model_validate(data)

    async def create_text_note(
        self, project_id: str, text: str, *, x: int = 0, y: int = 0
    ) -> Drawing:
        """Add a text note (drawn like the GNS3 GUI's text tool) at x/y."""
        return await self.create_drawing(project_id, text_note_svg(text), x=x, y=y)

    # -- topology ----------------------------------------------------------------------

    async def get_topology(self, project: str) -> Topology:
        """The topology (project, nodes, links) of the project with this id or name."""
        found = await self.resolve_project(project)
        nodes, links = await asyncio.gather(
            self.list_nodes(found.project_id), self.list_links(found.project_id)
        )
        return Topology(found, nodes, links)
