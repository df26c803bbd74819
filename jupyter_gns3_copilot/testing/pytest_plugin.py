"""pytest fixtures for tests against a real local GNS3 lab.

Fixtures (all synchronous, so plain ``async def`` tests can use them too):

- ``gns3_lab`` (session): a ``LabServer`` started once per test run in a temporary
  instance directory and stopped, with every process it started, at the end. To use an
  already running GNS3 server instead, set ``GNS3_COPILOT_TEST_LAB_URL`` (and
  ``GNS3_COPILOT_TEST_LAB_USER`` / ``GNS3_COPILOT_TEST_LAB_PASSWORD``, default
  admin/admin): the fixture then yields an ``ExternalLab`` with the same ``url``,
  ``username``, ``password`` and ``env()``, and starts nothing.
- ``gns3_http`` (session): a synchronous ``httpx.Client`` whose base URL is the lab URL
  and which sends a bearer token (authenticated once); paths start with ``/v3/``.
- ``gns3_computes_lab`` (session): another ``LabServer``, whose controller has two extra
  computes (``TEST_LAB_COMPUTES``) beside its own ``local``, for the tests of labs on
  several computes; started only when such a test runs. It is a lab of its own because
  GNS3 3.0.6 restores a snapshot by dealing the nodes out over every compute, which
  would break the other tests' snapshots. With ``GNS3_COPILOT_TEST_LAB_URL`` set, that
  server is used (the tests are skipped when it has fewer than two extra computes).
- ``gns3_computes`` (session): those two computes as ``LabCompute`` (id and name).
- ``gns3_project`` (function): a new, opened project with a unique name, as a
  ``GNS3Project``; closed (its nodes stop) and deleted after the test, even if the test
  deleted it already.

Heavy imports (httpx, the lab) happen inside the fixtures: merely having this plugin
installed costs nothing to test runs that do not use it.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import httpx

    from jupyter_gns3_copilot.labkit import LabServer

LAB_URL_ENV = "GNS3_COPILOT_TEST_LAB_URL"
LAB_USER_ENV = "GNS3_COPILOT_TEST_LAB_USER"
LAB_PASSWORD_ENV = "GNS3_COPILOT_TEST_LAB_PASSWORD"
LAB_START_TIMEOUT = 180.0
TEST_LAB_COMPUTES = 2
HTTP_TIMEOUT = 60.0


@dataclass(frozen=True)
class ExternalLab:
    """A GNS3 server this plugin did not start (from ``GNS3_COPILOT_TEST_LAB_*``)."""

    url: str
    username: str
    password: str

    def env(self) -> dict[str, str]:
        return {"GNS3_URL": self.url, "GNS3_USER": self.username, "GNS3_PASSWORD": self.password}


@dataclass(frozen=True)
class LabCompute:
    """A compute of the test lab other than the controller's own ``local``."""

    compute_id: str
    name: str


@dataclass(frozen=True)
class GNS3Project:
    """A project created for one test, with what a client needs to reach it."""

    project_id: str
    name: str
    url: str
    username: str
    password: str
    token: str


def external_lab() -> ExternalLab | None:
    """The running GNS3 server named by ``GNS3_COPILOT_TEST_LAB_*``, or None when unset."""
    url = os.environ.get(LAB_URL_ENV)
    if not url:
        return None
    return ExternalLab(
        url=url.rstrip("/"),
        username=os.environ.get(LAB_USER_ENV, "admin"),
        password=os.environ.get(LAB_PASSWORD_ENV, "admin"),
    )


def _expect(response: httpx.Response, what: str, accepted: tuple[int, ...]) -> None:
    if response.status_code not in accepted:
        raise RuntimeError(
            f"GNS3 lab: {what} failed: HTTP {response.status_code} {response.text[:500]}"
        )


def _session_lab(
    tmp_path_factory: pytest.TempPathFactory, name: str, computes: int = 0
) -> Iterator[LabServer | ExternalLab]:
    """The external lab when one is named, else a new local one (with ``computes`` extra
    computes) in a temporary directory ``name``, stopped afterwards."""
    external = external_lab()
    if external is not None:
        yield external
        return
    from jupyter_gns3_copilot.labkit import LabServer

    lab = LabServer(instance_dir=tmp_path_factory.mktemp(name), computes=computes)
    lab.start(timeout=LAB_START_TIMEOUT)
    try:
        yield lab
    finally:
        lab.stop()


@contextmanager
def _admin_http(lab: LabServer | ExternalLab) -> Iterator[httpx.Client]:
    """A sync httpx client for ``lab``, logged in as its administrator."""
    import httpx

    with httpx.Client(base_url=lab.url, timeout=HTTP_TIMEOUT, trust_env=False) as client:
        response = client.post(
            "/v3/access/users/authenticate",
            json={"username": lab.username, "password": lab.password},
        )
        _expect(response, f"login as {lab.username!r} at {lab.url}", (200,))
        client.headers["Authorization"] = f"Bearer {response.json()['access_token']}"
        yield client


@pytest.fixture(scope="session")
def gns3_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer | ExternalLab]:
    """One GNS3 lab for the whole test run (see the module docstring)."""
    yield from _session_lab(tmp_path_factory, "gns3-lab")


@pytest.fixture(scope="session")
def gns3_http(gns3_lab: LabServer | ExternalLab) -> Iterator[httpx.Client]:
    """A sync httpx client for the lab, authenticated once per test run."""
    with _admin_http(gns3_lab) as client:
        yield client


@pytest.fixture(scope="session")
def gns3_computes_lab(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LabServer | ExternalLab]:
    """A GNS3 lab with two extra computes (see the module docstring)."""
    yield from _session_lab(tmp_path_factory, "gns3-computes-lab", TEST_LAB_COMPUTES)


@pytest.fixture(scope="session")
def gns3_computes(gns3_computes_lab: LabServer | ExternalLab) -> list[LabCompute]:
    """The extra computes of ``gns3_computes_lab`` (see the module docstring)."""
    if isinstance(gns3_computes_lab, ExternalLab):
        with _admin_http(gns3_computes_lab) as client:
            answer = client.get("/v3/computes")
        _expect(answer, "listing the computes", (200,))
        computes = [
            LabCompute(compute_id=str(entry["compute_id"]), name=str(entry["name"]))
            for entry in answer.json()
        ]
    else:
        computes = [LabCompute(c.compute_id, c.name) for c in gns3_computes_lab.computes]
    if len(computes) < TEST_LAB_COMPUTES:
        pytest.skip(f"the GNS3 server at {gns3_computes_lab.url} has fewer than two extra computes")
    return computes[:TEST_LAB_COMPUTES]


@pytest.fixture
def gns3_project(
    gns3_lab: LabServer | ExternalLab, gns3_http: httpx.Client, request: pytest.FixtureRequest
) -> Iterator[GNS3Project]:
    """A fresh project for this test; closed and deleted afterwards."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name)[:40].strip("-")
    name = f"pytest-{slug}-{uuid.uuid4().hex[:8]}"
    response = gns3_http.post("/v3/projects", json={"name": name})
    _expect(response, f"creating project {name!r}", (200, 201))
    project = GNS3Project(
        project_id=response.json()["project_id"],
        name=name,
        url=gns3_lab.url,
        username=gns3_lab.username,
        password=gns3_lab.password,
        token=gns3_http.headers["Authorization"].removeprefix("Bearer "),
    )
    try:
        yield project
    finally:
        path = f"/v3/projects/{project.project_id}"
        _expect(gns3_http.post(f"{path}/close"), f"closing {name!r}", (200, 201, 204, 404))
        _expect(gns3_http.delete(path), f"deleting {name!r}", (200, 204, 404))


# -- the scripted model server ---------------------------------------------------------------
# Fixtures for tests that need a chat model: `scripted_llm` (function) is a started
# `ScriptedLLM` with an empty script, fresh for each test (starting one takes about a
# millisecond); `make_scripted_llm` (function) starts more, from replies or a JSON script
# file, and stops them after the test; `scripted_model_settings` (function) is a
# `ModelSettings` pointing at `scripted_llm`, without retries so each scripted error is
# seen once. See `jupyter_gns3_copilot.testing.scripted_llm` for the script format.

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from pathlib import Path

    from jupyter_gns3_copilot.agent.llm_access import ModelSettings
    from jupyter_gns3_copilot.testing.scripted_llm import AnyReply, ScriptedLLM

SCRIPTED_MODEL_NAME = "scripted-model"


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A running scripted model server with an empty script; add replies in the test."""
    from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

    with ScriptedLLM(models=[SCRIPTED_MODEL_NAME]) as server:
        yield server


@pytest.fixture
def make_scripted_llm() -> Iterator[Callable[..., ScriptedLLM]]:
    """`make_scripted_llm(script=None, *, api_key=None, port=0)`: start another server.

    `script` is a list of replies or the path of a JSON script file. Every server started
    this way is stopped after the test.
    """
    from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM

    started: list[ScriptedLLM] = []

    def make(
        script: Iterable[AnyReply] | str | Path | None = None,
        *,
        api_key: str | None = None,
        port: int = 0,
    ) -> ScriptedLLM:
        server = ScriptedLLM(script, api_key=api_key, port=port, models=[SCRIPTED_MODEL_NAME])
        started.append(server.start())
        return server

    try:
        yield make
    finally:
        for server in started:
            server.stop()


@pytest.fixture
def scripted_model_settings(scripted_llm: ScriptedLLM) -> ModelSettings:
    """Model settings for `scripted_llm` (model "scripted-model", no retries)."""
    from jupyter_gns3_copilot.agent.llm_access import ModelSettings
    from jupyter_gns3_copilot.testing.scripted_llm import DEFAULT_TEST_API_KEY

    return ModelSettings(
        base_url=scripted_llm.base_url,
        api_key=DEFAULT_TEST_API_KEY,
        model=SCRIPTED_MODEL_NAME,
        max_retries=0,
        timeout=30.0,
    )
