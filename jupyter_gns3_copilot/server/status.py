"""The copilot's health report: package versions, whether GNS3 answers, the user's model.

Core module (no Jupyter imports): the server's `copilot/status` route and the kernel's
`%copilot status` both show this report.
"""

from __future__ import annotations

import platform
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from .._version import __version__

if TYPE_CHECKING:
    from ..gns3 import GNS3Client

REPORTED_PACKAGES = (
    "jupyter_server",
    "anywidget",
    "ipywidgets",
    "langgraph",
    "langchain-openai",
    "httpx",
    "pydantic",
)


class GNS3Status(BaseModel):
    """Whether the configured GNS3 server answers, and as whom."""

    url: str
    reachable: bool
    version: str | None = None
    authenticated: bool | None = None
    error: str | None = None


class HubStatus(BaseModel):
    """Hub mode: the copilot hub service this server takes its settings from."""

    service: str
    reachable: bool
    user: str | None = None
    """The hub user the service knows this server as."""
    gns3_username: str | None = None
    """The student's own GNS3 account."""
    questions_logged: bool = False
    """The service keeps the student's questions for the course staff (they are told)."""
    budget_left: int | None = None
    """Model tokens the student has left today (None: no limit, or the service did not say)."""
    slow: bool = False
    """The service took the session request but did not answer in time (`error` says so)."""
    error: str | None = None

    @property
    def summary(self) -> str:
        if self.slow:
            state = f"slow to answer: {self.error}"
        else:
            state = "reachable" if self.reachable else f"NOT reachable: {self.error}"
        logged = "; your questions are logged for the course staff" if self.questions_logged else ""
        return f"hub mode, service {self.service}, {state}{logged}"


class ContextLimitStatus(BaseModel):
    """The context window a chat counts on (thousands of tokens), and where it comes from.

    `source` is "setting" (an admin or user set `context_limit`), "model_family" (the
    default of the model's known family, named in `family`) or "guess" (no known family,
    e.g. a gateway's alias: `DEFAULT_CONTEXT_LIMIT` is assumed); `guessed` is true for the
    last, and `note` then says which setting fixes it.
    """

    limit: int
    source: Literal["setting", "model_family", "guess"]
    family: str | None = None
    guessed: bool = False
    note: str | None = None


def context_limit_status(model: str, context_limit: int | None) -> ContextLimitStatus:
    """Where the context limit of `model` comes from (`context_limit` None: not set)."""
    from ..agent.llm_access import DEFAULT_CONTEXT_LIMIT, SETTING_HELP, model_family

    if context_limit is not None:
        return ContextLimitStatus(limit=context_limit, source="setting")
    family = model_family(model)
    if family is not None:
        return ContextLimitStatus(
            limit=family.context_limit, source="model_family", family=family.name
        )
    return ContextLimitStatus(
        limit=DEFAULT_CONTEXT_LIMIT,
        source="guess",
        guessed=True,
        note=(
            f"The model {model!r} belongs to no known family (a gateway alias?), so the "
            f"copilot assumes a context window of {DEFAULT_CONTEXT_LIMIT}k tokens. Set "
            f"context_limit ({SETTING_HELP['context_limit']}) to the model's real window, in "
            "thousands of tokens."
        ),
    )


class ModelStatus(BaseModel):
    """Whether a chat model is configured for the asking user, and which; never the key.

    `missing` names the settings a chat still needs (e.g. "llm_model"), with `problems`
    saying how to set them. `context` says which context limit a chat counts on and
    whether it is a guess (None while no model is set).
    """

    configured: bool
    provider: str = ""
    base_url: str
    model: str
    copilot_mode: str
    api_key_set: bool
    missing: list[str] = []
    problems: list[str] = []
    context: ContextLimitStatus | None = None


class StatusReport(BaseModel):
    """What `copilot/status` returns."""

    version: str
    python: str
    packages: dict[str, str | None]
    mode: Literal["standalone", "hub"] = "standalone"
    mode_summary: str = "standalone: this server's own settings"
    hub: HubStatus | None = None
    gns3: GNS3Status
    model: ModelStatus | None = None
    user: str | None = None
    data_dir: str


@lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages worth reporting (read from metadata, not imported)."""
    found: dict[str, str | None] = {}
    for name in REPORTED_PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


async def probe_gns3(client: GNS3Client) -> GNS3Status:
    """Ask the GNS3 server for its version, then check that our credentials work."""
    from ..gns3 import GNS3AuthError, GNS3Error

    status = GNS3Status(url=client.url, reachable=False)
    try:
        status.version = (await client.version()).version
        status.reachable = True
        await client.authenticate()
        status.authenticated = True
    except GNS3AuthError as exc:
        status.authenticated = False
        status.error = str(exc)
    except GNS3Error as exc:
        status.error = str(exc)
    return status


async def collect_status(
    client: GNS3Client | None,
    *,
    data_dir: str,
    model: ModelStatus | None = None,
    user: str | None = None,
    hub: HubStatus | None = None,
) -> StatusReport:
    """Build the full health report (`model` and `user`: the asking user's, if known).
    In hub mode `hub` says how the service answered; `client` is None when it gave no
    session (GNS3 is then reported unreachable through it)."""
    gns3 = (
        await probe_gns3(client)
        if client is not None
        else GNS3Status(url="", reachable=False, error="no session from the copilot hub service")
    )
    extra = {} if hub is None else {"mode": "hub", "mode_summary": hub.summary, "hub": hub}
    return StatusReport(
        version=__version__,
        python=platform.python_version(),
        packages=package_versions(),
        gns3=gns3,
        model=model,
        user=user,
        data_dir=data_dir,
        **extra,
    )
