"""`agentflow report`: a results file and its sources -> the review page, checked in
headless Chromium; reading results files and re-reading sources."""

from __future__ import annotations

import gzip
import os
import stat
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentflow.cli import main
from agentflow.errors import InvalidRecordError
from agentflow.extraction.review import SourceReader, read_records
from tests.headless_chromium import chromium

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import debian_changelog

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCHEMA = f"{EXAMPLES / 'debian_changelog.py'}:ChangelogEntry"

CHANGELOG = """
hello (2.10-3) unstable; urgency=medium

  * Fix <stdio.h> & "quotes" in the 😀 banner.
  * Build with 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 flags.

 -- Santiago Vila <sanvila@debian.org>  Sun, 11 Dec 2022 12:00:00 +0100

hello (2.10-2) unstable; urgency=low

  * Older change.

 -- Santiago Vila <sanvila@debian.org>  Sat, 10 Dec 2022 12:00:00 +0100
"""

NOTE = ("\n\nInvoice from ACME <billing@acme.example> 😀\r\n\tTotal: 1 234,50 € — paid\r\n"
        + "x" * 3000 + "\nend 'single' \"double\" café e\u0301 <script>alert(1)</script>")


def find(text: str, needle: str, after: int = 0) -> list[int]:
    start = text.index(needle, after)
    return [start, start + len(needle)]


def line(record: dict[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


Shown = dict[str, tuple[str, int]]  # id -> (text on the page, offset of the model's text in it)
Spans = dict[str, dict[str, list[list[int]]]]


def write_corpus(root: Path) -> tuple[Shown, Shown, Spans]:
    """Sources and a results file under ``root``; returns what each document should
    show with ``--schema`` and without it, and the spans each ok record holds (by id)."""
    (root / "pkgs" / "hello").mkdir(parents=True)
    (root / "notes").mkdir()
    gz = root / "pkgs" / "hello" / "changelog.Debian.gz"
    gz.write_bytes(gzip.compress(CHANGELOG.encode()))
    (root / "notes" / "invoice.txt").write_bytes(NOTE.encode())
    (root / "notes" / "loop.txt").write_text("package d/d/d/d/d/d/d/d")
    (root / "inputs.jsonl").write_text(
        '{"id": "r1", "text": "Ship to: Zoë Ω-Street 7"}\n{"id": "r2", "text": "other"}\n')

    entry = debian_changelog.prepare(CHANGELOG)
    hello, invoice, jsonl = "pkgs/hello/changelog.Debian.gz", "notes/invoice.txt", \
        "inputs.jsonl#r1"
    hello_spans = {
        "package": [find(entry, "hello")], "version": [find(entry, "2.10-3")],
        "distribution": [find(entry, "unstable")],
        "maintainer": [find(entry, "Santiago Vila <sanvila@debian.org>")],
        "date": [find(entry, "Sun, 11 Dec 2022 12:00:00 +0100")],
        "changes[0]": [find(entry, 'Fix <stdio.h> & "quotes" in the 😀 banner.')],
        "changes[1]": [find(entry, "Build with 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 flags.")],
    }
    hello_output = {"package": "hello", "version": "2.10-3", "distribution": "unstable",
                    "urgency": "medium", "maintainer": "Santiago Vila <sanvila@debian.org>",
                    "date": "Sun, 11 Dec 2022 12:00:00 +0100",
                    "changes": ['Fix <stdio.h> & "quotes" in the 😀 banner.',
                                "Build with 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 flags."]}
    shown_invoice = debian_changelog.prepare(NOTE)[:debian_changelog.MAX_CHARS]
    invoice_spans = {
        "vendor": [find(shown_invoice, "ACME <billing@acme.example>")],       # nested in "from"
        "vendor_name": [find(shown_invoice, "ACME")],                          # nested twice
        "from": [find(shown_invoice, "from ACME <billing@acme.example> 😀")],
        "total": [find(shown_invoice, "1 234,50 € — paid")],
        "status": [find(shown_invoice, "€ — paid\r\nxxxx")],                  # crosses "total"
        "items[0].ref": [find(shown_invoice, "x" * 40)],
        "note": [[len(shown_invoice), len(shown_invoice)]],                     # empty, at the end
    }
    invoice_output = {"vendor": "ACME <billing@acme.example>", "vendor_name": "ACME",
                      "from": "from ACME <billing@acme.example> 😀", "total": "1 234,50 € — paid",
                      "status": "€ — paid xxxx", "items": [{"ref": "x" * 40, "qty": 1}],
                      "note": "", "paid": True}
    jsonl_text = "Ship to: Zoë Ω-Street 7"
    jsonl_spans = {"street": [find(jsonl_text, "Ω-Street 7")]}
    records = [
        {"id": invoice, "ok": True, "output": {"old": "x"}, "spans": {"old": [[0, 7]]}},
        {"id": hello, "ok": True, "output": hello_output, "spans": hello_spans,
         "usage": {"total_tokens": 812}, "attempts": 1, "duration_s": 2.5, "truncated": False,
         "source_offset": 1},
        {"id": "notes/loop.txt", "ok": False, "attempts": 3,
         "error": {"type": "DegenerateOutputError", "message": "output rejected",
                   "reason": "repetition loop in version: d/d/d/d…"}},
        {"id": "notes/gone.txt", "ok": False, "attempts": 3,
         "error": {"type": "StructuredOutputValidationError",
                   "message": "version: Field required"}},
        {"id": "notes/deleted.txt", "ok": True, "output": {"a": "b"}, "spans": {"a": [[0, 1]]}},
        {"id": invoice, "ok": True, "output": invoice_output, "spans": invoice_spans,
         "source_offset": 2, "truncated": {"kept_chars": len(shown_invoice),
                                           "total_chars": len(NOTE.strip())}},
        {"id": jsonl, "ok": True, "output": {"street": "Ω-Street 7"}, "spans": jsonl_spans},
    ]
    (root / "out.jsonl").write_bytes(b"".join(line(r) for r in records) + b'{"id": "notes/x')
    loop = "package d/d/d/d/d/d/d/d"
    prepared = {hello: (entry, 0), invoice: (NOTE.strip(), 0), jsonl: (jsonl_text, 0),
                "notes/loop.txt": (loop, 0)}
    whole = {hello: (CHANGELOG, 1), invoice: (NOTE, 2), jsonl: (jsonl_text, 0),
             "notes/loop.txt": (loop, 0)}
    return prepared, whole, {hello: hello_spans, invoice: invoice_spans, jsonl: jsonl_spans}


COLLECT = """
const out = {};
for (const a of document.querySelectorAll('article.doc')) {
  const pre = a.querySelector('pre.source-text');
  const spans = {};
  for (const m of a.querySelectorAll('mark.hl')) {
    const key = m.getAttribute('data-span');
    const s = spans[key] || (spans[key] = {field: m.getAttribute('data-field'), text: '',
                                           pieces: 0, labels: []});
    s.pieces += 1;
    s.text += m.textContent;
    if (m.classList.contains('first')) {
      const label = getComputedStyle(m, '::before');
      s.labels.push([label.content, label.display, m.getBoundingClientRect().width > 0]);
    }
  }
  const gaps = Array.from(a.querySelectorAll('span.missing'), g => g.textContent);
  const error = a.querySelector('.error');
  const missing = a.querySelector('.source-missing');
  out[a.getAttribute('data-id')] = {
    text: pre ? pre.textContent : null, spans: spans, classes: a.className, gaps: gaps,
    error: error ? error.textContent : null, missing: missing ? missing.textContent : null,
    fields: Array.from(a.querySelectorAll('table.fields tr[data-field]'),
                       r => r.getAttribute('data-field'))};
}
return out;
"""


def check_documents(docs: dict[str, Any], shown: Shown, spans: Spans) -> None:
    """Every source rendered intact, every span exactly one labelled highlight of its text."""
    assert set(docs) == {*shown, "notes/gone.txt", "notes/deleted.txt"}
    for doc_id, (text, _) in shown.items():
        assert docs[doc_id]["text"] == text, doc_id  # the text outside spans is intact
    for doc_id, expected in spans.items():
        text, offset = shown[doc_id]
        drawn = docs[doc_id]["spans"]
        assert len(drawn) == sum(map(len, expected.values())), doc_id  # one per span
        for span in drawn.values():
            ((start, end),) = expected[span["field"]]
            assert span["text"] == text[start + offset:end + offset], span
            label, display, has_box = span["labels"][0]
            assert len(span["labels"]) == 1 and label == f'"{span["field"]}"'
            assert display != "none" and has_box


def test_review_page_in_headless_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    monkeypatch.chdir(tmp_path)
    prepared, whole, spans = write_corpus(tmp_path)
    assert main(["report", "out.jsonl", "--input", ".", "--schema", SCHEMA,
                 "-o", "review.html"]) == 0
    err = capsys.readouterr().err
    assert "6 documents: 4 ok, 2 failed (1 suspect)" in err
    assert "source not available for notes/deleted.txt" in err
    # no schema: whole files
    assert main(["report", "out.jsonl", "--input", ".", "-o", "whole.html"]) == 0
    with chromium() as browser:
        browser.get((tmp_path / "whole.html").as_uri())
        check_documents(browser.execute_script(COLLECT), whole, spans)

        browser.get((tmp_path / "review.html").as_uri())
        docs = browser.execute_script(COLLECT)
        check_documents(docs, prepared, spans)
        by_field = {s["field"]: s for s in docs["notes/invoice.txt"]["spans"].values()}
        assert by_field["status"]["pieces"] == 2  # it crosses "total": split, one label
        assert by_field["vendor_name"]["pieces"] == 1
        assert "old" not in by_field  # the newer record of that id won
        assert docs["notes/invoice.txt"]["fields"][:3] == ["vendor", "vendor_name", "from"]
        # the model read the first MAX_CHARS: the rest is shown, shaded, not cut away
        kept = debian_changelog.MAX_CHARS
        assert docs["notes/invoice.txt"]["gaps"] == [NOTE.strip()[kept:]]
        assert "items[0].qty" in docs["notes/invoice.txt"]["fields"]

        loop, gone = docs["notes/loop.txt"], docs["notes/gone.txt"]
        assert "is-suspect" in loop["classes"] and "is-failed" in gone["classes"]
        assert loop["error"].startswith("DegenerateOutputError: repetition loop in version")
        assert gone["error"] == "StructuredOutputValidationError: version: Field required"
        assert "'notes/gone.txt' is not a file --input names" in gone["missing"]
        assert "'notes/deleted.txt' is not a file --input names" in (
            docs["notes/deleted.txt"]["missing"])
        rows = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "tr.failed-record")]
        assert rows == ["notes/loop.txt DegenerateOutputError repetition loop in version: "
                        "d/d/d/d… 3",
                        "notes/gone.txt StructuredOutputValidationError version: Field "
                        "required 3"]
        notes = browser.find_element(By.CSS_SELECTOR, "#summary .notes").text
        assert "out.jsonl:8: skipped a cut-off record" in notes

        # the controls: filter by status and by id, labels off, a field row lights its span
        articles = {a.get_attribute("data-id"): a
                    for a in browser.find_elements(By.CSS_SELECTOR, "article.doc")}
        browser.find_element(By.CSS_SELECTOR, 'button[data-filter="failed"]').click()
        assert {k for k, a in articles.items() if a.is_displayed()} == {
            "notes/loop.txt", "notes/gone.txt"}
        browser.find_element(By.CSS_SELECTOR, 'button[data-filter="all"]').click()
        browser.find_element(By.ID, "search").send_keys("INVOICE")
        assert {k for k, a in articles.items() if a.is_displayed()} == {"notes/invoice.txt"}
        row = articles["notes/invoice.txt"].find_element(
            By.CSS_SELECTOR, 'tr[data-field="total"]')
        ActionChains(browser).move_to_element(row).perform()
        mark = articles["notes/invoice.txt"].find_element(
            By.CSS_SELECTOR, 'mark.first[data-field="total"]')
        assert "lit" in mark.get_attribute("class").split()
        browser.find_element(By.ID, "labels").click()
        assert browser.execute_script(
            "return getComputedStyle(arguments[0], '::before').display", mark) == "none"


def test_report_cli_defaults_stdout_and_setup_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path)
    assert main(["report", "out.jsonl", "--input", "."]) == 0  # no schema: whole decoded files
    page = (tmp_path / "out.html").read_text()
    assert "agentflow review: out.jsonl" in page and not (tmp_path / "out.html.tmp").exists()
    capsys.readouterr()
    assert main(["report", "out.jsonl", "--input", ".", "-o", "-", "--title", "T<1>"]) == 0
    assert "<title>T&lt;1&gt;</title>" in capsys.readouterr().out

    (tmp_path / "bad.jsonl").write_text('{"id": "a", "ok": true}\nnot json\n{"id": "b", "ok": 1}\n')
    (tmp_path / "shape.jsonl").write_text('{"id": "a", "ok": true}\n[1, 2]\n')
    for argv, message in [
        (["report", "missing.jsonl"], "results file 'missing.jsonl' does not exist"),
        (["report", "bad.jsonl"], "bad.jsonl:2: not JSON"),
        (["report", "shape.jsonl"], "shape.jsonl:2: not an extraction record"),
        (["report", "out.jsonl", "--schema", "nope.py:X"], "schema file 'nope.py' does not exist"),
        (["report", "out.jsonl", "-o", "no/such/dir/x.html"], "directory does not exist"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_read_records_skips_cut_off_lines_anywhere(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    # an interrupted run leaves a cut-off line; `extract` resumes on a new line after it
    path.write_bytes(b'{"id": "a", "ok": true}\n{"id": "b", "o\n\n{"id": "b", "ok": false}\n'
                     b'{"id": "c", "ok": true, "output": {"n": "Zo\xc3')
    loaded = read_records(path)
    assert [r["id"] for r in loaded.records] == ["a", "b"]
    assert loaded.notes == [f"{path}:2: skipped a cut-off record (an interrupted write)",
                            f"{path}:5: skipped a cut-off record (an interrupted write)"]
    path.write_bytes(b'{"id": "a", "ok": true}\n{"id": "b", "ok": true} trailing\n')
    with pytest.raises(InvalidRecordError, match=r"out.jsonl:2: not JSON"):
        read_records(path)


def test_source_reader_rereads_like_extract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path)
    (tmp_path / "bin.dat").write_bytes(b"\0\1\2")
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    (tmp_path / "blank.txt").write_text("  \n")
    (tmp_path / "prefix.txt").write_text("HEADER\nbody Ann")
    read = SourceReader(inputs=["."])
    assert read({"id": "prefix.txt", "source_offset": 7}).offset == 7
    assert read({"id": "prefix.txt"}).text == "HEADER\nbody Ann"
    assert read({"id": "inputs.jsonl#r2"}).text == "other"
    for rid, problem in [("-#abc", "standard input"), ("bin.dat", "binary file"),
                         ("bad.gz", "cannot read"), ("blank.txt", "empty document"),
                         ("inputs.jsonl#r9", "holds no record for 'inputs.jsonl#r9'"),
                         ("nowhere/x.txt", "'nowhere/x.txt' is not a file --input names")]:
        source = read({"id": rid})
        assert source.text is None and problem in (source.problem or ""), (rid, source)

    def upper(text: str) -> str:
        if "boom" in text:
            raise ValueError("boom")
        return text.upper()

    (tmp_path / "boom.txt").write_text("boom")  # inputs are expanded when the reader is made
    prepared = SourceReader(inputs=["."], prepare=upper)
    assert prepared({"id": "prefix.txt"}).text == "HEADER\nBODY ANN"
    # never cut: a record's truncated.kept_chars is shaded on the page, not cut away
    assert prepared({"id": "prefix.txt", "truncated": {"kept_chars": 9, "total_chars": 15}
                     }).text == "HEADER\nBODY ANN"
    assert prepared({"id": "prefix.txt", "source_offset": 7}).offset == 0  # prepared text
    assert "prepare() raised ValueError: boom" in (prepared({"id": "boom.txt"}).problem or "")


CARD_MODULE = '''
from pydantic import BaseModel

INSTRUCTIONS = "Extract the card."


class Card(BaseModel):
    name: str
    email: str | None = None
    tags: list[str] = []


def prepare(text: str) -> str:
    """Drop the header: everything up to the '---' line."""
    return text.split("---\\n", 1)[-1]
'''


async def test_extract_then_report_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The records `extract --ground` writes (spans, source_offset, a GroundingError with its
    reason) make a page whose highlights are exactly the extracted values."""
    import json

    import anyio

    from tests.fakes.base import FakeReply
    from tests.fakes.openai import OpenAIFake

    def reply_for(body: Any) -> FakeReply:
        doc = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "Nobody" in doc:  # an invented name, every time: not grounded
            return FakeReply(text=json.dumps({"name": "Zed Invented", "email": None,
                                              "tags": []}))
        return FakeReply(text=json.dumps({"name": "Ann Lee", "email": "ann@x.io",
                                          "tags": ["<b>", "😀 fan"]}))

    monkeypatch.chdir(tmp_path)
    (tmp_path / "card.py").write_text(CARD_MODULE)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ann.txt").write_text(
        "HEADER 😀 not for the model\n---\nAnn Lee <ann@x.io>, a 😀 fan, writes <b> & more\n")
    (tmp_path / "docs" / "nobody.txt").write_text("---\nNobody is named here.\n")
    async with OpenAIFake() as fake:
        fake.default = reply_for
        status = await anyio.to_thread.run_sync(main, [
            "extract", "--schema", "card.py:Card", "--input", "docs", "--ground",
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
            "--out", "out.jsonl"])
    assert status == 1  # one input failed
    records = {r["id"]: r for r in map(orjson.loads, (tmp_path / "out.jsonl").read_bytes()
                                       .splitlines())}
    ann, nobody = records["docs/ann.txt"], records["docs/nobody.txt"]
    assert ann["ok"] and ann["source_offset"] == len("HEADER 😀 not for the model\n---\n")
    assert nobody["error"]["type"] == "GroundingError" and "Zed Invented" in (
        nobody["error"]["reason"])
    assert main(["report", "out.jsonl", "--input", ".", "--schema", "card.py:Card",
                 "-o", "prepared.html"]) == 0
    assert main(["report", "out.jsonl", "--input", ".", "-o", "whole.html"]) == 0
    assert "2 documents: 1 ok, 1 failed (1 suspect)" in capsys.readouterr().err
    values = {"name": "Ann Lee", "email": "ann@x.io", "tags[0]": "<b>", "tags[1]": "😀 fan"}
    with chromium() as browser:
        for page in ("prepared.html", "whole.html"):
            browser.get((tmp_path / page).as_uri())
            docs = browser.execute_script(COLLECT)
            drawn = {s["field"]: s["text"] for s in docs["docs/ann.txt"]["spans"].values()}
            assert drawn == {p: v for p, v in values.items() if p in ann["spans"]}, page
            assert set(ann["spans"]) >= {"name", "tags[0]", "tags[1]"}
            assert docs["docs/nobody.txt"]["error"].startswith("GroundingError: ")
            checks = browser.execute_script(
                "return document.querySelector('[data-count=differing] b').textContent")
            assert checks == "0"


def test_a_directory_of_results_files_is_read_oldest_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`extract --engine ray` writes a directory of *.jsonl files: all are read, and a
    record in a newer file wins."""
    import os

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("Ann")
    out = tmp_path / "out"
    out.mkdir()
    (out / "z_old.jsonl").write_bytes(line({"id": "a.txt", "ok": False,
                                            "error": {"type": "ProviderTimeoutError"}}))
    (out / "a_new.jsonl").write_bytes(line({"id": "a.txt", "ok": True, "output": {"n": "Ann"},
                                            "spans": {"n": [[0, 3]]}}))
    (out / "notes.txt").write_text("not read")
    os.utime(out / "z_old.jsonl", (1_000_000, 1_000_000))
    loaded = read_records(out)
    assert [r["ok"] for r in loaded.records] == [False, True]
    assert main(["report", "out", "--input", "a.txt"]) == 0
    assert "1 document: 1 ok, 0 failed (0 suspect); 1 spans -> out.html" in (
        capsys.readouterr().err)
    (tmp_path / "empty").mkdir()
    assert main(["report", "empty"]) == 2
    assert "empty: a directory without *.jsonl results files" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_report_never_reads_a_results_path_that_is_not_a_regular_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A pipe (or a device) as the results file is refused before it is
    opened (the read blocked for good, or never ended); a pipe named
    ``*.jsonl`` in a results directory is skipped with a note."""
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    assert main(["report", "pipe"]) == 2
    assert "pipe: not a regular file" in capsys.readouterr().err
    if Path("/dev/zero").exists():
        assert main(["report", "/dev/zero"]) == 2
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "b.jsonl")
    (out / "a.jsonl").write_bytes(line({"id": "a.txt", "ok": True, "output": {"n": 1}}))
    loaded = read_records(out)
    assert [r["id"] for r in loaded.records] == ["a.txt"]
    assert any("b.jsonl: not a regular file; skipped" in n for n in loaded.notes)


def test_report_never_replaces_what_is_not_a_regular_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out.jsonl").write_bytes(line({"id": "a.txt", "ok": True, "output": {"n": 1}}))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "pages").mkdir()
    for target, says in [(str(fifo), "not a regular file"), ("pages", "a directory"),
                         ("/dev/null", "not a regular file"),
                         ("missing/page.html", "directory does not exist")]:
        assert main(["report", "out.jsonl", "--input", ".", "-o", target]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, err
    assert stat.S_ISFIFO(fifo.stat().st_mode) and (tmp_path / "pages").is_dir()
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)
    # a new file is fine
    assert main(["report", "out.jsonl", "--input", ".", "-o", "page.html"]) == 0


def test_report_reads_only_the_files_its_inputs_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A results file is data from anyone: its ids must not pull in local files
    (``/etc/shadow``, ``~/.ssh/id_rsa``, ``.env``) that no ``--input`` names."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Ann Lee")
    secret = tmp_path / ".env"
    secret.write_text("API_KEY=hunter2-secret\n")
    (tmp_path / "rows.jsonl").write_text('{"id": "x", "text": "hunter2-row"}\n')
    rids = ["docs/a.txt", str(secret), ".env", "docs/../.env", "rows.jsonl#x",
            "/etc/passwd", "nowhere.txt"]
    (tmp_path / "out.jsonl").write_bytes(b"".join(
        line({"id": rid, "ok": True, "output": {"n": "Ann"}}) for rid in rids))
    assert main(["report", "out.jsonl", "--input", "docs/*.txt", "-o", "page.html"]) == 0
    page = (tmp_path / "page.html").read_text()
    assert "Ann Lee" in page  # the named input is read
    assert "hunter2" not in page and "root:" not in page
    for rid in rids[1:]:
        assert f"{rid!r} is not a file --input names" in page.replace("&#x27;", "'"), rid
    err = capsys.readouterr().err
    assert "6 sources not available" in err and "hunter2" not in err

    # a directory names the files under it; ./x and x are one file
    assert main(["report", "out.jsonl", "--input", "./docs", "-o", "dir.html"]) == 0
    assert "Ann Lee" in (tmp_path / "dir.html").read_text()
    # several specs after one --input, as extract takes them
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "b.txt").write_text("Bo Diaz")
    (tmp_path / "out2.jsonl").write_bytes(b"".join(
        line({"id": rid, "ok": True, "output": {"n": "x"}}) for rid in ("docs/a.txt",
                                                                       "more/b.txt")))
    assert main(["report", "out2.jsonl", "--input", "docs/a.txt", "more", "-o", "two.html"]) == 0
    two = (tmp_path / "two.html").read_text()
    assert "Ann Lee" in two and "Bo Diaz" in two

    # no --input: no source is read at all, each document says why
    assert main(["report", "out.jsonl", "-o", "none.html"]) == 0
    none = (tmp_path / "none.html").read_text()
    assert "Ann Lee" not in none and "hunter2" not in none
    assert none.count("no --input given") >= len(rids)  # on each card (and in the summary)
    capsys.readouterr()

    # an --input matching nothing is bad usage, before any page is written
    assert main(["report", "out.jsonl", "--input", "nothing/*.txt", "-o", "bad.html"]) == 2
    assert "matches no file" in capsys.readouterr().err
    assert not (tmp_path / "bad.html").exists()
    # the library does the same
    assert SourceReader()({"id": str(secret)}).text is None
    assert SourceReader(inputs=["docs/a.txt"])({"id": str(tmp_path / "docs/a.txt")}
                                               ).text == "Ann Lee"
