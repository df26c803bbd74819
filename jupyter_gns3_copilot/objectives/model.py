"""The lab file's data model: a lab, its stages, their objectives and the checks that decide
them.

These models are the contract of `lab.yaml`: the JSON Schema shipped beside this module
(`lab.schema.json`) is generated from them (`python -m jupyter_gns3_copilot.objectives.schema`)
and a test keeps the two equal. Field names are the file's (`from` is spelled `from` in the
file and `source` in Python).

String fields may hold Jinja2 templates over the lab's parameters (`{{ net | host(1) }}`);
a format check on such a field (an address, a regex) applies once the lab is rendered for
a student, so an unrendered lab keeps its templates as they are.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

IDENTIFIER = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
"""Stage and objective ids: a letter, then letters, digits, `_` and `-`."""
PARAMETER_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
"""Parameter names are template variables: Python identifiers."""
MAX_WAIT = 600
"""Longest `wait` a check may ask for (seconds)."""
MAX_SECONDS = 60
"""Longest capture a `traffic` check may take (seconds)."""

HintPolicy = Literal["nudge", "explain", "off"]


def is_template(text: str) -> bool:
    """Whether `text` holds a Jinja2 expression or statement (rendered per student)."""
    return "{{" in text or "{%" in text


class LabModel(BaseModel):
    """Base of the lab file's models: unknown fields are errors (a typo must not silently
    turn a check off), aliases are the file's names."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


# -- checks ------------------------------------------------------------------------------------


class ReachableCheck(LabModel):
    """`from` pings `to`: an address, or a node, meaning the first address that node has
    when the check runs (not a loopback), or `address` when given: the address the node
    should have, so a node at a wrong address does not pass."""

    kind: Literal["reachable"]
    source: str = Field(alias="from", min_length=1, description="The node that pings.")
    to: str = Field(min_length=1, description="A node name or an IPv4 address.")
    address: str | None = Field(
        None,
        min_length=1,
        description="The IPv4 address `to` (a node) should have: the ping goes there.",
    )
    expect: bool = Field(True, description="False checks isolation (e.g. an ACL).")
    count: int = Field(3, ge=1, le=10, description="Echo requests per attempt.")
    wait: float = Field(
        0, ge=0, le=MAX_WAIT, description="Seconds to keep retrying while routing converges."
    )

    @model_validator(mode="after")
    def _address_of_a_node(self) -> ReachableCheck:
        if self.address is None:
            return self
        if not is_template(self.to) and is_ipv4(self.to):
            raise ValueError("address is the address of a node: name the node in to")
        if not is_template(self.address) and not is_ipv4(self.address):
            raise ValueError(f"{self.address!r} is not an IPv4 address, e.g. 10.0.0.2")
        return self


class AddressCheck(LabModel):
    """`node` has `address` (`a.b.c.d/len`), on `interface` when given."""

    kind: Literal["address"]
    node: str = Field(min_length=1)
    interface: str | None = Field(None, min_length=1)
    address: str = Field(min_length=1, description="a.b.c.d/len")

    @field_validator("address")
    @classmethod
    def _interface_address(cls, value: str) -> str:
        if is_template(value):
            return value
        if "/" not in value:
            raise ValueError(f"{value!r} must be an address with its prefix, e.g. 10.0.0.1/24")
        try:
            ipaddress.IPv4Interface(value)
        except ValueError:
            raise ValueError(f"{value!r} is not an IPv4 address with a prefix") from None
        return value


FOUND = "found"
"""The name a `command` check's `say` texts give the value `read` took from the output."""
_USES_FOUND = re.compile(r"\{\{-?\s*" + FOUND + r"\b")


class CommandSay(LabModel):
    """What a student reads when a `command` check passes or fails, in the instructor's
    words (templates over the lab's parameters, and `{{ found }}`: what `read` took from
    the output). Without one, the check says it in general words."""

    passed: str | None = Field(None, alias="pass", min_length=1, max_length=500)
    failed: str | None = Field(None, alias="fail", min_length=1, max_length=500)

    def uses_found(self) -> bool:
        """Whether a text names `{{ found }}`."""
        return any(_USES_FOUND.search(t) for t in (self.passed, self.failed) if t)


class CommandCheck(LabModel):
    """`command` on `node`: its output `contains`, matches `regex` or `not_contains` text.
    `read` (a regex with one group) takes the value a student should see out of the
    output; `say` words the result for the student (a pattern is never shown to them)."""

    kind: Literal["command"]
    node: str = Field(min_length=1)
    command: str = Field(min_length=1, max_length=400)
    contains: str | None = Field(None, min_length=1)
    regex: str | None = Field(None, min_length=1)
    not_contains: str | None = Field(None, min_length=1)
    read: str | None = Field(
        None,
        min_length=1,
        description="A regex with one group: the value the output shows, {{ found }} in say.",
    )
    say: CommandSay | None = None

    @model_validator(mode="after")
    def _one_test(self) -> CommandCheck:
        _exactly_one(
            "a command check",
            {"contains": self.contains, "regex": self.regex, "not_contains": self.not_contains},
        )
        if self.regex is not None:
            _compile(self.regex)
        read = self.read
        if read is not None and not is_template(read) and _compile(read).groups != 1:
            raise ValueError(f"read {self.read!r} needs exactly one (group): the value")
        if self.say is not None and self.say.uses_found() and self.read is None:
            raise ValueError("say uses {{ found }}: give read, the regex that finds it")
        return self


ParsedExpect = Literal["present", "absent"] | Annotated[int, Field(ge=0)]


class ParsedCheck(LabModel):
    """`command` on `node` parsed into rows (TextFSM templates for `platform`); the rows
    whose fields match `match` are `present`, `absent`, or exactly that many."""

    kind: Literal["parsed"]
    node: str = Field(min_length=1)
    command: str = Field(min_length=1, max_length=400)
    platform: str | None = Field(
        None, min_length=1, description="e.g. cisco_ios; default: the node's console dialect."
    )
    match: dict[str, str] = Field(
        default_factory=dict, description="field -> value, or /regex/ (case-insensitive)."
    )
    expect: ParsedExpect = "present"

    @field_validator("match")
    @classmethod
    def _patterns(cls, match: dict[str, str]) -> dict[str, str]:
        for value in match.values():
            if is_regex_pattern(value) and not is_template(value):
                _compile(value[1:-1])
        return match


class NodeRunningCheck(LabModel):
    """`node` is started."""

    kind: Literal["node_running"]
    node: str = Field(min_length=1)


class LinkCheck(LabModel):
    """A link joins the two nodes of `between` (`[A, B]`), or the two ports
    (`[[A, e0], [B, e1]]`)."""

    kind: Literal["link"]
    between: Annotated[
        list[str | Annotated[list[str], Field(min_length=2, max_length=2)]],
        Field(min_length=2, max_length=2),
    ]

    @field_validator("between")
    @classmethod
    def _same_shape(cls, ends: list[str | list[str]]) -> list[str | list[str]]:
        if len({isinstance(end, str) for end in ends}) != 1:
            raise ValueError("name two nodes ([A, B]) or two ports ([[A, e0], [B, e1]])")
        return ends

    @property
    def nodes(self) -> tuple[str, str]:
        """The two nodes, whichever way they are given."""
        a, b = (end if isinstance(end, str) else end[0] for end in self.between)
        return a, b

    @property
    def ports(self) -> tuple[str, str] | None:
        """The two ports when given."""
        ports = [end[1] for end in self.between if not isinstance(end, str)]
        return (ports[0], ports[1]) if len(ports) == 2 else None


class PingDuring(LabModel):
    source: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)


class TrafficDuring(LabModel):
    ping: PingDuring


class LinkPorts(LabModel):
    """A link by its two ends, as the capture tools name it."""

    a: str = Field(min_length=1)
    a_port: str = Field(min_length=1)
    b: str = Field(min_length=1)
    b_port: str = Field(min_length=1)


_LINK_TEXT = re.compile(r"^\s*(\S.*?)\s+(\S+)\s*(?:<->|-)\s*(\S.*?)\s+(\S+)\s*$")


def link_ports(link: str | LinkPorts) -> LinkPorts:
    """`"PC1 e0 - SW1 e1"` (or `<->`) as `LinkPorts`; ValueError for another shape."""
    if isinstance(link, LinkPorts):
        return link
    match = _LINK_TEXT.match(link)
    if match is None:
        raise ValueError(f"{link!r} names no link; write it as 'PC1 e0 - SW1 e1'")
    a, a_port, b, b_port = match.groups()
    return LinkPorts(a=a, a_port=a_port, b=b, b_port=b_port)


class TrafficCheck(LabModel):
    """Packets matching `filter` cross `link` (`"PC1 e0 - SW1 e1"`, or `{a, a_port, b,
    b_port}`) within `seconds`, while `during` runs when given."""

    kind: Literal["traffic"]
    link: str | LinkPorts
    filter: str = Field(
        min_length=1, max_length=200, description="A display filter: icmp, ospf, ..."
    )
    seconds: float = Field(3, gt=0, le=MAX_SECONDS)
    during: TrafficDuring | None = None

    @field_validator("link")
    @classmethod
    def _named(cls, link: str | LinkPorts) -> str | LinkPorts:
        if isinstance(link, str) and not is_template(link):
            link_ports(link)
        return link


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


Check = Annotated[
    ReachableCheck
    | AddressCheck
    | CommandCheck
    | ParsedCheck
    | NodeRunningCheck
    | LinkCheck
    | TrafficCheck
    | OspfNeighborCheck
    | RouteCheck
    | BgpSessionCheck
    | JsonCheck,
    Field(discriminator="kind"),
]
CHECK_KINDS = (
    "reachable",
    "address",
    "command",
    "parsed",
    "node_running",
    "link",
    "traffic",
    "ospf_neighbor",
    "route",
    "bgp_session",
    "json",
)


# -- objectives, stages, the lab ---------------------------------------------------------------


class Objective(LabModel):
    """What the student must achieve: `text`, worth `points`, decided by one `check`, by
    `all` of a list of checks, or by `any` of them."""

    id: str = Field(pattern=IDENTIFIER)
    text: str = Field(min_length=1, max_length=2000)
    points: float = Field(1, ge=0)
    check: Check | None = None
    all: list[Check] | None = Field(None, min_length=1)
    any: list[Check] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_way(self) -> Objective:
        _exactly_one("an objective", {"check": self.check, "all": self.all, "any": self.any})
        return self

    @property
    def checks(self) -> list[Check]:
        """The objective's checks, whichever way they are given."""
        if self.check is not None:
            return [self.check]
        return list(self.all or self.any or [])


class Stage(LabModel):
    """A part of the lab: its objectives, the snapshot a student may restore to catch up
    (the state at the start of the stage), and how much the copilot may explain."""

    id: str = Field(pattern=IDENTIFIER)
    title: str = Field(min_length=1, max_length=200)
    objectives: list[Objective] = Field(min_length=1)
    snapshot: str | None = Field(None, min_length=1, max_length=200)
    hints: HintPolicy = "nudge"


class SubnetRange(LabModel):
    pool: str = Field(description="The network subnets are taken from, e.g. 10.0.0.0/16.")
    prefix: int = Field(ge=1, le=32, description="The prefix length of each subnet.")

    @model_validator(mode="after")
    def _fits(self) -> SubnetRange:
        try:
            pool = ipaddress.IPv4Network(self.pool, strict=True)
        except ValueError as exc:
            raise ValueError(f"pool {self.pool!r} is not an IPv4 network ({exc})") from None
        if self.prefix < pool.prefixlen:
            raise ValueError(f"prefix /{self.prefix} is shorter than the pool's /{pool.prefixlen}")
        return self


class Parameter(LabModel):
    """A per-student value: a `subnet` of a pool, an `int` in `[low, high]`, or one
    `choice` of a list (exactly one of them)."""

    subnet: SubnetRange | None = None
    integer: Annotated[list[int], Field(min_length=2, max_length=2)] | None = Field(
        None, alias="int"
    )
    choice: list[str | int | float] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_kind(self) -> Parameter:
        _exactly_one(
            "a parameter", {"subnet": self.subnet, "int": self.integer, "choice": self.choice}
        )
        if self.integer is not None and self.integer[0] > self.integer[1]:
            raise ValueError(f"the range [{self.integer[0]}, {self.integer[1]}] is empty")
        return self


class LabFile(LabModel):
    """A whole `lab.yaml`."""

    title: str = Field(min_length=1, max_length=200)
    parameters: dict[Annotated[str, Field(pattern=PARAMETER_NAME)], Parameter] = Field(
        default_factory=dict
    )
    stages: list[Stage] = Field(min_length=1)

    def stage(self, stage_id: str) -> Stage | None:
        """The stage called `stage_id`, or None."""
        return next((s for s in self.stages if s.id == stage_id), None)

    def require_stage(self, stage_id: str) -> Stage:
        """The stage called `stage_id`; raises `UnknownStage` (naming the stages there are)
        when the lab has none."""
        from .errors import UnknownStage

        stage = self.stage(stage_id)
        if stage is None:
            raise UnknownStage(stage_id, [s.id for s in self.stages])
        return stage


def is_regex_pattern(value: str) -> bool:
    """Whether a `match` value is written as a `/regex/`."""
    return len(value) >= 2 and value.startswith("/") and value.endswith("/")


def is_ipv4(text: str) -> bool:
    """Whether `text` is an IPv4 address (`to` may be one, or a node's name)."""
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"the regular expression {pattern!r} is invalid: {exc}") from None


def _exactly_one(what: str, fields: dict[str, object]) -> None:
    given = [name for name, value in fields.items() if value is not None]
    if len(given) != 1:
        names = list(fields)
        raise ValueError(
            f"{what} needs exactly one of {', '.join(names[:-1])} or {names[-1]}"
            + (f" (found {', '.join(given)})" if given else "")
        )
