"""Warm-up: the copilot's heavy modules imported in a background thread once the server runs.

Loading the extension imports nothing heavy (so `jupyter lab` starts as fast with the
copilot as without it); the first chat turn, though, needs LangChain, openai, LangGraph
and the tokenizers, about 2-3 s of imports. Run on the server's event loop, that stalled
every user and kernel of the server for as long. `WarmUp` runs them in a daemon thread
right after the server starts, and the copilot's handlers await it (`wait`, which never
blocks the loop) before their first use of any of it, so no first-use import runs on the
loop. A module that fails to import is logged and left to fail again, with its own
message, where it is used.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import threading
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

WARM_MODULES: tuple[str, ...] = (
    "jupyter_gns3_copilot.service",
    "jupyter_gns3_copilot.agent.graph",
    "jupyter_gns3_copilot.agent.models",
    "jupyter_gns3_copilot.agent.context",
    "jupyter_gns3_copilot.agent.history",
    "jupyter_gns3_copilot.agent.prompts",
    "jupyter_gns3_copilot.agent.tokens",
    "jupyter_gns3_copilot.tools",
    "jupyter_gns3_copilot.console",
    "jupyter_gns3_copilot.gns3",
    "jupyter_gns3_copilot.store",
    "jupyter_gns3_copilot.llm_config",
    "jupyter_gns3_copilot.status",
    "jupyter_gns3_copilot.single_flight",
    "jupyter_gns3_copilot.server.schemas",
    "jupyter_gns3_copilot.server.tool_runs",
    "langchain_openai",
    "langchain_core.utils.function_calling",
    "langgraph.checkpoint.sqlite.aio",
)
"""Imported in this order by the warm-up thread (each pulls in its own dependencies)."""


def prime(model: str | None = None) -> None:
    """First-use work beyond imports, done once per process: openai's client resources
    (loaded on first attribute access) through a throw-away model nobody calls, LangGraph's
    first compile (a throw-away graph: the first one takes ~8x as long as the next), and
    the tokenizer of `model` (the admin's default; its files materialised offline). Building
    a tokenizer holds the interpreter lock for a while (tiktoken's Rust core: 0.1-0.7 s,
    more for o200k_base), so only the default model's is built here."""
    from pydantic import SecretStr

    from ..agent.graph import build_graph
    from ..agent.models import ModelSettings, make_chat_model
    from ..agent.tokens import token_counter_for_model

    make_chat_model(
        ModelSettings(model="warm-up", base_url="http://127.0.0.1:9/v1", api_key=SecretStr("-"))
    )
    build_graph()
    token_counter_for_model(model).count_text("warm-up")


class WarmUp:
    """Import `modules` (default `WARM_MODULES`), then run `then`, once, in a daemon
    thread (`start`)."""

    def __init__(
        self, modules: Sequence[str] | None = None, then: Callable[[], None] | None = prime
    ) -> None:
        self._modules = tuple(WARM_MODULES if modules is None else modules)
        self._then = then
        self._done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def done(self) -> bool:
        """Whether the warm-up has finished (whatever failed in it is logged)."""
        return self._done.done()

    def start(self) -> None:
        """Start the thread (idempotent); returns at once."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="gns3-copilot-warm-up", daemon=True
                )
                self._thread.start()

    async def wait(self) -> None:
        """Return once the warm-up has finished, starting it if needed; the event loop
        serves other requests meanwhile."""
        if not self._done.done():
            self.start()
            await asyncio.wrap_future(self._done)

    def _run(self) -> None:
        try:
            for name in self._modules:
                try:
                    importlib.import_module(name)
                except Exception:
                    log.warning("GNS3 Copilot warm-up: importing %s failed", name, exc_info=True)
            if self._then is not None:
                try:
                    self._then()
                except Exception:
                    log.warning("GNS3 Copilot warm-up failed", exc_info=True)
        finally:
            self._done.set_result(None)
