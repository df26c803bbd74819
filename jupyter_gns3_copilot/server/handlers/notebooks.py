"""`copilot/notebook-projects`: the project a notebook works on, kept across kernel restarts."""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import bad_input
from .base import CopilotHandler

if TYPE_CHECKING:
    from ..notebook_projects import NotebookProject


class NotebookProjectsHandler(CopilotHandler):
    """The caller's notebooks' projects (`notebook_projects.NotebookProjects`).

    `GET ?path=P`: `NotebookProjectAnswer` for the notebook at `P` (its kernel's
    `JPY_SESSION_NAME`); or `?notebook=N`, the notebook's contents path as JupyterLab names
    it (what the sidebar knows), turned into the path its kernel gets
    (`kernel_path`); `project_id` null when none is remembered. `PUT`
    `NotebookProjectRequest` `{path, project_id, session_id?}`: remember it; answers the
    same. 400 for a missing path or a project id that is no UUID.
    """

    warm_up_stage = "core"

    needs_hub_session = False

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        path = self.get_query_argument("path", "") or self.kernel_path(
            self.get_query_argument("notebook", "")
        )
        if not path.strip():
            raise bad_input("path", "the notebook's path is required")
        self._answer(path, self.copilot.notebook_projects().recall(self.user_id, path))

    @tornado.web.authenticated
    @authorized
    async def put(self) -> None:
        from ..schemas import NotebookProjectRequest

        request = self.body_as(NotebookProjectRequest)
        project_id = self.project_id_from(request.project_id)
        record = self.copilot.notebook_projects().remember(
            self.user_id, request.path, project_id, request.session_id
        )
        self._answer(request.path, record)

    def kernel_path(self, notebook: str) -> str:
        """The `JPY_SESSION_NAME` of a kernel jupyter_server starts for the notebook at
        contents path `notebook` ("" for none): its session manager joins the kernel's
        working directory for that path with the name JupyterLab and Notebook 7 give the
        session, the notebook's file name."""
        if not notebook.strip():
            return ""
        return os.path.join(
            # jupyter_server's cwd_for_path has no annotations
            self.kernel_manager.cwd_for_path(notebook),  # type: ignore[no-untyped-call]
            posixpath.basename(notebook),
        )

    def _answer(self, path: str, record: NotebookProject) -> None:
        from ..responses import NotebookProjectAnswer

        self.write_json(
            NotebookProjectAnswer(path=path, session_id=record.session_id, **record.model_dump())
        )
