"""``agentflow extract`` at scale: documents read off the event loop under a
work budget, any file name, the default path of the local engine."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import multiprocessing
import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentflow.cli import main
from agentflow.cli.progress import Progress
from agentflow.cli.setup_faults import endpoint_of, setup_fault
from agentflow.documents.budget import WorkBudget
from agentflow.documents.names import BIDI_CONTROLS, loads_record, printable
from agentflow.documents.pdf import read_pdf
from agentflow.documents.readahead import read_ahead, read_in_worker
from agentflow.errors import DocumentTooComplexError, ProviderConnectionError
from agentflow.extraction._highlight import Span, escape_text, markup
from agentflow.extraction.fingerprint import schema_fingerprint
from agentflow.extraction.setup import load_schema
from agentflow.providers.registry import get_model
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.pdfs import hostile_pdf, text_pdf

SCHEMA = Path(__file__).resolve().parent.parent / "examples" / "contact.py"


def reply_for(body: Any) -> FakeReply:
    doc = next(m["content"] for m in body["messages"] if m["role"] == "user")
    name = doc.split(":")[0].strip() or "x"
    return FakeReply(text=f'{{"name": "{name}", "email": null, "phone": null, '
                          '"company": null, "title": null}')


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


async def run(*argv: str) -> int:
    return await anyio.to_thread.run_sync(main, list(argv))


def args(fake: OpenAIFake, *inputs: Path) -> list[str]:
    return ["extract", "--schema", f"{SCHEMA}:Contact", "--input", *map(str, inputs),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k"]


def matching(directory: Path, pattern: str) -> list[Path]:
    return sorted(directory.glob(pattern))


def records(path: Path) -> list[dict[str, Any]]:
    return [loads_record(line) for line in path.read_bytes().splitlines() if line.strip()]


def test_each_budget_limit_stops_the_pdf_read_and_names_itself() -> None:
    raw = hostile_pdf(pages=4, operators=20_000)
    for budget, limit in ((WorkBudget(pages=3), "pages"),
                          (WorkBudget(operators=50_000), "operators"),
                          (WorkBudget(chars=30_000), "chars")):
        with pytest.raises(DocumentTooComplexError) as caught:
            read_pdf(raw, name="h.pdf", budget=budget)
        assert caught.value.limit == limit and limit.rstrip("s") in str(caught.value)
        assert caught.value.measured > caught.value.cap
    assert read_pdf(raw, name="h.pdf", budget=WorkBudget()).text.count("x") == 4 * 20_000


def test_the_cpu_limit_stops_a_parse_the_other_limits_let_through(tmp_path: Path) -> None:
    path = tmp_path / "slow.pdf"
    path.write_bytes(hostile_pdf(pages=40, operators=200_000))
    budget = WorkBudget(pages=None, operators=None, chars=None, cpu_seconds=1)
    # in a worker process of its own, as the run reads it: the limit is the whole process's,
    # and its signal would land in whatever this test process runs then (a gc callback)
    with concurrent.futures.ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("forkserver")) as pool:
        doc = pool.submit(read_in_worker, str(path), "auto", None, budget).result(timeout=120)
    assert doc.problem_type == "DocumentTooComplexError" and "CPU seconds" in (doc.problem or "")


async def test_the_hostile_pdf_fails_within_its_budget_and_the_text_files_go_on(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "0000-hostile.pdf").write_bytes(hostile_pdf())  # named first: read first
    for i in range(30):
        (docs / f"{i:04}.txt").write_text(f"Person{i}: a person")
    (docs / "report.pdf").write_bytes(text_pdf(["Ann: a person"]))
    out = tmp_path / "out.jsonl"
    assert await run(*args(fake, docs), "--out", str(out), "--concurrency", "4") == 1
    got = {Path(r["id"]).name: r for r in records(out)}
    assert len(got) == 32
    hostile = got["0000-hostile.pdf"]
    assert hostile["error"]["type"] == "DocumentTooComplexError"
    assert "operators" in hostile["error"]["message"]
    assert all(got[f"{i:04}.txt"]["ok"] for i in range(30)) and got["report.pdf"]["ok"]


def test_read_ahead_is_bounded_by_ahead(tmp_path: Path) -> None:
    for i in range(200):
        (tmp_path / f"{i:04}.txt").write_text(f"doc {i}")
    opened: list[int] = []
    real_open = Path.open

    def counting(self: Path, *a: Any, **kw: Any) -> Any:
        if self.suffix == ".txt":
            opened.append(1)
        return real_open(self, *a, **kw)

    async def take_three() -> list[str]:
        got: list[str] = []
        async with contextlib.aclosing(read_ahead([str(tmp_path)], ahead=4)) as docs:
            async for doc in docs:
                got.append(doc.id)
                if len(got) == 3:
                    for _ in range(500):  # let the reader run as far as it can
                        await anyio.lowlevel.checkpoint()
                    break
        return got

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "open", counting)
        assert len(asyncio.run(take_three())) == 3
    # each text file is opened twice (kind, then text): 3 taken + 4 buffered + 4 reading
    assert len(opened) <= 2 * (3 + 4 + 4 + 1)


def write_named(directory: Path, name: bytes, data: bytes) -> None:
    """Write ``data`` to the file of raw name ``name`` in ``directory``."""
    Path(os.fsdecode(os.path.join(os.fsencode(directory), name))).write_bytes(data)


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse non-UTF-8 names")
async def test_any_file_name_is_an_input_written_reversibly_and_shown_escaped(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    raw_names = [b"caf\xe9.txt", b"bell\x07\x1b[31m.txt", b"rtl\xe2\x80\xae.txt"]
    for name in raw_names:  # the one with terminal controls is empty: its name is printed
        write_named(docs, name, b"" if b"bell" in name else b"Ann: a person")
    out = tmp_path / "out.jsonl"
    assert await run(*args(fake, docs), "--out", str(out)) == 1  # the empty one fails
    got = {os.path.basename(os.fsencode(r["id"])): r for r in records(out)}
    assert set(got) == set(raw_names)  # the raw bytes of every name come back
    assert got[b"caf\xe9.txt"]["ok"] and got[b"rtl\xe2\x80\xae.txt"]["ok"]
    assert await run(*args(fake, docs), "--out", str(out)) == 0  # resumed: nothing asked again
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err
    assert "bell\\x07\\x1b[31m.txt: empty document" in err
    assert "3 already done" in err


async def test_the_local_engine_runs_with_default_flags(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the flags a run cannot do without (the fake's URL and key stand in
    for the environment): records on stdout, exit 0."""
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    assert await run(*args(fake, doc)) == 0
    captured = capsys.readouterr()
    assert loads_record(captured.out.strip())["ok"] is True
    assert "Traceback" not in captured.err


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("scheme", ["refused", "tls"])
async def test_an_unreachable_endpoint_stops_the_run_with_exit_2_naming_the_url(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str], scheme: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(40):
        (docs / f"{i:02}.txt").write_text(f"P{i}: a person")
    url = (f"http://127.0.0.1:{closed_port()}/v1" if scheme == "refused"
           else fake.url.replace("http://", "https://"))  # TLS to a plain-HTTP server
    argv = ["extract", "--schema", f"{SCHEMA}:Contact", "--input", str(docs), "--model",
            "openai:gpt-4o-mini", "--base-url", url, "--api-key", "k", "--concurrency", "2"]
    assert await run(*argv) == 2
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) < 40  # stopped before every input was tried
    assert url in captured.err and "Traceback" not in captured.err
    assert ("running" if scheme == "refused" else "TLS") in captured.err


def test_only_unreachable_endpoints_are_set_up_faults() -> None:
    def chained(cause: BaseException) -> ProviderConnectionError:
        try:
            raise ProviderConnectionError("cannot reach x") from cause
        except ProviderConnectionError as exc:
            return exc

    assert setup_fault(chained(ConnectionRefusedError()), None, "http://h:1/v1?key=s")
    assert "key=s" not in (setup_fault(chained(ConnectionRefusedError()), None,
                                       "http://u:p@h:1/v1?key=s") or "")
    assert "resolve" in (setup_fault(chained(socket.gaierror()), None) or "")
    assert setup_fault(ProviderConnectionError("stream cut", partial=True), None) is None
    assert setup_fault(ValueError("x"), None) is None and setup_fault(None, None) is None


@pytest.mark.parametrize("model", ["openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5",
                                   "gemini:gemini-2.5-flash", "ollama:llama3.2"])
async def test_the_set_up_fault_names_every_http_models_endpoint(model: str) -> None:
    built = get_model(model, base_url="http://127.0.0.1:9/v9?key=secret", api_key="k")
    try:
        assert endpoint_of(built) == "http://127.0.0.1:9/v9"  # its own URL, no key
    finally:
        await built.aclose()


async def test_one_schema_per_output_file(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    assert await run(*args(fake, doc), "--out", str(out)) == 0
    first = records(out)
    contact = load_schema(f"{SCHEMA}:Contact")[0]
    assert len(first) == 1 and first[0]["schema"] == schema_fingerprint(contact)
    other = tmp_path / "other.py"
    other.write_text("from pydantic import BaseModel\n\nclass Who(BaseModel):\n"
                     "    name: str\n    email: str | None = None\n")
    changed = [a if a != f"{SCHEMA}:Contact" else f"{other}:Who" for a in args(fake, doc)]
    sent = len(fake.requests)
    capsys.readouterr()
    assert await run(*changed, "--out", str(out)) == 2  # refused before any request
    err = capsys.readouterr().err
    assert "another schema" in err and first[0]["schema"] in err and "Traceback" not in err
    assert len(fake.requests) == sent and records(out) == first
    assert await run(*changed, "--out", str(out), "--schema-changed", "new") == 0
    beside = matching(tmp_path, "out.*.jsonl")
    assert len(beside) == 1 and records(beside[0])[0]["schema"] != first[0]["schema"]
    # a file that mixes two schemas (written by hand, or by an older agentflow): refused
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(out.read_bytes() + beside[0].read_bytes())
    assert await run("report", str(mixed), "-o", str(tmp_path / "page.html")) == 2
    assert "2 schemas" in capsys.readouterr().err


@pytest.mark.parametrize("pattern", ["staircase", "interleaved", "chained"])
def test_crossing_spans_render_in_linear_size_each_anchored_once(pattern: str) -> None:
    def page(n: int) -> str:
        pairs = {"staircase": [(i, i + n) for i in range(n)],
                 "interleaved": [(2 * i, 2 * i + n + 1) for i in range(n)],
                 "chained": [(i, n + 2 * i + 1) for i in range(n)]}[pattern]
        spans = [Span(i, f"items[{i}]", a, b, (a, b), i % 8) for i, (a, b) in enumerate(pairs)]
        return "".join(markup("x" * (4 * n + 10), spans, 0))

    small, large = page(500), page(4000)
    assert len(large) < 8.5 * len(small)  # 8x the spans: about 8x the page, never 64x
    anchors = re.findall(r'id="s0-(\d+)"', large)
    assert sorted(map(int, anchors)) == list(range(4000))


def test_nested_spans_still_nest() -> None:
    spans = [Span(0, "a", 0, 10, (0, 10)), Span(1, "b", 2, 5, (2, 5))]
    shown = "".join(markup("0123456789ab", spans, 0))
    assert re.sub(r"<[^>]+>", "", shown) == "0123456789ab"
    assert shown.index('data-span="0-1"') < shown.index("</mark>")  # b inside a


def test_the_review_page_neutralises_bidi_controls() -> None:
    shown = escape_text("total: \u202e00.0009 \u2066x\u2069")
    assert not set(shown) & set(BIDI_CONTROLS)
    assert len(shown) == len("total: \u202e00.0009 \u2066x\u2069")  # offsets still line up


def test_the_progress_line_works_without_a_known_total() -> None:
    stream = io.StringIO()
    progress = Progress(None, stream, interval=0.0)
    progress.add({"id": "a", "ok": True})
    progress.add({"id": "b", "ok": False, "error": {"type": "GroundingError"}})
    assert progress.line().startswith("2 done · ") and "ETA" not in progress.line()
    assert "ok 1 · failed 1 · suspect 1" in progress.line()  # suspect: among the failed
    progress.total = 2  # every input found: the share and the ETA come back
    assert progress.line().startswith("2/2 (100%) · ") and "ETA -" in progress.line()


def test_printable_escapes_what_would_act_on_a_terminal() -> None:
    name = os.fsdecode(b"a\xff\x1b[2J\n.txt") + "\u202e"
    shown = printable(name)
    assert shown.isprintable() and "\\x1b[2J" in shown and "\\x0a" in shown
    assert shown.startswith("a\\xff") and shown.endswith("\\u202e")
    assert printable("line one\nline two\x07", lines=True) == "line one\nline two\\x07"


def test_printable_is_the_one_escape_of_terminal_names_and_quoted_client_values() -> None:
    """``web._frame_caps.shown_input`` escaped what a client sent its own way
    (``str.isprintable``) while names went through ``printable``, which let a
    line separator through: one function now, for both."""
    from agentflow.web._frame_caps import shown_input

    assert printable("a\u2028b\u2029c") == "a\\u2028b\\u2029c"  # it split a logged line
    assert printable("a\u2028b", lines=True) == "a\\u2028b"
    sent = "\u202eon\u2028" + os.fsdecode(b"\xff")
    assert shown_input(sent) == printable(f'"{sent}"') == '"\\u202eon\\u2028\\xff"'
    assert shown_input("caf\u00e9 \u00a0") == '"caf\u00e9 \u00a0"'  # it prints: as it is
