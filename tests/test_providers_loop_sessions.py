"""A model reused across event loops: one aiohttp session per loop, each closed on
its own loop when the loop ends -- no "Unclosed client session"/"Unclosed
connector" warning, no socket left open (checked in /proc against a fake
vendor on 127.0.0.1 that runs on a thread and loop of its own)."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentflow.messages import Msg
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate

from .fakes.base import FakeReply
from .fakes.openai import OpenAIFake
from .leak_watch import collect_earlier_garbage
from .provider_scenarios import FAST


@pytest.fixture
def server() -> Iterator[tuple[str, int]]:
    """An OpenAI fake on its own thread and loop (the tests' loops come and go);
    yields its base URL and port."""
    ready = threading.Event()
    found: dict[str, object] = {}

    async def serve() -> None:
        stop = asyncio.Event()
        found["stop"] = (asyncio.get_running_loop(), stop)
        async with OpenAIFake() as fake:
            fake.default = FakeReply(text="hi")
            fake.record = False
            found["url"] = fake.url
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(60)
    url = str(found["url"])
    yield url, int(url.rsplit(":", 1)[1].split("/")[0])
    loop, stop = found["stop"]  # type: ignore[misc]
    loop.call_soon_threadsafe(stop.set)
    thread.join(60)


def open_client_sockets(port: int) -> int:
    """This process's established TCP connections whose remote port is ``port``."""
    mine = set()
    for fd in os.listdir("/proc/self/fd"):
        try:  # the server thread opens and closes descriptors meanwhile
            mine.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cols = row.split()
            remote_port = int(cols[2].rsplit(":", 1)[1], 16)
            if remote_port == port and cols[3] == "01" and f"socket:[{cols[9]}]" in mine:
                count += 1
    return count


def unclosed(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)
            or "nclosed" in str(w.message)]


def test_asyncio_run_twice_closes_each_loops_session(server: tuple[str, int]) -> None:
    url, port = server
    model = OpenAIChatModel("gpt-4o-mini", base_url=url, api_key="k", settings=FAST)
    sessions = []

    async def call() -> str:
        reply = await generate(model, [Msg.user("hi")])
        sessions.append(model._http._session)
        assert open_client_sockets(port) == 1  # a pooled keep-alive connection
        return reply.message.text

    collect_earlier_garbage()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert asyncio.run(call()) == "hi"
        # the loop has ended: its session was closed on it, its socket with it
        assert sessions[0] is not None and sessions[0].closed
        assert open_client_sockets(port) == 0
        assert asyncio.run(call()) == "hi"
        assert sessions[1] is not sessions[0] and sessions[1].closed
        assert asyncio.run(call()) == "hi"
        del sessions[:]
        gc.collect()
    assert unclosed(caught) == []
    assert open_client_sockets(port) == 0


def test_loops_in_threads_each_get_their_own_session(server: tuple[str, int]) -> None:
    url, port = server
    model = OpenAIChatModel("gpt-4o-mini", base_url=url, api_key="k", settings=FAST)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(2):
                assert asyncio.run(generate(model, [Msg.user("hi")])).message.text == "hi"
        except BaseException as exc:
            errors.append(exc)

    collect_earlier_garbage()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=work) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
            assert not thread.is_alive()
        asyncio.run(model.aclose())  # idempotent: each loop closed its own already
        gc.collect()
    assert errors == []
    assert unclosed(caught) == []
    assert open_client_sockets(port) == 0


def test_a_loop_closed_without_shutdown_is_released_without_touching_it(
        server: tuple[str, int]) -> None:
    url, port = server
    model = OpenAIChatModel("gpt-4o-mini", base_url=url, api_key="k", settings=FAST)
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(generate(model, [Msg.user("hi")])).message.text == "hi"
    loop.run_until_complete(model.aclose())  # closed on its loop, as the docs say
    loop.close()
    assert open_client_sockets(port) == 0

    model = OpenAIChatModel("gpt-4o-mini", base_url=url, api_key="k", settings=FAST)
    bare = asyncio.new_event_loop()  # no aclose, no shutdown_asyncgens: nothing can run on it
    assert bare.run_until_complete(generate(model, [Msg.user("hi")])).message.text == "hi"

    async def current() -> object:
        return model._http._session

    stale = bare.run_until_complete(current())
    bare.close()
    collect_earlier_garbage()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # the next loop finds the dead loop's session and finishes it: no loop call
        # on the closed loop (that would raise), no aiohttp warning
        assert asyncio.run(generate(model, [Msg.user("hi")])).message.text == "hi"
        assert stale is not None and stale.closed
        del stale
        gc.collect()
    assert not [m for m in unclosed(caught) if "client session" in m or "connector" in m]
