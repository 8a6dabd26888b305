"""One aiohttp session per event loop, each closed on its own loop when that loop ends.

    sessions = LoopSessions(make_session)
    session = sessions.get()      # inside a running loop: that loop's session
    await sessions.aclose()       # close them all

An ``aiohttp.ClientSession`` belongs to the loop that made it: used from
another loop it fails, and dropped unclosed it prints "Unclosed client
session" / "Unclosed connector" and its keep-alive sockets stay open until the
garbage collector finds them. A model is often reused across loops
(``asyncio.run`` twice in a script, a sync call's worker loop next to the
caller's own loop, threads each running a loop), so a client keeps one session
per loop, and never uses or closes a session from a loop other than its own
(a request in flight on another thread's loop is never cut).

Each session is closed *on its own loop, while that loop still runs*, when the
loop ends: a small async generator, started when the session is made,
registers with the running loop through the async-generator hooks the loop
installs (PEP 525, ``sys.set_asyncgen_hooks``); ``asyncio.run`` (and
``asyncio.Runner``) finalize every such generator with
``loop.shutdown_asyncgens()`` before closing the loop, and the generator's
``finally`` awaits ``session.close()``, which closes every pooled connection.
This is the standard library's own mechanism for clean-up at loop end.

A loop closed *without* that step (``loop.run_until_complete`` then
``loop.close()``, no ``shutdown_asyncgens``): nothing can run on it any more.
The next time this client is used (or closed), that loop's session is
finished without a loop call (aiohttp's ``close`` does only bookkeeping on a
closed loop), so aiohttp warns of nothing; the sockets of its pooled
connections are closed by the garbage collector, which asyncio reports as an
unclosed transport. Call ``await model.aclose()`` before closing such a loop
(or use ``asyncio.run``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable

import aiohttp

__all__ = ["LoopSessions"]


async def _close_at_loop_end(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    """Yields once; finalized (``aclose``) when its loop shuts down async generators."""
    try:
        yield
    finally:
        if not session.closed:
            await session.close()


def _start(closer: AsyncGenerator[None, None]) -> None:
    """Run ``closer`` to its ``yield`` without awaiting: its first iteration calls
    the running loop's ``firstiter`` hook, which enrols it for ``shutdown_asyncgens``."""
    step = closer.asend(None)
    try:
        step.send(None)
    except StopIteration:
        return
    step.close()  # pragma: no cover - the body awaits nothing before its yield
    raise RuntimeError("session closer did not reach its yield")  # pragma: no cover


def _finish_now(closer: AsyncGenerator[None, None]) -> None:
    """Finish ``closer`` without a loop call, when there is nothing to wait for: its
    session is closed already, or its loop is (aiohttp's close returns at once on
    a closed loop: no connection can be waited for there)."""
    step = closer.aclose()
    try:
        step.send(None)
    except (StopIteration, RuntimeError):
        return
    step.close()  # pragma: no cover - a close that would wait on a dead loop


class LoopSessions:
    """The sessions of one HTTP client, one per event loop (see the module docstring).

    Args:
        make: builds a new ``aiohttp.ClientSession``; called inside the running
            loop the session will belong to.
    """

    __slots__ = ("_by_loop", "_last", "_last_loop", "_make")

    def __init__(self, make: Callable[[], aiohttp.ClientSession]) -> None:
        self._make = make
        self._by_loop: dict[asyncio.AbstractEventLoop,
                            tuple[aiohttp.ClientSession, AsyncGenerator[None, None]]] = {}
        self._last_loop: asyncio.AbstractEventLoop | None = None  # the hot path: one loop
        self._last: aiohttp.ClientSession | None = None

    def get(self) -> aiohttp.ClientSession:
        """The running loop's open session, made (and enrolled for closing at loop
        end) on first use, or again after ``aclose``.

        Raises:
            RuntimeError: no running event loop.
        """
        loop = asyncio.get_running_loop()
        last = self._last
        if loop is self._last_loop and last is not None and not last.closed:
            return last
        entry = self._by_loop.get(loop)
        if entry is None or entry[0].closed:
            entry = self._by_loop[loop] = self._open(loop)
        self._last_loop, self._last = loop, entry[0]
        return entry[0]

    def current(self) -> aiohttp.ClientSession | None:
        """The running loop's session, if one was made (open or closed), else ``None``."""
        try:
            entry = self._by_loop.get(asyncio.get_running_loop())
        except RuntimeError:
            return None
        return None if entry is None else entry[0]

    def _open(self, loop: asyncio.AbstractEventLoop
              ) -> tuple[aiohttp.ClientSession, AsyncGenerator[None, None]]:
        for old in [old for old in self._by_loop if old.is_closed()]:
            _finish_now(self._by_loop.pop(old)[1])
        stale = self._by_loop.pop(loop, None)
        if stale is not None:  # its session was closed directly: nothing to wait for
            _finish_now(stale[1])
        session = self._make()
        closer = _close_at_loop_end(session)
        _start(closer)
        return session, closer

    async def aclose(self) -> None:
        """Close every session: the running loop's now; another live loop's on that
        loop (scheduled, thread-safe); a closed loop's without a loop call. Idempotent."""
        here = asyncio.get_running_loop()
        entries, self._by_loop = self._by_loop, {}
        self._last_loop = self._last = None
        for loop, (_, closer) in entries.items():
            if loop is here:
                await closer.aclose()
            elif loop.is_closed():
                _finish_now(closer)
            else:
                try:
                    asyncio.run_coroutine_threadsafe(_finish(closer), loop)
                except RuntimeError:  # closed meanwhile
                    _finish_now(closer)


async def _finish(closer: AsyncGenerator[None, None]) -> None:
    await closer.aclose()
