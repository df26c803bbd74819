"""What the class benchmarks share (not a benchmark itself): a class on the real hub
service, students' turns made with the copilot's own client code, and CPU counters.

- `Classroom`: the instructor guide's JupyterHub recipe as written (`testing.hub_recipe`:
  the real JupyterHub, proxy and hub service) on a GNS3 lab, with the scripted model
  server (TEST DOUBLE of the OpenAI API, its own process) as the gateway's upstream.
  `enrol(n)` adds n students to the hub (group `students`, a hub token each, as their
  servers have), has the service give each a copy of a one-PC template through the
  dashboard's API (`api/labs/assign`, as the instructor carol: the service makes their
  GNS3 accounts and copies), and starts each copy's PC with the student's own GNS3 token.
  `restart()` restarts the service in place with the page's command.
- `StudentServer`: what a student's server holds in hub mode: `HubServiceClient` (the
  session: the student's GNS3 token, the gateway), a `GNS3Client` whose token comes from
  it, a console pool reaching consoles through GNS3's console websocket. `turn(marker)`
  is one chat turn with one device command: the chat model (`make_chat_model`, the tools
  of teaching mode) through the gateway asks for `run_show_commands` on PC1, the tool runs
  (`execute_tool`), the model answers through the gateway. `Turn` has its timings.
- `write_script`: the scripted model's replies for those turns, matched by their marker.
- `cpu_seconds(pid)`, `listening_pid(port)`: a process's CPU time, the process listening
  on a TCP port of this machine (the GNS3 server, whichever started it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import statistics
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
from hub_restart import proxy_command

from jupyter_gns3_copilot.gns3 import GNS3Client, GNS3Conflict
from jupyter_gns3_copilot.hub.restart import PID_FILE
from jupyter_gns3_copilot.testing.hub_recipe import RecipeHub, wait_for

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "instructor" / "jupyterhub.md"
MODEL = "scripted-model"
INSTRUCTOR = "carol"
START_LINE = "Copilot hub service on"
COMMAND = {"devices": [{"device": "PC1", "commands": ["show ip"]}]}
SETUP_TIMEOUT = 1800.0


def write_script(path: Path, markers: Sequence[str], direct: Sequence[str] = ()) -> None:
    """Per turn marker: the tool call, then the answer (both matched by the marker, so
    concurrent turns each get theirs); per `direct` marker one answer (a model call
    straight to the scripted server, the gateway's reference)."""
    replies: list[dict[str, Any]] = []
    for marker in markers:
        replies.append(
            {
                "when": {"last_message": f"^{marker}$"},
                "tool_calls": [{"name": "run_show_commands", "arguments": COMMAND}],
                "usage": {"prompt_tokens": 900, "completion_tokens": 30},
            }
        )
        replies.append(
            {
                "when": {"any_message": f"^{marker}$"},
                "content": "PC1 has the address shown above.",
                "chunks": 6,
                "usage": {"prompt_tokens": 1000, "completion_tokens": 10},
            }
        )
    for marker in direct:
        replies.append(
            {"when": {"last_message": f"^{marker}$"}, "content": "Direct answer.", "chunks": 3}
        )
    path.write_text(json.dumps({"description": "a class's turns", "replies": replies}))


# -- processes ------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def listening_pid(port: int) -> int:
    """The process listening on TCP `port` of this machine (IPv4 or IPv6)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                parts = line.split()
                if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{parts[9]}]")
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        with contextlib.suppress(OSError):
            for fd in fd_dir.iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) in inodes:
                        return int(fd_dir.parent.name)
    raise RuntimeError(f"no process of this machine listens on port {port}")


def machine_cpu() -> tuple[float, float]:
    """This machine's (busy, idle) CPU seconds since boot, all cores (`/proc/stat`)."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    hertz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / hertz, idle / hertz


def children_named(parents: Sequence[int], name: str) -> list[int]:
    """The processes called `name` descending from one of `parents` through processes of
    that name (a VPCS forks a second process of its own)."""
    named: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            text = stat.read_text()
            if text[text.index("(") + 1 : text.rindex(")")] == name:
                named[int(stat.parent.name)] = int(text.rsplit(")", 1)[1].split()[1])
    found = {pid for pid, parent in named.items() if parent in parents}
    while more := {pid for pid, parent in named.items() if parent in found} - found:
        found |= more
    return sorted(found)


class CpuMeter:
    """CPU seconds spent by named processes between `start()` and `stop()`; by the
    devices (`DEVICES`: the VPCS processes of the GNS3 servers `device_parents`, as they
    are at `start()`); and by the whole machine (`MACHINE`: every process, the other
    users of the machine included)."""

    DEVICES = "devices"
    MACHINE = "machine"

    def __init__(self, pids: dict[str, int], device_parents: Sequence[int] = ()) -> None:
        self.pids = pids
        self.device_parents = list(device_parents)
        self._devices: list[int] = []
        self._began: dict[str, float] = {}
        self.spent: dict[str, float] = {}

    def start(self) -> None:
        self._devices = children_named(self.device_parents, "vpcs")
        self._began = {name: self._now(pid) for name, pid in self.pids.items()}
        self._began[self.DEVICES] = sum(cpu_seconds(pid) for pid in self._devices)
        self._began[self.MACHINE] = machine_cpu()[0]

    def stop(self) -> dict[str, float]:
        self.spent = {name: self._now(pid) - self._began[name] for name, pid in self.pids.items()}
        devices = sum(cpu_seconds(pid) for pid in self._devices)
        self.spent[self.DEVICES] = devices - self._began[self.DEVICES]
        self.spent[self.MACHINE] = machine_cpu()[0] - self._began[self.MACHINE]
        return self.spent

    @staticmethod
    def _now(pid: int) -> float:
        if pid == os.getpid():
            times = os.times()
            return times.user + times.system
        return cpu_seconds(pid)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The `fraction` percentile (nearest rank) of `values`."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(fraction * len(ordered)) - 1))]


# -- a student's server -----------------------------------------------------------------


class ConsolePortsExhausted(RuntimeError):
    """GNS3 cannot start one more student's PC: its console port range is used up."""


@dataclass
class Turn:
    """One turn's timings (seconds from its start) and what went wrong, if anything."""

    total: float = 0.0
    session: float = 0.0
    first_piece: float | None = None
    """From sending the answer's model request to its first content piece."""
    error: str | None = None


@dataclass
class Student:
    name: str
    hub_token: str
    project_id: str = ""


class StudentServer:
    """A student's server's copilot in hub mode, reduced to its client parts (see the
    module docstring). Close with `aclose()`."""

    def __init__(self, service_url: str, student: Student) -> None:
        from jupyter_gns3_copilot.classroom.client import HubServiceClient
        from jupyter_gns3_copilot.console import ConsolePool
        from jupyter_gns3_copilot.tools import LabAccess

        self.student = student
        self.hub = HubServiceClient(service_url, student.hub_token, timeout=60.0)
        self.consoles = ConsolePool()
        self.gns3: GNS3Client | None = None
        self._lab_access = LabAccess
        self.lab: Any = None
        self._model: Any = None

    async def turn(self, marker: str) -> Turn:
        """One chat turn with one device command (see the module docstring)."""
        from langchain_core.messages import AIMessageChunk, HumanMessage, ToolMessage

        from jupyter_gns3_copilot.tools import TEACHING, execute_tool

        result = Turn()
        began = time.perf_counter()
        try:
            session = await self.hub.session()
            result.session = time.perf_counter() - began
            if self.gns3 is None:
                self.gns3 = GNS3Client(session.gns3_url, token_provider=self.hub.gns3_token)
                self.lab = self._lab_access(self.gns3, self.consoles, console_transport="websocket")
            model = self._chat_model(session.model_base_url, session.model)
            messages: list[Any] = [HumanMessage(marker)]
            asked: AIMessageChunk | None = None
            async for chunk in model.astream(messages):
                asked = chunk if asked is None else asked + chunk
            if asked is None or not asked.tool_calls:
                raise RuntimeError("the model asked for no tool")
            call = asked.tool_calls[0]
            context = self.lab.tool_context(self.student.project_id, TEACHING, asyncio.Event())
            outcome = await execute_tool(context, call["name"], call["args"])
            if not outcome.ok:
                raise RuntimeError(f"the device command failed: {outcome.result}")
            messages += [asked, ToolMessage(json.dumps(outcome.result), tool_call_id=call["id"])]
            answering = time.perf_counter()
            async for chunk in model.astream(messages):
                if chunk.content and result.first_piece is None:
                    result.first_piece = time.perf_counter() - answering
            if result.first_piece is None:
                raise RuntimeError("the answer had no content")
        except Exception as exc:  # every failure is one error of the class's figures
            result.error = f"{type(exc).__name__}: {str(exc)[:300]}"
        result.total = time.perf_counter() - began
        return result

    def _chat_model(self, base_url: str, name: str) -> Any:
        """The chat model through the gateway with teaching mode's tools, made once (as a
        student's server keeps its model between turns)."""
        if self._model is None:
            from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model
            from jupyter_gns3_copilot.tools import TEACHING, openai_tool_schema
            from jupyter_gns3_copilot.tools.registry import tools_for_mode

            settings = ModelSettings(
                base_url=base_url,
                api_key=self.student.hub_token,
                model=name,
                max_retries=0,
                timeout=300,
            )
            tools = [openai_tool_schema(spec) for spec in tools_for_mode(TEACHING)]
            self._model = make_chat_model(settings).bind_tools(tools)
        return self._model

    async def aclose(self) -> None:
        await self.consoles.aclose()
        if self.gns3 is not None:
            await self.gns3.aclose()
        await self.hub.aclose()


async def first_piece(base_url: str, marker: str, api_key: str = "") -> float:
    """Seconds to the first content piece of one model call (no tools) to `base_url`:
    the gateway with a student's hub token, or the scripted model itself."""
    from langchain_core.messages import HumanMessage
    from pydantic import SecretStr

    from jupyter_gns3_copilot.agent.llm_access import ModelSettings, make_chat_model

    settings = ModelSettings(
        base_url=base_url, api_key=SecretStr(api_key), model=MODEL, max_retries=0, timeout=300
    )
    model = make_chat_model(settings)
    began = time.perf_counter()
    async for chunk in model.astream([HumanMessage(marker)]):
        if chunk.content:
            return time.perf_counter() - began
    raise RuntimeError("the answer had no content")


@dataclass
class Wave:
    """Turns started at once; their wall time and the CPU the processes spent."""

    turns: list[Turn]
    wall: float
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def errors(self) -> list[str]:
        return [t.error for t in self.turns if t.error]

    def figure(self, what: str) -> float:
        values = [getattr(t, what) for t in self.turns if getattr(t, what) is not None]
        return statistics.median(values) if values else float("nan")


async def wave(servers: Sequence[StudentServer], marker: str, meter: CpuMeter) -> Wave:
    """Each server's turn (marker `marker` + its index), all started at once."""
    meter.start()
    began = time.perf_counter()
    turns = await asyncio.gather(*(s.turn(f"{marker} s{i}") for i, s in enumerate(servers)))
    wall = time.perf_counter() - began
    return Wave(list(turns), wall, meter.stop())


# -- the class --------------------------------------------------------------------------


class Classroom:
    """The recipe hub on `lab` with the scripted model at `model_url` (see the module
    docstring); a context manager that removes the class from GNS3 afterwards."""

    def __init__(self, lab: Any, directory: Path, model_url: str, service_config: str = "") -> None:
        self.lab = lab
        self.directory = directory
        self.service_config = service_config
        """Lines of the service's configuration file (its working directory's)."""
        self.tag = f"c{uuid.uuid4().hex[:4]}"
        values = {
            "GNS3_URL": lab.url,
            "GNS3_USER": lab.username,
            "GNS3_PASSWORD": lab.password,
            "OPENAI_BASE_URL": model_url,
            "OPENAI_API_KEY": "sk-bench-upstream",
            "GNS3_COPILOT_MODEL": MODEL,
            "HUB_SHARED_PASSWORD": "a-class-password",
        }
        self.hub = RecipeHub(PAGE, directory, values, proxy=proxy_command())
        self.students: list[Student] = []
        self.template = f"{self.tag}-template"
        self._gns3 = httpx.Client(base_url=f"{lab.url}/v3", timeout=120, trust_env=False)

    def __enter__(self) -> Classroom:
        answer = self._gns3.post(
            "/access/users/authenticate",
            json={"username": self.lab.username, "password": self.lab.password},
        )
        answer.raise_for_status()
        self._gns3.headers["Authorization"] = f"Bearer {answer.json()['access_token']}"
        if self.service_config:
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / "jupyter_gns3_copilot_hub_config.py").write_text(self.service_config)
        self.hub.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.hub.__exit__(*exc)
        finally:
            self._remove_from_gns3()
            self._gns3.close()

    @property
    def service_url(self) -> str:
        return self.hub.service_url

    @property
    def data_dir(self) -> Path:
        return self.directory / "gns3-copilot"

    @property
    def service_pid(self) -> int:
        return int((self.data_dir / PID_FILE).read_text())

    def pids(self) -> dict[str, int]:
        """The processes whose CPU the benchmarks report: the hub service, GNS3 (and the
        lab's extra computes, if any), the hub."""
        return {
            "service": self.service_pid,
            "gns3": listening_pid(urlparse(self.lab.url).port or 80),
            **{f"compute {c.name}": c.pid for c in getattr(self.lab, "computes", [])},
            "hub": int((self.directory / "hub.pid").read_text()),
        }

    def restart(self) -> None:
        """Restart the service in place (the page's command) and wait for it."""
        started = self.hub.log_text().count(START_LINE)
        os.kill(self.service_pid, signal.SIGHUP)
        wait_for(lambda: self.hub.log_text().count(START_LINE) > started, "the restart", 120)

    async def enrol(self, count: int, batch: int = 10) -> list[Student]:
        """`count` more students with their hub tokens, GNS3 accounts and lab copies."""
        api = self.hub.api
        if not self.students:
            await self._make_template()
        first = len(self.students)
        names = [f"{self.tag}s{i:03d}" for i in range(first, first + count)]
        api.post("/users", json={"usernames": names}).raise_for_status()
        api.post("/groups/students/users", json={"users": names}).raise_for_status()
        fresh = []
        for name in names:
            token = api.post(f"/users/{name}/tokens", json={"note": "class benchmark"})
            token.raise_for_status()
            fresh.append(Student(name, token.json()["token"]))
        instructor = api.post(f"/users/{INSTRUCTOR}/tokens", json={"note": "class benchmark"})
        instructor.raise_for_status()
        headers = {"Authorization": f"token {instructor.json()['token']}"}
        copies: dict[str, str] = {}

        async def assign(group: list[str]) -> None:
            async with httpx.AsyncClient(timeout=SETUP_TIMEOUT, trust_env=False) as http:
                answer = await http.post(
                    f"{self.service_url}api/labs/assign",
                    headers=headers,
                    json={"template": self.template, "students": group},
                )
                answer.raise_for_status()
                copies.update({u: p["project_id"] for u, p in answer.json().items()})

        async def assign_all() -> None:
            groups = [names[i : i + batch] for i in range(0, len(names), batch)]
            limit = asyncio.Semaphore(4)

            async def one(group: list[str]) -> None:
                async with limit:
                    await assign(group)

            await asyncio.gather(*(one(g) for g in groups))

        await assign_all()
        for student in fresh:
            student.project_id = copies[student.name]
        await self._start_pcs(fresh)
        self.students += fresh
        return fresh

    async def _make_template(self) -> None:
        async with GNS3Client(
            self.lab.url, username=self.lab.username, password=self.lab.password
        ) as admin:
            project = await admin.create_project(self.template)
            await admin.create_node_from_template(project.project_id, "VPCS", "PC1")
            await admin.close_project(project.project_id)

    async def _start_pcs(self, students: list[Student]) -> None:
        """Each student, with their own session and GNS3 token, starts their copy's PC."""
        limit = asyncio.Semaphore(8)

        async def start(student: Student) -> None:
            async with limit:
                server = StudentServer(self.service_url, student)
                try:
                    session = await server.hub.session()
                    async with GNS3Client(
                        session.gns3_url, token_provider=server.hub.gns3_token
                    ) as g:
                        await g.open_project(student.project_id)
                        await g.start_all(student.project_id)
                except GNS3Conflict as exc:
                    if "free port" not in str(exc):
                        raise
                    raise ConsolePortsExhausted(
                        f"GNS3 has no console port left for {student.name}'s PC: a running "
                        "VPCS takes two ports of its server's console range, and a lab kit "
                        "server has 100 (50 students). Give more --computes, or fewer students."
                    ) from exc
                finally:
                    await server.aclose()

        await asyncio.gather(*(start(s) for s in students))

    def gns3_logins(self) -> dict[str, str | None]:
        """GNS3's record of each class account's last login (by GNS3 user name)."""
        prefix = f"hub-{self.tag}"
        users = self._gns3.get("/access/users").json()
        return {u["username"]: u["last_login"] for u in users if u["username"].startswith(prefix)}

    def _remove_from_gns3(self) -> None:
        gns3 = self._gns3
        prefix = f"hub-{self.tag}"
        with contextlib.suppress(httpx.HTTPError):
            for project in gns3.get("/projects").json():
                if project["name"].startswith(self.tag):
                    with contextlib.suppress(httpx.HTTPError):
                        gns3.post(f"/projects/{project['project_id']}/close")
                    gns3.delete(f"/projects/{project['project_id']}")
            for pool in gns3.get("/pools").json():
                if pool["name"].startswith(prefix):
                    gns3.delete(f"/pools/{pool['resource_pool_id']}")
            users = [
                u for u in gns3.get("/access/users").json() if u["username"].startswith(prefix)
            ]
            ours = {u["user_id"] for u in users}
            for ace in gns3.get("/access/acl").json():
                if ace["user_id"] in ours:
                    gns3.delete(f"/access/acl/{ace['ace_id']}")
            for user in users:
                gns3.delete(f"/access/users/{user['user_id']}")


@contextlib.asynccontextmanager
async def student_servers(
    service_url: str, students: Sequence[Student]
) -> AsyncIterator[list[StudentServer]]:
    """New student servers (no session yet: as when they start), closed afterwards."""
    servers = [StudentServer(service_url, s) for s in students]
    try:
        yield servers
    finally:
        await asyncio.gather(*(s.aclose() for s in servers), return_exceptions=True)
