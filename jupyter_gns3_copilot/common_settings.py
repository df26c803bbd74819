"""The settings both apps declare: the server extension (`GNS3Copilot`) and the hub service
(`CopilotHubService`), declared once.

`CommonSettings` is a traitlets `HasTraits` that each app's settings inherit, so each
setting keeps its app's configuration key (`c.GNS3Copilot.gns3_url`,
`c.CopilotHubService.gns3_url`) and command-line option, with one help text and one
environment default: the GNS3 server and account (`gns3_*`), the model endpoint
(`llm_base_url`, `llm_api_key`, `llm_model`, `title_model`), the modes users may choose
and the class's lab salt. An app may give a setting another default with its own
`@default` (the hub service's `gns3_timeout`). It is no `Configurable`, so it adds no
configuration section of its own. No Jupyter server import.
"""

from __future__ import annotations

import os

from traitlets import Float, HasTraits, List, Unicode, default

from .objectives import SALT_ENV

MODES = ("teaching_assistant", "lab_automation_assistant")
"""The copilot modes (`tools.modes.MODE_TOOLS`), named here so loading imports no tools."""
ALLOWED_MODES_ENV = "GNS3_COPILOT_ALLOWED_MODES"


def env_list(name: str) -> list[str]:
    """The comma-separated, non-empty items of environment variable `name`."""
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


class CommonSettings(HasTraits):
    """The settings of both apps (see the module docstring)."""

    # -- GNS3 ------------------------------------------------------------------------------
    gns3_url = Unicode(help="URL of the GNS3 v3 server (env GNS3_URL).").tag(config=True)
    gns3_username = Unicode(
        help="GNS3 user name (env GNS3_USER); for the hub service, a GNS3 administrator."
    ).tag(config=True)
    gns3_password = Unicode(
        help="GNS3 password (env GNS3_PASSWORD); never logged, keep it in the environment."
    ).tag(config=True)
    gns3_timeout = Float(
        15.0, help="Seconds to wait for one GNS3 API request before giving up."
    ).tag(config=True)

    # -- the model -------------------------------------------------------------------------
    llm_base_url = Unicode(
        help="Base URL of the OpenAI-compatible model endpoint (env OPENAI_BASE_URL)."
    ).tag(config=True)
    llm_api_key = Unicode(
        help="API key for llm_base_url (env OPENAI_API_KEY); only ever sent to llm_base_url; "
        "keep it in the environment."
    ).tag(config=True)
    llm_model = Unicode(help="Chat model name (env GNS3_COPILOT_MODEL).").tag(config=True)
    title_model = Unicode(
        "",
        help="Model that names conversations, on llm_base_url (default: llm_model; a user "
        "who chose their own endpoint gets titles from their own model).",
    ).tag(config=True)

    # -- the class -------------------------------------------------------------------------
    # Unicode items, not Enum: a mode from the environment that is not one of MODES must
    # close the server's routes (`server.configuration`) or stop the hub service with a
    # readable message (`CopilotHubService.check`), not fail the loading.
    allowed_modes = List(
        Unicode(),
        help="Copilot modes users may choose (e.g. only teaching_assistant for a class; env "
        f"{ALLOWED_MODES_ENV}, comma-separated).",
    ).tag(config=True)
    lab_salt = Unicode(
        help="Secret that makes each student's lab parameter values; never shown to students "
        "(env GNS3_COPILOT_LAB_SALT; default: generated once into data_dir/lab.salt, mode "
        "0600)."
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

    @default("llm_base_url")
    def _default_llm_base_url(self) -> str:
        return os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")

    @default("llm_api_key")
    def _default_llm_api_key(self) -> str:
        return os.environ.get("OPENAI_API_KEY", "")

    @default("llm_model")
    def _default_llm_model(self) -> str:
        return os.environ.get("GNS3_COPILOT_MODEL", "")

    @default("allowed_modes")
    def _default_allowed_modes(self) -> list[str]:
        return env_list(ALLOWED_MODES_ENV) or list(MODES)

    @default("lab_salt")
    def _default_lab_salt(self) -> str:
        return os.environ.get(SALT_ENV, "")
