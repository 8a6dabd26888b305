"""An exchange's deadline (``providers._exchange._Deadline``) keeps
``asyncio.timeout``'s rules: its own expiry is a ``DeadlineExceededError``
and leaves the task uncancelled; a cancellation from outside stays one."""

from __future__ import annotations

import asyncio

import pytest

from agentflow.errors import DeadlineExceededError
from agentflow.providers import HttpSettings
from agentflow.providers._http import HttpClient, read_json
from tests.test_http import Raw, raw_server

JSON = {"content-type": "application/json"}


async def test_the_deadline_passing_leaves_the_task_as_it_was() -> None:
    late = Raw([b"{}"], headers=JSON, latency=2.0)
    async with raw_server(late, Raw([b"{}"], headers=JSON)) as (url, _):
        client = HttpClient(url, vendor="t", settings=HttpSettings(max_retries=0))
        task = asyncio.current_task()
        assert task is not None
        with pytest.raises(DeadlineExceededError) as info:
            async with client.open("x", {}, deadline=0.2) as response:
                await read_json(response)
        assert isinstance(info.value.__cause__, TimeoutError)
        assert task.cancelling() == 0  # its own cancel taken back: the task goes on
        async with client.open("x", {}, deadline=60.0) as response:  # the next one is served
            assert await read_json(response) == {}
        await client.aclose()


async def test_a_cancel_from_outside_is_not_a_deadline() -> None:
    late = Raw([b"{}"], headers=JSON, latency=2.0)
    async with raw_server(late) as (url, seen):
        client = HttpClient(url, vendor="t", settings=HttpSettings(max_retries=0))

        async def one() -> None:
            async with client.open("x", {}, deadline=30.0) as response:
                await read_json(response)

        task = asyncio.ensure_future(one())
        async with asyncio.timeout(60):  # a guard against a hang only
            while not seen:  # noqa: ASYNC110 - the server offers no event
                await asyncio.sleep(0.01)
        task.cancel()  # the request is out, waiting for its reply
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()


async def test_an_outer_timeout_that_passes_first_is_the_outer_one_s() -> None:
    late = Raw([b"{}"], headers=JSON, latency=2.0)
    async with raw_server(late) as (url, _):
        client = HttpClient(url, vendor="t", settings=HttpSettings(max_retries=0))
        with pytest.raises(TimeoutError) as info:
            async with asyncio.timeout(0.2):
                async with client.open("x", {}, deadline=30.0) as response:
                    await read_json(response)
        assert not isinstance(info.value, DeadlineExceededError)
        await client.aclose()
