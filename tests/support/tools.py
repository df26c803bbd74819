"""Tool calls without the agent: `offline_context` (a tool context whose GNS3 is a
closed port, for what must not reach it), `client_for` (a GNS3 client of a test project),
`call` (one tool through `execute_tool`), `by_device` (a result's entries by device)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from jupyter_gns3_copilot.console import ConsolePool
from jupyter_gns3_copilot.gns3 import GNS3Client
from jupyter_gns3_copilot.tools import (
    ToolContext,
    ToolOutcome,
    execute_tool,
)

NOWHERE = "http://127.0.0.1:9"
"""A GNS3 URL nothing listens on: any request a test did not expect fails loudly."""


def offline_context(**overrides: Any) -> ToolContext:
    """A context whose GNS3 server does not exist (for calls that must not reach it)."""
    settings: dict[str, Any] = {
        "gns3": GNS3Client(NOWHERE, timeout=2.0),
        "project_id": str(uuid.uuid4()),
        "consoles": ConsolePool(),
        **overrides,
    }
    return ToolContext(**settings)


def client_for(project: Any) -> GNS3Client:
    return GNS3Client(
        project.url, username=project.username, password=project.password, token=project.token
    )


async def call(ctx: ToolContext, name: str, args: Any) -> ToolOutcome:
    """Run a tool and check its result is what the graph will serialise."""
    outcome = await execute_tool(ctx, name, args)
    json.dumps(outcome.result, ensure_ascii=False, indent=2)
    return outcome


def by_device(result: Any) -> dict[str, dict[str, Any]]:
    return {entry["device_name"]: entry for entry in result}
