"""``agentflow extract --workers N``: the run spread over worker processes
writes the records one process writes, stops cleanly on a set-up fault or a
dead worker (and resumes after it), and refuses what it cannot do."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import struct
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentflow.batch_types import ExtractResult
from agentflow.cli import main
from agentflow.cli.frames import FrameError, frame, frames
from agentflow.cli.input_done import InputDone, Reach, Settle
from agentflow.cli.workers import WorkerExitedError, _read, _Worker, shares
from agentflow.documents.names import loads_record
from agentflow.errors import ProviderConnectionError
from agentflow.model import Usage
from tests.fakes.openai import OpenAIFake
from tests.test_cli import AGENTFLOW, WITH_SIGINT, contact_args, slow_fake, until
from tests.test_extract_scale import SCHEMA, run
from tests.test_extract_scale import fake as fake  # the instant fake (a fixture)


@contextlib.asynccontextmanager
async def agentflow_process(docs: Path, out: Path, *flags: str, sigint: bool = False
                            ) -> AsyncIterator[tuple[OpenAIFake, anyio.abc.Process]]:
    """``agentflow extract`` of ``docs`` into ``out`` with ``flags``, run as
    its own process (Ctrl-C at its default with ``sigint``) against a slow
    fake; both stopped at the end, whatever the test left running."""
    fake = await slow_fake()
    process: anyio.abc.Process | None = None
    try:
        process = await anyio.open_process(
            [*(WITH_SIGINT if sigint else []), str(AGENTFLOW),
             *contact_args(fake, docs, out=out), *flags])
        yield fake, process
    finally:
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        if fake.hold is not None:  # a held handler ends, so the server stops at once
            fake.hold.set()
        await fake.__aexit__(None, None, None)


def argv(url: str, out: Path, *inputs: Path, extra: tuple[str, ...] = ()) -> list[str]:
    return ["extract", "--schema", f"{SCHEMA}:Contact", "--input", *map(str, inputs),
            "--model", "openai:gpt-4o-mini", "--base-url", url, "--api-key", "k",
            "--out", str(out), *extra]


def records(path: Path) -> list[dict[str, Any]]:
    return [loads_record(line) for line in path.read_bytes().splitlines() if line.strip()]


def corpus(tmp_path: Path, n: int) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(n):
        (docs / f"{i:02}.txt").write_text(f"P{i}: a person at Acme")
    (docs / "empty.txt").write_text("")  # a problem input: recorded by the parent
    return docs


def workers_of_this_process() -> list[int]:
    """The pids of the worker processes a run in this process started."""
    return children_of(os.getpid())


def children_of(pid: int) -> list[int]:
    """The pids of ``pid``'s worker processes (``agentflow.cli.worker``)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"agentflow.cli.worker" in cmdline:
            found.append(int(entry.name))
    return found


def gone(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"  # a zombie no one waits for has ended too


def without_timing(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "duration_s"}


async def test_workers_write_the_records_one_process_writes(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = corpus(tmp_path, 30)
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert await run(*argv(fake.url, one, docs, extra=("--concurrency", "4"))) == 1
    assert await run(*argv(fake.url, two, docs, extra=("--concurrency", "4",
                                                       "--workers", "2"))) == 1
    err = capsys.readouterr().err
    assert "30 ok, 1 failed" in err and "in 2 worker processes" in err
    by_id = {r["id"]: without_timing(r) for r in records(one)}
    assert len(by_id) == 31
    assert {r["id"]: without_timing(r) for r in records(two)} == by_id
    assert by_id[str(docs / "07.txt")]["output"]["name"] == "P7"
    assert workers_of_this_process() == []  # every worker ended with the run


async def test_a_dead_worker_stops_the_run_and_the_same_command_resumes(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = corpus(tmp_path, 20)
    out = tmp_path / "out.jsonl"
    command = argv(fake.url, out, docs, extra=("--concurrency", "4", "--workers", "2"))
    fake.hold = asyncio.Event()  # every request waits: both workers hold inputs
    running = asyncio.ensure_future(run(*command))
    await until(lambda: len(fake.requests) >= 2)  # each worker's first call (alone) is held
    pids = workers_of_this_process()
    assert len(pids) == 2
    os.kill(pids[0], signal.SIGKILL)
    with anyio.fail_after(60):
        assert await running == 2
    fake.hold.set()
    err = capsys.readouterr().err
    assert "worker process" in err and "exited with status -9" in err
    assert "run the same command again" in err and "Traceback" not in err
    assert workers_of_this_process() == []
    fake.hold = None
    assert await run(*command) == 1  # the empty file fails; every other input is done
    kept = records(out)
    done = {r["id"]: r for r in kept}
    assert len(done) == 21 and sum(r["ok"] for r in done.values()) == 20
    assert len(kept) == len(done)  # each input once


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_unreachable_endpoint_stops_every_worker_with_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = corpus(tmp_path, 40)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    out = tmp_path / "out.jsonl"
    assert await run(*argv(url, out, docs, extra=("--concurrency", "2", "--workers", "2"))) == 2
    err = capsys.readouterr().err
    assert url in err and "Traceback" not in err
    assert not out.exists() or len(records(out)) < 40
    assert workers_of_this_process() == []


async def test_a_wrong_key_stops_every_worker_with_exit_2_naming_it(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A worker whose ``extract_many`` stops at the run's fault (a wrong key)
    ends with a frame that stops the run, as one process does, never a
    worker that exited early."""
    docs = corpus(tmp_path, 40)
    out = tmp_path / "out.jsonl"
    fake.echo_key = True  # every request: the vendor's wrong-key 401
    assert await run(*argv(fake.url, out, docs, extra=("--concurrency", "2",
                                                       "--workers", "2"))) == 2
    err = capsys.readouterr().err
    assert "AuthenticationError" in err and "worker process" not in err, err
    assert "Traceback" not in err and len(fake.requests) < 40
    assert workers_of_this_process() == []


@pytest.mark.parametrize(("extra", "said"), [
    (("--workers", "0"), "--workers must be >= 1"),
    (("--workers", "2", "--engine", "ray"), "--engine local"),
    (("--workers", "3", "--concurrency", "2"), "needs --concurrency >= 3"),
    (("--workers", "2", "--mode", "batch"), "--mode live"),
])
async def test_workers_refuse_what_they_cannot_do_before_any_request(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        extra: tuple[str, ...], said: str) -> None:
    docs = corpus(tmp_path, 2)
    assert await run(*argv(fake.url, tmp_path / "o.jsonl", docs, extra=extra)) == 2
    assert said in capsys.readouterr().err
    assert fake.requests == []


def test_workers_refuse_the_embedded_model(capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Ann: a person")
    assert main(["extract", "--schema", f"{SCHEMA}:Contact", "--input",
                 str(tmp_path / "a.txt"), "--workers", "2", "--out",
                 str(tmp_path / "o.jsonl")]) == 2
    assert "raise --concurrency instead" in capsys.readouterr().err


async def test_frames_round_trip_and_a_cut_frame_is_told_apart_from_the_end() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(frame({"a": [1, b"\xff"]}) + frame(None))
    reader.feed_eof()
    incoming = frames(reader)
    assert await anext(incoming) == {"a": [1, b"\xff"]}
    assert await anext(incoming) is None
    with pytest.raises(StopAsyncIteration):  # the pipe ended between frames: the end
        await anext(incoming)
    cut = asyncio.StreamReader()
    cut.feed_data(frame("x" * 100)[:50])
    cut.feed_eof()
    with pytest.raises(FrameError, match="inside a frame"):
        await anext(frames(cut))


async def test_frames_reads_many_small_and_large_frames_across_reads() -> None:
    values = [{"i": i, "text": "x" * (i % 7)} for i in range(500)] + ["y" * 300_000, 7]
    reader = asyncio.StreamReader()
    reader.feed_data(b"".join(frame(v) for v in values))
    reader.feed_eof()
    assert [v async for v in frames(reader, chunk=1000)] == values
    cut = asyncio.StreamReader()
    cut.feed_data(frame(1) + frame("z" * 5000)[:2000])
    cut.feed_eof()
    got = []
    with pytest.raises(FrameError, match="inside a frame"):
        async for value in frames(cut, chunk=1000):
            got.append(value)
    assert got == [1]


async def test_ctrl_c_stops_every_worker_and_says_what_was_saved(tmp_path: Path) -> None:
    docs = corpus(tmp_path, 20)
    out = tmp_path / "out.jsonl"
    async with agentflow_process(docs, out, "--concurrency", "2", "--workers", "2",
                                 sigint=True) as (fake, process):
        await until(lambda: out.exists() and len(out.read_bytes().splitlines()) >= 2)
        fake.hold = asyncio.Event()  # from now on every request waits
        asked = len(fake.requests)
        await until(lambda: len(fake.requests) > asked)
        pids = children_of(process.pid)
        assert len(pids) == 2
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(120):
            assert await process.wait() == 130
        assert process.stderr is not None
        err = (await process.stderr.receive(65536)).decode()
        assert f"interrupted; {len(records(out))} records saved to {out}" in err
        assert "Traceback" not in err
        await until(lambda: all(gone(pid) for pid in pids))


async def test_a_result_this_process_cannot_read_stops_the_run_rather_than_hang() -> None:
    unreadable = b"\x80\x05\x8c\x0bno_such_mod\x94\x8c\x01x\x94\x93\x94."  # a global to import
    script = ("import sys; sys.stdout.buffer.write("
              f"{struct.pack('>I', len(unreadable)) + unreadable!r}); sys.stdout.flush()")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE)
    results: asyncio.Queue[Any] = asyncio.Queue()
    worker = _Worker(0, process, held=1)
    with anyio.fail_after(30):
        await _read(worker, results, asyncio.Queue())
        await process.wait()
    got = results.get_nowait()
    assert isinstance(got, WorkerExitedError) and "cannot read" in str(got)
    assert "no_such_mod" in str(got)


@pytest.mark.parametrize(("concurrency", "workers", "split"), [
    (10, 4, [3, 3, 2, 2]), (5, 4, [2, 1, 1, 1]), (8, 2, [4, 4]), (3, 3, [1, 1, 1]),
])
def test_workers_split_the_concurrency_never_exceed_it(concurrency: int, workers: int,
                                                      split: list[int]) -> None:
    assert shares(concurrency, workers) == split  # (ceil: 5 over 4 workers was 8 in flight)


async def test_workers_end_when_the_run_is_killed_outright(tmp_path: Path) -> None:
    """SIGKILL leaves the run no chance to stop its workers: the kernel does
    (``prctl(PR_SET_PDEATHSIG)``), so none goes on making requests."""
    docs = corpus(tmp_path, 20)
    async with agentflow_process(docs, tmp_path / "out.jsonl", "--concurrency", "2",
                                 "--workers", "2") as (fake, process):
        fake.hold = asyncio.Event()  # (set before the first request: the run cannot finish)
        await until(lambda: len(fake.requests) >= 2)  # both workers hold a request
        pids = children_of(process.pid)
        assert len(pids) == 2
        process.kill()
        await process.wait()
        await until(lambda: all(gone(pid) for pid in pids))


def test_an_unreached_endpoint_stops_a_worker_only_until_a_request_went_through() -> None:
    """Each process settles a connection fault as ``unreached`` (``Settle``);
    the run stops on one only while no request of any process has gone
    through (``Reach``, in the run's process)."""
    refused = ProviderConnectionError("cannot reach openai")
    refused.__cause__ = ConnectionRefusedError()

    def result(error: Exception | None, requests: int) -> ExtractResult[Any]:
        return ExtractResult(0, "a", None, error, Usage(requests=requests), requests, 0.0)

    settle, reach = Settle(None, "http://127.0.0.1:9/v1"), Reach()
    first = settle(result(refused, 0))
    assert first.stop is not None and "127.0.0.1:9" in first.stop and first.unreached
    assert InputDone.from_wire(first.wire()) == first
    assert reach.stop(first) == first.stop
    assert reach.stop(settle(result(None, 1))) is None  # a request went through: later
    assert reach.stop(settle(result(refused, 0))) is None  # faults are the input's


def test_the_flags_workers_cannot_take_are_refused_before_the_api_key_is_looked_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "a.txt").write_text("Ann: a person")
    assert main(["extract", "--schema", f"{SCHEMA}:Contact", "--input", str(tmp_path / "a.txt"),
                 "--model", "openai:gpt-4o-mini", "--workers", "2", "--mode", "batch"]) == 2
    err = capsys.readouterr().err
    assert "--mode live" in err and "API key" not in err
