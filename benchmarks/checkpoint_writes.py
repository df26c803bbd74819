"""CPU and time per checkpoint step on a project's SQLite file: LangGraph's own
`AsyncSqliteSaver` (what the copilot used before) against the copilot's `ProjectSaver`,
which runs each read and write as one hand-over to the connection's thread.

A step is what the graph writes after each node: a checkpoint (`aput`, five 200-character
messages) and its pending writes (`aput_writes`, two channels); every tenth step the
thread's latest checkpoint is read back (`aget_tuple`). Both savers run on a fresh file
of their own in the same process, alternating, ROUNDS times; the figures are medians of
the process's CPU time and the wall time per step, with the number of hand-overs to the
connection's thread per step. Run:

    .venv/bin/python benchmarks/checkpoint_writes.py [--steps 300] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from _common import parse_args
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from jupyter_gns3_copilot.store.checkpoints import ProjectSaver
from jupyter_gns3_copilot.store.database import connect_wal


class _Counted:
    """Counts what a connection hands to its worker thread."""

    def __init__(self, conn: Any) -> None:
        self.count = 0
        queue = conn._execute

        async def counted(work: Any, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return await queue(work, *args, **kwargs)

        conn._execute = counted


async def one_run(
    saver_class: type[AsyncSqliteSaver], directory: Path, steps: int
) -> tuple[float, float, float]:
    """(CPU ms, wall ms, hand-overs) per step for `steps` steps on a new file."""
    conn = await connect_wal(directory / f"{uuid.uuid4().hex}.db")
    try:
        saver = saver_class(conn)
        await saver.setup()
        counted = _Counted(conn)
        thread = str(uuid.uuid4())
        config: Any = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        cpu, wall = time.process_time(), time.perf_counter()
        for step in range(steps):
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"messages": ["x" * 200] * 5}
            saved = await saver.aput(config, checkpoint, {"step": step}, {})
            await saver.aput_writes(
                saved, [("messages", "hello"), ("branch:to:tools", None)], "task"
            )
            config = saved
            if step % 10 == 9:
                await saver.aget_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return cpu / steps * 1e3, wall / steps * 1e3, counted.count / steps
    finally:
        await conn.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parse_args(parser, steps=20, rounds=1)
    savers: list[tuple[str, type[AsyncSqliteSaver]]] = [
        ("LangGraph's AsyncSqliteSaver", AsyncSqliteSaver),
        ("ProjectSaver", ProjectSaver),
    ]
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name, _ in savers}
    with tempfile.TemporaryDirectory(prefix="bench-checkpoints-") as directory:
        for _ in range(args.rounds):
            for name, saver_class in savers:
                figures[name].append(await one_run(saver_class, Path(directory), args.steps))
    medians = {}
    for name, runs in figures.items():
        cpu, wall, hops = (statistics.median(run[i] for run in runs) for i in range(3))
        medians[name] = cpu
        print(f"{name:30} {cpu:6.3f} ms CPU  {wall:6.3f} ms wall  {hops:4.1f} hand-overs per step")
    before, after = medians["LangGraph's AsyncSqliteSaver"], medians["ProjectSaver"]
    print(
        f"checkpoint step CPU: {after:.3f} ms against {before:.3f} ms ({before / after:.1f}x less)"
    )


if __name__ == "__main__":
    asyncio.run(main())
