"""`CountingTransport`: httpx's real transport, recording the path of every request it
sends (instrumentation, not a mock), for the tests that count GNS3 reads or logins."""

from __future__ import annotations

import httpx

LOGIN_PATH = "/access/users/authenticate"


class CountingTransport(httpx.AsyncHTTPTransport):
    """Sends every request for real and keeps its URL path in `paths`."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return await super().handle_async_request(request)

    def count(self, path: str) -> int:
        """Requests sent so far whose path ends with `path`."""
        return sum(1 for sent in self.paths if sent.endswith(path))

    @property
    def logins(self) -> int:
        """GNS3 logins sent so far."""
        return self.count(LOGIN_PATH)
