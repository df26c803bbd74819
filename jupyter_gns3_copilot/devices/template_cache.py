"""`TemplateCache`: GNS3's node templates, read once for many turns.

A node's console dialect is also told by its template's tags and usage notes, so a tool
reaching a console needs the template list; read every turn it was the largest GNS3 read
of a one-command turn. Templates change rarely (an administrator adds or edits one), so
the list is kept and read again only when a node names a template the copy lacks (one
was added) or the copy is older than `max_age` (one was edited).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ..gns3 import GNS3Client, GNS3Error, Template
from ..single_flight import SingleFlight

log = logging.getLogger(__name__)

TEMPLATES_MAX_AGE = 60.0
"""Seconds a read of the template list is used for (an edited template's notes reach
the dialect hints within this time)."""


class TemplateCache:
    """`await cache.get(template_id)`: the template, or None when GNS3 lists none with
    that id or cannot list templates (logged; the next call reads again).

    Callers asking while a read is under way share it.
    """

    def __init__(
        self,
        gns3: GNS3Client,
        max_age: float = TEMPLATES_MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._gns3 = gns3
        self._max_age = max_age
        self._clock = clock
        self._templates: dict[str, Template] = {}
        self._read_at: float | None = None
        self._reads: SingleFlight[None, dict[str, Template] | None] = SingleFlight(
            lambda _: self._read()
        )

    async def get(self, template_id: str) -> Template | None:
        fresh = self._read_at is not None and self._clock() - self._read_at < self._max_age
        if not fresh or template_id not in self._templates:
            listed = await self._reads(None)
            if listed is None:
                return None
        return self._templates.get(template_id)

    async def _read(self) -> dict[str, Template] | None:
        started = self._clock()
        try:
            listed = await self._gns3.list_templates()
        except GNS3Error as exc:
            log.info("Templates not read for dialect hints: %s", exc)
            return None
        self._templates = {template.template_id: template for template in listed}
        self._read_at = started
        return self._templates
