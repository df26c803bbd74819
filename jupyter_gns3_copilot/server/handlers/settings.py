"""`copilot/llm-config` (the caller's model settings) and `copilot/reload/skills`."""

from __future__ import annotations

import tornado.web
from jupyter_server.auth.decorator import authorized

from ..errors import ErrorAnswer
from .base import CopilotHandler


class LLMConfigHandler(CopilotHandler):
    """The caller's model settings, over the administrator's defaults and within limits.

    `GET`: `LLMConfigView` (`llm_config.py`): effective provider, base_url, model,
    title_model, temperature, context_limit, context_strategy, copilot_mode; `api_key_set`
    and `api_key_source` (never the key); where each value comes from; what is missing;
    the allowed modes and base URLs.
    `PUT`: `LLMConfigUpdate`: fields left out stay, null resets a field to the
    administrator's value, `api_key` is write-only ("" or null removes it). 400 naming the
    field and rule for bad values and for modes or endpoints the administrator does not
    allow. Answers the new view. Stored encrypted at rest, per user. In hub mode,
    `provider`, `base_url` and `api_key` are refused with 403 (the hub's gateway applies).
    """

    warm_up_stage = "core"

    @tornado.web.authenticated
    @authorized
    async def get(self) -> None:
        from ..llm_config import effective_config

        app = self.copilot
        self.write_json(effective_config(app.llm_admin(), app.llm_store().get(self.user_id)).view())

    @tornado.web.authenticated
    @authorized
    async def put(self) -> None:
        from ..llm_config import ENDPOINT_FIELDS, LLMConfigUpdate, effective_config

        app = self.copilot
        user_id = self.user_id
        update = self.body_as(LLMConfigUpdate)
        chosen = [name for name in ENDPOINT_FIELDS if name in update.model_fields_set]
        if app.hub_mode and chosen:
            raise ErrorAnswer(
                403,
                f"In hub mode the model endpoint and key come from the copilot hub service "
                f"({app.hub_service_url}); {', '.join(chosen)} cannot be set.",
                type="HubMode",
                field=chosen[0],
            )
        store = app.llm_store()
        settings = update.apply(store.get(user_id), app.llm_admin())
        store.put(user_id, settings)
        self.log.info(
            "Copilot: %s changed their model settings (%s)",
            user_id,
            ", ".join(sorted(update.model_fields_set)) or "nothing",
        )
        self.write_json(effective_config(app.llm_admin(), settings).view())


class ReloadSkillsHandler(CopilotHandler):
    """`POST copilot/reload/skills`: re-read the skills directories and the forbidden-command
    list now. `{"status": "ok", "skills": <topics>, "device_types": [...],
    "command_policy": {"file", "rules", "problems"}}`."""

    @tornado.web.authenticated
    @authorized
    async def post(self) -> None:
        lab = self.copilot.lab()
        assert lab.skills is not None and lab.policy is not None
        topics = lab.skills.reload()
        policy = lab.policy.reload()
        self.write_json(
            {
                "status": "ok",
                "skills": topics,
                "device_types": lab.skills.device_types(),
                "command_policy": policy.model_dump(mode="json"),
            }
        )
