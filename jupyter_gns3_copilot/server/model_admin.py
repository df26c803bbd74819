"""The administrator's model settings and limits (`LLMAdminConfig`) the server runs with.

Outside hub mode they come from the app's traits, built once. In hub mode they come from
the hub session (`HubLink`): the service's gateway as the endpoint with this server's hub
token as its key, the class's models and modes, and no endpoint of the users' own; before
the session was fetched there is no model. No Jupyter import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..hub.api_models import HubSession
    from .hub_link import HubLink
    from .llm_config import LLMAdminConfig
    from .settings import GNS3CopilotSettings

HUB_PROVIDER = "JupyterHub copilot service"


class ModelAdmin:
    """`config()`: the admin's model settings from `settings`, or from `hub` in hub mode."""

    def __init__(self, settings: GNS3CopilotSettings, hub: HubLink) -> None:
        self.settings = settings
        self.hub = hub
        self._local: LLMAdminConfig | None = None
        self._hub_admin: tuple[HubSession, LLMAdminConfig] | None = None

    def config(self) -> LLMAdminConfig:
        """The administrator's model settings and limits (in hub mode, from the hub
        session: no model before the session was fetched)."""
        if self.settings.hub_mode:
            return self._from_hub()
        if self._local is None:
            from pydantic import SecretStr

            from .llm_config import LLMAdminConfig
            from .settings import under_jupyterhub

            settings = self.settings
            self._local = LLMAdminConfig(
                provider=settings.llm_provider,
                base_url=settings.llm_base_url,
                api_key=SecretStr(settings.llm_api_key),
                model=settings.llm_model,
                title_model=settings.title_model,
                temperature=settings.temperature,
                context_limit=settings.context_limit,
                context_strategy=settings.context_strategy,
                timeout=settings.llm_timeout,
                max_retries=settings.llm_max_retries,
                default_mode=settings.default_mode,
                allowed_modes=tuple(settings.allowed_modes),
                allowed_base_urls=tuple(settings.allowed_base_urls),
                jupyterhub=under_jupyterhub(),
            )
        return self._local

    def _from_hub(self) -> LLMAdminConfig:
        from pydantic import SecretStr

        from .llm_config import LLMAdminConfig

        session = self.hub.client().cached
        if self._hub_admin is not None and self._hub_admin[0] is session:
            return self._hub_admin[1]
        common: dict[str, Any] = {
            "provider": HUB_PROVIDER,
            "temperature": self.settings.temperature,
            "context_limit": self.settings.context_limit,
            "context_strategy": self.settings.context_strategy,
            "timeout": self.settings.llm_timeout,
            "max_retries": self.settings.llm_max_retries,
            "jupyterhub": True,
            "users_may_choose_endpoints": False,
        }
        if session is None:
            return LLMAdminConfig(**common)
        admin = LLMAdminConfig(
            **common,
            base_url=session.model_base_url,
            api_key=SecretStr(self.hub.token),
            model=session.model,
            title_model=session.title_model,
            default_mode=session.policy.default_mode,
            allowed_modes=session.policy.allowed_modes,
            modes_setting="the hub service's c.CopilotHubService.allowed_modes",
            allowed_base_urls=(session.model_base_url,),
        )
        self._hub_admin = (session, admin)
        return admin
