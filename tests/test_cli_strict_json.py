"""Every record line is strict JSON (UTF-8, no lone surrogate), even for a
file whose name is not UTF-8: the id shows U+FFFD and ``id_bytes`` keeps the
name's bytes; resume and the review page work on such files, and on the ones
an older agentflow wrote with ``\\udcXX`` escapes."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentflow.documents.names import loads_record
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.test_cli import contact_args, reply_for, run_cli

pytestmark = pytest.mark.skipif(sys.platform == "darwin",
                                reason="macOS file systems refuse non-UTF-8 names")

BAD = b"Bad\xff.txt"


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    Path(os.fsdecode(os.path.join(os.fsencode(docs), BAD))).write_text("Bad: a person")
    (docs / "Bob.txt").write_text("Bob: a person")
    (docs / "empty.txt").write_text("")  # a failed record naming the file
    Path(os.fsdecode(os.path.join(os.fsencode(docs), b"empty\xfe.txt"))).write_text("")
    return docs


def strict_lines(data: bytes) -> list[dict[str, Any]]:
    """Each line parsed by a strict parser: UTF-8 text, no lone-surrogate escape."""
    data.decode("utf-8")  # strict UTF-8
    assert b"\\ud" not in data.lower()
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


async def test_a_non_utf8_name_gives_strict_json_with_its_bytes_kept(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = folder(tmp_path)
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, docs, out=out)
    assert await run_cli(*args) == 1  # the empty files fail
    lines = strict_lines(out.read_bytes())
    raw = {base64.b64decode(r["id_bytes"]): r for r in lines if "id_bytes" in r}
    bad = os.path.join(os.fsencode(docs), BAD)
    assert set(raw) == {bad, os.path.join(os.fsencode(docs), b"empty\xfe.txt")}
    assert raw[bad]["ok"] and raw[bad]["id"] == str(docs / "Bad\ufffd.txt")
    assert list(raw[bad])[:2] == ["id", "id_bytes"]  # a record line starts with its id
    assert not any("id_bytes" in r for r in lines if r["id"].endswith("Bob.txt"))
    assert {loads_record(line)["id"] for line in out.read_bytes().splitlines()} == {
        os.fsdecode(os.path.join(os.fsencode(docs), n))
        for n in (BAD, b"Bob.txt", b"empty.txt", b"empty\xfe.txt")}
    asked = len(fake.requests)
    capsys.readouterr()
    assert await run_cli(*args, "--retry-failed") == 1  # resumed: the failed ones again
    assert "0 ok, 2 failed, 2 already done" in capsys.readouterr().err
    assert len(fake.requests) == asked and len(strict_lines(out.read_bytes())) == 4  # compacted
    assert await run_cli(*args) == 0  # nothing left to do (failed ones are done too)
    assert "0 ok, 0 failed, 4 already done (2 of them failed" in capsys.readouterr().err
    page = tmp_path / "review.html"
    assert await run_cli("report", str(out), "-o", str(page), "--input", str(docs)) == 0
    err = capsys.readouterr().err
    # the empty ones have nothing to show; the one named in bytes is re-read
    assert "4 documents: 2 ok, 2 failed" in err and "2 sources not available" in err, err
    assert "Bad\\xff" not in err
    assert "Bad\ufffd.txt" in page.read_text()
    # records on stdout are strict too
    capsys.readouterr()
    assert await run_cli(*contact_args(fake, docs)) == 1
    assert len(strict_lines(capsys.readouterr().out.encode())) == 4


async def test_a_file_an_older_agentflow_wrote_still_resumes_and_reports(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = folder(tmp_path)
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, docs, out=out)
    assert await run_cli(*args) == 1
    # as agentflow wrote them before: lone surrogates as \udcXX escapes, no id_bytes
    old = [loads_record(line) for line in out.read_bytes().splitlines()]
    out.write_bytes(b"".join(json.dumps(r, ensure_ascii=True).encode() + b"\n" for r in old))
    assert b"\\udcff" in out.read_bytes()
    asked = len(fake.requests)
    capsys.readouterr()
    assert await run_cli(*args) == 0
    assert "0 ok, 0 failed, 4 already done (2 of them failed" in capsys.readouterr().err
    assert len(fake.requests) == asked
    page = tmp_path / "review.html"
    assert await run_cli("report", str(out), "-o", str(page), "--input", str(docs)) == 0
    err = capsys.readouterr().err
    # the empty ones have nothing to show; the one named in bytes is re-read
    assert "4 documents: 2 ok, 2 failed" in err and "2 sources not available" in err, err
    assert "Bad\\xff" not in err
    # a failed one tried again: its new record is strict, and replaces the old one
    assert await run_cli(*args, "--retry-failed") == 1
    lines = out.read_bytes().splitlines()
    assert len(lines) == 4 and sum(b"\\udcfe" in line for line in lines) == 0
    assert sum(b"\\udcff" in line for line in lines) == 1  # the ok one, as it was


INVOICE_SCHEMA = '''
from pydantic import BaseModel


class Invoice(BaseModel):
    number: int
'''


async def test_an_integer_beyond_64_bits_is_written_with_its_digits_and_resumed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 25-digit invoice number read into an ``int`` field: the record line
    (``dumps_record``) raised ``TypeError`` from orjson; it is written with
    its exact digits (JSON carries any integer) and read back so on resume."""
    big = "1234567890123456789012345"
    (tmp_path / "invoice.py").write_text(INVOICE_SCHEMA)
    doc = tmp_path / "inv.txt"
    doc.write_text(f"Invoice number {big}, paid.")
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as server:
        server.default = lambda body: FakeReply(text=f'{{"number": {big}}}')
        args = ["extract", "--schema", f"{tmp_path / 'invoice.py'}:Invoice", "--input",
                str(doc), "--model", "openai:gpt-4o-mini", "--base-url", server.url,
                "--api-key", "k", "--out", str(out)]
        assert await run_cli(*args) == 0, capsys.readouterr().err
        assert await run_cli(*args) == 0  # resumed: the record is read back, nothing asked
        asked = len(server.requests)
    data = out.read_bytes()
    assert f'"number":{big}'.encode() in data and asked == 1
    (record,) = [loads_record(line) for line in data.splitlines() if line.strip()]
    assert record["ok"] and record["output"]["number"] == int(big)
