"""The embedded model stops its server only once no request of its own is open
(``agentflow.providers._local_shutdown``)."""

from __future__ import annotations

import asyncio

from agentflow.providers._local_shutdown import InFlight


async def test_drained_at_once_when_nothing_is_open() -> None:
    assert await InFlight().drained(0) is True


async def test_drained_waits_for_the_last_open_request() -> None:
    in_flight = InFlight()
    opened, release = asyncio.Event(), asyncio.Event()

    async def request() -> None:
        with in_flight:
            opened.set()
            await release.wait()

    tasks = [asyncio.create_task(request()) for _ in range(2)]
    await opened.wait()
    waiting = asyncio.create_task(in_flight.drained(60))
    await asyncio.sleep(0)
    assert not waiting.done() and in_flight.count == 2
    release.set()
    assert await waiting is True and in_flight.count == 0
    await asyncio.gather(*tasks)


async def test_drained_gives_up_on_a_request_that_never_ends() -> None:
    in_flight = InFlight()
    with in_flight:
        assert await in_flight.drained(0.01) is False  # the bound: aclose still returns
    assert in_flight.count == 0


async def test_an_error_inside_still_closes_the_request() -> None:
    in_flight = InFlight()
    try:
        with in_flight:
            raise ConnectionError("closed")
    except ConnectionError:
        pass
    assert in_flight.count == 0 and await in_flight.drained(0) is True
