"""HTTP handlers of the copilot API: the only code that knows tornado.

Every handler answers JSON; every error, expected or not, becomes a JSON body
`{"error": {"message", "type"}}` with a 4xx/5xx status, never an HTML traceback.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler

from ..status import collect_status

if TYPE_CHECKING:
    from .app import GNS3Copilot

AUTH_RESOURCE = "copilot"


class CopilotHandler(APIHandler):
    """Base handler: JSON errors and access to the extension app."""

    auth_resource = AUTH_RESOURCE

    @property
    def copilot(self) -> GNS3Copilot:
        return self.settings["gns3_copilot"]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Answer every error as JSON; the message never carries a traceback."""
        self.set_header("Content-Type", "application/json")
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, tornado.web.HTTPError) and exc.log_message:
            message = exc.log_message % exc.args if exc.args else exc.log_message
        else:
            message = self._reason or HTTPStatus(status_code).phrase
        self.finish(
            json.dumps(
                {"error": {"message": message, "type": type(exc).__name__ if exc else "Error"}}
            )
        )


class StatusHandler(CopilotHandler):
    """`GET copilot/status`: versions, GNS3 reachability and data directory.

    The first thing to check when something does not work. Never returns a secret.
    """

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        app = self.copilot
        report = await collect_status(app.gns3_client(), data_dir=app.data_dir)
        self.finish(report.model_dump_json())


default_handlers: list[tuple[str, type[tornado.web.RequestHandler]]] = [
    ("/copilot/status", StatusHandler),
]
