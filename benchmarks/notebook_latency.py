"""How much latency the notebook path adds to the first events of a copilot turn.

Same machine, same Jupyter server (with the extension), same project on the local GNS3
lab, same scripted model (a TEST DOUBLE streaming its answer at once), runs interleaved:

- direct: a client POSTs `copilot/projects/{id}/chat/stream` itself (httpx + httpx-sse)
  and times, from sending the request, the first event (the stream's opening heartbeat)
  and the first content event;
- kernel: a real ipykernel (started here with the variables the extension publishes)
  executes `%copilot <message>` in the normal widget mode; timed from sending the
  execute request to the same two events being handed to the chat widget in the kernel
  (the benchmark wraps `ChatWidget.follow`, which the magic hands each event and its
  operations, in the kernel to note the times; same clock),
  and, for information, to the first live widget message reaching this client (what a
  browser would render first).

Added latency = median(kernel) - median(direct); the goal is <= 50 ms.

    python benchmarks/notebook_latency.py [--runs 30]
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from _common import gns3_lab, parse_args
from httpx_sse import connect_sse
from jupyter_client.manager import KernelManager

from jupyter_gns3_copilot.testing.local_stack import (
    JupyterServer,
    ModelEndpoint,
    ProjectRecipe,
    delete_projects,
    prepare_projects,
)
from jupyter_gns3_copilot.testing.scripted_llm import ScriptedLLM, text

PROJECT = "Copilot latency"
GOAL_MS = 50.0
WARMUP = 3
INSTRUMENT = """
import time as _time
from jupyter_gns3_copilot.notebook.widget import ChatWidget as _ChatWidget
_FOLLOWED = []
_follow = _ChatWidget.follow
def _timed_follow(self, event, ops, reducer):
    _FOLLOWED.append((_time.time(), event.type))
    return _follow(self, event, ops, reducer)
_ChatWidget.follow = _timed_follow
"""


def direct_first_events(
    http: httpx.Client, project_id: str, session_id: str, n: int
) -> tuple[float, float]:
    """Seconds from sending the request to its first event and first content event."""
    began = time.perf_counter()
    first = content = None
    body = {"message": f"direct {n}", "session_id": session_id}
    with connect_sse(http, "POST", f"copilot/projects/{project_id}/chat/stream", json=body) as src:
        src.response.raise_for_status()
        for message in src.iter_sse():
            now = time.perf_counter() - began
            first = now if first is None else first
            if content is None and '"type":"content"' in message.data.replace(" ", ""):
                content = now
            if '"done"' in message.data:
                break
    assert first is not None and content is not None
    return first, content


class Kernel:
    """A kernel running the magics, driven like a front end would."""

    def __init__(self, env: dict[str, str]) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str, expressions: dict[str, str] | None = None) -> dict[str, Any]:
        """Execute `code`; when it was sent, when the first widget message arrived, and
        the values of `expressions` afterwards."""
        sent = time.time()
        msg_id = self.client.execute(code, user_expressions=expressions or {})
        first_widget_message = None
        while True:
            msg = self.client.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "error":
                raise RuntimeError(f"{content['ename']}: {content['evalue']}")
            data = content.get("data") or {} if kind == "comm_msg" else {}
            if first_widget_message is None and data.get("content", {}).get("type") == "ops":
                first_widget_message = time.time()
            if kind == "status" and content["execution_state"] == "idle":
                break
        reply = self.client.get_shell_msg(timeout=60)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=60)
        values = {
            name: result.get("data", {}).get("text/plain")
            for name, result in reply["content"].get("user_expressions", {}).items()
        }
        return {"sent": sent, "first_widget_message": first_widget_message, "values": values}

    def stop(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def kernel_first_events(kernel: Kernel, n: int) -> tuple[float, float, float]:
    """Seconds from the execute request to the first event and the first content event
    in the kernel, and to the first widget message at the client."""
    result = kernel.run(f"%copilot kernel {n}", {"followed": "_FOLLOWED"})
    followed: list[tuple[float, str]] = ast.literal_eval(result["values"]["followed"])
    kernel.run("_FOLLOWED.clear()")
    sent = result["sent"]
    first = followed[0][0] - sent
    content = next(t for t, kind in followed if kind == "content") - sent
    return first, content, result["first_widget_message"] - sent


def summary(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    return f"{name:<46} median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="measured turns per path")
    runs = parse_args(parser, runs=1).runs
    replies = [text("ok", when={"tools": True}) for _ in range(2 * (runs + WARMUP))]
    replies += [text("Latency", when={"tools": False}) for _ in range(2)]
    work = Path(tempfile.mkdtemp(prefix="copilot-latency-"))
    results: dict[str, list[float]] = {}
    with (
        gns3_lab(work / "lab") as lab,
        ScriptedLLM(replies, models=["scripted-model"]) as llm,
        JupyterServer(lab, ModelEndpoint.scripted_model(llm), work / "jupyter") as server,
    ):
        ids = prepare_projects(lab, [ProjectRecipe(PROJECT)])
        kernel = Kernel({**os.environ, **server.kernel_env()})
        try:
            kernel.run(f'%load_ext jupyter_gns3_copilot\n%copilot use "{PROJECT}"')
            kernel.run(INSTRUMENT)
            session = str(uuid.uuid4())
            headers = server.server_info.headers()
            with httpx.Client(base_url=server.url, headers=headers, timeout=60) as http:
                for n in range(WARMUP + runs):
                    direct = direct_first_events(http, ids[PROJECT], session, n)
                    in_kernel = kernel_first_events(kernel, n)
                    if n < WARMUP:
                        continue
                    names = (
                        "direct: request -> first event",
                        "direct: request -> first content",
                        "kernel: execute -> first event in kernel",
                        "kernel: execute -> first content in kernel",
                        "kernel: execute -> first widget message",
                    )
                    for name, value in zip(names, (*direct, *in_kernel), strict=True):
                        results.setdefault(name, []).append(value)
        finally:
            kernel.stop()
            delete_projects(lab, ids.values())
    print(f"Notebook latency: {runs} turns per path (interleaved) after {WARMUP} warm-up turns")
    for name, values in results.items():
        print(summary(name, values))
    medians = {name: statistics.median(values) * 1000 for name, values in results.items()}
    for what in ("first event", "first content"):
        added = (
            medians[f"kernel: execute -> {what} in kernel"] - medians[f"direct: request -> {what}"]
        )
        verdict = "within" if added <= GOAL_MS else "OVER"
        print(f"added latency to the {what}: {added:.1f} ms ({verdict} the {GOAL_MS:.0f} ms goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
