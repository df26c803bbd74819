"""`LiveDecisions`: the approvals that turns streaming in this process wait for.

A turn paused by `interrupt()` registers its request here before the client hears of it
(`expect`), then waits (`wait`) for `decide`, the request's timeout, an abort, or the
service closing (`Detached`: the request stays pending in the checkpoint, for
`resume_chat` later).
"""

from __future__ import annotations

import asyncio

from ..agent.approval import ApprovalDecision, ApprovalRequest


class Detached(Exception):
    """The service closes while a turn waits for a decision: the turn stops unresumed."""


class LiveDecisions:
    """Approval id -> (session id, the decision's future), for streams of this process."""

    def __init__(self) -> None:
        self._awaited: dict[str, tuple[str, asyncio.Future[ApprovalDecision]]] = {}
        self.closing = asyncio.Event()
        """Set when the service closes: turns waiting for a decision detach (it stays
        pending in the checkpoint for the next server) instead of being aborted."""

    def expect(self, request: ApprovalRequest, session_id: str) -> None:
        """Register `request` as awaited by a stream of session `session_id` (before the
        client hears of it, so `decide` and `awaits` know it at once)."""
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._awaited[request.approval_id] = (session_id, future)

    async def wait(self, request: ApprovalRequest, abort: asyncio.Event) -> ApprovalDecision | None:
        """The decision on `request` (a "timeout" one when its time runs out); None when
        the turn was aborted while waiting. `Detached` when the service closes."""
        future = self._awaited[request.approval_id][1]
        aborting = asyncio.ensure_future(abort.wait())
        closing = asyncio.ensure_future(self.closing.wait())
        try:
            waited: set[asyncio.Future[ApprovalDecision] | asyncio.Task[bool]]
            waited = {future, aborting, closing}
            await asyncio.wait(
                waited,
                timeout=max(request.remaining(), 0.0),
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            aborting.cancel()
            closing.cancel()
        if future.done():
            return future.result()
        if self.closing.is_set() and not abort.is_set():
            raise Detached
        if abort.is_set():
            future.cancel()
            return None
        decision = ApprovalDecision(decision="timeout")
        future.set_result(decision)
        return decision

    def decide(self, approval_id: str, decision: ApprovalDecision) -> bool:
        """Answer an approval a stream waits for; False if none does."""
        live = self._awaited.get(approval_id)
        if live is None or live[1].done():
            return False
        live[1].set_result(decision)
        return True

    def awaits(self, session_id: str) -> bool:
        """Whether a stream of the session waits for a decision now."""
        waiting = (not f.done() for owner, f in self._awaited.values() if owner == session_id)
        return any(waiting)

    def state(self, approval_id: str, session_id: str) -> str | None:
        """ "live" (a stream of the session waits for it), "decided" (it was answered
        while streamed here), None (not known here)."""
        live = self._awaited.get(approval_id)
        if live is None or live[0] != session_id:
            return None
        return "decided" if live[1].done() else "live"

    def decided(self) -> set[str]:
        """The ids of the approvals answered while streamed here."""
        return {key for key, (_, future) in self._awaited.items() if future.done()}

    def forget(self, session_id: str) -> None:
        """Drop the session's approvals (its stream ended)."""
        for approval_id in [
            key for key, (owner, _) in self._awaited.items() if owner == session_id
        ]:
            del self._awaited[approval_id]
