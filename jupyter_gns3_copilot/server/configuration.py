"""Fail closed on a bad configuration: what is wrong with the extension's settings.

jupyter_server links an extension by loading its configuration into the app's traits; a
value that fails validation (`--GNS3Copilot.allowed_modes=["teaching_assistant"]`, a
spelling traitlets rejects) raises there, and jupyter_server only logs it and goes on:
the handlers are still registered, by then with whatever traits were set before the bad
one and defaults for the rest (no mode restriction, an empty GNS3 URL...). So the app
records a `ConfigProblem` instead (the link error, or the first value checked here that
breaks its rule), and every copilot route answers 503 naming the setting and the reason
until the administrator fixes it and restarts the server. Nothing is read or written
while the copilot is closed.

Values checked at load, whatever their source (configuration file, command line or
environment): `data_dir` (absolute, never empty: an empty one would put the key file and
users' settings into the notebook root), `llm_base_url` and `allowed_base_urls` (http(s)
URLs), `allowed_modes` (known modes, at least one), `console_transport` (telnet or
websocket), `hub_service_url` (http(s) if set; in
hub mode the server needs its hub token and holds no class secret: `hub_mode_problem`).
An unknown option is not a problem:
traitlets warns about it, as everywhere in Jupyter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ErrorAnswer

_TRAIT_NAME = re.compile(r"The '(\w+)' trait")
UNNAMED = "configuration"


@dataclass(frozen=True)
class ConfigProblem:
    """One invalid setting: its trait name and what is wrong with it."""

    setting: str
    """A trait name, or "configuration" when the error names none."""
    reason: str

    def error_answer(self) -> ErrorAnswer:
        """The 503 every copilot route answers while the problem stands."""
        where = "" if self.setting == UNNAMED else f"c.GNS3Copilot.{self.setting}: "
        return ErrorAnswer(
            503,
            f"The GNS3 Copilot is closed because its configuration is invalid: "
            f"{where}{self.reason}. The administrator must fix it and restart the Jupyter "
            "server.",
            type="ConfigurationError",
            setting=self.setting,
            rule=self.reason,
        )


def problem_from_link_error(exc: BaseException) -> ConfigProblem:
    """The problem behind an exception raised while jupyter_server linked the extension."""
    match = _TRAIT_NAME.search(str(exc))
    setting = match.group(1) if match else UNNAMED
    return ConfigProblem(setting, str(exc).rstrip(".") or type(exc).__name__)


def _data_dir(value: str) -> None:
    if not value.strip():
        raise ValueError("must not be empty (the copilot writes users' settings there)")
    if not Path(value).expanduser().is_absolute():
        raise ValueError(f"must be an absolute path, got {value!r}")


def _http_url(value: str) -> None:
    if not value.strip().startswith(("http://", "https://")):
        raise ValueError(f"{value!r} must start with http:// or https://")


def _http_urls(values: Iterable[str]) -> None:
    for value in values:
        _http_url(value)


def _modes(known: tuple[str, ...]) -> Callable[[Iterable[str]], None]:
    def check(values: Iterable[str]) -> None:
        values = list(values)
        if not values:
            raise ValueError("must name at least one mode")
        unknown = [mode for mode in values if mode not in known]
        if unknown:
            raise ValueError(
                f"unknown mode {unknown[0]!r}; known modes: {', '.join(known)} (command "
                "line: --GNS3Copilot.allowed_modes=teaching_assistant, repeated for more; "
                "environment: GNS3_COPILOT_ALLOWED_MODES=mode,mode)"
            )

    return check


HUB_REFUSED = {
    "gns3_password": "GNS3_PASSWORD",
    "gns3_token": "GNS3_TOKEN",
    "llm_api_key": "OPENAI_API_KEY",
}
"""Secrets a server in hub mode must not hold (students read their server's environment)."""


def hub_mode_problem(app: Any, hub_token: str) -> ConfigProblem | None:
    """What keeps `app` in hub mode (`hub_service_url` set) from running safely: no hub
    token to authenticate with, or a class secret given to the student's server."""
    if not hub_token:
        return ConfigProblem(
            "hub_service_url",
            "hub mode needs the server's JUPYTERHUB_API_TOKEN (a server spawned by JupyterHub)",
        )
    for setting, variable in HUB_REFUSED.items():
        if getattr(app, setting):
            return ConfigProblem(
                setting,
                f"must not be set in hub mode: the copilot hub service holds the class's "
                f"secrets; remove {variable} from the spawner's environment and "
                f"c.GNS3Copilot.{setting} from the configuration (students can read both)",
            )
    return None


def _one_of(known: tuple[str, ...], variable: str) -> Callable[[str], None]:
    def check(value: str) -> None:
        if value not in known:
            raise ValueError(
                f"unknown value {value!r}; one of: {', '.join(known)} (environment: {variable})"
            )

    return check


def _approval_policy(value: Any) -> None:
    from ..agent.approval_policy import ApprovalPolicy

    ApprovalPolicy.parse(value)


def find_problem(
    app: Any, modes: tuple[str, ...], console_transports: tuple[str, ...]
) -> ConfigProblem | None:
    """The first setting of `app` (a `GNS3Copilot`) that breaks its rule, or None."""
    checks: dict[str, Callable[[Any], None]] = {
        "data_dir": _data_dir,
        "llm_base_url": _http_url,
        "allowed_base_urls": _http_urls,
        "allowed_modes": _modes(modes),
        "console_transport": _one_of(console_transports, "GNS3_COPILOT_CONSOLE_TRANSPORT"),
        "hub_service_url": lambda url: _http_url(url) if url else None,
        "require_approval": _approval_policy,
    }
    for setting, check in checks.items():
        try:
            check(getattr(app, setting))
        except ValueError as exc:
            return ConfigProblem(setting, str(exc))
    return None
