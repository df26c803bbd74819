"""The copilot's tools: typed, mode-checked, policy-checked operations on a GNS3 lab.

Plain async functions over the GNS3 client and the console pool (no LangChain here): the
agent binds `openai_tool_schema(spec)` for each of `tools_for_mode(mode)` and runs every
call the model makes through `execute_tool(ctx, name, args)`, which enforces the mode,
validates the arguments and turns expected failures into results::

    ctx = ToolContext(gns3=client, project_id=project_id, consoles=pool,
                      mode="teaching_assistant", abort=abort_event, progress=on_progress)
    outcome = await execute_tool(ctx, "run_show_commands",
                                 {"devices": [{"device": "PC1", "commands": ["show ip"]}]})
    content = json.dumps(outcome.result, ensure_ascii=False, indent=2)
"""

from ..console import BlockedCommand
from .base import (
    NoArguments,
    ProgressSink,
    ToolAborted,
    ToolArguments,
    ToolContext,
    ToolError,
    ToolOutcome,
    ToolResult,
    ToolSpec,
)
from .lab_access import LabAccess
from .modes import (
    DEFAULT_MODE,
    LAB_AUTOMATION,
    MODE_TOOLS,
    TEACHING,
    Mode,
    check_mode,
    mode_allows,
)
from .registry import TOOLS, execute_tool, openai_tool_schema, tools_for_mode
from .skills import SHIPPED_SKILLS_DIR, SkillsLibrary, SkillTopic

__all__ = [
    "DEFAULT_MODE",
    "LAB_AUTOMATION",
    "MODE_TOOLS",
    "SHIPPED_SKILLS_DIR",
    "TEACHING",
    "TOOLS",
    "BlockedCommand",
    "LabAccess",
    "Mode",
    "NoArguments",
    "ProgressSink",
    "SkillTopic",
    "SkillsLibrary",
    "ToolAborted",
    "ToolArguments",
    "ToolContext",
    "ToolError",
    "ToolOutcome",
    "ToolResult",
    "ToolSpec",
    "check_mode",
    "execute_tool",
    "mode_allows",
    "openai_tool_schema",
    "tools_for_mode",
]
