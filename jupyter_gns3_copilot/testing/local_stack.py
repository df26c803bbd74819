"""A whole copilot on this machine: a Jupyter server with the extension, a GNS3 lab, a model.

What `make demo`, `make lab`, the notebook tests and the notebook latency benchmark share:

- `JupyterServer`: `jupyter server` (or `jupyter lab`) as a subprocess on 127.0.0.1 with
  a fresh token, the copilot extension enabled and configured by traits (secrets go by
  environment variables, never on the command line or to disk), its own config, runtime
  and data directories, stopped with everything it started;
- `ModelEndpoint`: the model the server uses: a real OpenAI-compatible endpoint from
  `OPENAI_API_KEY` / `OPENAI_BASE_URL` / `GNS3_COPILOT_MODEL`, or the scripted model (a
  TEST DOUBLE, `testing.scripted_llm`);
- `NOTEBOOK_PROJECTS` and `prepare_projects`: the GNS3 projects the example notebooks use
  (`%copilot use "Copilot demo"`), built fresh in the lab (or, for `make lab`, kept from
  its last run, with `save_device_configs` keeping what the PCs were given).

Not used by the kernel client; it lives next to it because only the notebook side needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from ..notebook.discovery import ServerInfo
from .routed_lab import PCS, PLACES, ROUTERS, TRIANGLE

SERVER_START_TIMEOUT = 90.0
SERVER_STOP_TIMEOUT = 20.0
DEFAULT_REAL_MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class ModelEndpoint:
    """The chat model the server is configured with (the key is not in repr)."""

    base_url: str
    model: str
    api_key: str = field(repr=False)
    scripted: bool

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> ModelEndpoint | None:
        """The real model named by `OPENAI_API_KEY` (+ `OPENAI_BASE_URL`,
        `GNS3_COPILOT_MODEL`), or None when no key is set."""
        env = os.environ if env is None else env
        key = env.get("OPENAI_API_KEY", "").strip()
        if not key:
            return None
        return cls(
            base_url=env.get("OPENAI_BASE_URL", "").strip() or "https://api.openai.com/v1",
            model=env.get("GNS3_COPILOT_MODEL", "").strip() or DEFAULT_REAL_MODEL,
            api_key=key,
            scripted=False,
        )

    @classmethod
    def scripted_model(cls, llm: Any) -> ModelEndpoint:
        """The scripted model server `llm` (a started `ScriptedLLM`)."""
        from .scripted_llm import DEFAULT_TEST_API_KEY

        return cls(
            base_url=llm.base_url,
            model="scripted-model",
            api_key=DEFAULT_TEST_API_KEY,
            scripted=True,
        )

    def describe(self) -> str:
        if self.scripted:
            return f"the SCRIPTED model at {self.base_url} (a test double replaying a script)"
        return f"{self.model} at {self.base_url}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class JupyterServer:
    """A Jupyter server subprocess with the copilot extension (module docstring).

    `lab`: the GNS3 lab (anything with `url`, `username`, `password`); `model`: the
    model; `work_dir`: where its config, runtime and data directories and its log
    (`jupyter.log`) go; `app`: "server" (API only) or "lab" (JupyterLab, for people);
    `traits`: more `GNS3Copilot` traits (with a scripted model, `require_approval`
    defaults to "none": a replayed script has no person to approve its changes);
    `lab_salt`: the class secret that makes each student's lab values (by environment,
    as every secret; default: the server generates one).
    """

    def __init__(
        self,
        lab: Any,
        model: ModelEndpoint,
        work_dir: str | os.PathLike[str],
        *,
        app: Literal["server", "lab"] = "server",
        root_dir: str | os.PathLike[str] | None = None,
        port: int | None = None,
        traits: Mapping[str, object] | None = None,
        lab_salt: str | None = None,
    ) -> None:
        self.lab = lab
        self.lab_salt = lab_salt
        self.model = model
        self.work_dir = Path(work_dir).resolve()
        self.app = app
        self.root_dir = Path(root_dir or self.work_dir).resolve()
        self.port = port
        self.traits = dict(traits or {})
        self.token = secrets.token_hex(24)
        self.log_path = self.work_dir / "jupyter.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The server's base URL (`http://127.0.0.1:<port>/`)."""
        if self.port is None:
            raise RuntimeError("the Jupyter server is not started")
        return f"http://127.0.0.1:{self.port}/"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def is_running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def server_info(self) -> ServerInfo:
        """What a client needs to reach this server."""
        return ServerInfo(url=self.url, token=self.token, source="explicit")

    def kernel_env(self) -> dict[str, str]:
        """The variables the extension publishes to its kernels, for kernels started
        elsewhere (e.g. by nbclient) so that they find this server."""
        from ..server.kernel_env import SERVER_TOKEN_ENV, SERVER_URL_ENV

        return {SERVER_URL_ENV: self.url, SERVER_TOKEN_ENV: self.token}

    def _traits(self) -> dict[str, object]:
        traits: dict[str, object] = {
            "gns3_url": self.lab.url,
            "gns3_username": self.lab.username,
            "llm_base_url": self.model.base_url,
            "llm_model": self.model.model,
            "data_dir": str(self.work_dir / "data"),
            **self.traits,
        }
        if self.model.scripted:
            traits.setdefault("llm_max_retries", 0)
            # A replayed script has no person to approve its changes.
            traits.setdefault("require_approval", "none")
        return traits

    @property
    def user(self) -> str:
        """The user the server records its token's requests under (`owner_user_id`)."""
        return str(self.traits.get("owner_user_id") or getpass.getuser())

    @property
    def require_approval(self) -> str:
        """The server's `require_approval` setting (the extension's default: "changes")."""
        return str(self._traits().get("require_approval", "changes"))

    def _command(self) -> list[str]:
        module = "jupyterlab" if self.app == "lab" else "jupyter_server"
        traits = self._traits()
        command = [
            sys.executable,
            "-m",
            module,
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.jpserver_extensions=jupyter_gns3_copilot=True",
            *(f"--GNS3Copilot.{name}={value}" for name, value in traits.items()),
        ]
        if os.geteuid() == 0:
            command.append("--allow-root")
        return command

    def _environment(self) -> dict[str, str]:
        from ..objectives import SALT_ENV as LAB_SALT_ENV

        env = dict(os.environ)
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTERHUB_API_TOKEN", LAB_SALT_ENV):
            env.pop(name, None)
        env.update(
            {
                "JUPYTER_TOKEN": self.token,
                "GNS3_PASSWORD": self.lab.password,
                "OPENAI_API_KEY": self.model.api_key,
                **({LAB_SALT_ENV: self.lab_salt} if self.lab_salt else {}),
                "JUPYTER_CONFIG_DIR": str(self.work_dir / "config"),
                "JUPYTER_RUNTIME_DIR": str(self.work_dir / "runtime"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        return env

    def start(self, timeout: float = SERVER_START_TIMEOUT) -> JupyterServer:
        """Start the server and wait until the copilot extension answers."""
        from ..notebook.copilot import Copilot
        from ..notebook.errors import CopilotError

        if self._process is not None:
            raise RuntimeError("the Jupyter server is already started")
        for directory in ("config", "runtime", "data"):
            (self.work_dir / directory).mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        with open(self.log_path, "ab") as log:
            self._process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._environment(),
                cwd=self.root_dir,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        problem = "no answer yet"
        with Copilot(server=self.server_info) as copilot:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    self._process = None
                    raise RuntimeError(f"The Jupyter server exited at start:\n{self.log_tail()}")
                try:
                    copilot.check()
                    return self
                except CopilotError as exc:
                    problem = str(exc)
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            f"The Jupyter server did not answer within {timeout:.0f} s ({problem}):\n"
            f"{self.log_tail()}"
        )

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = SERVER_STOP_TIMEOUT) -> None:
        """Stop the server (SIGTERM, then SIGKILL), and whatever it started (its kernels)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout)
        # Kernels the server started live in its process group (start_new_session).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)

    def __enter__(self) -> JupyterServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


# -- the example notebooks' projects ------------------------------------------------------


@dataclass(frozen=True)
class ProjectRecipe:
    """A project for an example notebook: VPCS nodes (with their `ip` commands, if any)
    on one Ethernet switch "Switch1", started or not, and optionally more nodes and links,
    a lab file and a snapshot of the lab before its nodes start."""

    name: str
    pcs: Mapping[str, str | None] = field(default_factory=dict)
    start: bool = True
    nodes: Mapping[str, tuple[str, int, int]] = field(default_factory=dict)
    """More nodes: name -> (template name, x, y). A "Linux router" gets its name as prompt."""
    links: Sequence[tuple[str, str, str, str]] = ()
    """More links: (node, port, node, port), e.g. ("R1", "e0", "Switch1", "e2")."""
    node_properties: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """GNS3 properties given to a node of `nodes` once created: name -> properties."""
    lab_file: Path | None = None
    """Written as the project's `lab.yaml`, as an instructor attaches it to a template."""
    snapshot: str | None = None
    """A GNS3 snapshot taken before the nodes start (the start of a lab's first stage)."""


EXAMPLES = Path(__file__).resolve().parents[2] / "notebooks"
"""The example notebooks (and their lab files) in the source tree."""
DEMO_PROJECT = "Copilot demo"
BUILD_PROJECT = "Copilot build"
TROUBLESHOOTING_PROJECT = "Copilot troubleshooting"
GRADED_PROJECT = "Copilot graded lab"
OSPF_PROJECT = "Copilot OSPF lab"
BGP_PROJECT = "Copilot BGP lab"


def _triangle(project: str, lab_file: Path) -> ProjectRecipe:
    """The routed lab's triangle (`routed_lab.TRIANGLE`: FRR routers R1-R3, PC1 behind R1,
    PC2 behind R3, no switch), nothing configured: the lab's stages are the student's
    work."""
    return ProjectRecipe(
        project,
        nodes={
            **{name: ("FRR router", *PLACES[name]) for name in ROUTERS},
            **{name: ("VPCS", *PLACES[name]) for name in PCS},
        },
        links=tuple((c.a, c.a_port, c.b, c.b_port) for c in TRIANGLE.cables),
        # GNS3 3.0.6 turns a QEMU guest's carrier off when its link is suspended but never
        # on again (its compute ignores `suspend: false`), so a link brought back stayed
        # down. Without the carrier, a suspended link only drops the packets: the routers
        # notice by their protocol's timers, as the failover stages teach, and recover.
        node_properties={name: {"replicate_network_connection_state": False} for name in ROUTERS},
        lab_file=lab_file,
        snapshot="fresh",
    )


NOTEBOOK_PROJECTS: dict[str, ProjectRecipe] = {
    "01-getting-started": ProjectRecipe(
        DEMO_PROJECT, {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.0.2/24"}
    ),
    "02-build-a-lab": ProjectRecipe(BUILD_PROJECT, start=False),
    "03-troubleshooting": ProjectRecipe(
        # The planted fault: PC2 is addressed in another subnet than PC1.
        TROUBLESHOOTING_PROJECT,
        {"PC1": "ip 10.0.0.1/24", "PC2": "ip 10.0.1.2/24"},
    ),
    "04-graded-lab": ProjectRecipe(
        # LAN A (Switch1: PC1, PC2) and LAN B (Switch2: PC3) joined by the Linux router R1;
        # nothing configured: the lab's stages are the student's work.
        GRADED_PROJECT,
        {"PC1": None, "PC2": None},
        nodes={
            "R1": ("Linux router", 250, 0),
            "Switch2": ("Ethernet switch", 500, 0),
            "PC3": ("VPCS", 500, -200),
        },
        links=(
            ("R1", "e0", "Switch1", "e2"),
            ("R1", "e1", "Switch2", "e0"),
            ("PC3", "e0", "Switch2", "e1"),
        ),
        lab_file=EXAMPLES / "04-graded-lab.lab.yaml",
        snapshot="fresh",
    ),
    "05-ospf-lab": _triangle(OSPF_PROJECT, EXAMPLES / "05-ospf-lab.lab.yaml"),
    "06-bgp-lab": _triangle(BGP_PROJECT, EXAMPLES / "06-bgp-lab.lab.yaml"),
}
"""The project each example notebook uses, by notebook name."""
ROUTER_BOOT_TIMEOUT = 180.0
"""Seconds a Linux router may take to boot (emulated: about 10 s on an idle machine)."""


async def _prepare(lab: Any, recipe: ProjectRecipe, keep: bool = False) -> str:
    from ..console import ConsolePool, ConsoleTarget
    from ..gns3 import GNS3Client
    from ..objectives.service import LAB_FILE

    async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
        for project in await gns3.list_projects():
            if project.name == recipe.name and keep:
                await gns3.open_project(project.project_id)
                if recipe.start:
                    await gns3.start_all(project.project_id)
                return project.project_id
            if project.name == recipe.name:
                await gns3.close_project(project.project_id)
                await gns3.delete_project(project.project_id)
        project = await gns3.create_project(recipe.name)
        pid = project.project_id
        if not recipe.pcs and not recipe.nodes:
            return pid
        if recipe.pcs:
            await gns3.create_node_from_template(pid, "Ethernet switch", "Switch1", x=0, y=0)
        for index, name in enumerate(recipe.pcs):
            await gns3.create_node_from_template(pid, "VPCS", name, x=-250 + 250 * index, y=-200)
            await gns3.create_link(pid, name, "e0", "Switch1", f"e{index}")
        for name, (template, x, y) in recipe.nodes.items():
            problem = getattr(lab, "router_problems", {}).get(template)
            if problem:
                raise RuntimeError(f"Preparing {recipe.name!r}: {problem}")
            # A router's `hostname=` kernel argument is set to `name` by the client.
            node = await gns3.create_node_from_template(pid, template, name, x=x, y=y)
            properties = recipe.node_properties.get(name)
            if properties:
                await gns3.update_node(pid, node.node_id, properties=dict(properties))
        for a, a_port, b, b_port in recipe.links:
            await gns3.create_link(pid, a, a_port, b, b_port)
        if recipe.lab_file is not None:
            await gns3.write_project_file(pid, LAB_FILE, recipe.lab_file.read_bytes())
        if recipe.snapshot:
            await gns3.create_snapshot(pid, recipe.snapshot)
        if not recipe.start:
            return pid
        await gns3.start_all(pid)
        host = urlsplit(lab.url).hostname
        notes = {t.template_id: t.notes for t in await gns3.list_templates()}
        async with ConsolePool() as consoles:
            targets = {
                node.name: ConsoleTarget.from_node(
                    node, server_host=host, inherited=notes.get(node.template_id or "", [])
                )
                for node in await gns3.list_nodes(pid)
                if node.console_type == "telnet"
            }
            await asyncio.gather(
                *(consoles.wait_ready(t, timeout=ROUTER_BOOT_TIMEOUT) for t in targets.values())
            )
            setup = [(targets[name], [command]) for name, command in recipe.pcs.items() if command]
            for result in await consoles.run_many(setup):
                if result.status != "success":
                    raise RuntimeError(f"Preparing {recipe.name!r}: {result.device_name}: {result}")
        return pid


def notebook_replies(
    script: str | os.PathLike[str], recipe: ProjectRecipe, user: str, salt: str
) -> list[Any]:
    """The scripted model's replies for a notebook: the JSON script `script`, its strings
    rendered as the lab's texts are (`{{ lan_a | host(1) }}`) with the values `user` gets
    from the recipe's lab file under `salt`, so the replayed commands are that student's
    (a script without templates, or a recipe without a lab file, is read as it is)."""
    from ..objectives.loader import load_lab
    from ..objectives.parameters import student_values
    from ..objectives.templating import render_data
    from .scripted_llm_script import parse_script, read_script_data

    data = read_script_data(script)
    if recipe.lab_file is not None:
        lab = load_lab(recipe.lab_file.read_text(), recipe.lab_file.name).lab
        data = render_data(data, student_values(lab, user, salt))
    return parse_script(data, script)


def prepare_projects(
    lab: Any, recipes: Iterable[ProjectRecipe], *, keep: bool = False
) -> dict[str, str]:
    """Build each recipe's project fresh in `lab` (a same-named project is replaced);
    their ids by name. With `keep`, a same-named project is kept as it is instead: opened,
    its nodes started when the recipe starts them (`make lab` after a restart)."""

    async def prepare_all() -> dict[str, str]:
        return {recipe.name: await _prepare(lab, recipe, keep) for recipe in recipes}

    return asyncio.run(prepare_all())


def save_device_configs(lab: Any, project_ids: Iterable[str]) -> list[str]:
    """Save the configuration of each running VPCS of these projects (VPCS `save`: its
    startup file, which it reads when it starts again), so that a lab stopped and started
    again keeps what the PCs were given; the names of those that could not be saved."""
    from ..console import ConsolePool, ConsoleTarget
    from ..gns3 import GNS3Client

    async def save_all() -> list[str]:
        host = urlsplit(lab.url).hostname
        async with (
            GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3,
            ConsolePool() as consoles,
        ):
            targets = [
                ConsoleTarget.from_node(node, server_host=host)
                for project_id in project_ids
                for node in await gns3.list_nodes(project_id)
                if node.node_type == "vpcs" and node.status == "started"
            ]
            results = await consoles.run_many([(target, ["save"]) for target in targets])
        return [r.device_name for r in results if r.status != "success"]

    return asyncio.run(save_all())


def delete_projects(lab: Any, project_ids: Iterable[str]) -> None:
    """Close and delete these projects (those already gone are skipped)."""
    from ..gns3 import GNS3Client, GNS3NotFound

    async def delete_all() -> None:
        async with GNS3Client(lab.url, username=lab.username, password=lab.password) as gns3:
            for project_id in project_ids:
                with contextlib.suppress(GNS3NotFound):
                    await gns3.close_project(project_id)
                    await gns3.delete_project(project_id)

    asyncio.run(delete_all())
