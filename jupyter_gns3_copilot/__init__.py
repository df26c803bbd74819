"""An AI copilot for GNS3 network labs, inside Jupyter notebooks.

Importing this package is cheap: the server extension, the magics and the heavy
libraries they need are imported only when Jupyter or IPython asks for them.
"""

from __future__ import annotations

from typing import Any

from ._version import __version__

__all__ = ["__version__"]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """Declare the server extension (found by jupyter_server at start-up)."""
    from .server.app import GNS3Copilot

    return [{"module": "jupyter_gns3_copilot", "app": GNS3Copilot}]
