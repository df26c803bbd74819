"""Work on an aiosqlite connection's own thread in one hand-over.

aiosqlite hands every call (a statement, a fetch, a commit, a cursor's close) to the
connection's worker thread and wakes the event loop with its result: one thread switch
and one loop wake-up each. `run_on_worker` runs a plain function with the sqlite3
connection there instead, so a statement, its commit and its rows cost one hand-over,
and nothing else queued on the connection runs between them. `write_committed` and
`first_row` are the two pieces of work most callers need.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import aiosqlite

_P = ParamSpec("_P")
_T = TypeVar("_T")


async def run_on_worker(
    conn: aiosqlite.Connection,
    work: Callable[Concatenate[sqlite3.Connection, _P], _T],
    *args: _P.args,
    **kwargs: _P.kwargs,
) -> _T:
    """`work(connection, *args, **kwargs)` run on `conn`'s worker thread with its sqlite3
    connection, after what is queued before it; raises what `work` raises, and
    ValueError when `conn` is closed.

    aiosqlite has no public call for this: its own methods queue their work with
    `Connection._execute`, and so does this one.
    """
    queue = cast(Callable[..., Awaitable[_T]], conn._execute)
    return await queue(work, conn._conn, *args, **kwargs)


def write_committed(connection: sqlite3.Connection, sql: str, params: Any = ()) -> int:
    """Run one statement and commit it (rolled back if either fails); the changed row
    count. For `run_on_worker`."""
    try:
        rowcount = connection.execute(sql, params).rowcount
        connection.commit()
    except BaseException:
        connection.rollback()
        raise
    return rowcount


def first_row(connection: sqlite3.Connection, sql: str, params: Any = ()) -> Any:
    """The query's first row, or None. For `run_on_worker`."""
    return connection.execute(sql, params).fetchone()
