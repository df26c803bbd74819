"""The recipe hub as the hub service's tests drive it (tests/test_hub_service.py,
tests/test_hub_grading.py): `ServiceHub` (the running hub, the users' hub tokens, its
URLs), a process's environment and children, and removing a class's projects from GNS3."""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_gns3_copilot.testing.hub_recipe import RecipeHub, wait_for
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

SERVICE = "gns3-copilot"
MODEL = "scripted-model"


def recipe_values(
    gns3_lab: Any, llm: ScriptedLLM, upstream_key: str, password: str
) -> dict[str, str]:
    """The class's settings file for the recipe: the lab kit's GNS3, the scripted model
    server as the upstream (requiring `upstream_key`), the class's shared `password`."""
    return {
        "GNS3_URL": gns3_lab.url,
        "GNS3_USER": gns3_lab.username,
        "GNS3_PASSWORD": gns3_lab.password,
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": upstream_key,
        "GNS3_COPILOT_MODEL": MODEL,
        "HUB_SHARED_PASSWORD": password,
    }


@dataclass
class ServiceHub:
    """The running recipe hub and what the test saw."""

    recipe: RecipeHub
    llm: ScriptedLLM
    secrets: tuple[str, ...]
    tokens: dict[str, str] = field(default_factory=dict)
    """Hub API tokens of the users (as a browser session would be)."""
    responses: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.recipe.url

    @property
    def api(self) -> httpx.Client:
        return self.recipe.api

    @property
    def directory(self) -> Path:
        return self.recipe.directory

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"token {self.tokens[user]}"}

    def server_url(self, user: str, *parts: str) -> str:
        return "/".join([f"{self.url}user/{user}", *parts])

    def service_url(self, *parts: str) -> str:
        """The service as the students' servers reach it (straight, the page's SERVICE_URL)."""
        return "/".join([self.recipe.service_url.rstrip("/"), *parts])

    def dashboard_url(self, *parts: str) -> str:
        """The service through the hub's proxy, as people's browsers reach it."""
        return "/".join([f"{self.url}services/{SERVICE}", *parts])

    def server_pid(self, user: str) -> int:
        return int(self.api.get(f"/users/{user}").json()["servers"][""]["state"]["pid"])

    def server_token(self, user: str) -> str:
        """The JUPYTERHUB_API_TOKEN of `user`'s server: what a student finds in it."""
        return environ(self.server_pid(user))["JUPYTERHUB_API_TOKEN"]

    def seen(self, response: httpx.Response) -> httpx.Response:
        self.responses.append(response.text)
        return response

    def start_server(self, user: str) -> None:
        """Start `user`'s server and make them a hub token (as "Start My Server" would)."""
        assert self.api.post(f"/users/{user}/server").status_code in (201, 202)
        wait_for(
            lambda: self.api.get(f"/users/{user}").json()["servers"].get("", {}).get("ready"),
            f"{user}'s server starting",
        )
        reply = self.api.post(f"/users/{user}/tokens", json={"note": "hub service tests"})
        reply.raise_for_status()
        self.tokens[user] = reply.json()["token"]


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {key.decode(): value.decode(errors="replace") for key, value in pairs}


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def remove_class_projects(gns3_http: httpx.Client) -> None:
    """Delete the projects in the class's pools (students', instructor's, templates')."""
    pools = gns3_http.get("/v3/pools").json()
    for pool in pools:
        if pool["name"].startswith("hub-"):
            rows = gns3_http.get(f"/v3/pools/{pool['resource_pool_id']}/resources").json()
            for row in rows:
                with contextlib.suppress(httpx.HTTPError):
                    gns3_http.post(f"/v3/projects/{row['resource_id']}/close")
                    gns3_http.delete(f"/v3/projects/{row['resource_id']}")


def proxy_command() -> str:
    found = os.environ.get("CONFIGURABLE_HTTP_PROXY") or shutil.which("configurable-http-proxy")
    if not found or not os.access(found, os.X_OK):
        pytest.skip(
            "configurable-http-proxy is not installed (make test installs it with npm and "
            "sets CONFIGURABLE_HTTP_PROXY)"
        )
    return found
