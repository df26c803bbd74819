"""`GET copilot/status`: the health report."""

from __future__ import annotations

import tornado.web
from jupyter_server.auth.decorator import authorized

from .base import CopilotHandler


class StatusHandler(CopilotHandler):
    """`GET copilot/status`: versions, GNS3 reachability, the caller's model, data directory.

    The first thing to check when something does not work. Never returns a secret: the
    model part says whether a key is set, not which. While the configuration is invalid it
    answers the 503 of every route (`CopilotHandler.prepare`): the error names the setting,
    and no report is made from a configuration that is not the administrator's. In hub
    mode it says whether the hub service answers (`hub`, `mode_summary`), even when not, and
    when it answers too slowly (`hub.slow`).
    """

    warm_up_stage = "core"

    needs_hub_session = False

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        from ..llm_config import effective_config
        from ..status import HubStatus, collect_status

        app = self.copilot
        user_id = self.user_id
        hub = None
        client = app.gns3_client() if not app.hub_mode else None
        if app.hub_mode:
            from ...classroom.client import HubServiceError, HubServiceSlow

            try:
                session = await app.hub_session()
            except HubServiceError as exc:
                slow = isinstance(exc, HubServiceSlow)
                hub = HubStatus(
                    service=app.hub_service_url, reachable=slow, slow=slow, error=str(exc)
                )
            else:
                try:
                    budget_left = (await app.hub_client().budget()).left
                except HubServiceError:
                    budget_left = None  # an older service: the rest of the report stands
                hub = HubStatus(
                    service=app.hub_service_url,
                    reachable=True,
                    user=session.user,
                    gns3_username=session.gns3_username,
                    questions_logged=session.policy.questions_logged,
                    budget_left=budget_left,
                )
                client = app.gns3_client()
        model = effective_config(app.llm_admin(), app.llm_store().get(user_id)).status()
        report = await collect_status(
            client, data_dir=app.data_dir, model=model, user=user_id, hub=hub
        )
        self.write_json(report)
