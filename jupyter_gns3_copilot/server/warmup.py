"""Warm-up: the copilot's heavy modules imported in a background thread once the server runs.

Loading the extension imports nothing heavy (so `jupyter lab` starts as fast with the
copilot as without it); the first chat turn, though, needs LangChain, openai and
LangGraph, about 2-3 s of imports. Run on the server's event loop, that stalled
every user and kernel of the server for as long. `WarmUp` runs them in a daemon thread
right after the server starts, and the copilot's handlers await it (`wait`, which never
blocks the loop) before their first use of any of it, so no first-use import runs on the
loop. It goes in two stages: the core modules every route needs, then the agent's (routes
that need no model wait only for the first). A module that fails to import is logged and
left to fail again, with its own message, where it is used.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import gc
import importlib
import logging
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Literal

log = logging.getLogger(__name__)

EXIT_WAIT = 30.0
"""Seconds a process that exits waits for a warm-up still running (it takes a few)."""

CORE_MODULES: tuple[str, ...] = (
    "httpcore",
    "jupyter_gns3_copilot.tls",
    "jupyter_gns3_copilot.server.llm_config",
    "jupyter_gns3_copilot.server.llm_store",
    "jupyter_gns3_copilot.server.status",
    "jupyter_gns3_copilot.gns3",
    "jupyter_gns3_copilot.single_flight",
    "jupyter_gns3_copilot.store",
    "jupyter_gns3_copilot.console",
    "jupyter_gns3_copilot.tools",
    "jupyter_gns3_copilot.server.schemas",
    "jupyter_gns3_copilot.server.tool_runs",
    "jupyter_gns3_copilot.server.turn_result",
)
"""First stage: what every copilot route needs (settings, status, GNS3, consoles, tools);
no LangChain, openai, LangGraph or tiktoken. Routes such as `copilot/status` wait only
for this stage, so a notebook connecting right after the start is answered soon."""
AGENT_MODULES: tuple[str, ...] = (
    "jupyter_gns3_copilot.chat.manager",
    "jupyter_gns3_copilot.agent.graph",
    "jupyter_gns3_copilot.agent.llm_access",
    "jupyter_gns3_copilot.agent.llm_errors",
    "jupyter_gns3_copilot.agent.llm_retries",
    "jupyter_gns3_copilot.agent.context",
    "jupyter_gns3_copilot.agent.history",
    "jupyter_gns3_copilot.agent.prompts",
    "jupyter_gns3_copilot.agent.tokens",
    "langchain_openai",
    "langchain_core.utils.function_calling",
    "langgraph.checkpoint.sqlite.aio",
)
"""Second stage, then `prime`: what the chat needs (imported in this order; each pulls in
its own dependencies)."""

WarmUpStage = Literal["core", "agent"]


def prime_core() -> None:
    """The first stage's work beyond imports: the TLS contexts of the HTTP clients the
    routes make on the loop (`tls`: each costs 40-300 ms of CA-bundle loading)."""
    from ..tls import shared_tls_context

    shared_tls_context(trust_env=True)
    shared_tls_context(trust_env=False)


def prime() -> None:
    """First-use work beyond imports, done once per process: openai's client resources
    (loaded on first attribute access) through a throw-away model nobody calls, and
    LangGraph's first compile (a throw-away graph: the first one takes ~8x as long as the
    next). No tokenizer: building one costs 23-43 MB and holds the interpreter lock for
    0.1-0.3 s, and a conversation well inside its context window never needs one
    (`agent.context`)."""
    from pydantic import SecretStr

    from ..agent.graph import build_graph
    from ..agent.llm_access import ModelSettings, make_chat_model

    make_chat_model(
        ModelSettings(model="warm-up", base_url="http://127.0.0.1:9/v1", api_key=SecretStr("-"))
    )
    build_graph()


class WarmUp:
    """Import `core` modules (default `CORE_MODULES`) and run `core_then`, then import
    `agent` modules (default `AGENT_MODULES`) and run `then`, once, in a thread of its own
    (`start`); `wait` for either stage. A process that exits while it runs waits for it
    (at most `EXIT_WAIT` seconds, from `atexit`): the interpreter's exit ends a daemon
    thread where it stands, and inside pydantic-core's compiled code that aborts the whole
    process ("FATAL: exception not rethrown", seen when a test run or a server stopped
    during a warm-up)."""

    def __init__(
        self,
        core: Sequence[str] | None = None,
        agent: Sequence[str] | None = None,
        then: Callable[[], None] | None = prime,
        core_then: Callable[[], None] | None = prime_core,
    ) -> None:
        self._core = tuple(CORE_MODULES if core is None else core)
        self._agent = tuple(AGENT_MODULES if agent is None else agent)
        self._then = then
        self._core_then = core_then
        self._stages: dict[WarmUpStage, concurrent.futures.Future[None]] = {
            "core": concurrent.futures.Future(),
            "agent": concurrent.futures.Future(),
        }
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def done(self, stage: WarmUpStage = "agent") -> bool:
        """Whether `stage` has finished (whatever failed in it is logged)."""
        return self._stages[stage].done()

    def start(self) -> None:
        """Start the thread (idempotent); returns at once."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="gns3-copilot-warm-up", daemon=True
                )
                self._thread.start()
                atexit.register(self._thread.join, EXIT_WAIT)

    async def wait(self, stage: WarmUpStage = "agent") -> None:
        """Return once `stage` has finished, starting the warm-up if needed; the event
        loop serves other requests meanwhile."""
        if not self._stages[stage].done():
            self.start()
            await asyncio.wrap_future(self._stages[stage])

    def _run(self) -> None:
        importing = any(name not in sys.modules for name in self._core + self._agent)
        try:
            with _full_collections_paused(importing):
                _import_all(self._core)
                _run_step(self._core_then)
                self._stages["core"].set_result(None)
                _import_all(self._agent)
                _run_step(self._then)
        finally:
            for stage in self._stages.values():
                if not stage.done():
                    stage.set_result(None)


@contextlib.contextmanager
def _full_collections_paused(importing: bool) -> Iterator[None]:
    """While `importing`: no full garbage collection (young objects are still collected),
    then every object so far moved to the collector's permanent generation (`gc.freeze`).

    The warm-up creates some 180k objects (modules, classes, functions). Each full
    collection walks them all holding the interpreter lock: 20-200 ms, three times during
    the imports, then again every so often for the server's whole life. Module objects
    live as long as the process, so walking them finds nothing. Only the first warm-up of
    a process imports; later ones change nothing."""
    if not importing:
        yield
        return
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, _NEVER)
    try:
        yield
    finally:
        gc.collect(1)
        gc.freeze()
        gc.set_threshold(young, middle, full)


_NEVER = 2**31 - 1
"""A full-collection threshold no count reaches."""


def _run_step(step: Callable[[], None] | None) -> None:
    if step is not None:
        try:
            step()
        except Exception:
            log.warning("GNS3 Copilot warm-up failed", exc_info=True)


def _import_all(modules: Sequence[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:
            log.warning("GNS3 Copilot warm-up: importing %s failed", name, exc_info=True)
