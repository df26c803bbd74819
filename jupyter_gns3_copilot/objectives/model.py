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
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from .fault_model import Fault
from .model_base import (
    IDENTIFIER,
    MAX_SECONDS,
    MAX_WAIT,
    PARAMETER_NAME,
    CommandSay,
    HintPolicy,
    LabModel,
    LinkPorts,
    compile_pattern,
    exactly_one,
    is_ipv4,
    is_regex_pattern,
    is_template,
    link_ports,
)
from .routing_model import BgpSessionCheck, JsonCheck, OspfNeighborCheck, RouteCheck

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
        exactly_one(
            "a command check",
            {"contains": self.contains, "regex": self.regex, "not_contains": self.not_contains},
        )
        if self.regex is not None:
            compile_pattern(self.regex)
        read = self.read
        if read is not None and not is_template(read) and compile_pattern(read).groups != 1:
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
                compile_pattern(value[1:-1])
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
        exactly_one("an objective", {"check": self.check, "all": self.all, "any": self.any})
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
        exactly_one(
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
    faults: list[Fault] = Field(
        default_factory=list, description="Faults for troubleshooting exercises."
    )

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

    def require_fault(self, fault_id: str) -> Fault:
        """The fault called `fault_id`; raises `UnknownFault` (naming the lab's faults)."""
        from .errors import UnknownFault

        fault = next((f for f in self.faults if f.id == fault_id), None)
        if fault is None:
            raise UnknownFault(fault_id, [f.id for f in self.faults])
        return fault

    def objective_ids(self) -> list[str]:
        """Every objective's id, in the lab's order."""
        return [o.id for s in self.stages for o in s.objectives]
