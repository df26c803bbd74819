"""Pydantic models of the GNS3 v3 objects the client returns.

Only the fields the project uses are declared; GNS3 sends many more, and other servers or
future versions may add or drop some: unknown fields are ignored, optional ones default.
Identifiers are kept as strings (GNS3 sends UUIDs as strings).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .errors import GNS3NotFound


class GNS3Model(BaseModel):
    """Base of the GNS3 models: unknown fields are ignored, not errors, and a null sent
    for an optional field means its default (GNS3 sends `"ports": null`, `"suspend": null`).
    """

    model_config = ConfigDict(extra="ignore")

    @field_validator("*", mode="before")
    @classmethod
    def _null_means_default(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name is not None:
            field = cls.model_fields[info.field_name]
            if not field.is_required():
                return field.get_default(call_default_factory=True)
        return value


class Version(GNS3Model):
    """Answer of GET /v3/version."""

    version: str
    controller_host: str | None = None
    local: bool | None = None


class Project(GNS3Model):
    """A GNS3 project; `status` is "opened" or "closed"."""

    project_id: str
    name: str
    status: str | None = None
    path: str | None = None
    filename: str | None = None


class Template(GNS3Model):
    """A node template, e.g. the builtin "VPCS" (template_type "vpcs"). `usage` is its
    free-text notes; `tags` and `netmiko_device_type` are sent by GNS3 3.1 (its built-in
    templates carry `device_type:` tags), honoured when a server provides them."""

    template_id: str
    name: str
    template_type: str
    category: str | None = None
    builtin: bool = False
    default_name_format: str | None = None
    usage: str | None = None
    tags: list[str] = Field(default_factory=list)
    netmiko_device_type: str | None = None

    @property
    def notes(self) -> list[str]:
        """Its tags, then its usage notes: where `device_type:` hints for its nodes are."""
        return [*self.tags, *([self.usage] if self.usage else [])]


class Port(GNS3Model):
    """One port of a node, e.g. name "Ethernet0", short_name "e0", adapter 0, port 0."""

    name: str
    short_name: str
    adapter_number: int
    port_number: int
    link_type: str = "ethernet"
    adapter_type: str | None = None
    mac_address: str | None = None


# Interface-name prefixes that designate the same port family, so "eth0", "Ethernet0" and
# "e0" all name GNS3's port "Ethernet0" (short name "e0").
_PORT_PREFIX_ALIASES = {
    "ethernet": "e",
    "eth": "e",
    "e": "e",
    "fastethernet": "f",
    "fa": "f",
    "f": "f",
    "gigabitethernet": "g",
    "gi": "g",
    "g": "g",
    "serial": "s",
    "se": "s",
    "s": "s",
}
_PORT_NAME = re.compile(r"([a-z-]+)(\d.*)")


def canonical_port_name(text: str) -> str:
    """One spelling for an interface or port name: `Ethernet0`, `eth0` and `e0` are `e0`,
    `GigabitEthernet0/0` and `gi0/0` are `g0/0`; other names lower-cased, spaces removed."""
    folded = re.sub(r"\s+", "", text).lower()
    match = _PORT_NAME.fullmatch(folded)
    if match and match.group(1) in _PORT_PREFIX_ALIASES:
        return _PORT_PREFIX_ALIASES[match.group(1)] + match.group(2)
    return folded


_PROCESS_NODE_TYPES = frozenset(
    {"vpcs", "dynamips", "qemu", "iou", "docker", "vmware", "virtualbox"}
)
"""Node types GNS3 does not count as always running (its `Node.is_always_running`)."""


class Node(GNS3Model):
    """A node of a project.

    `x`/`y` are GNS3 scene coordinates of the node's top-left corner, `width`/`height` its
    symbol size (None when GNS3 does not say). `console_host`:`console` is the console
    endpoint of type `console_type` ("telnet", "vnc", "none"...). `tags` and
    `netmiko_device_type` (the Netmiko driver name of its CLI, e.g. `cisco_ios`) are not
    sent by GNS3 3.0 but are honoured when a server provides them.
    """

    node_id: str
    name: str
    node_type: str
    status: str = "stopped"
    console: int | None = None
    console_host: str | None = None
    console_type: str | None = None
    x: int = 0
    y: int = 0
    z: int = 1
    width: int | None = None
    height: int | None = None
    ports: list[Port] = Field(default_factory=list)
    properties: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    netmiko_device_type: str | None = None
    compute_id: str | None = None
    template_id: str | None = None
    project_id: str | None = None

    @property
    def blocks_snapshots(self) -> bool:
        """Whether GNS3 refuses to take a snapshot of (or export) the project while this
        node is as it is: a node that runs a process of its own (VPCS, Dynamips, QEMU,
        IOU, Docker, VMware, VirtualBox) and is not stopped (started or suspended). The
        builtin switches, hubs and clouds count as always running and never block."""
        return self.status != "stopped" and self.node_type in _PROCESS_NODE_TYPES

    @property
    def console_endpoint(self) -> str | None:
        """The console as `TYPE HOST:PORT` (e.g. `telnet 127.0.0.1:5000`), None if it has none."""
        if self.console is None or self.console_type in (None, "none"):
            return None
        host = self.console_host or "?"
        if ":" in host:
            host = f"[{host}]"
        return f"{self.console_type} {host}:{self.console}"

    def port_at(self, adapter_number: int, port_number: int) -> Port | None:
        """The port at `adapter_number`/`port_number`, or None."""
        for port in self.ports:
            if (port.adapter_number, port.port_number) == (adapter_number, port_number):
                return port
        return None

    def find_port(self, spec: str) -> Port:
        """The port named `spec`: its `name` or `short_name`, case-insensitively.

        Common spellings of the same interface also match ("eth0", "Ethernet0" and "e0" name
        the same Ethernet port). Raises `GNS3NotFound` (kind "port") listing the node's ports
        when nothing or more than one port matches.
        """
        wanted = spec.strip().lower()
        exact = [p for p in self.ports if wanted in (p.name.lower(), p.short_name.lower())]
        if len(exact) == 1:
            return exact[0]
        canonical = canonical_port_name(spec)
        similar = [
            p
            for p in self.ports
            if canonical in (canonical_port_name(p.name), canonical_port_name(p.short_name))
        ]
        if len(similar) == 1:
            return similar[0]
        listing = ", ".join(
            p.short_name if p.short_name == p.name else f"{p.short_name} ({p.name})"
            for p in self.ports
        )
        problem = "matches several ports" if similar else "is not a port"
        raise GNS3NotFound(
            f"'{spec}' {problem} of node {self.name}. Available ports: {listing or 'none'}.",
            kind="port",
            name=spec,
            available=[p.short_name for p in self.ports],
        )


class LinkEnd(GNS3Model):
    """One end of a link: a node's adapter/port, with the label text GNS3 shows there."""

    node_id: str
    adapter_number: int
    port_number: int
    label: str | None = None

    @field_validator("label", mode="before")
    @classmethod
    def _label_text(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return value.get("text")
        return value


class Link(GNS3Model):
    """A link between two node ports.

    `capture_file_name` stays set after a capture stops, so the file can still be read.
    """

    link_id: str
    nodes: list[LinkEnd] = Field(default_factory=list)
    link_type: str | None = None
    suspend: bool = False
    capturing: bool = False
    capture_file_name: str | None = None
    capture_file_path: str | None = None
    filters: dict[str, Any] = Field(default_factory=dict)
    project_id: str | None = None


class Snapshot(GNS3Model):
    """A saved state of a project; `created_at` is a UTC timestamp in seconds."""

    snapshot_id: str
    name: str
    created_at: int
    project_id: str | None = None


class Drawing(GNS3Model):
    """A drawing on the project's scene (shape or text) given as an SVG document."""

    drawing_id: str
    svg: str
    x: int = 0
    y: int = 0
    z: int = 1
    rotation: int = 0
    locked: bool = False
    project_id: str | None = None


# -- access control (users, groups, roles, ACL, resource pools): see access.py ----------------


class User(GNS3Model):
    """A GNS3 user account (GET /v3/access/users)."""

    user_id: str
    username: str
    is_active: bool = True
    is_superadmin: bool = False
    full_name: str | None = None
    email: str | None = None


class UserGroup(GNS3Model):
    """A group of users; "Administrators" and "Users" are built in."""

    user_group_id: str
    name: str
    is_builtin: bool = False


class Privilege(GNS3Model):
    """One privilege, e.g. "Node.Console" or "Project.Allocate"."""

    privilege_id: str
    name: str
    description: str | None = None


class Role(GNS3Model):
    """A named set of privileges; "Administrator", "User", "Auditor"... are built in."""

    role_id: str
    name: str
    description: str | None = None
    is_builtin: bool = False
    privileges: list[Privilege] = Field(default_factory=list)

    @property
    def privilege_names(self) -> set[str]:
        return {p.name for p in self.privileges}


class ACE(GNS3Model):
    """An access control entry: `role_id` granted (or, with `allowed` false, denied) to a
    user or group on `path` (e.g. "/pools/<id>"), and below it when `propagate`."""

    ace_id: str
    ace_type: str
    path: str
    role_id: str
    user_id: str | None = None
    group_id: str | None = None
    propagate: bool = True
    allowed: bool = True


class ResourcePool(GNS3Model):
    """A named set of resources (projects, in GNS3 3.0) that ACEs can name as a whole."""

    resource_pool_id: str
    name: str


class PoolResource(GNS3Model):
    """A resource of a pool; `resource_id` is the project id (the only type in GNS3 3.0)."""

    resource_id: str
    resource_type: str = "project"
    name: str | None = None
