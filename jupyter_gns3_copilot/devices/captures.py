"""Reading a link's packet capture, for the capture tools and `traffic` checks alike."""

from __future__ import annotations

import logging

from ..capture import MAX_CAPTURE_BYTES
from ..gns3 import GNS3Client, GNS3Error, Link

log = logging.getLogger(__name__)


async def read_link_capture(gns3: GNS3Client, project_id: str, link: Link) -> bytes:
    """The link's capture bytes: a running capture through GNS3's capture stream (it
    serves captures on any compute), else, or when the stream fails (e.g. the capture
    just stopped), the capture file through the project's files."""
    if link.capturing:
        try:
            return await gns3.stream_capture(
                project_id, link.link_id, max_bytes=MAX_CAPTURE_BYTES + 1
            )
        except GNS3Error as exc:
            log.info("Capture stream of link %s failed (%s); reading the file", link.link_id, exc)
    return await gns3.read_capture(project_id, link.link_id)
