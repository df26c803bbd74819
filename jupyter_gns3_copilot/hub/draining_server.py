"""`DrainingHTTPServer`: tornado's HTTP server that can let the requests in progress end
before its connections are closed (a restart in place, `hub/restart.py`).

Without it, closing the server's connections at a restart cut every request being
answered, including one whose connection was accepted a moment before the signal: its
client saw the connection close with no answer ("Server disconnected"). A request is in
progress from its headers until its response has been sent (tornado then starts the
connection's next request) or its connection closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import tornado.httpserver
from tornado import httputil

QUIET_SECONDS = 0.1
"""How long no request must have been in progress before the connections are closed: a
request already sent on a connection accepted just before the server stopped is read and
begun by then."""
DRAIN_SECONDS = 10.0
"""The longest a drain waits for the requests in progress (a model's answer streamed
through the gateway can take longer: it is cut, and the student's copilot says so)."""


class DrainingHTTPServer(tornado.httpserver.HTTPServer):
    """An `HTTPServer` that knows which of its connections are answering a request."""

    def initialize(self, *args: Any, **kwargs: Any) -> None:
        super().initialize(*args, **kwargs)
        self._answering: set[object] = set()

    def start_request(
        self, server_conn: object, request_conn: httputil.HTTPConnection
    ) -> httputil.HTTPMessageDelegate:
        # tornado asks for the connection's next request once the last one's response
        # has been sent.
        self._answering.discard(server_conn)
        return _Begins(
            super().start_request(server_conn, request_conn),
            lambda: self._answering.add(server_conn),
        )

    def on_close(self, server_conn: object) -> None:
        self._answering.discard(server_conn)
        super().on_close(server_conn)

    @property
    def requests_in_progress(self) -> int:
        """Requests whose headers arrived and whose response has not been sent."""
        return len(self._answering)

    async def drain(self, quiet: float = QUIET_SECONDS, limit: float = DRAIN_SECONDS) -> int:
        """After `stop()`: wait until no request has been in progress for `quiet` seconds,
        `limit` seconds at most; returns how many are still in progress (0 when drained).
        Then `close_all_connections()` closes the idle ones and cuts those."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        quiet_since: float | None = None
        while True:
            now = loop.time()
            if self._answering:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= quiet:
                return 0
            if now >= deadline:
                return len(self._answering)
            await asyncio.sleep(min(quiet / 4, deadline - now))


class _Begins(httputil.HTTPMessageDelegate):
    """A request's delegate that calls `begun()` when the request's headers arrive."""

    def __init__(self, delegate: httputil.HTTPMessageDelegate, begun: Any) -> None:
        self._delegate = delegate
        self._begun = begun

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> Any:
        self._begun()
        return self._delegate.headers_received(start_line, headers)

    def data_received(self, chunk: bytes) -> Any:
        return self._delegate.data_received(chunk)

    def finish(self) -> None:
        self._delegate.finish()

    def on_connection_close(self) -> None:
        self._delegate.on_connection_close()
