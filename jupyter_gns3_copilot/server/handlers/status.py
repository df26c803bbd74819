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
    and no report is made from a configuration that is not the administrator's.
    """

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        from ...llm_config import effective_config
        from ...status import collect_status

        app = self.copilot
        user_id = self.user_id
        model = effective_config(app.llm_admin(), app.llm_store().get(user_id)).status()
        report = await collect_status(
            app.gns3_client(), data_dir=app.data_dir, model=model, user=user_id
        )
        self.write_json(report)
