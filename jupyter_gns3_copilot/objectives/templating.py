"""Rendering a lab's texts and checks with a student's parameter values.

Templates are Jinja2 in an immutable sandbox (a lab file is data an instructor wrote, not
code the server trusts), with undefined names as errors and these filters for subnets:

- `net | host(n)`: the n-th address of the subnet (`host(1)` is `.1` of a /24; a negative
  n counts back from the broadcast address, `host(-1)` is the last usable one);
- `net | netmask`: `255.255.255.0`; `net | prefixlen`: `24`; `net | network`: `10.0.3.0`.

`{{ net }}` alone is the subnet as `10.0.3.0/24`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from functools import cache

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .model_base import FOUND, CommandSay, is_template


class TemplateProblem(ValueError):
    """A template that cannot be rendered; the message says why, in the author's terms."""


def render_text(text: str, values: Mapping[str, object]) -> str:
    """`text` with its templates rendered with `values` (unchanged when it has none)."""
    if not is_template(text):
        return text
    try:
        return _environment().from_string(text).render(values)
    except TemplateError as exc:
        raise TemplateProblem(f"the template {text!r} cannot be rendered: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise TemplateProblem(f"the template {text!r} cannot be rendered: {exc}") from None


def said(say: CommandSay | None, ok: bool, found: str | None) -> str | None:
    """The lab file's words for a check's result (`say`'s `pass` or `fail`, its `{{ found
    }}` filled in with `found`); None when it has none for this result, when it names
    `{{ found }}` and nothing was found, or when it does not render (a parameter's value
    that reads as a template): the check then says it in general words."""
    words = (say.passed if ok else say.failed) if say else None
    if say is None or words is None or (found is None and say.uses_found()):
        return None
    try:
        return render_text(words, {FOUND: found})
    except TemplateProblem:
        return None


def render_data(
    data: object, values: Mapping[str, object], path: tuple[str | int, ...] = ()
) -> object:
    """`data` (the lab file's parsed YAML) with every string rendered. A problem is raised as
    `RenderProblem` carrying the path of the string."""
    if isinstance(data, str):
        try:
            return render_text(data, values)
        except TemplateProblem as exc:
            raise RenderProblem(path, str(exc)) from None
    if isinstance(data, Mapping):
        return {key: render_data(value, values, (*path, key)) for key, value in data.items()}
    if isinstance(data, list):
        return [render_data(item, values, (*path, index)) for index, item in enumerate(data)]
    return data


class RenderProblem(ValueError):
    """A template at `path` in the lab file that cannot be rendered."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path


def _host(network: object, n: int) -> str:
    net = _network(network, "host")
    if not isinstance(n, int):
        raise ValueError(f"host() takes a whole number, not {n!r}")
    address = net.broadcast_address + n if n < 0 else net.network_address + n
    if address not in net:
        raise ValueError(f"{net} has no host number {n}")
    return str(address)


def _netmask(network: object) -> str:
    return str(_network(network, "netmask").netmask)


def _prefixlen(network: object) -> int:
    return _network(network, "prefixlen").prefixlen


def _network_address(network: object) -> str:
    return str(_network(network, "network").network_address)


def _network(value: object, name: str) -> ipaddress.IPv4Network:
    if isinstance(value, ipaddress.IPv4Network):
        return value
    try:
        return ipaddress.IPv4Network(str(value), strict=False)
    except ValueError:
        raise ValueError(f"the {name} filter needs a subnet, not {value!r}") from None


@cache
def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=False)
    env.filters.update(host=_host, netmask=_netmask, prefixlen=_prefixlen, network=_network_address)
    return env
