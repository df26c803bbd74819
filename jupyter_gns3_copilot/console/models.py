"""Data crossing the console module's boundary: targets, command lists and results.

All models are pydantic and JSON-serialisable with `model_dump(mode="json")`;
`DeviceResult.model_dump(exclude_none=True)` gives the per-device shape the copilot's
tools report (`{device_name, status, output, error?, commands, blocked_commands?, ...}`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from .dialects import DialectName, dialect_by_name, resolve_dialect
from .errors import ConsoleTargetError

# Addresses a GNS3 server reports when a console listens on every interface; they say
# "the GNS3 host", so the client must substitute the host it reaches GNS3 at.
_WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "0:0:0:0:0:0:0:0"})

ConsoleTransport = Literal["telnet", "websocket"]
"""How a console is reached: `telnet` to the node's console port, or `websocket` through
GNS3's authenticated console websocket (`console/websocket.py`)."""

ConsoleTokenProvider = Callable[[bool], Awaitable[str | None]]
"""`provider(renew)` -> the GNS3 JWT for the console websocket; `renew=True` after GNS3
did not accept the last one (e.g. `GNS3Client.access_token`)."""


class ConsoleCredentials(BaseModel):
    """Secrets a console may ask for. Never logged, never part of results."""

    model_config = ConfigDict(frozen=True)

    username: str | None = None
    password: SecretStr | None = None
    enable_password: SecretStr | None = None


class ConsoleTarget(BaseModel):
    """One device console: where to connect and which dialect it speaks.

    Two targets with the same `host:port` are the same console (see `key`), whichever
    transport reaches it. With `transport="websocket"` nothing connects to `host:port`:
    the bytes go through GNS3's console websocket `websocket_url`, authenticated with the
    token `token_provider` gives (the target keeps the provider, never a token).
    Targets compare equal only with the same provider object (a kept session is reused
    for an equal target), so pass one long-lived provider, e.g. a client's bound method.
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Device name, used in results and messages")
    host: str = Field(description="Console host as reachable from this process")
    port: int = Field(gt=0, le=65535, description="Console TCP port")
    dialect: DialectName = Field(description="Console dialect: vpcs, cisco_ios, frr or linux")
    credentials: ConsoleCredentials | None = Field(default=None, repr=False, exclude=True)
    transport: ConsoleTransport = Field(
        default="telnet", description="telnet to host:port, or GNS3's console websocket"
    )
    websocket_url: str | None = Field(
        default=None,
        description="GNS3's console websocket of the node (ws:// or wss://, no token)",
    )
    token_provider: ConsoleTokenProvider | None = Field(default=None, repr=False, exclude=True)

    @field_validator("dialect", mode="before")
    @classmethod
    def _canonical_dialect(cls, value: Any) -> Any:
        return dialect_by_name(value).name if isinstance(value, str) else value

    @model_validator(mode="after")
    def _websocket_needs_its_url(self) -> ConsoleTarget:
        if self.transport == "websocket":
            url = self.websocket_url or ""
            if not url.startswith(("ws://", "wss://")) or "?" in url:
                raise ValueError(
                    f"{self.name}: the websocket transport needs websocket_url, a ws:// or "
                    f"wss:// URL without a query (the token is added when connecting); "
                    f"got {url!r}"
                )
        return self

    @property
    def key(self) -> str:
        """`host:port`, the identity of the console (one lock per key)."""
        return f"{self.host}:{self.port}"

    @classmethod
    def from_node(
        cls,
        node: Any,
        override: str | None = None,
        *,
        server_host: str | None = None,
        credentials: ConsoleCredentials | None = None,
        transport: ConsoleTransport = "telnet",
        gns3_url: str | None = None,
        token_provider: ConsoleTokenProvider | None = None,
        inherited: Sequence[str] = (),
        inherited_netmiko: str | None = None,
    ) -> ConsoleTarget:
        """Build a target from a GNS3 node object.

        `node` needs the attributes `name`, `node_type`, `console_host`, `console`,
        `console_type`, `properties` and `tags` (the gns3 package's node model has them;
        `tags` and `properties` may be missing or empty). The dialect comes from
        `resolve_dialect` (override, then a `device_type:` token of the node's, then one in
        `inherited`, its template's tags and usage notes, then the node's
        `netmiko_device_type` (GNS3 3.1), then `inherited_netmiko`, its template's, then
        the node type).
        A console host of `0.0.0.0`/`::` means "the GNS3 host": `server_host` (the host of
        the GNS3 URL) is used then, or 127.0.0.1 when it is not given.
        With `transport="websocket"`, the console is reached through the node's console
        websocket on `gns3_url` (http -> ws, https -> wss; the node's `project_id` and
        `node_id` are needed too), authenticated with `token_provider`'s token.

        Raises `ConsoleTargetError` when the node has no telnet console (e.g. a switch,
        a VNC/SPICE console, or no console port yet) and `DialectError` when the dialect
        cannot be worked out.
        """
        name = str(getattr(node, "name", "") or "?")
        node_type = str(getattr(node, "node_type", "") or "")
        console_type = getattr(node, "console_type", None)
        console_type = getattr(console_type, "value", console_type)
        if console_type != "telnet":
            raise ConsoleTargetError(
                f"Node {name!r} ({node_type or 'unknown type'}) has console type "
                f"{console_type or 'none'}; only telnet consoles can run commands. "
                "Set the node's console type to telnet in GNS3 if the device supports it."
            )
        port = getattr(node, "console", None)
        if not port:
            raise ConsoleTargetError(
                f"Node {name!r} has no console port yet; GNS3 assigns one when the node is "
                "created on a compute. Reload the topology and try again."
            )
        host = str(getattr(node, "console_host", "") or "")
        if host in _WILDCARD_HOSTS:
            host = server_host or "127.0.0.1"
        dialect = resolve_dialect(
            node_type,
            tags=tuple(str(tag) for tag in getattr(node, "tags", None) or ()),
            properties=getattr(node, "properties", None),
            override=override,
            node_name=name,
            inherited=inherited,
            netmiko_device_types=(getattr(node, "netmiko_device_type", None), inherited_netmiko),
        )
        websocket_url = None
        if transport == "websocket":
            websocket_url = console_websocket_url(
                gns3_url or "", getattr(node, "project_id", None), getattr(node, "node_id", None)
            )
        return cls(
            name=name,
            host=host,
            port=int(port),
            dialect=dialect.name,
            credentials=credentials,
            transport=transport,
            websocket_url=websocket_url,
            token_provider=token_provider,
        )


def console_websocket_url(gns3_url: str, project_id: str | None, node_id: str | None) -> str:
    """GNS3's console websocket of a node: `ws[s]://HOST:PORT/v3/projects/P/nodes/N/console/ws`.

    `gns3_url` is the GNS3 server's http(s) base URL (a trailing `/v3` is tolerated).
    Raises `ConsoleTargetError` when the URL is not http(s) or an id is missing.
    """
    base = gns3_url.strip().rstrip("/").removesuffix("/v3")
    scheme = urlsplit(base).scheme
    if scheme not in ("http", "https") or not project_id or not node_id:
        raise ConsoleTargetError(
            "The console websocket needs the GNS3 server's http(s) URL and the node's "
            f"project and node ids; got URL {gns3_url!r}, project {project_id!r}, "
            f"node {node_id!r}."
        )
    ws_base = ("wss" if scheme == "https" else "ws") + base[len(scheme) :]
    return f"{ws_base}/v3/projects/{quote(project_id)}/nodes/{quote(node_id)}/console/ws"


class DeviceCommands(BaseModel):
    """The commands to run on one device, named as in the topology."""

    device: str
    commands: list[str]


class CommandResult(BaseModel):
    """One command's outcome on one device.

    `ok` is False when the device rejected the command (e.g. IOS `% Invalid input`), it
    timed out, or the connection failed; `error` then says why.
    """

    command: str
    prompt: str = Field(description="The prompt the command was typed at, e.g. 'PC1>'")
    output: str
    ok: bool
    error: str | None = None
    elapsed: float = Field(description="Seconds from sending the command to its prompt")


class BlockedCommand(BaseModel):
    """A command that was not sent, and why."""

    command: str
    reason: str


class DeviceResult(BaseModel):
    """The result of running a command list on one device.

    `status` is `success` when every command ran without error, `failed` when none did
    (e.g. the console could not be reached), `partial_success` otherwise. `output` holds
    each command that ran as `PROMPT COMMAND` followed by its output, separated by blank
    lines; `results` the same per command (left out of `model_dump`).
    `blocked_commands`/`blocked_info` are filled by the command policy of the tools
    layer, never by the console itself.
    """

    device_name: str
    status: Literal["success", "failed", "partial_success"]
    output: str
    error: str | None = None
    commands: list[str]
    blocked_commands: list[BlockedCommand] | None = None
    blocked_info: str | None = None
    results: list[CommandResult] = Field(default_factory=list, exclude=True)
