"""Document discovery for `agentflow extract`, and the Debian changelog example."""

from __future__ import annotations

import glob
import gzip
import io
import sys
from pathlib import Path

import pytest

from agentflow._inputs import InputError, iter_documents

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import debian_changelog

ENTRY = """hello (2.10-3) unstable; urgency=medium

  * Add a test.
  * Fix the build
    on two lines.

 -- Santiago Vila <sanvila@debian.org>  Sun, 11 Dec 2022 12:00:00 +0100

hello (2.10-2) unstable; urgency=low

  * Older change.

 -- Santiago Vila <sanvila@debian.org>  Sat, 10 Dec 2022 12:00:00 +0100
"""


def test_files_globs_directories_gz_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "b.txt.gz").write_bytes(gzip.compress("beta ü".encode()))
    (tmp_path / "records.jsonl").write_text(
        '{"id": "r1", "text": "one"}\n\n{"text": "two"}\n'
    )
    docs = list(iter_documents([str(tmp_path / "a.txt"), str(sub), str(tmp_path / "*.jsonl")]))
    assert [d.text for d in docs] == ["alpha", "beta ü", "one", "two"]
    assert docs[2].id.endswith("records.jsonl#r1") and docs[3].id.endswith("records.jsonl#3")
    assert docs[1].id == str(sub / "b.txt.gz")


def test_prepare_and_never_a_cut(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("abcdefgh" * 10_000)
    docs = list(iter_documents([str(tmp_path / "x.txt")], prepare=str.upper))
    assert docs[0].text == "ABCDEFGH" * 10_000  # a cap is extract_many's, and recorded


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin"))
    assert [d.text for d in iter_documents(["-"])] == ["from stdin"]


def test_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="matches no file"):
        list(iter_documents([str(tmp_path / "nothing*.txt")]))
    (tmp_path / "bad.jsonl").write_text('{"body": "x"}\n')
    with pytest.raises(InputError, match="no string field 'text'"):
        list(iter_documents([str(tmp_path / "bad.jsonl")]))


def test_debian_prepare_keeps_the_latest_entry_and_parser_reads_it() -> None:
    latest = debian_changelog.prepare(ENTRY)
    assert "2.10-2" not in latest and latest.endswith("+0100")
    entry = debian_changelog.parse_entry(ENTRY)
    assert entry is not None
    assert (entry.package, entry.version, entry.distribution, entry.urgency) == (
        "hello", "2.10-3", "unstable", "medium")
    assert entry.maintainer == "Santiago Vila <sanvila@debian.org>"
    assert entry.date == "Sun, 11 Dec 2022 12:00:00 +0100"
    assert entry.changes == ["Add a test.", "Fix the build on two lines."]


def test_parser_reads_this_machines_changelogs() -> None:
    files = sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz"))[:40]
    if not files:
        pytest.skip("no Debian changelogs on this machine")
    parsed = [debian_changelog.parse_entry(gzip.decompress(Path(f).read_bytes()).decode(
        "utf-8", "replace")) for f in files]
    assert sum(p is not None for p in parsed) >= 0.9 * len(files)
