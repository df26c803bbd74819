"""Per-user model settings: the administrator's defaults and limits, what each user chose,
and the merge of both that a chat uses. Each user's settings are theirs alone, and keys are
stored encrypted and never read back.

- `LLMAdminConfig`: what the server's configuration says (endpoint, key, model, sampling,
  context window, default mode) and the limits users stay within (`allowed_modes`,
  `allowed_base_urls`; with none listed, any endpoint but link-local and cloud metadata
  addresses (`endpoint_policy`), or under JupyterHub only the admin's own).
- `UserLLMSettings`: what one user set; every field is optional (None: use the admin's).
- `LLMConfigUpdate`: a change a user asks for (`PUT copilot/llm-config`): a field left out
  stays as it is, a field set to null goes back to the admin's value; `api_key` is
  write-only (an empty string removes it).
- `LLMConfigStore` (`server.llm_store`): the users' settings on disk, encrypted.
- `effective_config(admin, user)`: the settings a chat runs with, where each value comes
  from, what is missing, and `model_settings()` for the model factory.

The admin's API key is only ever sent to the admin's endpoint: a user who points the
copilot at another base URL must give their own key, otherwise it would travel to a server
the user chose.

No Jupyter imports.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from ..agent.llm_access import (
    DEFAULT_BASE_URL,
    ContextStrategy,
    ModelSettings,
    default_context_limit,
)
from ..endpoint_policy import refused_endpoint
from ..tools.modes import MODE_NAMES, MODE_TOOLS, TEACHING
from .status import ModelStatus, context_limit_status

MAX_CONTEXT_LIMIT = 10_000
"""Thousands of tokens: larger than any model's window, small enough to catch typos."""

Source = Literal["user", "admin"]


class LLMConfigError(ValueError):
    """A setting a user may not choose. `field` names it, `rule` says what is allowed.

    `message`, when given, is the sentence the user reads instead of "field: rule" (no
    setting names in it); `admin_note` is for the server log: the administrator's setting
    behind the refusal.
    """

    def __init__(
        self,
        field: str,
        rule: str,
        *,
        message: str | None = None,
        admin_note: str | None = None,
    ) -> None:
        super().__init__(message or f"{field}: {rule}")
        self.field = field
        self.rule = rule
        self.message = message
        self.admin_note = admin_note


class ModelNotConfigured(Exception):
    """A chat needs a model setting nobody has set; `setting` names the first one missing."""

    def __init__(self, message: str, *, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


def normalize_base_url(url: str) -> str:
    """`url` without surrounding spaces and trailing slashes (how base URLs are compared)."""
    return url.strip().rstrip("/")


def _known_mode(value: str) -> str:
    if value not in MODE_TOOLS:
        raise ValueError(f"unknown copilot mode {value!r}; known modes: {', '.join(MODE_TOOLS)}")
    return value


class LLMAdminConfig(BaseModel):
    """The administrator's model settings and the limits users stay within.

    `allowed_base_urls` empty: users may use any endpoint except link-local and cloud
    metadata addresses, or, under JupyterHub (`jupyterhub`), only `base_url`. `api_key` is
    the admin's key, only used with `base_url`. `title_model` empty: titles use the chat
    model.
    """

    model_config = ConfigDict(frozen=True)

    provider: str = ""
    base_url: str = DEFAULT_BASE_URL
    api_key: SecretStr = SecretStr("")
    model: str = ""
    title_model: str = ""
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    context_limit: int | None = Field(default=None, gt=0, le=MAX_CONTEXT_LIMIT)
    context_strategy: ContextStrategy = "balanced"
    timeout: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=2, ge=0, le=10)
    default_mode: str = TEACHING
    allowed_modes: tuple[str, ...] = tuple(MODE_TOOLS)
    allowed_base_urls: tuple[str, ...] = ()
    modes_setting: str = "c.GNS3Copilot.allowed_modes"
    """The setting `allowed_modes` comes from, named in the log when a mode is refused."""
    jupyterhub: bool = False
    users_may_choose_endpoints: bool = True
    """False in hub mode: users' own `provider`, `base_url` and `api_key` are refused and
    any stored earlier are ignored (the hub service's gateway and the hub token apply)."""

    @field_validator("base_url")
    @classmethod
    def _normalized_url(cls, value: str) -> str:
        return normalize_base_url(value) or DEFAULT_BASE_URL

    @field_validator("allowed_base_urls")
    @classmethod
    def _normalized_urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(normalize_base_url(url) for url in value if url.strip())

    @field_validator("allowed_modes")
    @classmethod
    def _known_modes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("allowed_modes must name at least one mode")
        return tuple(_known_mode(mode) for mode in value)

    @field_validator("default_mode")
    @classmethod
    def _known_default_mode(cls, value: str) -> str:
        return _known_mode(value)

    def check_mode(self, mode: str, field: str = "copilot_mode") -> str:
        """`mode` if the administrator allows it; LLMConfigError naming `field` otherwise
        ("Your course allows teaching mode only."; the setting in its `admin_note`)."""
        if mode not in self.allowed_modes:
            allowed = [MODE_NAMES.get(m, m) for m in self.allowed_modes]
            if len(allowed) == 1:
                sentence = f"Your course allows {allowed[0]} mode only."
            else:
                sentence = f"Your course allows the {' and '.join(allowed)} modes only."
            raise LLMConfigError(
                field,
                f"one of the allowed modes ({', '.join(self.allowed_modes)}), got {mode!r}",
                message=sentence,
                admin_note=f"{mode!r} is not in {self.modes_setting} "
                f"({', '.join(self.allowed_modes)})",
            )
        return mode

    @property
    def user_base_urls(self) -> tuple[str, ...]:
        """The endpoints users may choose; empty: any but link-local and metadata ones."""
        if self.allowed_base_urls:
            return self.allowed_base_urls
        return (self.base_url,) if self.jupyterhub else ()

    def check_base_url(self, url: str, field: str = "base_url") -> str:
        """`url` normalised, if it is http(s) and allowed; LLMConfigError naming the rule
        otherwise (see the class docstring)."""
        url = normalize_base_url(url)
        if not url.startswith(("http://", "https://")) or len(url) <= len("https://"):
            raise LLMConfigError(field, f"must start with http:// or https://, got {url!r}")
        if self.allowed_base_urls:
            if url not in self.allowed_base_urls:
                listed = ", ".join(self.allowed_base_urls)
                raise LLMConfigError(
                    field,
                    f"one of the allowed endpoints ({listed})",
                    message=f"Your course allows only these model endpoints: {listed}.",
                    admin_note=f"{url} is not in c.GNS3Copilot.allowed_base_urls",
                )
        elif url != self.base_url and self.jupyterhub:
            raise LLMConfigError(
                field,
                f"the course's endpoint ({self.base_url})",
                message=f"Your course allows only its own model endpoint ({self.base_url}).",
                admin_note="under JupyterHub only the administrator's endpoint is allowed "
                "unless c.GNS3Copilot.allowed_base_urls lists others",
            )
        elif url != self.base_url and (reason := refused_endpoint(url)) is not None:
            raise LLMConfigError(
                field,
                f"not {reason}",
                message=f"This model endpoint cannot be used: {reason}.",
                admin_note=f"{url}: {reason}; allowed only when listed in "
                "c.GNS3Copilot.allowed_base_urls",
            )
        return url

    @property
    def effective_default_mode(self) -> str:
        """`default_mode`, or the first allowed mode when the default is not allowed."""
        return (
            self.default_mode if self.default_mode in self.allowed_modes else self.allowed_modes[0]
        )


ENDPOINT_FIELDS = ("provider", "base_url", "api_key")
"""The user settings that choose where the model calls go (refused in hub mode)."""


class UserLLMSettings(BaseModel):
    """What one user chose; None everywhere means "the administrator's value"."""

    model_config = ConfigDict(extra="ignore")

    provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    temperature: float | None = None
    context_limit: int | None = None
    context_strategy: ContextStrategy | None = None
    copilot_mode: str | None = None
    api_key: SecretStr | None = None

    def is_empty(self) -> bool:
        """Whether the user chose nothing."""
        return all(getattr(self, name) is None for name in type(self).model_fields)


class LLMConfigUpdate(BaseModel):
    """The body of `PUT copilot/llm-config` (every field optional, unknown fields refused).

    Left out: unchanged. null: back to the administrator's value. `api_key` "" or null:
    the user's key is removed.
    """

    model_config = ConfigDict(extra="forbid")

    provider: str | None = Field(default=None, max_length=100)
    base_url: str | None = Field(default=None, max_length=2000)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    context_limit: int | None = Field(default=None, gt=0, le=MAX_CONTEXT_LIMIT)
    context_strategy: ContextStrategy | None = None
    copilot_mode: str | None = None
    api_key: SecretStr | None = Field(default=None, max_length=4000)

    def apply(self, current: UserLLMSettings, admin: LLMAdminConfig) -> UserLLMSettings:
        """`current` changed as asked, checked against the administrator's limits."""
        changes: dict[str, Any] = {}
        for name in self.model_fields_set:
            value = getattr(self, name)
            if name == "base_url" and value is not None:
                value = admin.check_base_url(value)
            elif name == "copilot_mode" and value is not None:
                admin.check_mode(value)
            elif name == "api_key" and value is not None and not value.get_secret_value():
                value = None
            elif name in ("provider", "model") and isinstance(value, str):
                value = value.strip() or None
            changes[name] = value
        return current.model_copy(update=changes)


class MissingSetting(BaseModel):
    """A setting a chat needs and nobody set."""

    setting: str
    message: str


class LLMConfigView(BaseModel):
    """What `GET copilot/llm-config` returns: the effective values, never the key.

    `sources` says, per field, whether the user's or the administrator's value is in force;
    `user_settings` lists the fields the user set; `ignored` the user's values the
    administrator's limits no longer allow (the admin's values apply instead).
    """

    provider: str
    base_url: str
    model: str
    title_model: str
    temperature: float | None
    context_limit: int
    context_strategy: str
    copilot_mode: str
    api_key_set: bool
    api_key_source: Source | None
    sources: dict[str, Source]
    user_settings: list[str]
    ignored: list[str]
    configured: bool
    missing: list[MissingSetting]
    allowed_modes: list[str]
    allowed_base_urls: list[str]


class EffectiveLLMConfig(BaseModel):
    """The model settings a chat of one user runs with (admin defaults + user choices)."""

    model_config = ConfigDict(frozen=True)

    provider: str
    base_url: str
    model: str
    title_model: str
    temperature: float | None
    context_limit: int | None
    context_strategy: ContextStrategy
    copilot_mode: str
    api_key: SecretStr
    api_key_source: Source | None
    timeout: float
    max_retries: int
    sources: dict[str, Source]
    user_settings: tuple[str, ...]
    ignored: tuple[str, ...]
    missing: tuple[MissingSetting, ...]
    allowed_modes: tuple[str, ...]
    allowed_base_urls: tuple[str, ...]

    @property
    def configured(self) -> bool:
        """Whether a chat can start (nothing is missing)."""
        return not self.missing

    def model_settings(self, model: str | None = None) -> ModelSettings:
        """`ModelSettings` for the chat model (or `model` on the same endpoint).

        Raises `ModelNotConfigured` naming the first missing setting.
        """
        if self.missing:
            first = self.missing[0]
            raise ModelNotConfigured(first.message, setting=first.setting)
        return ModelSettings(
            base_url=self.base_url,
            api_key=self.api_key,
            model=model or self.model,
            temperature=self.temperature,
            timeout=self.timeout,
            max_retries=self.max_retries,
            context_limit=self.context_limit,
            context_strategy=self.context_strategy,
        )

    def title_model_settings(self) -> ModelSettings | None:
        """Settings for the title model, or None when titles use the chat model."""
        if not self.title_model or self.title_model == self.model:
            return None
        return self.model_settings(self.title_model).model_copy(update={"temperature": None})

    def status(self) -> ModelStatus:
        """The model part of the health report (no key)."""
        return ModelStatus(
            configured=self.configured,
            provider=self.provider,
            base_url=self.base_url,
            model=self.model,
            copilot_mode=self.copilot_mode,
            api_key_set=self.api_key_source is not None,
            missing=[item.setting for item in self.missing],
            problems=[item.message for item in self.missing],
            context=context_limit_status(self.model, self.context_limit) if self.model else None,
        )

    def view(self) -> LLMConfigView:
        """The public view (no key)."""
        return LLMConfigView(
            provider=self.provider,
            base_url=self.base_url,
            model=self.model,
            title_model=self.title_model,
            temperature=self.temperature,
            context_limit=self.context_limit or default_context_limit(self.model),
            context_strategy=self.context_strategy,
            copilot_mode=self.copilot_mode,
            api_key_set=self.api_key_source is not None,
            api_key_source=self.api_key_source,
            sources=self.sources,
            user_settings=list(self.user_settings),
            ignored=list(self.ignored),
            configured=self.configured,
            missing=list(self.missing),
            allowed_modes=list(self.allowed_modes),
            allowed_base_urls=list(self.allowed_base_urls),
        )


_PLAIN_FIELDS = ("provider", "model", "temperature", "context_limit", "context_strategy")


def effective_config(
    admin: LLMAdminConfig, user: UserLLMSettings | None = None
) -> EffectiveLLMConfig:
    """Merge `user`'s choices over `admin`'s defaults, within the admin's limits.

    A user value the limits no longer allow (a mode or base URL the admin removed since) is
    ignored and listed in `ignored`. The admin's key applies only to the admin's base URL;
    the admin's title model only there too.
    """
    user = user or UserLLMSettings()
    sources: dict[str, Source] = {}
    ignored: list[str] = []
    values: dict[str, Any] = {}
    for name in _PLAIN_FIELDS:
        mine = getattr(user, name)
        values[name] = mine if mine is not None else getattr(admin, name)
        sources[name] = "user" if mine is not None else "admin"

    if not admin.users_may_choose_endpoints:
        fixed = [n for n in ENDPOINT_FIELDS if getattr(user, n) is not None]
        ignored.extend(fixed)
        user = user.model_copy(update=dict.fromkeys(fixed))
        values["provider"], sources["provider"] = admin.provider, "admin"
    base_url, sources["base_url"] = admin.base_url, "admin"
    if user.base_url is not None:
        try:
            base_url, sources["base_url"] = admin.check_base_url(user.base_url), "user"
        except LLMConfigError:
            ignored.append("base_url")
    mode, sources["copilot_mode"] = admin.effective_default_mode, "admin"
    if user.copilot_mode is not None:
        if user.copilot_mode in admin.allowed_modes:
            mode, sources["copilot_mode"] = user.copilot_mode, "user"
        else:
            ignored.append("copilot_mode")

    on_admin_endpoint = base_url == admin.base_url
    api_key = SecretStr("")
    key_source: Source | None = None
    if user.api_key is not None and user.api_key.get_secret_value():
        api_key, key_source = user.api_key, "user"
    elif on_admin_endpoint and admin.api_key.get_secret_value():
        api_key, key_source = admin.api_key, "admin"
    if key_source:
        sources["api_key"] = key_source

    model = values["model"]
    title_model = admin.title_model if on_admin_endpoint and admin.title_model else model
    missing: list[MissingSetting] = []
    if not model:
        missing.append(
            MissingSetting(
                setting="llm_model",
                message=(
                    "No model is configured: the administrator sets one with "
                    "c.GNS3Copilot.llm_model or the GNS3_COPILOT_MODEL environment variable, "
                    'or set your own with PUT copilot/llm-config {"model": "..."}.'
                ),
            )
        )
    if key_source is None and base_url == normalize_base_url(DEFAULT_BASE_URL):
        missing.append(
            MissingSetting(
                setting="llm_api_key",
                message=(
                    f"No API key is configured for {base_url}: the administrator sets one with "
                    "c.GNS3Copilot.llm_api_key or the OPENAI_API_KEY environment variable, or "
                    'set your own with PUT copilot/llm-config {"api_key": "..."}.'
                ),
            )
        )
    return EffectiveLLMConfig(
        provider=values["provider"],
        base_url=base_url,
        model=model,
        title_model=title_model,
        temperature=values["temperature"],
        context_limit=values["context_limit"],
        context_strategy=values["context_strategy"],
        copilot_mode=mode,
        api_key=api_key,
        api_key_source=key_source,
        timeout=admin.timeout,
        max_retries=admin.max_retries,
        sources=sources,
        user_settings=tuple(
            name for name in UserLLMSettings.model_fields if getattr(user, name) is not None
        ),
        ignored=tuple(ignored),
        missing=tuple(missing),
        allowed_modes=admin.allowed_modes,
        allowed_base_urls=admin.user_base_urls,
    )


__all__ = [
    "LLMAdminConfig",
    "LLMConfigError",
    "LLMConfigUpdate",
    "LLMConfigView",
    "ModelNotConfigured",
    "UserLLMSettings",
    "effective_config",
]
