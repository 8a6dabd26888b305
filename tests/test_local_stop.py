"""The embedded model's server always stops: a 4-slot llama.cpp server started
and closed again and again with requests in flight, under a CPU-burning side
load (``agentflow.providers._local_process``: in-process, llama.cpp's
destructor could wait forever on a connection this process held open).

Each cycle waits for the state it closes in (requests just begun, every slot
decoding with more queued, some replies done); nothing is timed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path

import pytest

from agentflow.errors import InvalidModelError, ModelClosedError, ProviderError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions
from agentflow.providers._local_process import ServerProcess
from agentflow.providers.local import LocalModel, bundled_available

CYCLES = int(os.environ.get("AGENTFLOW_STOP_CYCLES", "6"))
"""Start/stop cycles (each of the three closing moments twice by default)."""

SLOTS, REQUESTS = 4, 6  # two requests wait for a slot


@pytest.fixture
def side_load() -> Iterator[None]:
    """One process spinning on each CPU for the test's duration."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(os.cpu_count() or 1)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


async def first_of(waits: list[Awaitable[object]]) -> None:
    """Wait until one of ``waits`` is done (the others are cancelled)."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def wait_policy(pid: int) -> bytes | None:
    """The ``OMP_WAIT_POLICY`` of process ``pid`` (Linux), ``None`` where unknown."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    return next((v[16:] for v in environ if v.startswith(b"OMP_WAIT_POLICY=")), b"")


async def cycle(moment: int) -> None:
    model = LocalModel(threads=1, parallel=SLOTS, max_tokens=48)
    model._ensure_server()
    server = model._server
    assert isinstance(server, ServerProcess) and server.running
    if moment == 0 and "OMP_WAIT_POLICY" not in os.environ:
        assert wait_policy(server.process.pid) in (b"PASSIVE", None)  # THREAD_WAIT
    first_chunk = [asyncio.Event() for _ in range(REQUESTS)]

    async def reply(k: int) -> None:
        async for _ in model.stream([Msg.user(f"Tell story {k} about a cat.")], (),
                                    GenerateOptions()):
            first_chunk[k].set()

    streams = [asyncio.create_task(reply(k)) for k in range(REQUESTS)]
    if moment == 0:  # one turn of the loop: every request has begun opening its connection
        await asyncio.sleep(0)
    elif moment == 1:  # every slot is decoding (two requests wait for one)
        while sum(e.is_set() for e in first_chunk) < SLOTS:
            await first_of([e.wait() for e in first_chunk if not e.is_set()])
    else:  # some replies are done, others decoding
        await first_of([asyncio.shield(s) for s in streams])
    await model.aclose()
    assert model._server is None and not server.running  # ended and reaped
    outcomes = await asyncio.gather(*streams, return_exceptions=True)
    # a request in flight fails as the server goes (ProviderError); one that had
    # not reached the model yet is refused as the closed model's (ModelClosedError)
    assert all(o is None or isinstance(o, ProviderError | ModelClosedError)
               for o in outcomes), outcomes
    assert model._server is None  # no request started it again
    if moment == 2:
        assert any(o is None for o in outcomes)


async def test_a_four_slot_server_always_stops_with_requests_in_flight_under_load(
        side_load: None) -> None:
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    for i in range(CYCLES):
        await cycle(i % 3)


def test_a_server_that_cannot_load_is_a_clear_error(tmp_path: Path) -> None:
    """One message names the file and says why in llama.cpp's words (the
    first error of its log, which the child's exception does not carry);
    the child's process has ended."""
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf")
    model = LocalModel(str(bad), threads=1)
    with pytest.raises(InvalidModelError) as caught:
        model._ensure_server()
    message = str(caught.value)
    assert message == (f"llama.cpp could not load {str(bad)!r}: gguf_init_from_reader: "
                       "invalid magic characters: 'not ', expected 'GGUF'")
    assert model._server is None
    with pytest.raises(InvalidModelError, match=r"^llama\.cpp could not start: .*no_such_setting"):
        ServerProcess({"no_such_setting": 1})


def test_lines_printed_at_the_childs_start_up_do_not_break_its_reply(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``sitecustomize`` (or a library) printing before the child answers is
    skipped: the child's own reply still names what went wrong."""
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    (tmp_path / "sitecustomize.py").write_text('print("hello from start-up")\nprint("{}")\n')
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(InvalidModelError, match="no_such_setting"):
        ServerProcess({"no_such_setting": 1})
