"""What stalls an event loop while the warm-up thread runs, in a fresh interpreter.

An asyncio loop sleeps 2 ms at a time beside `server.warmup.WarmUp` (its own thread, as
in the server) and records every wake-up later than STALL_MS; for each, the warm-up
thread's stack at that moment (where it was when it let go of the interpreter lock), or
"full collection" when a garbage collection of the oldest generation ran meanwhile.
Then the time one full collection takes once the warm-up is done (every later one in the
server's life costs about that). Repeated REPEAT times, each in a new interpreter. The
last line:

    warm-up stalls over 50 ms: 0 (max 45 ms)

Run: `.venv/bin/python benchmarks/warmup_stalls.py [--repeat 3]`
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _common import parse_args

STALL_MS = 20.0

PROBE = """
import asyncio, gc, json, sys, time
from jupyter_gns3_copilot.server.warmup import WarmUp

full = []
began = {}
def on_gc(phase, info):
    if info["generation"] == 2:
        if phase == "start":
            began["t"] = time.perf_counter()
        else:
            full.append((began["t"], time.perf_counter()))
gc.callbacks.append(on_gc)

def where(frame):
    if frame is not None and frame.f_code is on_gc.__code__:
        return "full collection"
    names = []
    while frame is not None and len(names) < 3:
        name = frame.f_globals.get("__name__", "?")
        if not name.startswith("importlib"):
            names.append(f"{name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(names)

async def main():
    warm_up = WarmUp()
    stalls = []
    warm_up.start()
    thread = warm_up._thread.ident
    while not warm_up.done("agent"):
        start = time.perf_counter()
        await asyncio.sleep(0.002)
        end = time.perf_counter()
        lag = (end - start - 0.002) * 1000
        if lag > STALL_MS:
            frame = sys._current_frames().get(thread)
            collected = any(s < end and e > start for s, e in full)
            stalls.append({"ms": lag, "where": where(frame), "gc": collected})
    during = len(full)
    start = time.perf_counter()
    gc.collect()
    after = (time.perf_counter() - start) * 1000
    print(json.dumps({"stalls": stalls, "full_collections": during, "after_ms": after}))

asyncio.run(main())
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parse_args(parser, repeat=1)
    print(f"load average: {load()}")
    worst: list[float] = []
    over = 0
    for run in range(args.repeat):
        done = subprocess.run(
            [sys.executable, "-c", f"STALL_MS = {STALL_MS}\n" + PROBE],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        result = json.loads(done.stdout.strip().splitlines()[-1])
        stalls = sorted(result["stalls"], key=lambda s: -s["ms"])
        print(
            f"run {run + 1}: {len(stalls)} stalls over {STALL_MS:g} ms, "
            f"{result['full_collections']} full collections during the warm-up, "
            f"one full collection after it: {result['after_ms']:.1f} ms"
        )
        for stall in stalls[:5]:
            cause = "full collection" if stall["gc"] else stall["where"]
            print(f"  {stall['ms']:6.0f} ms  {cause}")
        worst.append(stalls[0]["ms"] if stalls else 0.0)
        over += sum(1 for s in stalls if s["ms"] > 50)
    print(f"load average: {load()}")
    print(f"warm-up stalls over 50 ms: {over} (max {max(worst):.0f} ms)")


if __name__ == "__main__":
    main()
