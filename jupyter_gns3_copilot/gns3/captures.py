"""`CaptureCalls`: packet captures on GNS3 links (start, stop, the file, the running
stream)."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

import httpx

from .connection import transport_reason
from .errors import GNS3NotFound, GNS3Unreachable
from .links import LinkCalls
from .models import Link

CAPTURE_QUIET = 0.3
"""Seconds without new bytes after which a capture stream has sent all there was (GNS3
sends the file in 8 KB chunks, then polls it every 0.1 s for more)."""


class CaptureCalls(LinkCalls):
    """The packet capture part of `GNS3Client`."""

    # -- packet capture ----------------------------------------------------------------

    async def start_capture(
        self,
        project_id: str,
        link_id: str,
        *,
        capture_file_name: str | None = None,
        data_link_type: str = "DLT_EN10MB",
    ) -> Link:
        """Start capturing the link's packets to a pcap file; returns the link (capturing).

        GNS3 needs a started node on the link. Without `capture_file_name` GNS3 picks one
        (e.g. "PC1_0-0_to_Switch1_0-0.pcap").
        """
        body: dict[str, Any] = {"data_link_type": data_link_type}
        if capture_file_name is not None:
            body["capture_file_name"] = capture_file_name
        data = await self.request_json(
            "POST",
            self._link_path(project_id, link_id, "/capture/start"),
            json=body,
            subjects=[("project", project_id), ("link", link_id)],
        )
        return Link.model_validate(data)

    async def stop_capture(self, project_id: str, link_id: str) -> None:
        """Stop the link's capture; the file stays readable with `read_capture`."""
        await self.request(
            "POST",
            self._link_path(project_id, link_id, "/capture/stop"),
            subjects=[("project", project_id), ("link", link_id)],
        )

    async def read_capture(self, project_id: str, link_id: str) -> bytes:
        """The bytes of the link's latest capture file (pcap), running or stopped.

        Read from the project's files (project-files/captures/NAME), which is where the
        local compute writes them. Raises `GNS3NotFound` (kind "capture") when the link has
        never been captured or the file is gone (e.g. after a snapshot restore).
        """
        link = await self.get_link(project_id, link_id)
        if not link.capture_file_name:
            raise GNS3NotFound(
                f"Link {link_id} has no packet capture; start one first.",
                kind="capture",
                name=link_id,
            )
        path = f"project-files/captures/{link.capture_file_name}"
        response = await self.request(
            "GET",
            f"/projects/{project_id}/files/{quote(path)}",
            subjects=[("project", project_id), ("capture", link.capture_file_name)],
        )
        return response.content

    async def stream_capture(
        self,
        project_id: str,
        link_id: str,
        *,
        max_bytes: int,
        quiet: float = CAPTURE_QUIET,
    ) -> bytes:
        """The link's RUNNING capture (pcap) as GNS3's capture stream serves it: the file
        from its start, then new packets as they come; read until nothing came for
        `quiet` seconds after the first bytes (all there was), `max_bytes` arrived, or
        the client's `timeout` passed in all. The last packet may be cut off.

        Raises `GNS3Conflict` when the link is not being captured (GNS3's 409).
        """
        response = await self.request(
            "GET",
            self._link_path(project_id, link_id, "/capture/stream"),
            subjects=[("project", project_id), ("link", link_id)],
            stream=True,
        )
        loop = asyncio.get_running_loop()
        data = bytearray()
        chunks = response.aiter_raw()
        wait, deadline = self.timeout, loop.time() + self.timeout
        try:
            while len(data) < max_bytes and loop.time() < deadline:
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), wait)
                except (asyncio.TimeoutError, StopAsyncIteration):
                    break
                data += chunk
                wait = quiet
        except httpx.TransportError as exc:
            raise GNS3Unreachable(
                f"The capture stream from GNS3 at {self.url} broke ({transport_reason(exc)}).",
                url=self.url,
                detail=transport_reason(exc),
            ) from exc
        finally:
            await response.aclose()
        return bytes(data[:max_bytes])
