"""Reads shared between concurrent callers ("single flight").

When a class presses Enter together, fifty chats of one project each ask GNS3 the same
questions (is the project opened? what is its topology?) within milliseconds.
`SingleFlight` lets the callers asking for the same key while a read is in flight share
its answer, so a burst costs one read rather than fifty. Nothing is kept once the answer
has arrived: the next caller reads again and sees any change made meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight(Generic[K, V]):
    """`await reads(key)`: `fetch(key)`, shared with every caller that asks for `key` while
    it runs; a failure reaches every one of them.

    `forget(key)` detaches a read in flight: its current callers still get its answer,
    later callers start a new read. Call it when the thing read has just changed.
    A caller cancelled while waiting does not cancel the read the others wait for.
    """

    def __init__(self, fetch: Callable[[K], Awaitable[V]]) -> None:
        self._fetch = fetch
        self._in_flight: dict[K, asyncio.Future[V]] = {}

    async def __call__(self, key: K) -> V:
        future = self._in_flight.get(key)
        if future is None:
            future = asyncio.ensure_future(self._fetch(key))
            self._in_flight[key] = future
            future.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(future)

    def forget(self, key: K) -> None:
        """The next call for `key` reads again, even while a read is in flight."""
        self._in_flight.pop(key, None)

    def _finished(self, key: K, future: asyncio.Future[V]) -> None:
        if not future.cancelled():
            future.exception()  # retrieved, even if every caller was cancelled
        if self._in_flight.get(key) is future:
            del self._in_flight[key]
