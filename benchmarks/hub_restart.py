"""How long students lose the copilot hub service when it restarts: stopped with SIGTERM
(the hub starts it again at its next poll of the process) against SIGHUP (it restarts in
place, keeping its listening socket).

Runs the instructor guide's JupyterHub recipe as written (`testing.hub_recipe`: the page's
own configuration and commands, on free ports in a temporary directory; GNS3 and the model
at closed ports: `api/health` needs neither). A thread asks `api/health` through the
hub's proxy without pause, on a new connection each time (what a student's server does
after a connection failed). For each restart it prints how long requests were refused
(first to last failure) and the longest single wait for an answer. A SIGTERM comes at a
random point of the hub's 30 s poll period.

    .venv/bin/python benchmarks/hub_restart.py [--term 3] [--hup 5]

Needs configurable-http-proxy (`make hub-proxy`; CONFIGURABLE_HTTP_PROXY or the cache's).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from _common import parse_args

from jupyter_gns3_copilot.hub.restart import PID_FILE
from jupyter_gns3_copilot.testing.hub_recipe import RecipeHub, wait_for

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "instructor" / "jupyterhub.md"
START_LINE = "Copilot hub service on"


@dataclass
class Sample:
    started: float
    ended: float
    ok: bool


def proxy_command() -> str:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    found = os.environ.get("CONFIGURABLE_HTTP_PROXY") or shutil.which("configurable-http-proxy")
    default = cache / "jupyter_gns3_copilot/configurable-http-proxy/node_modules/.bin"
    found = found or str(default / "configurable-http-proxy")
    if not os.access(found, os.X_OK):
        raise SystemExit("configurable-http-proxy not found: run `make hub-proxy`")
    return found


class Asker:
    """Asks `url` without pause on a thread; the samples, by the clock."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.samples: list[Sample] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Asker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(timeout=120)

    def _run(self) -> None:
        while not self._done.is_set():
            started = time.monotonic()
            try:
                ok = httpx.get(self.url, timeout=60, trust_env=False).status_code == 200
            except httpx.HTTPError:
                ok = False
            self.samples.append(Sample(started, time.monotonic(), ok))
            if not ok:
                time.sleep(0.05)  # a refused connection comes back at once


def measure(hub: RecipeHub, how: str) -> tuple[float, float]:
    """One restart (`how`: "term" or "hup"); (seconds refused, longest wait)."""
    log_lines = hub.log_text().count(START_LINE)
    pid_file = hub.directory / "gns3-copilot" / PID_FILE
    with Asker(f"{hub.url}services/gns3-copilot/api/health") as asker:
        # The hub polls every 30 s: signal at a random point of its period.
        time.sleep(1.0 + (random.uniform(0, 30) if how == "term" else 0))
        signalled = time.monotonic()
        if how == "hup":
            hub.run_block("recipe-restart")
        else:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        wait_for(lambda: hub.log_text().count(START_LINE) > log_lines, "the restart", 120)
        wait_for(lambda: [s for s in asker.samples if s.started > signalled and s.ok], "an answer")
        time.sleep(1.0)
    after = [s for s in asker.samples if s.ended > signalled]
    failed = [s for s in after if not s.ok]
    refused = failed[-1].ended - failed[0].started if failed else 0.0
    return refused, max(s.ended - s.started for s in after)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--term", type=int, default=3, help="restarts by SIGTERM")
    parser.add_argument("--hup", type=int, default=5, help="restarts in place (SIGHUP)")
    args = parse_args(parser, term=0, hup=1)
    values = {
        "GNS3_URL": "http://127.0.0.1:9",
        "GNS3_USER": "admin",
        "GNS3_PASSWORD": "not-used-here",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "sk-not-used-here",
        "GNS3_COPILOT_MODEL": "not-used-here",
        "HUB_SHARED_PASSWORD": "a-class-password",
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        RecipeHub(PAGE, Path(tmp) / "srv", values, proxy=proxy_command()) as hub,
    ):
        for how, rounds in (("term", args.term), ("hup", args.hup)):
            if not rounds:
                continue
            results = [measure(hub, how) for _ in range(rounds)]
            refused = [r for r, _ in results]
            waits = [w for _, w in results]
            print(
                f"{how.upper():4}  refused: {', '.join(f'{r:.1f}' for r in refused)} s "
                f"(median {statistics.median(refused):.1f})   longest wait: "
                f"{', '.join(f'{w:.2f}' for w in waits)} s "
                f"(median {statistics.median(waits):.2f})"
            )


if __name__ == "__main__":
    main()
