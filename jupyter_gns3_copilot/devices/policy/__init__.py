"""Command policy: what the copilot may type on a device console, decided before sending.

Every command line goes through three layers, in this order; the first objection wins and
becomes the reason reported in the tool result (blocked commands are never sent, and never
silently dropped):

1. Session rules, built in, in every mode: commands that would break the tools' own
   handling of the console or reach outside the lab. `exit`/`logout`/`quit` at the exec
   prompt, IOS `disable`, entering configuration mode from an exec-level tool, IOS output
   modifiers that write files (`| redirect`), commands that open a dialog the tools cannot
   answer (IOS `ping` without a target, `tclsh`; Linux `top`, `vi`, endless `ping`), and
   VPCS commands that act on the GNS3 host (`!` runs a host program, `rlogin`,
   `save`/`load` with a path, digits switching the virtual PC).
2. Read-only rules (teaching_assistant mode): only diagnostic commands run, per dialect
   (`show`, `ping`, `trace`/`traceroute`, `arp`...); anything that could change a device,
   configuration mode included, is refused. An allow-list, so unknown commands are refused.
3. The forbidden-command list: a text file (`forbidden_commands.txt` shipped next to this
   module, or an admin's file, which replaces it), re-read when it changes on disk.

In teaching_assistant mode an allowed diagnostic that could run without end is then
bounded (`teaching_bound`, reported in `Screening.capped`): a `ping` sends at most
`TEACHING_MAX_PROBES` probes (VPCS `-c N` and `-t`, IOS `repeat N`, Linux `-c N`). Any
other long command is interrupted on the device when the tool's command timeout passes.

Matching works on normalised words, not raw prefixes: case and spacing are ignored, and a
typed word may abbreviate a rule word the way the device accepts it (`wr er` is
`write erase`, `conf t` is `configure terminal`). A first word is first spelled out through
the dialect's known commands when they resolve it (VPCS `e` is `echo`, IOS `wr` is
`write`); otherwise IOS words of 2+ letters may abbreviate a rule word (conservative: an
ambiguous abbreviation is blocked), VPCS words must then match exactly (VPCS knows no other
commands, so it rejects what it cannot resolve), and Linux takes no abbreviations at all.
On IOS a leading `do` is looked through, and a leading `no`/`default` too, so a rule also
covers undoing what it names (`aaa` covers `no aaa new-model`). Linux lines are split at
`;`, `&&`, `||`, `|`, `&` and parentheses and each part is checked, looking through shell
keywords and wrappers such as `sudo`; command substitution is refused. On Linux the policy
is a classroom safety net, not a sandbox.

Rule file format, one rule per line (`#` starts a comment line)::

    [allow:] [DIALECT[,DIALECT]:] WORDS [$] [-- reason]

WORDS match the start of a command (`$` at the end: the whole command); `*` matches one
word, `...` any number of words, a word with `*`/`?`/`[` is a glob (no abbreviation).
DIALECT is vpcs, cisco_ios, frr or linux (default: every dialect). `allow:` rules are exceptions
checked first (on IOS against the command as typed, before looking through `no`).
"""

from .command_policy import DEFAULT_POLICY_FILE, CommandPolicy, Screening
from .dialect_rules import config_mode_action, spelled_out, takes_command_word, teaching_bound
from .rules import (
    IOS_LIKE,
    TEACHING_MAX_PROBES,
    CappedCommand,
    CommandContext,
    ConfigAction,
    PolicyRule,
    PolicyStatus,
    command_words,
    parse_rules,
)

__all__ = [
    "DEFAULT_POLICY_FILE",
    "IOS_LIKE",
    "TEACHING_MAX_PROBES",
    "CappedCommand",
    "CommandContext",
    "CommandPolicy",
    "ConfigAction",
    "PolicyRule",
    "PolicyStatus",
    "Screening",
    "command_words",
    "config_mode_action",
    "parse_rules",
    "spelled_out",
    "takes_command_word",
    "teaching_bound",
]
