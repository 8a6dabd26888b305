"""JSONL inputs: a line that is not a document is one failed document, and the
lines after it are read (a binary line, a line too long, a corrupt .gz only
ends the file where the file itself fails)."""

from __future__ import annotations

import contextlib
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from agentflow.documents.budget import WorkBudget
from agentflow.documents.inputs import Document, iter_documents
from agentflow.documents.jsonl import jsonl_records
from agentflow.documents.reading import Unusable
from tests.fakes.openai import OpenAIFake
from tests.test_cli import contact_args, reply_for, run_cli

BINARY = bytes(range(128, 256)) * 20  # no encoding reads it


def _line(i: int) -> bytes:
    return json.dumps({"id": i, "text": f"Ann{i}: a person"}).encode() + b"\n"


def test_a_binary_line_fails_alone_and_the_lines_after_it_are_read(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(_line(1) + BINARY + b"\n" + _line(2) + b"\x00\x01" * 300 + b"\n" + _line(3))
    docs = list(iter_documents([str(path)]))
    assert [d.text for d in docs if d.problem is None] == [f"Ann{i}: a person" for i in (1, 2, 3)]
    bad = [d for d in docs if d.problem is not None]
    assert [d.id for d in bad] == [f"{path}:2", f"{path}:4"]
    assert bad[0].problem_type == "InvalidInputLineError"
    assert bad[0].problem == f"{path}:2: binary, not text"


def test_a_line_too_long_is_skipped_without_ending_the_file(tmp_path: Path) -> None:
    long = json.dumps({"id": "long", "text": "x" * 5000}).encode() + b"\n"
    for name, opener in (("in.jsonl", open), ("in.jsonl.gz", gzip.open)):
        path = tmp_path / name
        with opener(path, "wb") as f:
            f.write(_line(1) + long + _line(2) + long.rstrip(b"\n"))  # the last: no newline
        got = list(jsonl_records(path, "text", "id", max_line_bytes=200))
        assert [(i, t) for i, t in got if isinstance(t, str)] == [
            (f"{path}#1", "Ann1: a person"), (f"{path}#2", "Ann2: a person")]
        problems = [(i, str(t)) for i, t in got if isinstance(t, Unusable)]
        assert problems == [(f"{path}:{n}", f"{path}:{n}: line longer than 200 bytes; not read")
                            for n in (2, 4)]
    exact = tmp_path / "exact.jsonl"  # a line of the limit exactly, its newline beyond it
    exact.write_bytes(_line(1) + long)
    assert [t for _, t in jsonl_records(exact, "text", "id", max_line_bytes=len(long) - 1)
            ] == ["Ann1: a person", "x" * 5000]


def test_a_corrupt_gz_ends_the_file_after_the_lines_read(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(_line(1) * 2000 + _line(2))[:-8])  # its trailer cut off
    docs = list(iter_documents([str(path)]))
    assert docs[0].text == "Ann1: a person" and docs[1].id == f"{path}:2"  # a repeated id
    assert docs[-1].id == str(path) and "cannot read" in (docs[-1].problem or "")


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


async def test_extract_writes_a_record_for_every_line_after_a_binary_one(
        fake: OpenAIFake, tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(_line(1) + BINARY + b"\n" + _line(2) + _line(3))
    out = tmp_path / "out.jsonl"
    assert await run_cli(*contact_args(fake, path, out=out)) == 1
    records = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert sorted(records) == sorted([f"{path}#1", f"{path}:2", f"{path}#2", f"{path}#3"])
    assert records[f"{path}:2"]["error"]["type"] == "InvalidInputLineError"
    assert records[f"{path}#3"]["output"]["name"] == "Ann3"
    assert len(fake.requests) == 3
    assert await run_cli(*contact_args(fake, path, out=out)) == 0  # resumed: nothing asked again
    assert len(fake.requests) == 3


def test_a_record_past_the_chars_limit_fails_alone_naming_it(tmp_path: Path) -> None:
    """A record's text is held to the budget's ``chars`` as a file's is, in
    ``iter_documents`` and in ``read_ahead`` (what ``agentflow extract`` reads)."""
    import anyio

    from agentflow.documents.readahead import read_ahead

    path = tmp_path / "in.jsonl"
    path.write_bytes(_line(1) + json.dumps({"id": "big", "text": "x" * 40}).encode() + b"\n"
                     + _line(2))
    budget = WorkBudget(chars=30)

    async def ahead() -> list[Document]:
        async with contextlib.aclosing(read_ahead([str(path)], budget=budget)) as docs:
            return [doc async for doc in docs]

    for docs in (list(iter_documents([str(path)], budget=budget)), anyio.run(ahead)):
        assert [d.text for d in docs if not d.problem] == ["Ann1: a person", "Ann2: a person"]
        [big] = [d for d in docs if d.problem]
        assert (big.id, big.problem_type, big.problem) == (
            f"{path}#big", "DocumentTooComplexError",
            f"{path}#big: too costly to read: characters of text: 40 (limit 30)")
        assert "work budget's chars limit" in (big.reason or "")


def test_jsonl_on_standard_input(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--input - --format jsonl``: one document per line of stdin, as for a
    file (it failed as a file named '-' that does not exist)."""
    import io
    import sys

    raw = _line(1) + BINARY + b"\n" + _line(2)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    docs = list(iter_documents(["-"], fmt="jsonl"))
    assert [(d.id, d.text) for d in docs if d.problem is None] == [
        ("-#1", "Ann1: a person"), ("-#2", "Ann2: a person")]
    assert [d.id for d in docs if d.problem] == ["-:2"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(_line(3).decode()))  # no .buffer
    assert [d.id for d in iter_documents(["-"], fmt="jsonl")] == ["-#3"]


def test_a_run_of_blank_lines_past_the_limit_ends_the_file_naming_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blank lines give no document, so nothing bounded them: a 50 KB ``.gz``
    of newlines kept the reader busy for 23 s (52 million lines), a 10 MB one
    for over an hour, in a thread the run cannot cancel."""
    from agentflow.documents import jsonl

    monkeypatch.setattr(jsonl, "MAX_BLANK_LINES", 10)
    path = tmp_path / "in.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(_line(1) + b"\n" * 10 + _line(2) + b"  \n" * 11 + _line(3))
    docs = list(iter_documents([str(path)]))
    assert [d.text for d in docs[:2]] == ["Ann1: a person", "Ann2: a person"]
    [last] = docs[2:]
    assert (last.id, last.problem_type) == (str(path), "UnreadableDocumentError")
    assert last.problem == (f"{path}:23: more than 10 blank lines (or 268,435,456 bytes of "
                            "them) in a row; the rest of the file is not read")


def test_a_line_endless_past_the_skip_limit_ends_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line past ``MAX_LINE_BYTES`` is skipped, but a ``.gz`` can inflate one
    line to terabytes: past the skip limit the file ends, naming it."""
    from agentflow.documents import jsonl

    monkeypatch.setattr(jsonl, "_SKIP_LIMIT", 1000)
    monkeypatch.setattr(jsonl, "_SKIP_CHUNK", 100)
    path = tmp_path / "in.jsonl"
    path.write_bytes(_line(1) + b"x" * 1100 + b"\n" + _line(2) + b"y" * 5000 + b"\n" + _line(3))
    got: list[tuple[str, str]] = []
    with pytest.raises(Unusable) as ended:
        for doc_id, text in jsonl_records(path, "text", "id", max_line_bytes=200):
            got.append((doc_id, str(text)))
    assert got == [(f"{path}#1", "Ann1: a person"),  # the first long line is skipped whole
                   (f"{path}:2", f"{path}:2: line longer than 200 bytes; not read"),
                   (f"{path}#2", "Ann2: a person"),
                   (f"{path}:4", f"{path}:4: line longer than 200 bytes; not read")]
    assert str(ended.value) == (f"{path}:4: line longer than 1,200 bytes; the rest of the "
                                "file is not read")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("zipped", [False, True], ids=["plain", "gz"])
def test_a_utf16_file_with_its_bom_is_read_line_by_line(tmp_path: Path, encoding: str,
                                                          zipped: bool) -> None:
    """What Windows PowerShell's ``>`` writes (UTF-16LE, a BOM, CRLF): its lines
    were split at the byte ``\\n`` and each failed as not JSON."""
    lines = [json.dumps({"id": i, "text": f"Ann Lee paid {i} EUR"}) for i in range(3)]
    raw = ("\ufeff" if encoding != "utf-16" else "") + "\r\n".join(lines) + "\r\n"
    data = raw.encode(encoding)
    path = tmp_path / ("docs.jsonl.gz" if zipped else "docs.jsonl")
    path.write_bytes(gzip.compress(data) if zipped else data)
    assert list(jsonl_records(path, "text", "id")) == [
        (f"{path}#{i}", f"Ann Lee paid {i} EUR") for i in range(3)]


def test_a_utf16_line_too_long_or_broken_fails_alone(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    good = json.dumps({"id": "a", "text": "Ann"})
    long = json.dumps({"id": "b", "text": "x" * 100})
    broken = '{"id": "d", "text": "\ud800"}'  # a lone surrogate, written as UTF-16 bytes
    path.write_bytes(f"{good}\n{long}\n".encode("utf-16") + broken.encode(
        "utf-16-le", "surrogatepass") + f"\n{good.replace('a', 'c')}\n".encode("utf-16-le"))
    got = list(jsonl_records(path, "text", "id", max_line_bytes=80))
    assert got[0] == (f"{path}#a", "Ann") and got[3] == (f"{path}#c", "Ann")
    assert isinstance(got[1][1], Unusable) and "line longer than 80 bytes" in str(got[1][1])
    assert isinstance(got[2][1], Unusable) and f"{path}:3: not JSON" in str(got[2][1])
    path.write_bytes(path.read_bytes() + b"\x00")  # an odd byte: cut in the middle of a unit
    with pytest.raises(Unusable, match="not valid UTF-16"):
        list(jsonl_records(path, "text", "id"))


def test_a_line_number_id_colliding_with_a_real_id_names_the_id_and_both_lines(
        tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": 2, "text": "a"}\n{"text": "b"}\n{"id": "x", "text": "c"}\n'
                    '{"id": "x", "text": "d"}\n')
    got = list(jsonl_records(path, "text", "id"))
    assert got[0] == (f"{path}#2", "a")
    problem = got[1][1]
    assert isinstance(problem, Unusable) and got[1][0] == f"{path}:2"
    assert str(problem).startswith(f"{path}:2: id 2 (the line's number: it has no 'id' field) "
                                   "already used on line 1")
    assert "None" not in str(problem)
    assert f'{path}:4: id "x" already used on line 3' in str(got[3][1])


@pytest.mark.parametrize(("value", "kind"), [('{"a": 1}', "object"), ("[1]", "array"),
                                             ("true", "boolean")])
def test_an_id_neither_string_nor_number_is_a_failed_line_naming_its_type(
        tmp_path: Path, value: str, kind: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(f'{{"id": {value}, "text": "a"}}\n{{"id": 1.5, "text": "b"}}\n')
    (bad_id, problem), second = jsonl_records(path, "text", "id")
    assert bad_id == f"{path}:1" and isinstance(problem, Unusable)
    assert problem.problem_type == "InvalidInputLineError"
    assert f"field 'id' is a JSON {kind}, not a string or number" in str(problem)
    assert second == (f"{path}#1.5", "b")
