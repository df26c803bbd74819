"""Reading a `%copilot` line: its options, its words, and what a short line may mistype.

Nothing here talks to the server: the line is split into argv for the magic's argument
parser and the words a subcommand takes.
"""

from __future__ import annotations

import difflib
import re

from ..errors import UsageError

VALUE_OPTIONS = frozenset(
    {
        "--mode",
        "--max-iterations",
        "--max-tool-calls",
        "--max-time",
        "--temperature",
        "--session",
        "--token",
        "--limit",
        "--tool",
        "--format",
        "--filter",
    }
)
FLAG_OPTIONS = frozenset(
    {"--new", "--quiet", "--force", "--confirm", "--stop", "--random", "-h", "--help"}
)
_TOKEN = re.compile(r"\s*(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S+)")
SUGGESTED_SUBCOMMANDS = (
    "projects",
    "show topology",
    "sessions",
    "history",
    "pin",
    "unpin",
    "delete",
    "abort",
    "status",
    "config",
    "config api_key",
    "snapshot list",
    "lab",
    "check",
)
"""The subcommands a short mistyped line is matched against (`mistyped_subcommand`)."""
TYPO_CUTOFF = 0.8
_QUESTION_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<assign>(?:[A-Za-z_][\w.]*[ \t]*=[ \t]*)?)%copilot[ \t]+"
    r"(?P<message>[^?\s].*\?)[ \t]*(?P<end>\r?\n?)$"
)
_LINK_SEPARATORS = frozenset({"-", "--", "<->", "<-->", "to", "and"})


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        inner = token[1:-1]
        return re.sub(r"\\(.)", r"\1", inner) if token[0] == '"' else inner
    return token


def tokens(text: str) -> list[str]:
    """`text` split on spaces, a token starting with a quote running to its closing one."""
    return [_unquote(match.group(1)) for match in _TOKEN.finditer(text)]


def split_leading_options(line: str) -> tuple[list[str], str]:
    """The options at the start of `line` (as argv) and the rest of the line, untouched
    (a message keeps its quotes and dashes). `--` ends the options."""
    argv: list[str] = []
    rest = line
    while True:
        match = _TOKEN.match(rest)
        if match is None or not match.group(1).startswith("-"):
            return argv, rest.strip()
        token = match.group(1)
        rest = rest[match.end() :]
        if token == "--":
            return argv, rest.strip()
        name = token.split("=", 1)[0]
        if name in FLAG_OPTIONS or (name in VALUE_OPTIONS and "=" in token):
            argv.append(token)
        elif name in VALUE_OPTIONS:
            value = _TOKEN.match(rest)
            if value is None:
                raise UsageError(f"Option {name} needs a value.")
            argv += [token, _unquote(value.group(1))]
            rest = rest[value.end() :]
        else:
            raise UsageError(
                f"Unknown option {token}. For a message that starts with '-', put `--` "
                "before it: `%copilot -- <message>`."
            )


def split_options(text: str) -> tuple[list[str], list[str]]:
    """Options anywhere in `text` (as argv) and the other tokens."""
    argv: list[str] = []
    words: list[str] = []
    items = tokens(text)
    index = 0
    while index < len(items):
        token = items[index]
        name = token.split("=", 1)[0]
        if name in VALUE_OPTIONS and "=" not in token:
            if index + 1 >= len(items):
                raise UsageError(f"Option {name} needs a value.")
            argv += [token, items[index + 1]]
            index += 2
            continue
        if name in FLAG_OPTIONS or name in VALUE_OPTIONS:
            argv.append(token)
        elif token.startswith("--"):
            raise UsageError(f"Unknown option {token}. See `%copilot?`.")
        else:
            words.append(token)
        index += 1
    return argv, words


def keep_question_marks(lines: list[str]) -> list[str]:
    """IPython input transformer: `%copilot why can't PC1 ping PC3?` is a question.

    IPython reads a line ending in "?" as a help request (`obj?`) before it sees the
    magic; this rewrites such `%copilot` lines into the magic call itself. `%copilot?`
    (nothing between) still shows the magic's help.
    """
    return [_keep_question_mark(line) for line in lines]


def _keep_question_mark(line: str) -> str:
    match = _QUESTION_LINE.match(line)
    if match is None:
        return line
    call = f"get_ipython().run_line_magic('copilot', {match['message']!r})"
    return f"{match['indent']}{match['assign']}{call}{match['end']}"


def mistyped_subcommand(message: str) -> str | None:
    """The subcommand `message` looks like a typo of (`show topolgy` -> `show topology`),
    or None.

    Only a short line can be a typo: one or two words (options aside), no question mark,
    close to a subcommand that takes no free text (`SUGGESTED_SUBCOMMANDS`, difflib ratio
    at least `TYPO_CUTOFF`). A real question has more words or a "?" and goes to the
    model; subcommands followed by free text (use, rename, run, ask) are never guessed.
    """
    if "?" in message:
        return None
    words = [word.lower() for word in message.split() if not word.startswith("-")]
    if not 1 <= len(words) <= 2:
        return None
    matches = difflib.get_close_matches(
        " ".join(words), SUGGESTED_SUBCOMMANDS, n=1, cutoff=TYPO_CUTOFF
    )
    return matches[0] if matches else None


def link_ends(words: list[str]) -> dict[str, str] | None:
    """A link named by both ends, as the link tools take it (`{a, a_port, b, b_port}`),
    from `PC1 e0 - Switch1 e0` (separator optional: -, <->, to) or `PC1:e0 Switch1:e0`;
    None if `words` name no link that way."""
    ends = [word for word in words if word.lower() not in _LINK_SEPARATORS]
    if len(ends) == 2 and all(":" in end for end in ends):
        ends = [part for end in ends for part in end.rsplit(":", 1)]
    if len(ends) != 4 or not all(end.strip() for end in ends):
        return None
    return dict(zip(("a", "a_port", "b", "b_port"), (end.strip() for end in ends), strict=True))
