"""The lab file's faults: what an instructor breaks in a working lab for a troubleshooting
exercise, and what a diagnosis of it must name.

A fault says which objectives it `breaks` (they pass before it is applied and fail once it
is in), the `apply` steps that put it in (configuration lines on a device in its own
dialect, a cable pulled, a link's packet filters, a node stopped, an interface's MTU) and
the `diagnosis`: the device, optionally the interface, and the cause a diagnosis must name
(any of its accepted words). Its `description` is for the instructor only: students never
receive a fault.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ..gns3.links import link_filters
from .model_base import IDENTIFIER, MAX_WAIT, LabModel, LinkPorts, is_template, link_ports

MAX_STEP_LINES = 50
"""Configuration lines one step may type."""
MIN_MTU, MAX_MTU = 576, 9000
_INTERFACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,14}")
DEFAULT_SETTLE = 20.0
"""Seconds a fault's broken objectives may take to fail once it is in (routing reconverges)."""


def _named_link(link: str | LinkPorts) -> str | LinkPorts:
    if isinstance(link, str) and not is_template(link):
        link_ports(link)
    return link


class ConfigStep(LabModel):
    """`lines` typed on `node`'s console in its dialect: configuration lines on a router
    (in configuration mode, entered and left for them), commands on a VPCS or a Linux
    shell."""

    kind: Literal["config"]
    node: str = Field(min_length=1)
    lines: list[Annotated[str, Field(min_length=1, max_length=400)]] = Field(
        min_length=1, max_length=MAX_STEP_LINES
    )


class LinkDownStep(LabModel):
    """`link` (`"R1 e1 - R3 e1"`) suspended, like a pulled cable."""

    kind: Literal["link_down"]
    link: str | LinkPorts

    _link = field_validator("link")(_named_link)


class LinkFilterStep(LabModel):
    """`link` given packet filters: loss, delay (with jitter) or corruption."""

    kind: Literal["link_filter"]
    link: str | LinkPorts
    packet_loss: int = Field(0, ge=0, le=100, description="Loss %.")
    delay_ms: int = Field(0, ge=0, le=32767)
    jitter_ms: int = Field(0, ge=0, le=32767)
    corrupt: int = Field(0, ge=0, le=100, description="Corruption %.")

    _link = field_validator("link")(_named_link)

    @model_validator(mode="after")
    def _some_filter(self) -> LinkFilterStep:
        if not (self.packet_loss or self.delay_ms or self.corrupt):
            raise ValueError("a link_filter step sets packet_loss, delay_ms or corrupt")
        if self.jitter_ms and not self.delay_ms:
            raise ValueError("jitter_ms needs a delay_ms above 0")
        return self

    def filters(self) -> dict[str, list[int]]:
        """The GNS3 link filters this step sets."""
        return link_filters(self.packet_loss, self.delay_ms, self.jitter_ms, self.corrupt)


class NodeStoppedStep(LabModel):
    """`node` stopped."""

    kind: Literal["node_stopped"]
    node: str = Field(min_length=1)


class MtuStep(LabModel):
    """`interface` of `node` given an MTU of `mtu` bytes, as the node's operating system
    sets it when it boots: a lab kit router reads it from its kernel command line (an
    `mtu.<interface>=<bytes>` argument). The node's configuration is saved first, the node
    restarts with the argument and the step waits until its console answers again."""

    kind: Literal["mtu"]
    node: str = Field(min_length=1)
    interface: str
    mtu: int = Field(description="Bytes, 576 to 9000 (1500 is Ethernet's own).")

    @field_validator("interface")
    @classmethod
    def _interface_name(cls, interface: str) -> str:
        if not _INTERFACE.fullmatch(interface):
            raise ValueError(
                f"{interface!r} is no interface name: letters, digits, dots and dashes, "
                "as eth1 (15 at most)"
            )
        return interface

    @field_validator("mtu")
    @classmethod
    def _mtu_in_range(cls, mtu: int) -> int:
        if not MIN_MTU <= mtu <= MAX_MTU:
            raise ValueError(f"an MTU is {MIN_MTU} to {MAX_MTU} bytes, not {mtu}")
        return mtu


FaultStep = Annotated[
    ConfigStep | LinkDownStep | LinkFilterStep | NodeStoppedStep | MtuStep,
    Field(discriminator="kind"),
]
STEP_KINDS = ("config", "link_down", "link_filter", "node_stopped", "mtu")


class Diagnosis(LabModel):
    """What a diagnosis of the fault must name: `device`, `interface` when given, and the
    cause: `cause` in the instructor's words, `words` the ones a diagnosis may use for it
    (any one of them, in any case)."""

    device: str = Field(min_length=1)
    interface: str | None = Field(None, min_length=1)
    cause: str = Field(min_length=1, max_length=500)
    words: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        min_length=1, max_length=20
    )


class Fault(LabModel):
    """One fault of the lab (module docstring). `stage`: the stage it belongs to (an
    exercise breaks the student's working lab as it is: `objectives.exercises`);
    `settle`: how long its broken objectives may take to fail once it is in."""

    id: str = Field(pattern=IDENTIFIER)
    description: str = Field(min_length=1, max_length=2000)
    stage: str | None = Field(None, pattern=IDENTIFIER)
    breaks: list[Annotated[str, Field(pattern=IDENTIFIER)]] = Field(min_length=1)
    apply: list[FaultStep] = Field(min_length=1, max_length=20)
    diagnosis: Diagnosis
    settle: float = Field(DEFAULT_SETTLE, ge=0, le=MAX_WAIT)
