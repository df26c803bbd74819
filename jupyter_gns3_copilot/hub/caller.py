"""Who is calling the hub service: a hub user's name and groups, as JupyterHub knows them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Caller(BaseModel):
    """An authenticated hub user: `name`, the hub `groups` they belong to right now, and
    whether they are a hub `admin` (JupyterHub's `admin` flag; the dashboard lets admins in).

    Built from JupyterHub's identity model (`HubAuth.user_for_token(...)` gives
    `{"name", "groups", ...}`); budgets follow the groups as they are at each call.
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    groups: frozenset[str] = frozenset()
    admin: bool = False
