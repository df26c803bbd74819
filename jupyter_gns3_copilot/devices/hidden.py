"""Configuration lines held back from a student, in a lab stage whose hints only point the
way: what stands for such a line in a tool call, and how their number is said."""

HIDDEN_COMMAND = "(configuration hidden)"
"""What stands for a configuration line held back from the student."""


def left_out(count: int) -> str:
    """ "I left out 3 configuration lines"."""
    return f"I left out {count} configuration line{'' if count == 1 else 's'}"
