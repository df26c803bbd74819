"""`check_objectives`: the lab's objectives checked on the devices, for the model.

The tool answers each objective's id, text, status (`pass`, `fail`, `error`) and the
sentence that explains it, never the checks' definitions. It reaches the lab through the
turn's `ToolContext.objectives` (the student's lab with their values); a project without
a lab file has none, and the tool is then not offered to the model at all.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .base import ToolArguments, ToolContext, ToolError, ToolSpec


class CheckObjectivesArgs(ToolArguments):
    stage: str | None = Field(
        default=None, max_length=64, description="A stage id; omit for every stage."
    )


async def check_objectives(ctx: ToolContext, args: CheckObjectivesArgs) -> dict[str, Any]:
    """Check the lab's objectives (of one stage) on the devices."""
    if ctx.objectives is None:
        raise ToolError("This project has no lab objectives.")
    try:
        return await ctx.until_aborted(ctx.objectives.check(args.stage, ctx.abort))
    except ValueError as exc:  # an unknown stage: the message lists the stages
        raise ToolError(str(exc)) from None


SPECS = [
    ToolSpec(
        name="check_objectives",
        description=(
            "Check the lab's objectives on the devices (read-only): each one's status and why."
        ),
        args_model=CheckObjectivesArgs,
        run=check_objectives,
    )
]
