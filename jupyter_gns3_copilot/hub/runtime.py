"""What the hub service's routes share while it runs: its settings and its parts.

`CopilotHubService` (`app.py`) builds one `HubRuntime` at start; every route's handler
receives it (`routes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from .class_labs import ClassLabs
    from .dashboard_data import DashboardDeps
    from .gateway import ModelGateway
    from .hub_auth import Identity
    from .lab_accounts import LabAccounts
    from .usage import UsageStore


class HubSettings(BaseModel):
    """The service's settings as the handlers use them (no secret among them)."""

    model_config = ConfigDict(frozen=True)

    prefix: str
    gns3_url: str
    model: str
    title_model: str
    models: tuple[str, ...]
    allowed_modes: tuple[str, ...]
    default_mode: str
    gateway_url: str
    max_projects_per_student: int
    log_questions: bool
    instructor_groups: tuple[str, ...]


@dataclass
class HubRuntime:
    """What the routes share while the service runs."""

    settings: HubSettings
    accounts: LabAccounts
    identity: Identity
    gateway: ModelGateway
    store: UsageStore
    renewed: dict[str, float] = field(default_factory=dict)
    """When each student's GNS3 token was last renewed on request (monotonic seconds)."""
    dashboard: DashboardDeps | None = None
    """The instructor dashboard's dependencies; None: no dashboard routes."""
    labs: ClassLabs | None = None
    """The service's lab checks (`class_labs.py`); None: no lab routes."""
