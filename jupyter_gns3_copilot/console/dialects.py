"""Console dialects: how each kind of device prompts, pages, asks and complains.

A `Dialect` is plain data read by `ConsoleSession`; all patterns run on cleaned text
(see `text.clean_terminal_text`: no escapes, no `\\r`, lines end with `\\n`), and the
end-anchored ones (`prompt`, `pager_prompt`, interactive and login prompts) only match
the very end of what has been received so far.

Which dialect a node speaks is decided by `resolve_dialect`.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .errors import DialectError

log = logging.getLogger(__name__)

DialectName = Literal["vpcs", "cisco_ios", "frr", "linux"]


@dataclass(frozen=True)
class InteractivePrompt:
    """A question a device may ask in the middle of a command, and how to answer it."""

    pattern: re.Pattern[str]
    accept: str
    decline: str


@dataclass(frozen=True)
class Dialect:
    """Everything `ConsoleSession` needs to drive one kind of console."""

    name: DialectName
    description: str
    prompt: re.Pattern[str]
    """Matches the prompt at the end of the text; group `prompt` is the prompt itself."""
    newline: str = "\n"
    """What to send for Enter."""
    wake_settle: float = 0.1
    """Seconds a prompt must stand with nothing after it before waking is done."""
    error: re.Pattern[str] | None = None
    """A line of output meaning the device rejected the command."""
    pager_prompt: re.Pattern[str] | None = None
    """A pager marker waiting for a key at the end of the text."""
    pager_marker: re.Pattern[str] | None = None
    """The same marker anywhere in the text, to strip it from the output."""
    pager_response: str = " "
    interactive: tuple[InteractivePrompt, ...] = ()
    username_prompt: re.Pattern[str] | None = None
    password_prompt: re.Pattern[str] | None = None
    login_failed: re.Pattern[str] | None = None
    enable_command: str | None = None
    """Command that raises the privilege level; the session runs it after login."""
    privileged_prompt: re.Pattern[str] | None = None
    config_enter: str | None = None
    config_exit: str | None = None
    config_prompt: re.Pattern[str] | None = None
    setup_commands: tuple[str, ...] = ()
    """Commands run once per connection after login/enable (e.g. disable paging)."""
    log_line: re.Pattern[str] | None = None
    """A message the device's software logs onto the console at any time (even right
    after its prompt, which it then does not print again): dropped from what is read."""
    interrupt: tuple[str, ...] = ("\x03",)
    """Keys that stop a running command, tried in turn until the prompt comes back
    (Ctrl-C; on IOS first the break sequence Ctrl-Shift-6)."""

    def is_privileged(self, prompt: str) -> bool:
        """Whether `prompt` is at the highest privilege level (always true without enable)."""
        return self.privileged_prompt is None or bool(self.privileged_prompt.search(prompt))

    def in_config_mode(self, prompt: str) -> bool:
        """Whether `prompt` is a configuration-mode prompt."""
        return self.config_prompt is not None and bool(self.config_prompt.search(prompt))


_END = r"[ \t]*\Z"

VPCS = Dialect(
    name="vpcs",
    description="GNS3 VPCS: prompt 'NAME> ', commands echoed, one command at a time",
    prompt=re.compile(r"(?:\A|\n)(?P<prompt>[\w.\-\[\]()]+>) ?\Z"),
    # VPCS answers a bare Enter only after about 0.1 s and drops what is typed meanwhile.
    wake_settle=0.15,
    error=re.compile(r"^Bad command: .*$", re.MULTILINE),
)

CISCO_IOS = Dialect(
    name="cisco_ios",
    description="Cisco IOS-like CLI: 'R1>', 'R1#', 'R1(config...)#', --More--, [confirm]",
    prompt=re.compile(
        r"(?:\A|\n)(?P<prompt>[A-Za-z0-9][\w.\-@/:]*(?:\((?:config|cfg)[^)\n]*\))?[>#])" + _END
    ),
    newline="\r",
    error=re.compile(
        r"^% ?(?:Invalid input|Incomplete command|Ambiguous command|Unknown command"
        r"|Unrecognized command|Bad (?:secrets|passwords)|Access denied).*$",
        re.MULTILINE,
    ),
    pager_prompt=re.compile(r" ?-+ ?More ?-+" + _END),
    pager_marker=re.compile(r" ?-- ?More ?--[ \t]?"),
    interactive=(
        InteractivePrompt(re.compile(r"\[confirm\]" + _END), accept="\r", decline="n"),
        InteractivePrompt(re.compile(r"\[yes/no\]:?" + _END), accept="yes\r", decline="no\r"),
        InteractivePrompt(
            re.compile(r"(?:Destination|Source) filename \[[^\]\n]*\]\?" + _END),
            accept="\r",
            decline="\x03",
        ),
    ),
    username_prompt=re.compile(r"(?:Username|login): ?" + _END, re.IGNORECASE),
    password_prompt=re.compile(r"Password: ?" + _END, re.IGNORECASE),
    login_failed=re.compile(r"% ?(?:Login invalid|Authentication failed|Bad passwords)"),
    enable_command="enable",
    privileged_prompt=re.compile(r"#\Z"),
    config_enter="configure terminal",
    config_exit="end",
    config_prompt=re.compile(r"\((?:config|cfg)[^)]*\)#\Z"),
    setup_commands=("terminal length 0",),
    # Ctrl-Shift-6 (0x1e) aborts ping/traceroute; Ctrl-C then stops what ignores it. No
    # `x` after the break: on a finished command it would be typed at the prompt.
    interrupt=("\x1e", "\x03"),
)

FRR = Dialect(
    name="frr",
    description="FRRouting vtysh: 'r1#', 'r1(config-router)#', '% Unknown command', no pager",
    prompt=CISCO_IOS.prompt,
    newline="\r",
    error=re.compile(
        r"^% ?(?:Unknown command|Command incomplete|Ambiguous command|There is no matched "
        r"command|Malformed|Invalid|Can't|Cannot|OSPF is not running|Configuration failed"
        r"|Not authorized).*$",
        re.MULTILINE,
    ),
    # `enable` is accepted and does nothing: vtysh starts at `#`.
    privileged_prompt=re.compile(r"#\Z"),
    config_enter="configure terminal",
    config_exit="end",
    config_prompt=CISCO_IOS.config_prompt,
    setup_commands=("terminal length 0",),
    # vtysh logs a warning such as "2026/12/06 19:17:07 [PHJDC-499N2][EC 100663314]
    # STARVATION: task vtysh_rl_read ... ran for 6081ms" after its prompt when a command
    # took long (a ping without answer): without dropping it, the prompt seems to never come.
    log_line=re.compile(
        r" ?\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? \[[A-Z0-9-]+\]\[EC \d+\][^\n]*\n"
    ),
    # Ctrl-C stops the program vtysh runs (ping, traceroute); vtysh itself stays. When
    # PID 1 restarts vtysh it prints "Hello, this is FRRouting ..." before its prompt,
    # which `wake` reads past like any other text before a prompt.
)

LINUX = Dialect(
    name="linux",
    description="Linux/BusyBox shell: prompt ending in '$ ' or '# '",
    # Several prompts can share a line (Enter pressed twice); the last one counts.
    prompt=re.compile(r"(?:\A|\n)(?:[^\n]*[$#] )?(?P<prompt>[^\n$#]*[$#]) \Z"),
    error=re.compile(r"^.*: (?:command )?not found$", re.MULTILINE),
    username_prompt=re.compile(r"login: ?" + _END),
    password_prompt=re.compile(r"Password: ?" + _END, re.IGNORECASE),
    login_failed=re.compile(r"Login incorrect"),
)

DIALECTS: Mapping[str, Dialect] = {d.name: d for d in (VPCS, CISCO_IOS, FRR, LINUX)}

# Other spellings met in tags and in Netmiko-style device types.
_ALIASES: Mapping[str, str] = {
    "vpc": "vpcs",
    "ios": "cisco_ios",
    "cisco": "cisco_ios",
    "cisco_xe": "cisco_ios",
    "cisco_iosxe": "cisco_ios",
    "iou": "cisco_ios",
    "dynamips": "cisco_ios",
    "frr_vtysh": "frr",
    "frrouting": "frr",
    "vtysh": "frr",
    "shell": "linux",
    "docker": "linux",
}

# Node types whose console dialect is known without a hint.
NODE_TYPE_DIALECTS: Mapping[str, str] = {
    "vpcs": "vpcs",
    "iou": "cisco_ios",
    "dynamips": "cisco_ios",
    "docker": "linux",
}

_DEVICE_TYPE_TOKEN = re.compile(r"device_type\s*[:=]\s*([A-Za-z][\w\-]*)", re.IGNORECASE)


def dialect_by_name(name: str) -> Dialect:
    """The dialect called `name` (case-insensitive; aliases and a `_telnet` suffix allowed).

    Raises `DialectError` listing the known names when there is none.
    """
    key = name.strip().lower().replace("-", "_")
    key = key.removesuffix("_telnet")
    key = _ALIASES.get(key, key)
    try:
        return DIALECTS[key]
    except KeyError:
        known = ", ".join(sorted(DIALECTS))
        raise DialectError(f"Unknown console dialect {name!r}; known dialects: {known}.") from None


def find_device_type(
    tags: Iterable[str] = (),
    properties: Mapping[str, Any] | None = None,
    inherited: Iterable[str] = (),
) -> str | None:
    """The first `device_type:<name>` token in `tags`, else in the `usage` property, else
    in `inherited` (the node's template's tags and usage notes)."""
    texts = [*tags]
    usage = (properties or {}).get("usage")
    if isinstance(usage, str):
        texts.append(usage)
    texts.extend(inherited)
    for text in texts:
        match = _DEVICE_TYPE_TOKEN.search(text)
        if match:
            return match.group(1)
    return None


def resolve_dialect(
    node_type: str,
    *,
    tags: Iterable[str] = (),
    properties: Mapping[str, Any] | None = None,
    override: str | Dialect | None = None,
    node_name: str | None = None,
    inherited: Iterable[str] = (),
    netmiko_device_types: Iterable[str | None] = (),
) -> Dialect:
    """Decide the console dialect of a node.

    Order: an explicit `override`; then a `device_type:<name>` token in `tags` or in the
    node's free-text `usage` property (GNS3 3.0 nodes have no tags, so instructors write
    `device_type:cisco_ios` in the node's usage notes), else in `inherited` (its
    template's tags and usage notes: one note for every node of an appliance); then the
    first of `netmiko_device_types` (GNS3 3.1's `netmiko_device_type` of the node, then of
    its template) naming a known dialect (`cisco_ios`, `linux`; others such as `vyos` are
    passed over); then the node type (vpcs -> vpcs,
    iou/dynamips -> cisco_ios, docker -> linux). A `device_type` this module does not know
    (GNS3 3.1 tags its built-in VPCS template `device_type:gns3_vpcs_telnet`) gives way to
    the node type, and the server log says so. Raises `DialectError` saying how to tag the
    node when none of these decides it, or when an `override` is unknown.
    """
    if isinstance(override, Dialect):
        return override
    if override:
        return dialect_by_name(override)
    by_type = NODE_TYPE_DIALECTS.get(node_type)
    tagged = find_device_type(tags, properties, inherited)
    if tagged:
        try:
            return dialect_by_name(tagged)
        except DialectError:
            if by_type is None:
                raise
            _unknown_device_type(tagged, node_type)
    for netmiko in netmiko_device_types:
        if netmiko:
            try:
                return dialect_by_name(netmiko)
            except DialectError:
                _unknown_device_type(netmiko, node_type)
    if by_type:
        return DIALECTS[by_type]
    who = f"node {node_name!r}" if node_name else "this node"
    known = ", ".join(sorted(DIALECTS))
    raise DialectError(
        f"Cannot tell which console dialect {who} (type {node_type or 'unknown'}) speaks. "
        f"Write device_type:<dialect> in the node's usage notes in GNS3 (Configure > "
        f"Usage), e.g. device_type:cisco_ios; known dialects: {known}."
    )


@functools.lru_cache(maxsize=64)
def _unknown_device_type(tagged: str, node_type: str) -> None:
    """Log, once per tag and node type, that an unknown `device_type` gave way."""
    log.info(
        "Console dialect: device_type %r is not one of %s; using the %s node type's dialect, %s",
        tagged,
        ", ".join(sorted(DIALECTS)),
        node_type,
        NODE_TYPE_DIALECTS.get(node_type, "if any"),
    )
