"""The instructor guide's JupyterHub recipe, run as written (tests and benchmarks).

`docs/instructor/jupyterhub.md` marks its blocks with MyST targets: `(recipe-env)=` (the
class's settings file), `(recipe-jupyterhub-config)=` (the hub's configuration),
`(recipe-start)=` (the commands that start the hub) and `(recipe-restart)=` (the service's
restart in place). `recipe_block` reads them from the page; `RecipeHub` runs them:

    with RecipeHub(page, directory, values, proxy=chp) as hub:
        hub.api.get("/users")             # the hub's REST API, as an admin service
        hub.run_block("recipe-restart")   # a command of the page, run as written

What is changed, and why (each change must find its text in the page, or it fails):

- `PLACES`: the page's fixed places (`/srv/jupyterhub`, `/opt/jupyterhub/bin/`, ports
  8000 and 10101) become a temporary directory, this environment's `bin/` and free ports:
  tests run side by side on one machine;
- `hub_additions`, appended to the configuration: the hub's own API and the proxy's API
  on free ports (their defaults, 8081 and 8001, are fixed too), the proxy's path, the
  hub's pid file, a longer server start timeout (a loaded machine), and an admin API
  service for the test (a token to start servers and make users' tokens as a person
  would by clicking).

The class's values (GNS3, model, shared password) are the caller's; the page's settings
file only says which variables there are, and they must be exactly the caller's.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx

from ..labkit.ports import free_tcp_port

SRV = "/srv/jupyterhub"
OPT_BIN = "/opt/jupyterhub/bin/"
HUB_ORIGIN = "http://127.0.0.1:8000"
SERVICE_ORIGIN = "http://127.0.0.1:10101"
SERVICE_NAME = "gns3-copilot"
START_TIMEOUT = 90.0
ADMIN_SERVICE = "recipe-tests"


def recipe_block(page: str, label: str) -> str:
    """The fenced block right after the MyST target `(label)=` in `page`."""
    marker = f"({label})="
    if page.count(marker) != 1:
        raise ValueError(f"the page has {page.count(marker)} targets {marker}, not one")
    after = page.split(marker, 1)[1]
    found = re.match(r"\s*```[^\n]*\n(.*?)\n```", after, re.DOTALL)
    if found is None:
        raise ValueError(f"no fenced block right after {marker}")
    return found.group(1) + "\n"


def env_names(block: str) -> list[str]:
    """The variable names of a `NAME=value` settings block."""
    return [line.split("=", 1)[0] for line in block.splitlines() if "=" in line]


def wait_for(check: Callable[[], Any], what: str, timeout: float = START_TIMEOUT) -> Any:
    """`check()`'s first true result (HTTP errors count as not yet); TimeoutError after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            result = check()
            if result:
                return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.25)


class RecipeHub:
    """JupyterHub started by the page's own configuration and commands (see the module
    docstring). A context manager: stopped, with everything it started, on exit."""

    def __init__(
        self,
        page: Path,
        directory: Path,
        values: Mapping[str, str],
        *,
        proxy: str,
        venv_bin: Path | None = None,
    ) -> None:
        self.text = page.read_text()
        self.directory = directory
        self.values = dict(values)
        self.proxy = proxy
        self.venv_bin = venv_bin or Path(sys.executable).parent
        self.port = free_tcp_port()
        self.service_port = free_tcp_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.service_url = f"http://127.0.0.1:{self.service_port}/services/{SERVICE_NAME}/"
        self.admin_token = uuid.uuid4().hex
        self.api = httpx.Client(
            base_url=f"{self.url}hub/api",
            headers={"Authorization": f"token {self.admin_token}"},
            timeout=30,
            trust_env=False,
        )
        self._process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    # -- the page, made to run here ------------------------------------------------------

    @property
    def places(self) -> dict[str, str]:
        """The page's fixed places and what they become here."""
        return {
            SRV: str(self.directory),
            OPT_BIN: f"{self.venv_bin}/",
            HUB_ORIGIN: f"http://127.0.0.1:{self.port}",
            SERVICE_ORIGIN: f"http://127.0.0.1:{self.service_port}",
        }

    def block(self, label: str, *, required: tuple[str, ...] = ()) -> str:
        """The page's block `label` with `places` replaced; each of `required` (page
        text) must be in it."""
        text = recipe_block(self.text, label)
        for needed in required:
            if needed not in text:
                raise ValueError(f"the page's block {label} no longer says {needed!r}")
        for place, here in self.places.items():
            text = text.replace(place, here)
        return text

    def hub_additions(self) -> str:
        settings = {
            "JupyterHub.hub_port": free_tcp_port(),
            "ConfigurableHTTPProxy.api_url": f"http://127.0.0.1:{free_tcp_port()}",
            "ConfigurableHTTPProxy.command": [self.proxy],
            "JupyterHub.pid_file": str(self.directory / "hub.pid"),
            "Spawner.start_timeout": int(START_TIMEOUT),
        }
        lines = [f"c.{name} = {value!r}" for name, value in settings.items()]
        lines += [
            f"c.JupyterHub.services.append({{'name': {ADMIN_SERVICE!r}, "
            f"'api_token': {self.admin_token!r}}})",
            f"c.JupyterHub.load_roles.append({{'name': {ADMIN_SERVICE!r}, 'scopes': "
            "['admin:users', 'admin:servers', 'tokens', 'admin:groups'], "
            f"'services': [{ADMIN_SERVICE!r}]}})",
        ]
        return "\n# Added by the tests (see jupyter_gns3_copilot/testing/hub_recipe.py)\n" + (
            "\n".join(lines) + "\n"
        )

    def write_files(self) -> None:
        """The settings file (the caller's values, the page's names) and the hub's
        configuration (the page's + `hub_additions`)."""
        names = env_names(recipe_block(self.text, "recipe-env"))
        if sorted(names) != sorted(self.values):
            raise ValueError(
                f"the page's settings are {names}, the test gives {sorted(self.values)}"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        env_file = self.directory / "gns3-copilot.env"
        env_file.write_text("".join(f"{name}={self.values[name]}\n" for name in names))
        env_file.chmod(0o600)
        config = self.block(
            "recipe-jupyterhub-config",
            required=(SRV, HUB_ORIGIN, SERVICE_ORIGIN, '"name": "gns3-copilot"'),
        )
        (self.directory / "jupyterhub_config.py").write_text(config + self.hub_additions())

    def run_block(
        self, label: str, *, required: tuple[str, ...] = ()
    ) -> subprocess.CompletedProcess[str]:
        """Run the page's shell block `label` (places replaced) with bash; must succeed."""
        return subprocess.run(
            ["bash", "-euo", "pipefail", "-c", self.block(label, required=required)],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )

    # -- running -------------------------------------------------------------------------

    def __enter__(self) -> RecipeHub:
        self.write_files()
        self._log = (self.directory / "hub.log").open("w")
        env = {k: v for k, v in os.environ.items() if k not in self.values}
        self._process = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", self.block("recipe-start", required=(OPT_BIN,))],
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for(self._hub_answers, "the hub answering")
            wait_for(
                lambda: self.get_service("api/health").status_code == 200,
                "the copilot hub service answering",
            )
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _hub_answers(self) -> bool:
        if self._process is not None and self._process.poll() is not None:
            raise RuntimeError(f"the hub exited: {self.log_text()[-3000:]}")
        return self.api.get("/").status_code == 200

    def get_service(self, path: str, **kwargs: Any) -> httpx.Response:
        """GET a path of the copilot hub service through the hub's proxy."""
        return httpx.get(f"{self.url}services/{SERVICE_NAME}/{path}", trust_env=False, **kwargs)

    def log_text(self) -> str:
        return (self.directory / "hub.log").read_text(errors="replace")

    def servers(self) -> dict[str, int]:
        """The running users' servers: user name -> pid."""
        found = {}
        with contextlib.suppress(httpx.HTTPError):
            for user in self.api.get("/users").json():
                state = (user.get("servers", {}).get("", {}).get("state")) or {}
                if state.get("pid"):
                    found[user["name"]] = int(state["pid"])
        return found

    def __exit__(self, *exc: object) -> None:
        """Stop the hub (it stops the proxy, the service and the servers it started), then
        make sure that nothing it started is left."""
        servers = self.servers()
        for user in servers:
            with contextlib.suppress(httpx.HTTPError):
                self.api.delete(f"/users/{user}/server")
        self.api.close()
        service_pid = _read_pid(self.directory / "gns3-copilot" / "service.pid")
        hub_pid = _read_pid(self.directory / "hub.pid")
        if hub_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(hub_pid, signal.SIGTERM)
        if self._process is not None:
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait()
        deadline = time.monotonic() + 15
        for pid in [*servers.values(), *([service_pid] if service_pid else [])]:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self._process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
        if self._log is not None:
            self._log.close()


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    return False
