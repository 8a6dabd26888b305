"""``agentflow extract --mode batch|auto``: records and progress lines, the
set-up error (exit 2) on a vendor without a batch API, and a process killed
with SIGKILL mid-poll that, rerun, pays for no input twice."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.fakes.openai import OpenAIFake
from tests.test_cli import SCHEMA, reply_for, run_cli

AGENTFLOW = Path(sys.executable).parent / "agentflow"


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


def people(tmp_path: Path, *names: str) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in names:
        (docs / f"{name}.txt").write_text(f"{name}: a person")
    return docs


def args(fake: OpenAIFake, docs: Path, out: Path, *extra: str) -> list[str]:
    return ["extract", "--schema", f"{SCHEMA}:Contact", "--input", str(docs),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
            "--out", str(out), "--batch-poll", "0.02", *extra]


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


async def test_batch_mode_writes_records_and_progress(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = people(tmp_path, "Ann", "Bob", "nobody")
    out = tmp_path / "out.jsonl"
    assert await run_cli(*args(fake, docs, out, "--mode", "batch")) == 1  # "nobody" fails
    rows = {Path(r["id"]).name: r for r in records(out)}
    assert not rows["nobody.txt"]["ok"] and rows["nobody.txt"]["attempts"] == 3
    assert len(fake.requests) == 2  # its re-asks went live
    assert rows["Ann.txt"]["output"]["email"] == "ann@x.io" and rows["Ann.txt"]["ok"]
    assert rows["Ann.txt"]["usage"]["input_tokens"] == 12
    assert len(fake.batches) == 1 and sorted(fake.submitted.values()) == [1, 1, 1]
    assert (tmp_path / "out.jsonl.batches.json").exists()
    err = capsys.readouterr().err
    assert "batch: 3 submitted, 3 in progress, 0 completed, 0 failed (1 batch)" in err
    assert "batch: 3 submitted, 0 in progress, 3 completed, 0 failed (1 batch)" in err


async def test_batch_mode_without_out_warns_that_nothing_can_be_resumed(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = people(tmp_path, "Ann")
    argv = args(fake, docs, tmp_path / "x.jsonl", "--mode", "batch")
    del argv[argv.index("--out"):argv.index("--out") + 2]
    assert await run_cli(*argv) == 0
    captured = capsys.readouterr()
    assert "without --out FILE keeps no batch journal" in captured.err
    assert "\"ann@x.io\"" in captured.out
    code = await run_cli(*args(fake, docs, tmp_path / "y.jsonl", "--mode", "batch"))
    assert code == 0 and "keeps no batch journal" not in capsys.readouterr().err


async def test_batch_mode_without_a_batch_api_exits_2_before_any_request(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fakes.ollama import OllamaFake

    docs = people(tmp_path, "Ann")
    async with OllamaFake() as server:
        code = await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input", str(docs),
                             "--model", "ollama:llama3.2", "--base-url", server.url,
                             "--mode", "batch")
        assert code == 2 and not server.requests
    err = capsys.readouterr().err
    assert "has no batch API" in err and "Traceback" not in err


async def test_sigkill_mid_poll_then_rerun_pays_once(fake: OpenAIFake, tmp_path: Path) -> None:
    fake.batch_plans.append(["validating"] + ["in_progress"] * 10_000)
    docs = people(tmp_path, "Ann", "Bob", "Cy")
    out = tmp_path / "out.jsonl"
    journal = tmp_path / "out.jsonl.batches.json"
    proc = await asyncio.create_subprocess_exec(
        str(AGENTFLOW), *args(fake, docs, out, "--mode", "batch"),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        async with asyncio.timeout(120):  # a loaded machine starts a process slowly
            while not (journal.exists() and b"batch_" in journal.read_bytes() and len(  # noqa: ASYNC110
                    [c for c in fake.batch_calls if c[0] == "GET"]) >= 2):
                await asyncio.sleep(0.01)  # until the batch id is journalled and polled
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    batch = next(iter(fake.batches.values()))
    batch.plan = ["finalizing", "completed"]
    assert await run_cli(*args(fake, docs, out, "--mode", "batch")) == 0
    assert len(records(out)) == 3 and all(r["ok"] for r in records(out))
    assert len(fake.batches) == 1
    assert sorted(fake.submitted.values()) == [1, 1, 1]
    assert sorted(fake.executed.values()) == [1, 1, 1]


async def test_batch_mode_on_the_ray_engine_exits_2(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = people(tmp_path, "Ann")
    code = await run_cli(*args(fake, docs, tmp_path / "out", "--mode", "auto",
                               "--engine", "ray"))
    assert code == 2 and not fake.requests and not fake.batch_calls
    assert "--engine local only" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
async def test_batch_poll_must_be_positive(
        fake: OpenAIFake, tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    docs = people(tmp_path, "Ann")
    args_ = args(fake, docs, tmp_path / "out.jsonl", "--mode", "batch")
    args_[args_.index("--batch-poll") + 1] = value
    assert await run_cli(*args_) == 2
    assert not fake.requests and not fake.batch_calls
    err = capsys.readouterr().err
    assert "--batch-poll must be" in err and "Traceback" not in err
