"""The event loop ``agentflow extract`` runs on (``agentflow.cli.loop``):
uvloop's when it is installed, asyncio's own under ``AGENTFLOW_LOOP=asyncio``."""

from __future__ import annotations

import asyncio

import pytest
import uvloop

from agentflow.cli.loop import loop_factory, run_loop


async def _loop_type() -> type:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop())


def test_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTFLOW_LOOP", raising=False)
    assert loop_factory() is uvloop.new_event_loop
    assert run_loop(_loop_type()) is uvloop.Loop


@pytest.mark.parametrize("value", ["asyncio", " AsyncIO "])
def test_asyncio_on_request(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AGENTFLOW_LOOP", value)
    assert loop_factory() is None
    loop_type = run_loop(_loop_type())
    assert issubclass(loop_type, asyncio.BaseEventLoop)
    assert not issubclass(loop_type, uvloop.Loop)


def test_result_and_error_pass_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTFLOW_LOOP", raising=False)

    async def fails() -> None:
        await asyncio.sleep(0)
        raise KeyError("x")

    async def value() -> int:
        await asyncio.sleep(0)
        return 7

    assert run_loop(value()) == 7
    with pytest.raises(KeyError):
        run_loop(fails())
