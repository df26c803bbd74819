"""`device_notes`: what the model is told, in its system prompt, about the console dialects
of the lab's devices: for each dialect present that has notes (the `prompt` lines of its
skills, `SkillsLibrary.prompt_notes`), the devices that speak it and those notes. So a
project with an FRR router reminds the model that vtysh wants CIDR addresses and a
`router ospf` without a number, and a project without one spends no tokens on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..devices.access import Devices
from ..gns3 import Node
from ..gns3.topology import natural_key, single_line
from ..tools.skills import SkillsLibrary

HEADER = "Console dialects (differences from Cisco IOS that matter on these devices):"


async def device_notes(
    nodes: Sequence[Node],
    devices: Devices,
    skills: SkillsLibrary,
    abort: asyncio.Event | None = None,
) -> str:
    """The notes for the dialects of `nodes` (each decided as the tools decide it,
    `Devices.dialect`), one line per dialect with notes: `- frr (R1, R2): NOTE; NOTE`,
    under `HEADER`; "" when no dialect present has notes. Ends with a newline."""
    dialects = await asyncio.gather(*(devices.dialect(node, abort) for node in nodes))
    speakers: dict[str, list[str]] = {}
    for node, dialect in zip(nodes, dialects, strict=True):
        if dialect is not None:
            speakers.setdefault(dialect, []).append(single_line(node.name))
    lines = []
    for dialect in sorted(speakers):
        notes = skills.prompt_notes(dialect)
        if notes:
            names = ", ".join(sorted(speakers[dialect], key=natural_key))
            lines.append(f"- {dialect} ({names}): {'; '.join(notes)}")
    return "\n".join([HEADER, *lines]) + "\n" if lines else ""
