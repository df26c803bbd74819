"""What every model of the lab file shares: its base class, its id patterns and limits, and
the small helpers its validators use (templates, addresses, links by their two ends)."""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

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


def compile_pattern(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"the regular expression {pattern!r} is invalid: {exc}") from None


def exactly_one(what: str, fields: dict[str, object]) -> None:
    given = [name for name, value in fields.items() if value is not None]
    if len(given) != 1:
        names = list(fields)
        raise ValueError(
            f"{what} needs exactly one of {', '.join(names[:-1])} or {names[-1]}"
            + (f" (found {', '.join(given)})" if given else "")
        )
