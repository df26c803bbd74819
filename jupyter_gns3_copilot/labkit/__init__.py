"""Lab-in-a-box: a real local GNS3 v3 server for demos, tests and first steps.

``LabServer`` provisions gns3-server 3.0.6 in its own venv, starts it on 127.0.0.1 with
the project's uBridge/Dynamips stand-ins and a VPCS wrapper, and stops it without
leaving a process behind. ``gns3-copilot-lab start|stop|status`` is the command line.

Names are imported on first use: the stand-in programs run as modules of this package
and must start without loading httpx or pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .errors import LabError, LabNotRunning
    from .server import LabServer, LabStatus

__all__ = ["LabError", "LabNotRunning", "LabServer", "LabStatus"]


def __getattr__(name: str) -> object:
    if name in ("LabError", "LabNotRunning"):
        from . import errors

        return getattr(errors, name)
    if name in ("LabServer", "LabStatus"):
        from . import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
