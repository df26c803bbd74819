"""The deployment docs' own text, without a cluster or a hub (the recipe runs on a real hub
in tests/test_hub_service.py).

The JupyterHub recipe (docs/instructor/jupyterhub.md): its `jupyterhub_config.py`, read
from the page and run as JupyterHub runs it (a traitlets `Config` as `c`), refuses to
start naming a missing class setting, passes `GNS3_COPILOT_HUB_SECRET` to the service only
when it is set, names its users in the allow rule, gives students' servers nothing but
the service's URL, and gives the service settings with which it starts.

The Kubernetes values in docs/z2jh-values.yaml: the YAML parses, the keys
docs/instructor/zero-to-jupyterhub.md relies on are there and agree with each other (the
service's name and port everywhere), no class secret is written in it or given to
single-user pods, and the `hub.extraConfig` snippet, run as the chart runs it, hands the
Secret's values to the service (the account secret only when the Secret has it), whose
settings then load and pass the service's own start-up checks.

No cluster runs here: the chart's step that turns `hub.services` into
`c.JupyterHub.services` is reproduced in `chart_services` (name from the key, the token
from the chart's Secret), as its hub configuration does it.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from traitlets.config import Config

from jupyter_gns3_copilot.hub.app import SERVICE_NAME, CopilotHubService
from jupyter_gns3_copilot.hub.budgets import BudgetPolicy
from jupyter_gns3_copilot.testing.hub_recipe import env_names, recipe_block

DOCS = Path(__file__).resolve().parents[1] / "docs"
VALUES = DOCS / "z2jh-values.yaml"
RECIPE = DOCS / "instructor" / "jupyterhub.md"
Z2JH = DOCS / "instructor" / "zero-to-jupyterhub.md"
SECRETS = ("GNS3_PASSWORD", "OPENAI_API_KEY", "GNS3_COPILOT_HUB_SECRET")
ACCOUNT_SECRET = "GNS3_COPILOT_HUB_SECRET"


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return yaml.safe_load(VALUES.read_text())


def chart_services(values: dict[str, Any]) -> list[dict[str, Any]]:
    """`c.JupyterHub.services` as the chart builds it from `hub.services`."""
    services = []
    for key, service in values["hub"]["services"].items():
        service = {**copy.deepcopy(service), "name": key, "api_token": "token-from-the-chart"}
        services.append(service)
    return services


def service_started_with(
    environment: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    directory: Path,
    argv: list[str] | None = None,
) -> CopilotHubService:
    """The service initialized with exactly `environment` (as the hub gives it) and the
    command line arguments `argv` in `directory`; a setting that cannot work exits."""
    for name in list(os.environ):
        if name.startswith(("GNS3_", "OPENAI_")):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(directory)
    app = CopilotHubService()
    app.initialize(argv or [])
    return app


def test_the_service_roles_and_ports_agree(values: dict[str, Any]) -> None:
    hub, singleuser = values["hub"], values["singleuser"]
    service = hub["services"][SERVICE_NAME]
    assert service["command"][1:3] == ["-m", "jupyter_gns3_copilot.hub"]
    assert service["oauth_no_confirm"] is True
    port = urlparse(service["url"]).port
    assert port and [p["port"] for p in hub["service"]["extraPorts"]] == [port]
    assert [p["targetPort"] for p in hub["service"]["extraPorts"]] == [port]
    assert {p["port"] for rule in hub["networkPolicy"]["ingress"] for p in rule["ports"]} == {port}
    scope = f"access:services!service={SERVICE_NAME}"
    for role in ("user", "server"):
        assert scope in hub["loadRoles"][role]["scopes"], role
    service_role = hub["loadRoles"]["gns3-copilot-service"]
    assert (service_role["services"], service_role["scopes"]) == ([SERVICE_NAME], ["read:groups"])

    # Students' servers: the one setting, pointing at the service's port and prefix.
    hub_url = urlparse(singleuser["extraEnv"]["GNS3_COPILOT_HUB_URL"])
    assert (hub_url.hostname, hub_url.port) == (urlparse(service["url"]).hostname, port)
    assert hub_url.path == f"/services/{SERVICE_NAME}/"
    assert singleuser["image"]["name"] and singleuser["image"]["tag"]


def test_no_secret_is_written_down_or_given_to_students(values: dict[str, Any]) -> None:
    hub, singleuser = values["hub"], values["singleuser"]
    assert set(hub["extraEnv"]) == set(SECRETS)
    for name, entry in hub["extraEnv"].items():
        reference = entry["valueFrom"]["secretKeyRef"]
        assert reference["name"] and reference["key"], name
        assert reference.get("optional", False) is (name == ACCOUNT_SECRET), name
    assert not set(hub["services"][SERVICE_NAME]["environment"]) & set(SECRETS)
    assert set(singleuser["extraEnv"]) == {"GNS3_COPILOT_HUB_URL"}


def test_the_network_policy_opens_gns3_to_students_and_nothing_else_of_its_host(
    values: dict[str, Any],
) -> None:
    gns3 = urlparse(values["hub"]["services"][SERVICE_NAME]["environment"]["GNS3_URL"])
    egress = values["singleuser"]["networkPolicy"]["egress"]
    to_gns3 = [
        port
        for rule in egress
        if {"ipBlock": {"cidr": f"{gns3.hostname}/32"}} in rule["to"]
        for port in rule["ports"]
    ]
    # Only the API: consoles go through its authenticated websocket in hub mode.
    assert {(p["port"], p.get("endPort")) for p in to_gns3} == {(gns3.port, None)}
    # Only the controller: devices on other GNS3 computes are reached through it.
    addresses = [to["ipBlock"] for rule in egress for to in rule["to"] if "ipBlock" in to]
    assert addresses == [{"cidr": f"{gns3.hostname}/32"}]
    to_hub = [rule for rule in egress if any("podSelector" in to for to in rule["to"])]
    assert [p["port"] for rule in to_hub for p in rule["ports"]] == [
        urlparse(values["hub"]["services"][SERVICE_NAME]["url"]).port
    ]


@pytest.mark.parametrize("with_account_secret", [True, False])
def test_the_extra_config_hands_the_secrets_to_the_service_and_it_would_start(
    values: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    with_account_secret: bool,
) -> None:
    secrets = {name: f"secret-{name.lower()}" for name in SECRETS}
    if not with_account_secret:  # the Secret has no account-secret (it is optional)
        del secrets[ACCOUNT_SECRET]
        monkeypatch.delenv(ACCOUNT_SECRET, raising=False)
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    c = Config()
    c.JupyterHub.services = chart_services(values)
    for snippet in values["hub"]["extraConfig"].values():
        exec(compile(snippet, str(VALUES), "exec"), {"c": c})
    (service,) = c.JupyterHub.services
    environment = service["environment"]
    assert {name: environment[name] for name in SECRETS if name in environment} == secrets

    # The service, started with exactly that environment and its command's arguments,
    # takes its settings from them.
    app = service_started_with(environment, monkeypatch, tmp_path, service["command"][3:])
    assert (app.gns3_url, app.ip, app.llm_model) == (
        environment["GNS3_URL"],
        "0.0.0.0",
        environment["GNS3_COPILOT_MODEL"],
    )
    assert app.gns3_password == secrets["GNS3_PASSWORD"]
    assert app.llm_api_key == secrets["OPENAI_API_KEY"]
    assert app.account_secret == secrets.get(ACCOUNT_SECRET, "")  # "": made at start
    assert app.placement == "least_loaded"
    policy = BudgetPolicy.model_validate(app.budgets)
    assert (policy.group_daily_tokens["students"], policy.max_concurrent_calls) == (50_000, 4)


def test_the_class_is_named_and_allowed_in_the_values(values: dict[str, Any]) -> None:
    config = values["hub"]["config"]
    groups = config["JupyterHub"]["load_groups"]
    members = {user for group in groups.values() for user in group["users"]}
    assert groups["students"]["users"] and groups["instructors"]["users"]
    assert all(isinstance(user, str) and user for user in members)
    assert members <= set(config["Authenticator"]["allowed_users"])


def test_the_docs_point_at_each_other_and_the_values_file() -> None:
    z2jh = Z2JH.read_text()
    assert "](../z2jh-values.yaml)" in z2jh and "](jupyterhub.md)" in z2jh
    assert "](zero-to-jupyterhub.md)" in RECIPE.read_text()
    assert not (DOCS / "deployment.md").exists()  # merged into the instructor pages


# -- the JupyterHub recipe's configuration, as the hub loads it ------------------------------

RECIPE_ENV = {
    "GNS3_URL": "http://10.20.0.5:3080",
    "GNS3_USER": "admin",
    "GNS3_PASSWORD": "the-gns3-admin-password",
    "OPENAI_BASE_URL": "https://llm.school.example/v1",
    "OPENAI_API_KEY": "sk-class-key",
    "GNS3_COPILOT_MODEL": "a-model",
    "HUB_SHARED_PASSWORD": "a-class-password",
}


def recipe_config(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Config:
    """The page's `jupyterhub_config.py` run with exactly `env` as the class's settings."""
    for name in [*RECIPE_ENV, ACCOUNT_SECRET]:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    c = Config()
    text = recipe_block(RECIPE.read_text(), "recipe-jupyterhub-config")
    exec(compile(text, str(RECIPE), "exec"), {"c": c})
    return c


def test_the_recipe_settings_file_names_what_the_configuration_reads() -> None:
    assert env_names(recipe_block(RECIPE.read_text(), "recipe-env")) == list(RECIPE_ENV)


@pytest.mark.parametrize("missing", ["GNS3_PASSWORD", "OPENAI_API_KEY", "GNS3_COPILOT_MODEL"])
def test_the_recipe_refuses_to_start_naming_a_missing_class_setting(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    env = {name: value for name, value in RECIPE_ENV.items() if name != missing}
    with pytest.raises(SystemExit) as stopped:
        recipe_config(monkeypatch, env)
    assert str(stopped.value) == (
        f"jupyterhub_config.py: {missing} not set: load /srv/jupyterhub/gns3-copilot.env first"
    )


@pytest.mark.parametrize("with_account_secret", [True, False])
def test_the_recipe_gives_the_service_its_settings_and_students_only_its_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, with_account_secret: bool
) -> None:
    env = dict(RECIPE_ENV)
    if with_account_secret:
        env[ACCOUNT_SECRET] = "a-stable-account-secret"
    c = recipe_config(monkeypatch, env)

    # Who may log in: the class, by name, in real groups (JupyterHub 5+ needs the rule).
    groups = c.JupyterHub.load_groups
    members = {user for group in groups.values() for user in group["users"]}
    assert groups["students"]["users"] and groups["instructors"]["users"]
    assert all(isinstance(user, str) and user for user in members)
    assert members == c.Authenticator.allowed_users
    assert c.JupyterHub.authenticator_class == "shared-password"
    assert c.SharedPasswordAuthenticator.user_password == env["HUB_SHARED_PASSWORD"]
    assert c.JupyterHub.spawner_class == "simple"

    (service,) = c.JupyterHub.services
    environment = service["environment"]
    assert environment.get(ACCOUNT_SECRET) == env.get(ACCOUNT_SECRET)  # only when set
    assert "HUB_SHARED_PASSWORD" not in environment
    # Students' servers: the service's URL (its own address), nothing else.
    assert c.Spawner.environment == {
        "GNS3_COPILOT_HUB_URL": f"{service['url']}/services/{SERVICE_NAME}/"
    }
    scope = f"access:services!service={SERVICE_NAME}"
    roles = {role["name"]: role for role in c.JupyterHub.load_roles}
    assert scope in roles["user"]["scopes"] and scope in roles["server"]["scopes"]
    assert roles["gns3-copilot-service"]["services"] == [SERVICE_NAME]

    # The service, started with exactly that environment, takes its settings from it.
    app = service_started_with(environment, monkeypatch, tmp_path)
    assert (app.gns3_url, app.gns3_password, app.llm_api_key, app.llm_model) == (
        env["GNS3_URL"],
        env["GNS3_PASSWORD"],
        env["OPENAI_API_KEY"],
        env["GNS3_COPILOT_MODEL"],
    )
    assert app.account_secret == env.get(ACCOUNT_SECRET, "")
    assert app.data_dir == "/srv/jupyterhub/gns3-copilot"
    policy = BudgetPolicy.model_validate(app.budgets)
    assert policy.group_daily_tokens == {"students": 50_000, "instructors": None}
