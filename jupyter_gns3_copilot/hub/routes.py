"""The hub service's URL specs under its prefix, each handler given the `HubRuntime`."""

from __future__ import annotations

import re
from typing import Any

from .dashboard import dashboard_handlers
from .gateway_handlers import gateway_routes
from .handlers import HealthHandler, ProjectsHandler, SessionHandler, UsageHandler
from .lab_handlers import (
    LabApi,
    LabCatchUpApi,
    LabChecksApi,
    LabExerciseApi,
    LabExercisesApi,
    LabGiveUpApi,
    LabStageApi,
)
from .runtime import HubRuntime


def routes(runtime: HubRuntime) -> list[tuple[str, Any, dict[str, Any]]]:
    """The service's URL specs under its prefix."""
    prefix = runtime.settings.prefix
    own = {"runtime": runtime}
    # A project id (the dashboard's `api/labs/assign` and `api/labs/reset` are no project).
    labs = rf"{re.escape(prefix)}api/labs/([0-9a-fA-F]{{8}}-[0-9a-fA-F-]{{27}})"
    lab_routes = [
        (labs, LabApi, own),
        (rf"{labs}/stage", LabStageApi, own),
        (rf"{labs}/checks", LabChecksApi, own),
        (rf"{labs}/stages/([^/]+)/catch-up", LabCatchUpApi, own),
        (rf"{labs}/exercises", LabExercisesApi, own),
        (rf"{labs}/exercises/current", LabExerciseApi, own),
        (rf"{labs}/exercises/current/give-up", LabGiveUpApi, own),
    ]
    return [
        *gateway_routes(runtime.gateway, prefix),
        (rf"{re.escape(prefix)}api/session", SessionHandler, own),
        (rf"{re.escape(prefix)}api/projects", ProjectsHandler, own),
        (rf"{re.escape(prefix)}api/usage", UsageHandler, own),
        (rf"{re.escape(prefix)}api/health", HealthHandler, own),
        *(lab_routes if runtime.labs else []),
        *(dashboard_handlers(prefix, runtime.dashboard) if runtime.dashboard else []),
    ]
