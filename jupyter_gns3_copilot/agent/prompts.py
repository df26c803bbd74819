"""The texts the model reads: the system prompt per mode, the title prompt, limit messages.

The system prompt is a template: `{{topology_info}}` is replaced before every model call
with the lab's topology text (see `context.render_system_prompt`). An instructor can
replace the template (`system_prompt(mode, template=...)`); a custom template should keep
the placeholder, or the model will not see the lab.
"""

from __future__ import annotations

import json

from ..tools.modes import LAB_AUTOMATION, MODE_DESCRIPTIONS, TEACHING

BASE_SYSTEM_PROMPT = """\
You are GNS3 Copilot, an assistant for network labs built in GNS3, working inside a \
Jupyter notebook. You help students and instructors build, run, diagnose and understand \
their lab, using the tools you are given.

Mode: {mode} ({mode_description}).
{mode_rules}

How to work:
- Name devices by their node names exactly as the topology shows them; never invent \
names or use ids.
- Look before you act: read the topology below (it is current at the start of this \
turn and refreshed after any tool that changes the lab), and run diagnostic commands \
before drawing conclusions.
- Batch work: put every device in one tool call rather than one call per device.
- Never type `exit`, `logout` or `quit` on a console, never change passwords or AAA \
settings, and avoid reloads and erases unless the user explicitly asks.
- When a tool result says a command was blocked or a call was refused, explain why to \
the user instead of retrying the same thing.
- Answer in the user's language. Be concise; show the relevant command output.
- When you changed or checked something, end with a short summary: what you did, what \
you found, what the user can try next.

Current lab topology:
{{topology_info}}
"""

MODE_RULES = {
    TEACHING: (
        "You teach: explain concepts, diagnose with show, ping and trace commands, and "
        "guide the student to make configuration changes themselves. Never configure a "
        "device; give the commands for the student to type instead."
    ),
    LAB_AUTOMATION: (
        "You may configure devices and control nodes. Before changing a device, say what "
        "you will change; afterwards, verify the result with a diagnostic command."
    ),
}


def system_prompt(mode: str, template: str | None = None) -> str:
    """The system prompt template for `mode`, still holding `{{topology_info}}`.

    `template` replaces the built-in text; `{mode}`, `{mode_description}` and
    `{mode_rules}` in it are filled in, any other brace is left alone.
    """
    text = template if template is not None else BASE_SYSTEM_PROMPT
    fields = {
        "{mode}": mode,
        "{mode_description}": MODE_DESCRIPTIONS.get(mode, mode),
        "{mode_rules}": MODE_RULES.get(mode, ""),
    }
    for field, value in fields.items():
        text = text.replace(field, value)
    return text


TITLE_MAX_LENGTH = 40
TITLE_FALLBACK_LENGTH = 30
TITLE_PROMPT = """\
Write a title for this conversation between a user and a network lab assistant: at most \
6 words and 40 characters, in the user's language, no quotes, no final punctuation. \
Answer with the title only."""


def title_request(user_text: str, assistant_text: str) -> str:
    """The message the title model answers: the first exchange, shortened."""
    return f"User: {user_text[:1000]}\n\nAssistant: {assistant_text[:1000]}"


def clean_title(raw: str) -> str:
    """The model's title on one line, unquoted, at most 40 characters ('' if none)."""
    lines = [line.strip() for line in raw.strip().splitlines() if line.strip()]
    title = lines[0] if lines else ""
    title = title.removeprefix("Title:").strip().strip("\"'`*#“”«» ").rstrip(".")
    return title[:TITLE_MAX_LENGTH].strip()


def fallback_title(user_text: str) -> str:
    """The title used when the title model fails: the user's first 30 characters."""
    text = " ".join(user_text.split())
    return text[:TITLE_FALLBACK_LENGTH].strip() or "New chat"


def tool_limit_message(max_tool_calls: int, current: int) -> str:
    """The result of a tool call beyond `max_tool_calls` (nothing was run)."""
    return (
        f"Tool call limit reached ({max_tool_calls} calls). "
        "Please simplify your request or break it into smaller steps. "
        f"Current tool call count: {current}/{max_tool_calls}."
    )


def iteration_limit_result(max_iterations: int) -> str:
    """The result of a tool call left unrun because the turn used all its model calls."""
    return json.dumps(
        {
            "status": "not_executed",
            "reason": (
                f"Iteration limit reached ({max_iterations} model calls in this turn): the "
                "tool was not run. Ask the user to continue in a new message."
            ),
        },
        ensure_ascii=False,
        indent=2,
    )


def iteration_limit_notice(max_iterations: int, tool_names: list[str]) -> str:
    """What the user is told when the turn stopped at `max_iterations` with tools pending."""
    pending = ", ".join(dict.fromkeys(tool_names)) or "the requested tools"
    return (
        f"Stopped after {max_iterations} model call{'s' if max_iterations != 1 else ''} "
        f"(max_iterations={max_iterations}): {pending} "
        f"{'were' if len(tool_names) != 1 else 'was'} not run. Send another message to "
        "continue, or allow more iterations."
    )


def time_limit_notice(max_execution_time_seconds: int) -> str:
    """What the user is told when the turn was stopped at `max_execution_time_seconds`."""
    return (
        f"Stopped after {max_execution_time_seconds} s "
        f"(max_execution_time_seconds={max_execution_time_seconds}): the execution time "
        "limit ended the turn; a tool still running was cancelled and recorded as aborted. "
        "Send another message to continue, or allow more time."
    )


ABORTED_RESULT = json.dumps({"status": "aborted"}, ensure_ascii=False, indent=2)
"""The placeholder result of a tool call cut short by the user (an abort)."""

INTERRUPTED_RESULT = json.dumps(
    {
        "status": "aborted",
        "reason": "The turn ended before this tool returned a result (interrupted).",
    },
    ensure_ascii=False,
    indent=2,
)
"""The placeholder result written when a thread is found with unanswered tool calls."""
