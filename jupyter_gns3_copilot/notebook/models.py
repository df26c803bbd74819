"""The copilot's projects and conversations as the notebook side reads them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from .errors import ProjectNotFound


class ProjectInfo(BaseModel):
    """A GNS3 project as `copilot/projects` lists it."""

    model_config = ConfigDict(extra="allow")

    project_id: str
    name: str
    status: str | None = None
    filename: str | None = None


class SessionInfo(BaseModel):
    """A chat session (as the server's `ChatSession`: id, title, counts, pinned, times...)."""

    model_config = ConfigDict(extra="allow")

    thread_id: str
    title: str | None = None
    message_count: int = 0
    llm_calls_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    pinned: bool = False
    updated_at: str | None = None
    created_at: str | None = None

    @property
    def session_id(self) -> str:
        return self.thread_id


def match_project(projects: Sequence[ProjectInfo], wanted: str) -> ProjectInfo:
    """The one of `projects` named `wanted` or with that id (or a unique id prefix, or a
    template's name: your copy of it); `ProjectNotFound` naming them otherwise."""
    matchers: tuple[Callable[[ProjectInfo], bool], ...] = (
        lambda p: p.project_id == wanted,
        lambda p: p.name == wanted,
        lambda p: p.name.lower() == wanted.lower(),
    )
    for matches in matchers:
        found = [p for p in projects if matches(p)]
        if len(found) == 1:
            return found[0]
    by_prefix = [p for p in projects if len(wanted) >= 4 and p.project_id.startswith(wanted)]
    if len(by_prefix) == 1:
        return by_prefix[0]
    copies = [p for p in projects if p.name.startswith(f"{wanted} - ")]
    if len(copies) == 1:  # a template's name: your copy of it (a hub class's lab)
        return copies[0]
    names = ", ".join(repr(p.name) for p in projects) or "none"
    raise ProjectNotFound(f"No GNS3 project named {wanted!r}. Projects: {names}.")
