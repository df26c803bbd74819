"""The hub service's API models that its clients read too: `HubSession` (`GET api/session`,
with its `HubPolicy`) and `GradeReportRequest` (`POST api/grades/report`). The service
builds and parses them; students' servers and kernels (`classroom/client.py`) send and read
them. The other answers of its API are `budgets.BudgetLeft` (`GET api/usage`) and the lab
routes' (`objectives/api.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_serializer


class HubPolicy(BaseModel):
    """What students may choose."""

    model_config = ConfigDict(frozen=True)

    allowed_modes: tuple[str, ...]
    default_mode: str
    users_may_choose_endpoints: bool = False
    questions_logged: bool = False
    """Whether the course staff keep a log of the questions asked (students are told)."""


class HubSession(BaseModel):
    """The answer of `GET api/session` for one hub user."""

    model_config = ConfigDict(frozen=True)

    user: str
    groups: tuple[str, ...] = ()
    gns3_url: str
    gns3_username: str
    gns3_token: SecretStr
    gns3_token_expires_at: datetime | None = None
    model_base_url: str
    """The gateway, as the caller reached the service; the key is the caller's hub token."""
    model: str
    title_model: str = ""
    models: tuple[str, ...] = ()
    policy: HubPolicy

    @field_serializer("gns3_token", when_used="json")
    def _token_on_the_wire(self, token: SecretStr) -> str:
        return token.get_secret_value()


class GradeReportRequest(BaseModel):
    """`POST api/grades/report` (the course staff): `student`'s lab `project` (the
    template's name, or the name or id of the student's copy), checked now when it is
    opened, and reported from every check the service ran: an objective passed once counts
    as passed. `stage` / `objectives` select, as in a check."""

    model_config = ConfigDict(extra="forbid")

    student: str = Field(min_length=1, max_length=255)
    project: str = Field(min_length=1, max_length=255)
    stage: str | None = Field(default=None, min_length=1, max_length=64)
    objectives: list[str] | None = Field(default=None, min_length=1, max_length=500)
    check: bool = True
