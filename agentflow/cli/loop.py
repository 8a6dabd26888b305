"""The event loop ``agentflow extract`` runs on: uvloop when it is installed
(the ``fast`` extra: ``pip install 'agentflow[fast]'``), else asyncio's own.

uvloop (libuv's event loop for asyncio, https://github.com/MagicStack/uvloop)
runs the loop, its sockets and its timers in C: on a run of many short
documents against a fast endpoint, the loop's own work is a large share of
agentflow's CPU per document. Nothing depends on it: the results are the
same on either loop. ``AGENTFLOW_LOOP=asyncio`` keeps asyncio's loop even
when uvloop is installed.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from agentflow.cli.collector import collector

__all__ = ["loop_factory", "run_loop"]

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's ``new_event_loop`` when uvloop is installed and
    ``AGENTFLOW_LOOP`` is not ``asyncio``; ``None`` (asyncio's default loop)
    otherwise."""
    if os.environ.get("AGENTFLOW_LOOP", "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run_loop(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, on the loop ``loop_factory`` picks, with the
    garbage collector tuned for the run (``agentflow.cli.collector``)."""
    with collector(), asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
