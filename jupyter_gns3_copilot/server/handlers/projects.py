"""GNS3 projects through the copilot: list, open, close, delete, topology.

Opening a project through these routes creates its chat service; closing it closes the
service and its database; deleting it deletes the project in GNS3, then every chat
session and checkpoint of it and its data folder.

Who may: anyone may open a project. Closing or deleting one that other users of this
server are using (a chat turn or tool run in progress) is refused with 409, naming them by
count. Deleting also needs the caller's copilot mode to be lab_automation_assistant and
the administrator's `allow_project_delete` (403 saying which is missing).
"""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import ErrorAnswer, bad_input
from .base import CopilotHandler

if TYPE_CHECKING:
    from ...gns3 import Project

TOPOLOGY_FORMATS = ("json", "text", "svg")
FLAG_VALUES = {"true": True, "1": True, "false": False, "0": False, "": False}


def _project_json(project: Project) -> dict[str, object]:
    from ..responses import ProjectSummary

    return ProjectSummary.model_validate(project, from_attributes=True).model_dump(mode="json")


class ProjectsHandler(CopilotHandler):
    """`GET copilot/projects`: `[{project_id, name, status, filename}]` sorted by name."""

    warm_up_stage = "core"

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        projects = await self.copilot.gns3_client().list_projects()
        projects.sort(key=lambda project: project.name.lower())
        self.write_json([_project_json(project) for project in projects])


class ProjectOpenHandler(CopilotHandler):
    """`POST copilot/projects/{project_id}/open`: open it in GNS3; the project JSON."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str) -> None:
        project_id = self.project_id_from(project_id)
        project = await self.copilot.gns3_client().open_project(project_id)
        await self.copilot.agents().get_agent(project_id)
        self.write_json(_project_json(project))


class ProjectCloseHandler(CopilotHandler):
    """`POST copilot/projects/{project_id}/close`: close it in GNS3 (its nodes stop) and
    close its chat service (the caller's running chats are aborted). 204; 409 while other
    users are using it."""

    @tornado.web.authenticated
    @authorized
    async def post(self, project_id: str) -> None:
        project_id = self.project_id_from(project_id)
        self.refuse_if_others_use(project_id, "close")
        try:
            await self.copilot.gns3_client().close_project(project_id)
        finally:
            self.copilot.project_lookup().forget(project_id)
        if self.copilot.has_agents():
            await self.copilot.agents().remove_agent(project_id)
        await self.copilot.close_lab_progress(project_id)
        self.set_status(204)
        self.finish()


class ProjectHandler(CopilotHandler):
    """`DELETE copilot/projects/{project_id}`: delete it in GNS3, then its chat sessions,
    checkpoints and data folder. 204. (Sessions of every user go: the project is gone.) A
    project GNS3 no longer knows still has its chat data deleted. 403 unless the caller is
    in lab_automation_assistant mode and `allow_project_delete` is on; 409 while other
    users are using it."""

    @tornado.web.authenticated
    @authorized
    async def delete(self, project_id: str) -> None:
        from ...gns3 import GNS3NotFound
        from ...store import database_path

        project_id = self.project_id_from(project_id)
        self._check_delete_allowed()
        self.refuse_if_others_use(project_id, "delete")
        try:
            await self.copilot.gns3_client().delete_project(project_id)
        except GNS3NotFound:
            self.log.info("Copilot: project %s was already gone from GNS3", project_id)
        finally:
            self.copilot.project_lookup().forget(project_id)
        if self.copilot.project_has_data(project_id):
            agents = self.copilot.agents()
            agent = await agents.get_agent(project_id)
            deleted = await agent.sessions.delete_all_sessions()
            await agents.remove_agent(project_id)
            self.log.info("Copilot: project %s deleted with %d chat sessions", project_id, deleted)
        elif self.copilot.has_agents():
            await self.copilot.agents().remove_agent(project_id)
        await self.copilot.drop_lab_progress(project_id)
        shutil.rmtree(database_path(self.copilot.data_dir, project_id).parent, ignore_errors=True)
        self.set_status(204)
        self.finish()

    def _check_delete_allowed(self) -> None:
        """403 naming what is missing: the admin setting, the caller's mode, or both."""
        from ...tools.modes import LAB_AUTOMATION
        from ..llm_config import effective_config

        app = self.copilot
        mode = effective_config(app.llm_admin(), app.llm_store().get(self.user_id)).copilot_mode
        missing = []
        if not app.allow_project_delete:
            missing.append(
                "the administrator has not allowed it (c.GNS3Copilot.allow_project_delete)"
            )
        if mode != LAB_AUTOMATION:
            missing.append(f"it needs the {LAB_AUTOMATION} copilot mode (yours is {mode})")
        if missing:
            raise ErrorAnswer(
                403,
                f"Deleting a GNS3 project is not allowed: {'; and '.join(missing)}.",
                type="ProjectDeleteForbidden",
                setting=None if app.allow_project_delete else "allow_project_delete",
            )


class TopologyHandler(CopilotHandler):
    """`GET copilot/projects/{project_id}/topology?format=json|text|svg` (default json).

    json: `{project, nodes, links, connections}`; text: the compact text the model reads,
    with `addresses=true` followed by the running devices' addresses read on their
    consoles (`devices.address_book`); svg: a drawing (`image/svg+xml`). The project must
    be opened (409 otherwise).
    """

    warm_up_stage = "core"

    @tornado.web.authenticated
    @authorized
    async def get(self, project_id: str) -> None:
        project_id = self.project_id_from(project_id)
        fmt = self.get_query_argument("format", "json")
        if fmt not in TOPOLOGY_FORMATS:
            raise bad_input("format", f"must be one of {', '.join(TOPOLOGY_FORMATS)}, got {fmt!r}")
        with_addresses = FLAG_VALUES.get(self.get_query_argument("addresses", "").lower())
        if with_addresses is None:
            raise bad_input("addresses", "must be true or false")
        await self.opened_project(project_id)
        topology = await self.copilot.gns3_client().get_topology(project_id)
        if fmt == "json":
            self.finish(topology.to_json())
        elif fmt == "text":
            text = topology.to_text()
            if with_addresses:
                from ...devices.address_book import addresses_text, read_addresses

                devices = self.copilot.lab().devices
                text += addresses_text(await read_addresses(devices, topology.nodes))
            self.finish(text, set_content_type="text/plain; charset=utf-8")
        else:
            self.finish(topology.to_svg(), set_content_type="image/svg+xml")
