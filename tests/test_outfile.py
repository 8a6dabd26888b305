"""The --out file: bounded reading back, newest record per id, compaction, the lock."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import orjson
import pytest

from agentflow.extraction.outfile import iter_lines, open_out, read_records
from agentflow.extraction.setup import SetupError


def test_reading_back_is_bounded_per_line(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": "a", "ok": true}\n' + b"x" * 5000 + b'\n{"id": "b", "ok": false}\n')
    lines = [line for _, line in iter_lines(path, max_line=1000)]
    assert lines == [b'{"id": "a", "ok": true}', b'{"id": "b", "ok": false}']
    assert [r["id"] for _, r in read_records(path)] == ["a", "b"]


def test_newest_record_wins_and_compaction_keeps_one_per_id(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    rows = [{"id": "a", "ok": False, "error": {"type": "RateLimitedError"}},
            {"id": "b", "ok": True}, {"id": "a", "ok": True, "output": {"n": 2}}]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows) + b'{"id": "c", "ok"')
    out = open_out(str(path))
    try:
        assert dict(out.outcomes.items()) == {"a": None, "b": None} and out.superseded == 1
        out.write({"id": "b", "ok": False, "error": {"type": "StructuredOutputError"}})
        assert out.outcomes.get("b") == "StructuredOutputError"
        assert out.compact() == 3  # the old a, the old b and the torn line
    finally:
        out.close()
    kept = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert kept == [rows[2], {"id": "b", "ok": False, "error": {"type": "StructuredOutputError"}}]


def test_a_torn_last_line_is_closed_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": "a", "ok": true}\n{"id": "b", "o')
    out = open_out(str(path))
    out.write({"id": "c", "ok": True})
    out.close()
    assert path.read_bytes().splitlines()[-1] == b'{"id":"c","ok":true}'


def test_the_lock_is_held_until_close(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    out = open_out(str(path))
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(BlockingIOError):  # another open file description is refused
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out.close()
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_only_regular_files(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match="character device"):
        open_out("/dev/null")
    with pytest.raises(SetupError, match="a directory"):
        open_out(str(tmp_path))


def test_compaction_keeps_lines_as_written(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": "a", "ok": true, "output": {"x": 1.10}}\n'
                     b'{"id":"b","ok":false}\n{"id":"b","ok":true}\n')
    out = open_out(str(path))
    try:
        assert out.compact() == 1
    finally:
        out.close()
    assert path.read_bytes() == (b'{"id": "a", "ok": true, "output": {"x": 1.10}}\n'
                                 b'{"id":"b","ok":true}\n')


def test_iter_lines_is_linear_in_each_chunk(tmp_path: Path) -> None:
    """A file of many short lines is read without copying the rest of the
    read buffer per line (4 MB of 11-byte lines took seconds), and lines that
    cross the read size come back whole (the time is benchmarks/bench_linear.py's)."""
    path = tmp_path / "records.jsonl"
    path.write_bytes(b'{"id":"x"}\n' * 400_000 + b"tail")
    lines = list(iter_lines(path))
    assert len(lines) == 400_001 and lines[-1] == (4_400_000, b"tail")
    assert all(line == b'{"id":"x"}' for _, line in lines[:-1])
    assert lines[100_000][0] == 1_100_000


def test_nul_bytes_a_crash_left_are_skipped_by_resume_and_report(tmp_path: Path) -> None:
    """A crash can leave the last blocks of --out zeroed: a torn record with NUL
    bytes after it, or a line of NULs. A rerun does not count them as lines
    someone else wrote, and ``agentflow report`` skips them with a note (it
    refused the file: 'not JSON')."""
    from agentflow.extraction.review import read_records as report_records

    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": "a", "ok": true}\n{"id": "b", "ok": tr' + b"\0" * 4096 + b"\n"
                     + b"\0" * 8192)
    out = open_out(str(path))
    try:
        assert out.foreign == 0 and dict(out.outcomes.items()) == {"a": None}
        out.write({"id": "b", "ok": True})
    finally:
        out.close()
    loaded = report_records(path)
    assert [r["id"] for r in loaded.records] == ["a", "b"]
    assert loaded.notes == [f"{path}:2: skipped a cut-off record (an interrupted write)",
                            f"{path}:3: skipped 8,192 NUL bytes (blocks a crash left unwritten)"]


def test_report_skips_a_line_longer_than_a_record_without_holding_it(tmp_path: Path) -> None:
    """A zeroed tail without a newline can be gigabytes long: ``report`` reads
    past a line longer than a record a chunk at a time (it read it whole)."""
    import tracemalloc

    from agentflow.extraction.review import read_records as report_records

    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": "a", "ok": true}\n' + b"\0" * 30_000_000 + b"\n"
                     + b'{"id": "b", "ok": true}\n' + b"x" * 30_000_000)
    tracemalloc.start()
    try:
        loaded = report_records(path, max_line=1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [r["id"] for r in loaded.records] == ["a", "b"]
    assert loaded.notes == [
        f"{path}:2: skipped a line of 30,000,000 bytes (longer than a record read back: 1,000)",
        f"{path}:4: skipped a line of 30,000,000 bytes (longer than a record read back: 1,000)"]
    assert peak < 8_000_000, peak  # the line was read whole: 30 MB (room for a loaded worker)
