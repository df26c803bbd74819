"""Typed, readable errors raised by the GNS3 client.

Every error is a `GNS3Error`. `str(error)` is one or two short sentences meant for a user
(what went wrong and what to do); the structured fields carry the rest:

- `status`: the HTTP status GNS3 answered with, or None when no answer arrived;
- `url`: the URL that was requested (or the server URL for connection problems);
- `detail`: GNS3's own message (its `{"message": ...}` body) or the transport error text.
"""

from __future__ import annotations

from collections.abc import Sequence

URL_HELP = "Set the GNS3_URL environment variable or the c.GNS3Copilot.gns3_url trait"
CREDENTIALS_HELP = "Check GNS3_USER and GNS3_PASSWORD"


class GNS3Error(Exception):
    """Base class of every error the GNS3 client raises."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        url: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.url = url
        self.detail = detail

    def __str__(self) -> str:
        return self.message


class GNS3Unreachable(GNS3Error):
    """No connection to the GNS3 server (refused, DNS failure, connection lost, bad URL)."""


class GNS3AuthError(GNS3Error):
    """GNS3 refused the credentials or the token (HTTP 401), or the user lacks a privilege (403)."""


class GNS3NotFound(GNS3Error):
    """A project, node, template, link, port, snapshot or capture does not exist.

    `kind` names what was looked for ("project", "node", "port", ...), `name` the name or id
    that was asked for, and `available` the names that do exist (when known).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        name: str,
        available: Sequence[str] = (),
        status: int | None = None,
        url: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message, status=status, url=url, detail=detail)
        self.kind = kind
        self.name = name
        self.available = tuple(available)


class GNS3Conflict(GNS3Error):
    """GNS3 refused an action in the current state (HTTP 409); `detail` is GNS3's own message.

    Also raised before any request when the action can be seen to fail, e.g. linking a port
    that another link already uses.
    """


class GNS3Timeout(GNS3Error):
    """GNS3 did not answer within the client's timeout, or reported a timeout itself (408)."""


class GNS3APIError(GNS3Error):
    """Any other error answer from GNS3 (validation errors, server errors...)."""
