"""SingleFlight: concurrent reads of one key share one fetch; nothing is kept afterwards."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_gns3_copilot.single_flight import SingleFlight


class Reader:
    """A fetch that counts its calls and waits until released."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = asyncio.Event()

    async def __call__(self, key: str) -> str:
        self.calls.append(key)
        number = len(self.calls)
        await self.release.wait()
        if key == "bad":
            raise LookupError(f"no {key}")
        return f"{key}#{number}"


async def test_callers_of_one_key_share_a_read_in_flight() -> None:
    reader = Reader()
    reads = SingleFlight(reader)
    waiting = [asyncio.ensure_future(reads(key)) for key in ("a", "a", "b", "a")]
    await asyncio.sleep(0)
    reader.release.set()
    assert await asyncio.gather(*waiting) == ["a#1", "a#1", "b#2", "a#1"]
    assert reader.calls == ["a", "b"]
    # Nothing kept: the next call reads again.
    assert await reads("a") == "a#3"


async def test_a_failure_reaches_every_caller_and_is_not_kept() -> None:
    reader = Reader()
    reads = SingleFlight(reader)
    waiting = [asyncio.ensure_future(reads("bad")) for _ in range(3)]
    await asyncio.sleep(0)
    reader.release.set()
    outcomes = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(outcome, LookupError) for outcome in outcomes)
    with pytest.raises(LookupError):
        await reads("bad")
    assert reader.calls == ["bad", "bad"]


async def test_forget_detaches_the_read_in_flight() -> None:
    reader = Reader()
    reads = SingleFlight(reader)
    before = asyncio.ensure_future(reads("a"))
    await asyncio.sleep(0)
    reads.forget("a")  # e.g. a tool just changed the lab
    after = asyncio.ensure_future(reads("a"))
    await asyncio.sleep(0)
    reader.release.set()
    assert (await before, await after) == ("a#1", "a#2")
    assert reader.calls == ["a", "a"]


async def test_a_cancelled_caller_does_not_cancel_the_others() -> None:
    reader = Reader()
    reads = SingleFlight(reader)
    leaving = asyncio.ensure_future(reads("a"))
    staying = asyncio.ensure_future(reads("a"))
    await asyncio.sleep(0)
    leaving.cancel()
    await asyncio.sleep(0)
    reader.release.set()
    assert await staying == "a#1"
    assert leaving.cancelled()
