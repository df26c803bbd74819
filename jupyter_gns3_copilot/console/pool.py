"""Many consoles at once: one lock per console, reusable sessions, fan-out, readiness.

`ConsolePool` is the entry point for everything above this package: it guarantees that
two callers never interleave on one device (one `asyncio.Lock` per `host:port`), keeps
sessions open for reuse (reconnecting transparently when a cached one has died), runs
command lists on many devices concurrently, and waits for a started node's prompt.
A command that runs too long or is aborted is interrupted by its session, which waits for
the prompt before the lock is released, so the next caller finds the console usable.
A pool belongs to the event loop it is first used on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from .errors import (
    ConsoleAborted,
    ConsoleClosedError,
    ConsoleConnectError,
    ConsoleError,
    ConsoleRefusedError,
    ConsoleTimeoutError,
)
from .models import CommandResult, ConsoleTarget, DeviceResult
from .session import ConsoleSession

DEFAULT_CONCURRENCY = 32
"""Devices worked on at once by `run_many`: far above a classroom lab's size, low enough
to stay polite to one GNS3 host's telnet proxies."""
TRUST_RECENT = 5.0
"""A kept session that showed its prompt less than this many seconds ago is reused as is."""
_TRUST_QUIET = 600.0
"""An older kept session is reused as is while it is `quiet` (open, and its console printed
nothing since its last prompt: nobody typed on it, no command left running, no logout
message), for at most this long since its prompt; otherwise it is first checked with an
Enter. The bound covers a connection silently dropped on the way (a NAT's idle timeout),
which only an Enter finds out."""
_READY_ATTEMPT = 5.0
"""Longest single wait for a prompt inside `wait_ready`, so progress is reported often."""

ProgressCallback = Callable[[float, str], None]
"""`progress(elapsed_seconds, message)`, called by `wait_ready` while it waits."""

Job = tuple[ConsoleTarget, Sequence[str]]
"""One device and the commands to run on it, in order."""

CommandOutputCallback = Callable[[ConsoleTarget, str, str], None]
"""`on_output(target, command, output_so_far)` while a command's output arrives (at most
once per `dialogue.OUTPUT_INTERVAL` per command)."""

_T = TypeVar("_T")


class ConsolePool:
    """Sessions and locks for device consoles, keyed by `host:port`.

    Use as `async with ConsolePool() as pool:`; `aclose()` closes every kept session.
    With `keep_open=False` each use opens and closes its own connection (the lock still
    serialises callers).
    """

    def __init__(
        self,
        *,
        keep_open: bool = True,
        connect_timeout: float = 10.0,
        prompt_timeout: float = 10.0,
        trust_recent: float = TRUST_RECENT,
    ) -> None:
        self.keep_open = keep_open
        self.trust_recent = trust_recent
        """Seconds since its last prompt for which a kept session is reused unchecked."""
        self.connect_timeout = connect_timeout
        self.prompt_timeout = prompt_timeout
        self._locks: dict[str, asyncio.Lock] = {}
        self._sessions: dict[str, ConsoleSession] = {}

    async def __aenter__(self) -> ConsolePool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def lock(self, target: ConsoleTarget) -> asyncio.Lock:
        """The lock of `target`'s console (the same object for every target on that port)."""
        return self._locks.setdefault(target.key, asyncio.Lock())

    @contextlib.asynccontextmanager
    async def session(
        self,
        target: ConsoleTarget,
        *,
        abort_event: asyncio.Event | None = None,
        timeout: float | None = None,
        interrupt_busy: bool = True,
    ) -> AsyncIterator[ConsoleSession]:
        """Hold `target`'s console lock and yield an open session at its prompt.

        A kept session idle for a while is checked with an Enter first when its console
        printed something meanwhile or it has been quiet very long (`_TRUST_QUIET`), and
        brought out of configuration mode; a dead one is replaced by a new connection. A
        console busy with a command someone left running is interrupted while waking,
        unless `interrupt_busy` is false (see `ConsoleSession.wake`). `timeout` bounds
        connecting and waking (default: the pool's timeouts). Raises the `ConsoleError` of a failed
        connection or login, or `ConsoleAborted` when `abort_event` is set meanwhile.
        """
        async with _locked(self.lock(target), abort_event):
            session = await self._checkout(target, abort_event, timeout, interrupt_busy)
            try:
                yield session
            finally:
                if self.keep_open and session.is_open:
                    session.watch()
                    self._sessions[target.key] = session
                else:
                    self._sessions.pop(target.key, None)
                    await session.close()

    async def run(
        self,
        target: ConsoleTarget,
        commands: Sequence[str],
        *,
        per_command_timeout: float = 30.0,
        abort_event: asyncio.Event | None = None,
        confirm: bool = True,
        on_output: CommandOutputCallback | None = None,
    ) -> DeviceResult:
        """Run `commands` in order on one device and report them as a `DeviceResult`.

        Never raises a `ConsoleError`: connection problems make the result `failed`.
        Commands the device rejects are reported and the next ones still run; after a
        timeout, a lost connection or an abort, the remaining commands are not sent and
        are listed as not run. A command overdue or aborted is interrupted first (see
        `ConsoleSession.send`); its error says whether the console is back at its prompt.
        `on_output` receives each command's output while it arrives.
        """
        commands = list(commands)
        results: list[CommandResult] = []
        stop_reason: str | None = None
        try:
            async with self.session(target, abort_event=abort_event) as console:
                for command in commands:
                    before = asyncio.get_running_loop().time()
                    report = _OutputSoFar(on_output, target, command)
                    try:
                        result = await abortable(
                            console.send(
                                command,
                                timeout=per_command_timeout,
                                confirm=confirm,
                                on_output=report,
                            ),
                            abort_event,
                        )
                    except ConsoleError as exc:
                        stop_reason = str(exc)
                        if isinstance(exc, ConsoleAborted):
                            stop_reason += " " + console.interrupted_state()
                        results.append(
                            CommandResult(
                                command=command,
                                prompt=console.prompt,
                                output=getattr(exc, "partial_output", "") or report.output,
                                ok=False,
                                error=stop_reason,
                                elapsed=asyncio.get_running_loop().time() - before,
                            )
                        )
                        break
                    results.append(result)
        except ConsoleError as exc:
            stop_reason = str(exc)
        return device_result(target, commands, results, stop_reason)

    async def run_many(
        self,
        jobs: Sequence[Job],
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        per_command_timeout: float = 30.0,
        abort_event: asyncio.Event | None = None,
        confirm: bool = True,
        on_output: CommandOutputCallback | None = None,
    ) -> list[DeviceResult]:
        """Run each device's command list concurrently; results come in input order.

        At most `concurrency` devices are worked on at once; jobs for the same console
        take turns on its lock. Setting `abort_event` stops every wait promptly (running
        commands are interrupted first): devices not finished report
        `failed`/`partial_success` with an "aborted" error. `on_output` as in `run`.
        """
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}.")
        slots = asyncio.Semaphore(concurrency)

        async def one(target: ConsoleTarget, commands: Sequence[str]) -> DeviceResult:
            try:
                async with _locked(slots, abort_event):
                    return await self.run(
                        target,
                        commands,
                        per_command_timeout=per_command_timeout,
                        abort_event=abort_event,
                        confirm=confirm,
                        on_output=on_output,
                    )
            except ConsoleAborted as exc:
                return device_result(target, list(commands), [], str(exc))

        return list(await asyncio.gather(*(one(target, cmds) for target, cmds in jobs)))

    async def wait_ready(
        self,
        target: ConsoleTarget,
        *,
        timeout: float = 120.0,
        poll_interval: float = 0.5,
        abort_event: asyncio.Event | None = None,
        progress: ProgressCallback | None = None,
    ) -> float:
        """Wait until `target`'s console shows its prompt; return the seconds waited.

        Meant for right after a node start, instead of a fixed sleep: connects (retrying
        every `poll_interval` while the console refuses or drops connections), presses
        Enter until the prompt appears, and logs in when asked. `progress(elapsed,
        message)` is called after each failed attempt and once when ready. Raises
        `ConsoleTimeoutError` after `timeout` seconds, `ConsoleAuthError` when the console
        is up but refuses the credentials, `ConsoleRefusedError` at once when GNS3 refuses
        the console websocket to this account, `ConsoleAborted` when `abort_event` is set.
        The session stays open in the pool when `keep_open` is set.
        """
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout
        problem = "no attempt yet"
        while True:
            attempt = max(0.05, min(deadline - loop.time(), _READY_ATTEMPT))
            try:
                async with self.session(
                    target, abort_event=abort_event, timeout=attempt, interrupt_busy=False
                ):
                    pass
            except ConsoleRefusedError:
                raise
            except (ConsoleConnectError, ConsoleClosedError, ConsoleTimeoutError) as exc:
                problem = str(exc)
            else:
                elapsed = loop.time() - started
                if progress is not None:
                    progress(elapsed, f"{target.name} is ready")
                return elapsed
            elapsed = loop.time() - started
            if loop.time() + poll_interval >= deadline:
                raise ConsoleTimeoutError(
                    f"{target.name}: console {target.key} showed no prompt within "
                    f"{timeout:g} s; is the node started and done booting? "
                    f"Last problem: {problem}"
                )
            if progress is not None:
                progress(elapsed, f"waiting for {target.name}'s console: {problem}")
            await abortable(asyncio.sleep(poll_interval), abort_event)

    async def aclose(self) -> None:
        """Close every kept session."""
        sessions = list(self._sessions.values())
        self._sessions.clear()
        for session in sessions:
            await session.close()

    async def _checkout(
        self,
        target: ConsoleTarget,
        abort_event: asyncio.Event | None,
        timeout: float | None,
        interrupt_busy: bool,
    ) -> ConsoleSession:
        prompt_timeout = min(timeout or self.prompt_timeout, self.prompt_timeout)
        kept = self._sessions.pop(target.key, None)
        if kept is not None and kept.is_open and kept.target == target:
            try:
                idle = asyncio.get_running_loop().time() - kept.last_used
                if idle > self.trust_recent and not (kept.quiet and idle < _TRUST_QUIET):
                    await abortable(
                        kept.wake(timeout=prompt_timeout, interrupt_busy=interrupt_busy),
                        abort_event,
                    )
                await abortable(kept.exit_config(timeout=prompt_timeout), abort_event)
                return kept
            except ConsoleAborted:
                raise
            except ConsoleError:
                pass
        if kept is not None:
            await kept.close()
        fresh = ConsoleSession(
            target,
            connect_timeout=min(timeout or self.connect_timeout, self.connect_timeout),
            prompt_timeout=prompt_timeout,
        )
        await abortable(fresh.open(interrupt_busy=interrupt_busy), abort_event)
        return fresh


async def run_many(
    jobs: Sequence[Job],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    per_command_timeout: float = 30.0,
    abort_event: asyncio.Event | None = None,
    confirm: bool = True,
    pool: ConsolePool | None = None,
) -> list[DeviceResult]:
    """`ConsolePool.run_many` on `pool`, or on a throw-away pool closed afterwards."""
    async with contextlib.AsyncExitStack() as stack:
        if pool is None:
            pool = await stack.enter_async_context(ConsolePool(keep_open=False))
        return await pool.run_many(
            jobs,
            concurrency=concurrency,
            per_command_timeout=per_command_timeout,
            abort_event=abort_event,
            confirm=confirm,
        )


async def wait_ready(
    target: ConsoleTarget,
    *,
    timeout: float = 120.0,
    poll_interval: float = 0.5,
    abort_event: asyncio.Event | None = None,
    progress: ProgressCallback | None = None,
    pool: ConsolePool | None = None,
) -> float:
    """`ConsolePool.wait_ready` on `pool`, or on a throw-away pool closed afterwards."""
    async with contextlib.AsyncExitStack() as stack:
        if pool is None:
            pool = await stack.enter_async_context(ConsolePool(keep_open=False))
        return await pool.wait_ready(
            target,
            timeout=timeout,
            poll_interval=poll_interval,
            abort_event=abort_event,
            progress=progress,
        )


@contextlib.asynccontextmanager
async def _locked(
    lock: asyncio.Lock | asyncio.Semaphore, abort_event: asyncio.Event | None
) -> AsyncIterator[None]:
    """Hold `lock`, giving up with `ConsoleAborted` if `abort_event` is set while waiting.

    A caller cancelled in the instant between the lock being granted and the caller
    resuming releases it again, so a console's lock is never left held by nobody.
    """
    acquiring = asyncio.ensure_future(lock.acquire())
    try:
        await abortable(acquiring, abort_event)
    except BaseException:
        if acquiring.done() and not acquiring.cancelled() and acquiring.exception() is None:
            lock.release()
        raise
    try:
        yield
    finally:
        lock.release()


async def abortable(awaitable: Awaitable[_T], abort_event: asyncio.Event | None) -> _T:
    """Await `awaitable`, or cancel it and raise `ConsoleAborted` once `abort_event` is set.

    A result that is already there wins over a simultaneous abort, so an acquired lock is
    never lost. The cancelled work is awaited before returning, also when the caller itself
    is cancelled: a console command gets to interrupt itself and see its prompt (bounded by
    the session's `interrupt_timeout`) while the caller still holds the console's lock.
    """
    if abort_event is None:
        return await awaitable
    task = asyncio.ensure_future(awaitable)
    aborted = asyncio.ensure_future(abort_event.wait())
    try:
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        aborted.cancel()
        if not task.done():
            task.cancel()
            await _until_done(task)
        if not task.cancelled():
            task.exception()  # retrieved here when the caller's cancellation wins
    if not task.cancelled():
        return task.result()
    raise ConsoleAborted("Stopped: the request was aborted.")


async def _until_done(task: asyncio.Future[Any]) -> None:
    """Wait until `task` has finished, however often the caller is cancelled meanwhile
    (then re-raise the cancellation): a console command winding down must never run on
    beside the next caller of its console. `task` bounds its own wind-down."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


class _OutputSoFar:
    """`on_output` of one command: remembers the output (an aborted command's partial
    output) and passes it on to the pool caller's callback, if any."""

    def __init__(
        self, on_output: CommandOutputCallback | None, target: ConsoleTarget, command: str
    ) -> None:
        self.output = ""
        self._forward = on_output
        self._target, self._command = target, command

    def __call__(self, output: str) -> None:
        self.output = output
        if self._forward is not None:
            self._forward(self._target, self._command, output)


def device_result(
    target: ConsoleTarget,
    commands: list[str],
    results: list[CommandResult],
    stop_reason: str | None,
) -> DeviceResult:
    succeeded = sum(result.ok for result in results)
    if stop_reason is None and succeeded == len(commands):
        status = "success"
    elif succeeded == 0:
        status = "failed"
    else:
        status = "partial_success"
    errors = [f"{r.command}: {r.error}" for r in results if not r.ok]
    if not results and stop_reason:
        errors.append(stop_reason)
    not_run = commands[len(results) :]
    if not_run and results:
        errors.append("not run after that: " + "; ".join(not_run))
    output = "\n\n".join(f"{r.prompt} {r.command}\n{r.output}".strip() for r in results)
    return DeviceResult(
        device_name=target.name,
        status=status,
        output=output,
        error="\n".join(errors) or None,
        commands=commands,
        results=results,
    )
