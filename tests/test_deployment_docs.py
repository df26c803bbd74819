"""The Kubernetes values in docs/z2jh-values.yaml: the YAML parses, the keys
docs/deployment.md relies on are there and agree with each other (the service's name and
port everywhere), no class secret is written in it or given to single-user pods, and the
`hub.extraConfig` snippet, run as the chart runs it, hands the Secret's values to the
service, whose settings then load and pass the service's own start-up checks.

No cluster runs here: the chart's step that turns `hub.services` into
`c.JupyterHub.services` is reproduced in `chart_services` (name from the key, the token
from the chart's Secret), as its hub configuration does it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from traitlets.config import Config

from jupyter_gns3_copilot.hub.app import SERVICE_NAME, CopilotHubService
from jupyter_gns3_copilot.hub.budgets import BudgetPolicy

DOCS = Path(__file__).resolve().parents[1] / "docs"
VALUES = DOCS / "z2jh-values.yaml"
SECRETS = ("GNS3_PASSWORD", "OPENAI_API_KEY", "GNS3_COPILOT_HUB_SECRET")


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    return yaml.safe_load(VALUES.read_text())


def chart_services(values: dict[str, Any]) -> list[dict[str, Any]]:
    """`c.JupyterHub.services` as the chart builds it from `hub.services`."""
    services = []
    for key, service in values["hub"]["services"].items():
        service = {**service, "name": key, "api_token": "token-from-the-chart-secret"}
        services.append(service)
    return services


def test_the_service_roles_and_ports_agree(values: dict[str, Any]) -> None:
    hub, singleuser = values["hub"], values["singleuser"]
    service = hub["services"][SERVICE_NAME]
    assert service["command"][-2:] == ["-m", "jupyter_gns3_copilot.hub"]
    assert service["oauth_no_confirm"] is True
    port = urlparse(service["url"]).port
    assert port and [p["port"] for p in hub["service"]["extraPorts"]] == [port]
    assert [p["targetPort"] for p in hub["service"]["extraPorts"]] == [port]
    assert {p["port"] for rule in hub["networkPolicy"]["ingress"] for p in rule["ports"]} == {
        port
    }
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
    to_hub = [rule for rule in egress if any("podSelector" in to for to in rule["to"])]
    assert [p["port"] for rule in to_hub for p in rule["ports"]] == [
        urlparse(values["hub"]["services"][SERVICE_NAME]["url"]).port
    ]


def test_the_extra_config_hands_the_secrets_to_the_service_and_it_would_start(
    values: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secrets = {name: f"secret-{name.lower()}" for name in SECRETS}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    c = Config()
    c.JupyterHub.services = chart_services(values)
    for snippet in values["hub"]["extraConfig"].values():
        exec(compile(snippet, str(VALUES), "exec"), {"c": c})
    (service,) = c.JupyterHub.services
    environment = service["environment"]
    assert {name: environment[name] for name in SECRETS} == secrets

    # The service, started with exactly that environment, takes its settings from it.
    for name in list(os.environ):
        if name.startswith(("GNS3_", "OPENAI_")):
            monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    app = CopilotHubService()
    app.initialize([])  # a setting that cannot work exits here
    assert (app.gns3_url, app.ip, app.llm_model) == (
        environment["GNS3_URL"],
        "0.0.0.0",
        environment["GNS3_COPILOT_MODEL"],
    )
    assert app.gns3_password == secrets["GNS3_PASSWORD"]
    assert app.llm_api_key == secrets["OPENAI_API_KEY"]
    assert app.account_secret == secrets["GNS3_COPILOT_HUB_SECRET"]
    policy = BudgetPolicy.model_validate(app.budgets)
    assert (policy.group_daily_tokens["students"], policy.max_concurrent_calls) == (50_000, 4)


def test_the_deployment_docs_point_at_the_values_file() -> None:
    deployment = (DOCS / "deployment.md").read_text()
    assert "z2jh-values.yaml" in deployment
    readme = (DOCS.parent / "README.md").read_text()
    assert "docs/deployment.md" in readme
