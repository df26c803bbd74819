"""The lab file's routing checks, decided from a router's own JSON (FRR's `vtysh -c "show ...
json"`): an OSPF neighbour in a state, a route learned by a protocol, a BGP session, and a
general `json` query."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from .model_base import MAX_WAIT, CommandSay, LabModel, is_ipv4, is_template

RouteProtocol = Literal["ospf", "bgp", "static", "connected", "kernel", "rip", "isis"]
"""The protocols a `route` check may name (as FRR's `show ip route json` names them)."""
OspfState = Literal["Full", "2-Way", "ExStart", "Exchange", "Loading", "Init", "Attempt", "Down"]
BgpState = Literal["Established", "Idle", "Connect", "Active", "OpenSent", "OpenConfirm"]
MAX_AS_NUMBER = 4294967295
AsNumber = Annotated[int, Field(ge=1, le=MAX_AS_NUMBER)] | str
"""An AS number, or a template giving one per student (`"{{ as_r2 }}"`)."""


def _wait_field() -> float:
    return Field(
        0, ge=0, le=MAX_WAIT, description="Seconds to keep retrying while routing converges."
    )


class OspfNeighborCheck(LabModel):
    """`node` (a router) has the OSPF neighbour `neighbor` (its router id), or one on
    `interface`, or both, in `state` (Full by default); read from `show ip ospf neighbor
    json`."""

    kind: Literal["ospf_neighbor"]
    node: str = Field(min_length=1)
    neighbor: str | None = Field(None, min_length=1, description="The neighbour's router id.")
    interface: str | None = Field(None, min_length=1, description="e.g. eth0")
    state: OspfState = "Full"
    wait: float = _wait_field()

    @model_validator(mode="after")
    def _which_neighbor(self) -> OspfNeighborCheck:
        if self.neighbor is None and self.interface is None:
            raise ValueError(
                "an ospf_neighbor check names the neighbor (router id), interface or both"
            )
        neighbor = self.neighbor
        if neighbor is not None and not is_template(neighbor) and not is_ipv4(neighbor):
            raise ValueError(f"neighbor {self.neighbor!r} is a router id, e.g. 2.2.2.2")
        return self


class RouteCheck(LabModel):
    """`node` (a router) has a route to `prefix` (`a.b.c.d/len`) in its routing table,
    learned by `protocol` when given, through next hop `via` when given; with `expect:
    false`, has none. Read from `show ip route json`."""

    kind: Literal["route"]
    node: str = Field(min_length=1)
    prefix: str = Field(min_length=1, description="a.b.c.d/len")
    protocol: RouteProtocol | None = None
    via: str | None = Field(None, min_length=1, description="The next hop's IPv4 address.")
    expect: bool = Field(True, description="False checks the route is absent.")
    wait: float = _wait_field()

    @field_validator("prefix")
    @classmethod
    def _network(cls, value: str) -> str:
        if is_template(value):
            return value
        try:
            ipaddress.IPv4Network(value, strict=True)
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv4 network, e.g. 10.0.23.0/24") from None
        return value

    @field_validator("via")
    @classmethod
    def _next_hop(cls, value: str | None) -> str | None:
        if value is not None and not is_template(value) and not is_ipv4(value):
            raise ValueError(f"via {value!r} is not an IPv4 address, e.g. 10.0.12.2")
        return value


class BgpSessionCheck(LabModel):
    """`node` (a router) has a BGP session with the peer at `neighbor`, in `state`
    (Established by default), with `remote_as` when given; read from `show bgp summary
    json`."""

    kind: Literal["bgp_session"]
    node: str = Field(min_length=1)
    neighbor: str = Field(min_length=1, description="The peer's address.")
    remote_as: AsNumber | None = None
    state: BgpState = "Established"
    wait: float = _wait_field()

    @field_validator("neighbor")
    @classmethod
    def _peer(cls, value: str) -> str:
        if not is_template(value) and not is_ipv4(value):
            raise ValueError(f"neighbor {value!r} is not an IPv4 address, e.g. 10.0.12.2")
        return value

    @field_validator("remote_as")
    @classmethod
    def _as_number(cls, value: int | str | None) -> int | str | None:
        """A rendered template is text: it is read as the number it gives (so it compares
        with the router's as a number), and one that gives none is a problem of the file."""
        if not isinstance(value, str) or is_template(value):
            return value
        text = value.strip()
        if not text.isdigit() or not 1 <= int(text) <= MAX_AS_NUMBER:
            raise ValueError(f"remote_as {value!r} is not an AS number (1 to {MAX_AS_NUMBER})")
        return int(text)


class JsonCheck(LabModel):
    """`command` (a `show ... json` command) on `node`; the JMESPath `query` into its
    answer equals `expect`. `say` words the result for the student (`{{ found }}` is what
    the query found)."""

    kind: Literal["json"]
    node: str = Field(min_length=1)
    command: str = Field(min_length=1, max_length=400, description="e.g. show ip ospf json")
    query: str = Field(
        min_length=1, max_length=400, description='A JMESPath expression, e.g. areas."0.0.0.0"'
    )
    expect: JsonValue = Field(description="The value the query must find.")
    say: CommandSay | None = None
    wait: float = _wait_field()

    @field_validator("command")
    @classmethod
    def _json_command(cls, value: str) -> str:
        words = value.split()
        if not is_template(value) and (words[0].lower() != "show" or words[-1] != "json"):
            raise ValueError(f"{value!r} is not a show command ending in json")
        return value

    @field_validator("query")
    @classmethod
    def _jmespath(cls, value: str) -> str:
        if is_template(value):
            return value
        import jmespath
        from jmespath.exceptions import JMESPathError

        try:
            jmespath.compile(value)
        except JMESPathError as exc:
            raise ValueError(f"the query {value!r} is not valid JMESPath: {exc}") from None
        return value
