"""The `GNS3Copilot` extension app: configuration traits and handler registration.

Every trait is settable as `c.GNS3Copilot.<trait>` in `jupyter_server_config.py`; where it
makes sense the default comes from an environment variable (trait -> environment ->
built-in default), which is how a JupyterHub operator configures a whole class.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_data_dir
from jupyter_server.extension.application import ExtensionApp
from traitlets import Float, Unicode, default

from .handlers import default_handlers


class GNS3Copilot(ExtensionApp):
    """The GNS3 Copilot server extension."""

    name = "jupyter_gns3_copilot"
    # Not a launchable app with a page of its own: it only adds API routes.
    open_browser = False

    gns3_url = Unicode(help="URL of the GNS3 v3 server (env GNS3_URL).").tag(config=True)
    gns3_username = Unicode(help="GNS3 user name (env GNS3_USER).").tag(config=True)
    gns3_password = Unicode(help="GNS3 password (env GNS3_PASSWORD); never logged.").tag(
        config=True
    )
    gns3_token = Unicode(
        "", help="A GNS3 JWT to use instead of user name and password (env GNS3_TOKEN)."
    ).tag(config=True)
    gns3_timeout = Float(
        15.0, help="Seconds to wait for one GNS3 API request before giving up."
    ).tag(config=True)
    data_dir = Unicode(
        help="Directory for chat databases, per project (env GNS3_COPILOT_DATA_DIR)."
    ).tag(config=True)

    @default("gns3_url")
    def _default_gns3_url(self) -> str:
        return os.environ.get("GNS3_URL", "http://127.0.0.1:3080")

    @default("gns3_username")
    def _default_gns3_username(self) -> str:
        return os.environ.get("GNS3_USER", "admin")

    @default("gns3_password")
    def _default_gns3_password(self) -> str:
        return os.environ.get("GNS3_PASSWORD", "")

    @default("gns3_token")
    def _default_gns3_token(self) -> str:
        return os.environ.get("GNS3_TOKEN", "")

    @default("data_dir")
    def _default_data_dir(self) -> str:
        return os.environ.get(
            "GNS3_COPILOT_DATA_DIR", str(Path(jupyter_data_dir()) / "jupyter_gns3_copilot")
        )

    def initialize_settings(self) -> None:
        """Expose this app to the handlers as `settings["gns3_copilot"]`."""
        self.settings["gns3_copilot"] = self
        self._gns3_client: Any = None

    def initialize_handlers(self) -> None:
        """Register the API routes (jupyter_server prefixes them with base_url)."""
        self.handlers.extend(default_handlers)

    def gns3_client(self) -> Any:
        """The shared GNS3 client of this server (created on first use, reused)."""
        if self._gns3_client is None:
            from ..gns3 import GNS3Client

            self._gns3_client = GNS3Client(
                self.gns3_url,
                username=self.gns3_username or None,
                password=self.gns3_password or None,
                token=self.gns3_token or None,
                timeout=self.gns3_timeout,
            )
        return self._gns3_client

    async def stop_extension(self) -> None:
        """Close the GNS3 client's connections."""
        if self._gns3_client is not None:
            await self._gns3_client.aclose()
            self._gns3_client = None
