"""Per-user model settings (`server/llm_config.py`, `server/llm_store.py`): the merge over
the admin's defaults, the admin's limits, and the encrypted store."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from jupyter_gns3_copilot.server.llm_config import (
    LLMAdminConfig,
    LLMConfigError,
    LLMConfigUpdate,
    ModelNotConfigured,
    UserLLMSettings,
    effective_config,
)
from jupyter_gns3_copilot.server.llm_store import LLMConfigStore

ADMIN_KEY = "sk-admin-0123456789abcdef"
USER_KEY = "sk-user-fedcba9876543210"


def admin(**changes: object) -> LLMAdminConfig:
    values: dict[str, object] = {
        "base_url": "http://models.school.example/v1/",
        "api_key": SecretStr(ADMIN_KEY),
        "model": "gpt-4o-mini",
    }
    return LLMAdminConfig(**{**values, **changes})


def test_admin_defaults_apply_when_the_user_chose_nothing() -> None:
    config = effective_config(admin())
    assert config.configured
    assert config.base_url == "http://models.school.example/v1"
    assert config.api_key_source == "admin"
    assert config.copilot_mode == "teaching_assistant"
    settings = config.model_settings()
    assert settings.model == "gpt-4o-mini" and settings.context_limit == 128
    assert settings.api_key.get_secret_value() == ADMIN_KEY


def test_user_choices_override_the_admin_defaults() -> None:
    user = UserLLMSettings(
        model="gpt-4.1", temperature=0.2, copilot_mode="lab_automation_assistant"
    )
    config = effective_config(admin(), user)
    assert (config.model, config.temperature, config.copilot_mode) == (
        "gpt-4.1",
        0.2,
        "lab_automation_assistant",
    )
    assert config.sources["model"] == "user" and config.sources["base_url"] == "admin"
    # Still the admin's endpoint: the admin's key goes with it
    assert config.api_key_source == "admin"


def test_the_admin_key_never_goes_to_an_endpoint_the_user_chose() -> None:
    # Given a user pointing the copilot at their own endpoint without a key
    config = effective_config(admin(), UserLLMSettings(base_url="http://127.0.0.1:11434/v1"))
    # Then no key is used there (local servers need none)
    assert config.api_key_source is None
    assert config.model_settings().api_key.get_secret_value() == ""
    # And with their own key, theirs is used
    mine = UserLLMSettings(base_url="http://127.0.0.1:11434/v1", api_key=SecretStr(USER_KEY))
    assert effective_config(admin(), mine).model_settings().api_key.get_secret_value() == USER_KEY


def test_the_admin_title_model_is_only_used_on_the_admin_endpoint() -> None:
    school = admin(title_model="gpt-4o-mini-title")
    assert effective_config(school).title_model_settings().model == "gpt-4o-mini-title"
    own = effective_config(school, UserLLMSettings(base_url="http://127.0.0.1:1/v1", model="m"))
    assert own.title_model == "m" and own.title_model_settings() is None


def test_missing_settings_are_named() -> None:
    config = effective_config(LLMAdminConfig())
    assert [m.setting for m in config.missing] == ["llm_model", "llm_api_key"]
    with pytest.raises(ModelNotConfigured) as info:
        config.model_settings()
    assert info.value.setting == "llm_model"
    assert "GNS3_COPILOT_MODEL" in str(info.value)
    # A local endpoint needs a model but no key
    local = effective_config(LLMAdminConfig(base_url="http://127.0.0.1:11434/v1", model="llama3"))
    assert local.configured


def test_updates_follow_left_out_null_and_empty_key_rules() -> None:
    start = UserLLMSettings(model="a", temperature=0.5, api_key=SecretStr(USER_KEY))
    changed = LLMConfigUpdate.model_validate({"model": "b"}).apply(start, admin())
    assert (changed.model, changed.temperature, changed.api_key) == ("b", 0.5, start.api_key)
    reset = LLMConfigUpdate.model_validate({"temperature": None, "api_key": ""}).apply(
        changed, admin()
    )
    assert reset.temperature is None and reset.api_key is None and reset.model == "b"


def test_updates_stay_within_the_admin_limits() -> None:
    strict = admin(
        allowed_modes=("teaching_assistant",),
        allowed_base_urls=("http://models.school.example/v1",),
    )
    with pytest.raises(LLMConfigError) as mode:
        LLMConfigUpdate(copilot_mode="lab_automation_assistant").apply(UserLLMSettings(), strict)
    assert mode.value.field == "copilot_mode"
    with pytest.raises(LLMConfigError) as url:
        LLMConfigUpdate(base_url="http://other.example/v1").apply(UserLLMSettings(), strict)
    assert url.value.field == "base_url"
    # The admin's endpoint with a trailing slash is the same endpoint
    same = LLMConfigUpdate(base_url="http://models.school.example/v1/").apply(
        UserLLMSettings(), strict
    )
    assert same.base_url == "http://models.school.example/v1"


def test_values_the_admin_no_longer_allows_are_ignored_and_reported() -> None:
    user = UserLLMSettings(copilot_mode="lab_automation_assistant", base_url="http://x.example/v1")
    strict = admin(allowed_modes=("teaching_assistant",), allowed_base_urls=("http://y.example",))
    config = effective_config(strict, user)
    assert config.copilot_mode == "teaching_assistant"
    assert config.base_url == "http://models.school.example/v1"
    assert set(config.ignored) == {"copilot_mode", "base_url"}


def test_admin_config_is_validated() -> None:
    with pytest.raises(ValidationError):
        LLMAdminConfig(allowed_modes=())
    with pytest.raises(ValidationError):
        LLMAdminConfig(default_mode="root")
    # A default mode outside the allowed ones falls back to the first allowed one
    assert (
        LLMAdminConfig(allowed_modes=("lab_automation_assistant",)).effective_default_mode
        == "lab_automation_assistant"
    )


def test_the_view_and_status_never_hold_the_key() -> None:
    config = effective_config(admin(), UserLLMSettings(api_key=SecretStr(USER_KEY)))
    for text in (config.view().model_dump_json(), config.status().model_dump_json(), repr(config)):
        assert USER_KEY not in text and ADMIN_KEY not in text


def test_the_store_encrypts_each_user_and_keeps_the_key_file_private(tmp_path: Path) -> None:
    store = LLMConfigStore(tmp_path)
    settings = UserLLMSettings(model="gpt-4o", api_key=SecretStr(USER_KEY))
    store.put("alice", settings)
    store.put("bob", UserLLMSettings(model="llama3"))
    # Key file and user files readable by the server's user only; nothing in clear
    assert stat.S_IMODE(os.stat(store.key_file).st_mode) == 0o600
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            content = path.read_bytes()
            assert USER_KEY.encode() not in content
            assert b"gpt-4o" not in content and b"alice" not in content
    # A new store (a restarted server) reads them back
    again = LLMConfigStore(tmp_path)
    assert again.get("alice").api_key.get_secret_value() == USER_KEY
    assert again.get("bob").model == "llama3"
    assert again.get("carol") == UserLLMSettings()
    # Settings emptied: the file goes
    again.delete("alice")
    assert not again.path_for("alice").exists()
    assert LLMConfigStore(tmp_path).get("alice") == UserLLMSettings()


def test_the_store_survives_a_replaced_key_file(tmp_path: Path, caplog) -> None:
    LLMConfigStore(tmp_path).put("alice", UserLLMSettings(model="gpt-4o"))
    (tmp_path / "llm-config.key").unlink()
    store = LLMConfigStore(tmp_path)
    store.put("bob", UserLLMSettings(model="x"))  # creates a new key
    assert store.get("alice") == UserLLMSettings()
    assert "cannot be decrypted" in caplog.text


def test_a_file_copied_to_another_user_is_not_theirs(tmp_path: Path) -> None:
    store = LLMConfigStore(tmp_path)
    store.put("alice", UserLLMSettings(api_key=SecretStr(USER_KEY)))
    store.path_for("mallory").parent.mkdir(exist_ok=True)
    store.path_for("mallory").write_bytes(store.path_for("alice").read_bytes())
    assert LLMConfigStore(tmp_path).get("mallory") == UserLLMSettings()


# -- endpoints a user may choose ----------------------------------------------


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("http://169.254.169.254/latest", "cloud metadata address"),
        ("http://2852039166/v1", "cloud metadata address (169.254.169.254)"),
        ("http://0xa9fea9fe/v1", "cloud metadata address (169.254.169.254)"),
        ("http://[::ffff:169.254.169.254]/v1", "cloud metadata address (169.254.169.254)"),
        ("http://[fd00:ec2::254]/v1", "cloud metadata address"),
        ("http://169.254.10.20:8000/v1", "link-local address"),
        ("http://[fe80::1%25eth0]:8000/v1", "link-local address"),
        ("http://metadata.google.internal./computeMetadata/v1", "cloud metadata service"),
        ("http://METADATA/v1", "cloud metadata service"),
        ("http://100.100.100.200/v1", "cloud metadata address"),
    ],
)
def test_link_local_and_metadata_endpoints_are_refused_naming_the_rule(url: str, rule: str) -> None:
    with pytest.raises(LLMConfigError) as info:
        admin().check_base_url(url)
    assert info.value.field == "base_url"
    assert rule in info.value.rule
    assert "c.GNS3Copilot.allowed_base_urls" in (info.value.admin_note or "")
    assert "GNS3Copilot" not in str(info.value)


@pytest.mark.parametrize(
    "url",
    ["http://127.0.0.1:11434/v1", "http://10.1.2.3:8000/v1", "https://llm.example/v1"],
)
def test_other_endpoints_stay_open_when_the_admin_lists_none(url: str) -> None:
    assert admin().check_base_url(url) == url


def test_the_admin_may_allow_a_link_local_endpoint_by_listing_it() -> None:
    listed = admin(allowed_base_urls=("http://169.254.10.20:8000/v1",))
    assert listed.check_base_url("http://169.254.10.20:8000/v1/") == "http://169.254.10.20:8000/v1"
    # And the admin's own endpoint is the admin's choice, wherever it is
    own = admin(base_url="http://169.254.10.20:8000/v1")
    assert own.check_base_url("http://169.254.10.20:8000/v1") == "http://169.254.10.20:8000/v1"


def test_under_jupyterhub_users_keep_the_admins_endpoint_unless_others_are_listed() -> None:
    hub = admin(jupyterhub=True)
    assert hub.user_base_urls == ("http://models.school.example/v1",)
    assert hub.check_base_url("http://models.school.example/v1") == (
        "http://models.school.example/v1"
    )
    with pytest.raises(LLMConfigError) as info:
        hub.check_base_url("https://llm.example/v1")
    assert "under JupyterHub only the administrator's endpoint" in (info.value.admin_note or "")
    assert "http://models.school.example/v1" in info.value.rule
    listed = admin(jupyterhub=True, allowed_base_urls=("https://llm.example/v1",))
    assert listed.check_base_url("https://llm.example/v1") == "https://llm.example/v1"
    # A user's stored endpoint the rules no longer allow is ignored, not used
    config = effective_config(hub, UserLLMSettings(base_url="https://llm.example/v1"))
    assert config.base_url == "http://models.school.example/v1"
    assert config.ignored == ("base_url",)
    assert config.view().allowed_base_urls == ["http://models.school.example/v1"]


@pytest.mark.parametrize("data_dir", ["", "relative/dir"])
def test_the_store_refuses_a_data_dir_that_is_not_absolute(data_dir: str) -> None:
    with pytest.raises(ValueError, match="absolute"):
        LLMConfigStore(data_dir)
