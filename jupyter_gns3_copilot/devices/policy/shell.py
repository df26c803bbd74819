"""The built-in rules of Linux shell lines: each command of a line checked on its own,
looking through shell keywords and wrappers (a classroom safety net, not a sandbox)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from .rules import LEAVE_SESSION, TEACHING_HELP, PolicyRule, rule_problem, word_set

SHELL_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")"})
_SHELL_KEYWORDS = word_set("if then else elif fi do done while until for in ! { }")
_WRAPPERS = word_set("sudo nohup time command builtin env nice timeout xargs")
_ASSIGNMENT = re.compile(r"[a-z_][a-z0-9_]*=.*")
_SUBSHELLS = word_set("sh bash ash dash zsh ksh eval source .")
_SHELL_REDIRECTIONS = frozenset({">", ">>", "<", "<<", "<<<", ">|", "&>", "&>>", ">&", "<&"})
_LINUX_READ_ONLY = word_set(
    "ping traceroute tracepath netstat ss cat ls uname whoami id uptime date pwd echo "
    "nslookup dig host ps df free hostname ifconfig ip route arp"
)
_LINUX_FILTERS = word_set("grep egrep fgrep head tail wc sort uniq cut column")
_LINUX_INTERACTIVE = word_set("top htop vi vim nano less more watch ssh telnet su passwd login")
_IP_SHOW_VERBS = frozenset({"show", "list", "ls", "lst", "sh", "get"})
LINUX_KNOWN = (
    _LINUX_READ_ONLY
    | _LINUX_FILTERS
    | _LINUX_INTERACTIVE
    | _WRAPPERS
    | _SUBSHELLS
    | word_set(
        "sysctl iptables ip6tables nft brctl bridge dhclient udhcpc ifup ifdown service "
        "systemctl rc-service vconfig modprobe tc kill reboot rm mv cp chmod tee"
    )
)
"""Linux programs the policy knows of, diagnostics or not (`takes_command_word`)."""


def check_shell_line(command: str, read_only: bool, rules: Sequence[PolicyRule]) -> str | None:
    if "`" in command or "$(" in command:
        return "command substitution (`...` or $(...)) cannot be checked by the command policy"
    try:
        tokens = shell_tokens(command)
    except ValueError as exc:
        return f"the shell line cannot be parsed ({exc})"
    stages: list[tuple[str, list[str]]] = [("", [])]
    for token in tokens:
        if token in SHELL_SEPARATORS:
            stages.append((token, []))
        elif token in _SHELL_REDIRECTIONS and read_only:
            return (
                f"teaching_assistant mode does not redirect output into files (`{token}`). "
                f"{TEACHING_HELP}"
            )
        else:
            stages[-1][1].append(token.lower())
    for separator, words in stages:
        words = without_wrappers(words)
        if not words:
            continue
        problem = (
            _shell_session_problem(words)
            or (_shell_read_only_problem(words, separator) if read_only else None)
            or rule_problem(words, None, "linux", rules)
        )
        if problem:
            return problem
    return None


def shell_tokens(command: str) -> list[str]:
    """A shell line's words and operators (`;`, `|`, `>`, ... as tokens of their own);
    ValueError when it cannot be split (an unclosed quote)."""
    lexer = shlex.shlex(command.strip(), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def without_wrappers(words: list[str]) -> list[str]:
    """`words` without leading shell keywords, variable assignments and wrapper commands
    (`sudo -u root reboot` is checked as `reboot`)."""
    while words:
        first = words[0]
        if first in _SHELL_KEYWORDS or _ASSIGNMENT.fullmatch(first):
            words = words[1:]
        elif first in _WRAPPERS:
            words = words[1:]
            while words and (words[0].startswith("-") or _ASSIGNMENT.fullmatch(words[0])):
                takes_value = words[0] in ("-u", "-g", "-h", "-p", "-n", "-c")
                words = words[2:] if takes_value else words[1:]
            if first == "timeout" and words:
                words = words[1:]
        else:
            break
    return words


def _shell_session_problem(words: Sequence[str]) -> str | None:
    first = words[0]
    if first in ("exit", "logout", "exec"):
        return f"`{first}` {LEAVE_SESSION}"
    if first in _SUBSHELLS:
        return f"`{first}` runs commands the command policy cannot check"
    if first in _LINUX_INTERACTIVE:
        return f"`{first}` is interactive; the tools cannot drive it"
    if first in ("ping", "ping6", "tcpdump") and not any(
        word == "-c" or word.startswith("-c") for word in words[1:]
    ):
        return f"`{first}` without `-c COUNT` never ends; add e.g. `-c 3`"
    if first == "tail" and any(word in ("-f", "-F", "--follow") for word in words[1:]):
        return "`tail -f` never ends"
    return None


def _shell_read_only_problem(words: Sequence[str], separator: str) -> str | None:
    first, args = words[0], words[1:]
    if separator in ("|", "|&"):
        if first in _LINUX_FILTERS:
            return None
        why = f"only filters ({', '.join(sorted(_LINUX_FILTERS))}) may follow `|`"
    elif first not in _LINUX_READ_ONLY:
        why = f"`{first}` is not one of them"
    elif first == "ip":
        rest = [word for word in args if not word.startswith("-")]
        if len(rest) < 2 or rest[1] in _IP_SHOW_VERBS:
            return None
        why = f"`ip {' '.join(rest[:2])}` would change the device"
    elif first == "ifconfig" and len(args) > 1:
        why = "`ifconfig` with settings would change the device"
    elif first == "route" and any(word in ("add", "del", "delete", "flush") for word in args):
        why = "`route` with add/del would change the device"
    elif first == "arp" and any(w.startswith(("-s", "-d", "--set", "--delete")) for w in args):
        why = "`arp -s/-d` would change the device"
    elif first == "hostname" and args:
        why = "`hostname NAME` would change the device"
    else:
        return None
    listing = ", ".join(sorted(_LINUX_READ_ONLY))
    return (
        f"teaching_assistant mode only runs diagnostic commands ({listing}); {why}. {TEACHING_HELP}"
    )
