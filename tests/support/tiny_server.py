"""`TinyServer`: a small threaded HTTP server on 127.0.0.1 whose routes answer with
canned JSON (`json_route`) or an SSE stream sent piece by piece (`sse_route`), for the kernel
client's and the magics' tests where the real server's behaviour is not what is tested."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = Callable[[BaseHTTPRequestHandler, bytes], None]


class TinyServer:
    """TEST DOUBLE: an HTTP/1.1 server on 127.0.0.1 answering scripted routes
    (`routes[(method, path)]`); it records each request's path, headers, body and client
    address (the same address: the same connection)."""

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path.split("?", 1)[0]
                outer.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body,
                        "client": self.client_address,
                    }
                )
                route = outer.routes.get((self.command, path))
                if route is None:
                    send(self, 404, "<html><body>404: Not Found</body></html>", "text/html")
                else:
                    route(self, body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"{self.origin}/a%40b/"

    def start(self) -> TinyServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def send(handler: BaseHTTPRequestHandler, status: int, body: str, content_type: str) -> None:
    data = body.encode()
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def json_route(status: int, payload: Any) -> Route:
    return lambda handler, _body: send(handler, status, json.dumps(payload), "application/json")


def sse_route(chunks: list[str | threading.Event]) -> Route:
    """An SSE answer written chunk by chunk (chunked encoding, flushed each time);
    an Event in the list makes the server wait for it (at most 10 s) before going on."""

    def route(handler: BaseHTTPRequestHandler, _body: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.wfile.flush()
        for chunk in chunks:
            if isinstance(chunk, threading.Event):
                chunk.wait(10)
                continue
            data = chunk.encode()
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()

    return route
