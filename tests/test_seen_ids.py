"""SeenIds: whole ids in a temporary SQLite database (exact, memory that does
not grow with the ids), and the readers that use it: a JSONL file's repeated
ids, an --out file's records on resume, extract_many's id check."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import orjson
import pytest

from agentflow.batch_types import IdCheck
from agentflow.documents.inputs import iter_documents
from agentflow.documents.seen import MISSING, SeenIds
from agentflow.errors import DuplicateInputIdError
from agentflow.extraction.outfile import open_out


def test_values_are_kept_exactly_and_none_is_a_value() -> None:
    seen = SeenIds()
    assert seen.setdefault("a", 3) is MISSING
    assert seen.setdefault("a", 9) == 3
    assert seen.get("b") is MISSING and seen.get("b", 0) == 0
    seen["a"] = None
    assert seen.get("a") is None and "a" in seen and "b" not in seen and 5 not in seen
    seen["b"] = "RateLimitedError"
    assert len(seen) == 2
    assert dict(seen.items()) == {"a": None, "b": "RateLimitedError"}
    seen.close()
    seen.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        seen.get("a")


def test_ids_that_differ_anywhere_are_never_taken_for_one() -> None:
    """The whole id is the key: near-identical ids, a lone surrogate (an
    undecodable file name), long ids sharing a prefix, all stay apart."""
    seen = SeenIds()
    prefix = "d/" * 5000
    ids = ["a", "A", "a ", "\udcff", "\udcfe", "é", "e\u0301", prefix + "x", prefix + "y",
           "x.jsonl#1", "x.jsonl#01"]
    for i, key in enumerate(ids):
        assert seen.setdefault(key, i) is MISSING
    assert [seen.get(key) for key in ids] == list(range(len(ids)))
    assert dict(seen.items()).keys() == set(ids)


def test_memory_holds_no_python_object_per_id() -> None:
    """50,000 ids add nothing to the Python heap (SQLite's page cache is
    bounded by CACHE_KIB; the benchmark measures the process's RSS)."""
    seen = SeenIds()
    seen.setdefault("warm-up", 0)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(50_000):
            seen.setdefault(f"corpus.jsonl#{i}", i)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(seen) == 50_001
    assert grown < 64 * 1024, grown  # a dict of 50k ids would be several MB


def test_a_jsonl_files_repeated_ids_fail_naming_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    lines = [{"id": i % 1000, "text": f"t{i}"} for i in range(1500)]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    docs = list(iter_documents([str(path)]))
    ok = [d for d in docs if not d.problem]
    bad = [d for d in docs if d.problem]
    assert len(ok) == 1000 and len(bad) == 500
    assert "id 0 already used on line 1" in (bad[0].problem or "")
    assert "id 499 already used on line 500" in (bad[-1].problem or "")


def test_resume_reads_outcomes_from_disk_and_compaction_keeps_the_newest(
        tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    rows = [{"id": f"f#{i}", "ok": i % 3 != 0, **({"error": {"type": "RateLimitedError"}}
                                                   if i % 3 == 0 else {})}
            for i in range(3000)]
    rows.append({"id": "f#0", "ok": True})  # a rerun's newer record of f#0
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    out = open_out(str(path))
    try:
        assert len(out.outcomes) == 3000 and out.superseded == 1
        assert out.outcomes.get("f#0") is None  # the newest record wins
        assert out.outcomes.get("f#3") == "RateLimitedError"
        assert out.outcomes.get("f#4") is None and out.outcomes.get("g") is MISSING
        out.write({"id": "f#3", "ok": True})
        assert out.outcomes.get("f#3") is None and out.superseded == 2
        assert out.compact() == 2
    finally:
        out.close()
    kept = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    assert len(kept) == 3000 and len({r["id"] for r in kept}) == 3000
    assert {"id": "f#0", "ok": True} in kept and {"id": "f#3", "ok": True} in kept


def test_extract_many_id_check_on_a_stream() -> None:
    check = IdCheck()
    for i in range(2000):
        check.add(i, (f"doc{i}", "text"))
    check.add(2000, "plain text")  # id "2000", generated
    with pytest.raises(DuplicateInputIdError) as info:
        check.add(2001, ("doc7", "again"))
    assert "doc7" in str(info.value)
    with pytest.raises(DuplicateInputIdError):
        check.add(2002, ("2000", "explicit"))  # equal to a generated id
