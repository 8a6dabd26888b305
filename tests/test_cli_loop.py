"""The event loop ``agentflow extract`` runs on (``agentflow.cli.loop``):
uvloop's when it is installed, asyncio's own under ``AGENTFLOW_LOOP=asyncio``;
the garbage collector tuned for the run (``agentflow.cli.collector``)."""

from __future__ import annotations

import asyncio
import gc

import pytest
import uvloop

from agentflow.cli.collector import YOUNG_THRESHOLD
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


async def _collector_state() -> tuple[tuple[int, int, int], int]:
    await asyncio.sleep(0)
    return gc.get_threshold(), gc.get_freeze_count()


def test_run_tunes_the_collector_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTFLOW_GC", raising=False)
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    threshold, frozen = run_loop(_collector_state())
    assert threshold == (YOUNG_THRESHOLD, *before[1:])
    assert frozen > frozen_before  # the set-up's objects: no collection walks them
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, frozen_before)


def test_collector_restored_after_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTFLOW_GC", raising=False)
    before = gc.get_threshold()

    async def fails() -> None:
        await asyncio.sleep(0)
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_loop(fails())
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


@pytest.mark.parametrize("value", ["default", " Default "])
def test_python_collector_on_request(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AGENTFLOW_GC", value)
    before = gc.get_threshold()
    assert run_loop(_collector_state()) == (before, 0)
