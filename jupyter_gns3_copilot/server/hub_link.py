"""Hub mode's link to the copilot hub service: its client, made on first use.

In hub mode (`hub_service_url` set) the server asks the hub service
(`classroom/client.py`) with its own `JUPYTERHUB_API_TOKEN` for everything a class
shares: the GNS3 URL and the student's GNS3 token, the model endpoint and the policy.
No Jupyter import; the client's module is imported on first use.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..classroom.client import HubServiceClient
    from ..hub.api_models import HubSession

HUB_TOKEN_ENV = "JUPYTERHUB_API_TOKEN"


class HubLink:
    """The client of the hub service at `url` (requests time out after `timeout` s)."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        self._client: HubServiceClient | None = None

    @property
    def token(self) -> str:
        """This server's own hub token (the gateway's key in hub mode)."""
        return os.environ.get(HUB_TOKEN_ENV, "")

    def client(self) -> HubServiceClient:
        """The client of the hub service, made on first use."""
        if self._client is None:
            from ..classroom.client import HubServiceClient

            self._client = HubServiceClient(self.url, self.token, timeout=self.timeout)
        return self._client

    async def session(self) -> HubSession:
        """This server's session with the hub service (fetched, or cached and fresh);
        `HubServiceError` when the service cannot give one."""
        return await self.client().session()

    async def aclose(self) -> None:
        """Close the client, if one was made."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None
