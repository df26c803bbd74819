"""`GET copilot/openapi.json`: the API as an OpenAPI document (`server.openapi`)."""

from __future__ import annotations

import tornado.web
from jupyter_server.auth.decorator import authorized

from .base import CopilotHandler


class OpenAPIHandler(CopilotHandler):
    """`GET copilot/openapi.json`: this API as an OpenAPI 3.1 document, generated from the
    request and response models, its paths under this server's base_url. Built on the
    first request, then kept."""

    needs_hub_session = False

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        self.write_json(self.copilot.openapi_document(self.base_url))
