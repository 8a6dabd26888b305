"""Hostile records in a results file (``agentflow report``): each is shown or
skipped with a note, and the page is written for the others; none crashes
the report or grows it with the square of its size."""

from __future__ import annotations

from pathlib import Path

import orjson

from agentflow.extraction._report_fields import field_notes
from agentflow.extraction.results_file import MAX_RECORD_DEPTH
from agentflow.extraction.review import write_review
from agentflow.extraction.shared_spans import SHARED_NAMES, shared_with

BIG = b"1234567890123456789012345"  # a 25-digit invoice number read into an int field


def test_big_integers_and_deep_nesting_leave_the_page_whole(tmp_path: Path) -> None:
    source = tmp_path / "invoice.txt"
    source.write_text("Invoice 1234567890123456789012345 for Ann Lee\n")
    sid = orjson.dumps(str(source))
    deep = b"[" * 1000 + b"0" + b"]" * 1000  # orjson reads 1,024 levels
    lines = [
        # extract writes an int past 64 bits with its digits (json_bytes)
        b'{"id":' + sid + b',"ok":true,"output":{"number":' + BIG + b',"name":"Ann Lee"},'
        b'"spans":{"name":[[38,45]],"number":[[' + BIG + b']]}}',
        b'{"id":"deep","ok":true,"output":{"a":' + deep + b'},"spans":{"a":' + deep + b"}}",
        b'{"id":"deep-error","ok":false,"error":{"type":"X","message":' + deep + b"}}",
    ]
    results = tmp_path / "results.jsonl"
    results.write_bytes(b"\n".join(lines) + b"\n")
    page = tmp_path / "page.html"
    stats = write_review(results, page, inputs=[str(source)])
    html = page.read_text()
    assert stats.records == 1 and stats.ok == 1
    assert "1234567890123456789012345" in html  # the value, and the span item that is no pair
    assert f"not a [start, end] pair: [{BIG.decode()}]" in html
    for number in (2, 3):
        assert (f"{results}:{number}: skipped a record nested more than {MAX_RECORD_DEPTH} "
                "levels deep") in html


def test_many_fields_at_one_place_name_a_few_each() -> None:
    fields = 20_000
    record = {"id": "d", "ok": True,
              "output": {f"k{i}": "Ann" for i in range(fields)},
              "spans": {f"k{i}": [[0, 3]] for i in range(fields)},
              "confidence": {f"k{i}": 0.5 for i in range(fields)}}
    shared = shared_with(record)
    assert len(shared) == fields and shared["k0"] is shared["k1"]  # one list per place
    notes = field_notes(record)
    why = notes["k7"].why
    assert f"and {fields - 1 - SHARED_NAMES:,} more" in why and "'k7'" not in why
    assert sum(len(n.why) for n in notes.values()) < 400 * fields  # linear, not quadratic
