"""What the hub's model gateway adds to a stream: the copilot's chat model reading the
scripted model through the gateway vs straight from it, in the same run.

The scripted model server (TEST DOUBLE of the OpenAI API, `python -m
jupyter_gns3_copilot.testing.scripted_llm script.json`) and the gateway each run in their
own process (the gateway: its tornado handlers on 127.0.0.1 with the real SQLite usage
store, class-like budgets that are never reached, and a token table standing in for
JupyterHub's HubAuth, one token per student), so
neither competes with the measured client for the interpreter. Replies are CHUNKS content
pieces with no delay. Each repetition times one `ChatOpenAI.astream` (`make_chat_model`)
each way, alternating which goes first; medians over REPS repetitions after one warm-up:

- content events per second, from sending the request to the last piece;
- time to the first content piece, and what the gateway adds to it.

Then STUDENTS streams start at once, directly and then through the gateway (p95 time to
the first piece; all from this one client process, which dominates those figures).
The last line is `gateway ratio vs direct: <events/s through the gateway / direct>`.
Goals: ratio >= 0.9; <= 10 ms added to the first piece.

    .venv/bin/python benchmarks/gateway_stream.py [--reps 11] [--chunks 2000] [--students 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import statistics
import sys
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path

from _common import parse_args
from stream_overhead import Sample, bare, scripted_server, url_printing_child

from jupyter_gns3_copilot.agent.llm_access import ModelSettings

MODEL = "scripted-model"
UPSTREAM_KEY = "sk-bench-upstream"
HUB_TOKEN = "bench-hub-token"


def write_script(path: Path, runs: int, chunks: int, students: int) -> None:
    """Two long replies per run (direct, gateway), then one short one per student each way."""
    long_reply = {"content": [f"w{i} " for i in range(chunks)]}
    short_reply = {"content": ["Hello ", "student."]}
    replies = [long_reply] * (2 * runs) + [short_reply] * (2 * students)
    path.write_text(json.dumps({"description": "gateway stream", "replies": replies}))


def serve_gateway(upstream_url: str, data_dir: str) -> None:
    """The gateway on a free port of 127.0.0.1: prints its base URL, serves until SIGTERM."""
    import tornado.httpserver
    import tornado.netutil
    import tornado.web
    from tornado.httputil import HTTPServerRequest

    from jupyter_gns3_copilot.hub.budgets import BudgetPolicy
    from jupyter_gns3_copilot.hub.caller import Caller
    from jupyter_gns3_copilot.hub.gateway import ModelGateway, UpstreamSettings, bearer_token
    from jupyter_gns3_copilot.hub.gateway_handlers import gateway_routes
    from jupyter_gns3_copilot.hub.usage import SqliteUsageStore

    async def authenticate(request: HTTPServerRequest) -> Caller | None:
        # STAND-IN for JupyterHub's HubAuth: token "<HUB_TOKEN>-<n>" is student n.
        number = (bearer_token(request) or "").partition(f"{HUB_TOKEN}-")[2]
        if not number.isdigit():
            return None
        return Caller(name=f"student{number}", groups=frozenset({"students"}))

    async def serve() -> None:
        store = await SqliteUsageStore.open(data_dir)
        gateway = ModelGateway(
            UpstreamSettings(base_url=upstream_url, api_key=UPSTREAM_KEY),
            # Budgets as in a class (never reached here), so their checks are on the path.
            BudgetPolicy(
                group_daily_tokens={"students": 10**9},
                course_daily_tokens=10**12,
                max_concurrent_calls=2,
            ),
            store,
            authenticate,
        )
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        server = tornado.httpserver.HTTPServer(tornado.web.Application(gateway_routes(gateway)))
        server.add_sockets(sockets)
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stopping.set)
        print(f"http://127.0.0.1:{sockets[0].getsockname()[1]}/v1", flush=True)
        await stopping.wait()
        server.stop()
        await gateway.aclose()
        await store.close()

    asyncio.run(serve())


def gateway_process(upstream_url: str, data_dir: Path) -> AbstractContextManager[str]:
    """This script's `--serve` mode in a child process; yields the gateway's base URL."""
    return url_printing_child(
        [sys.executable, __file__, "--serve", upstream_url, str(data_dir)], "the gateway"
    )


def settings(base_url: str, key: str) -> ModelSettings:
    return ModelSettings(base_url=base_url, api_key=key, model=MODEL, max_retries=0, timeout=120)


async def measure(model_url: str, gateway_url: str, reps: int, students: int) -> None:
    ways = {
        "direct": settings(model_url, UPSTREAM_KEY),
        "gateway": settings(gateway_url, f"{HUB_TOKEN}-0"),
    }
    runs: dict[str, list[Sample]] = {label: [] for label in ways}
    for rep in range(reps + 1):
        order = list(ways) if rep % 2 else list(reversed(ways))
        for label in order:
            sample = await bare(ways[label])
            if rep:  # the first repetition warms up imports, connections and tokenizers
                runs[label].append(sample)
    print(f"\n{'':10} {'events/s':>10} {'first piece ms':>15}  (medians of {reps} runs)")
    medians = {}
    for label, samples in runs.items():
        rate = statistics.median(s.rate for s in samples)
        first = statistics.median(s.first for s in samples)
        medians[label] = (rate, first)
        print(f"{label:10} {rate:10.0f} {first * 1000:15.1f}   ({samples[0].pieces} pieces)")
    added = (medians["gateway"][1] - medians["direct"][1]) * 1000
    print(f"the gateway adds {added:.1f} ms to the first piece (goal <= 10 ms)")
    for label in ways if students else ():
        keys = [UPSTREAM_KEY if label == "direct" else f"{HUB_TOKEN}-{n}" for n in range(students)]
        base_url = ways[label].base_url
        together = await asyncio.gather(*(bare(settings(base_url, key)) for key in keys))
        firsts = sorted(sample.first for sample in together)
        p95 = firsts[max(0, round(0.95 * len(firsts)) - 1)]
        print(
            f"{students} students starting at once, {label}: first piece p95 "
            f"{p95 * 1000:.1f} ms, median {statistics.median(firsts) * 1000:.1f} ms"
        )
    print(f"gateway ratio vs direct: {medians['gateway'][0] / medians['direct'][0]:.2f}")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve_gateway(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=11, help="timed runs each way (median)")
    parser.add_argument("--chunks", type=int, default=2000, help="content pieces per reply")
    parser.add_argument("--students", type=int, default=30, help="streams started at once")
    args = parse_args(parser, reps=1, chunks=10, students=2)
    work = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    write_script(work / "script.json", args.reps + 1, args.chunks, args.students)
    with (
        scripted_server(work / "script.json") as model_url,
        gateway_process(model_url, work / "hub") as gateway_url,
    ):
        asyncio.run(measure(model_url, gateway_url, args.reps, args.students))


if __name__ == "__main__":
    main()
