"""Document discovery for `agentflow extract`, and the Debian changelog example."""

from __future__ import annotations

import glob
import gzip
import hashlib
import io
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentflow.documents.inputs import InputError, iter_documents

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


def test_a_prepare_that_fails_fails_only_its_document(tmp_path: Path) -> None:
    for name in ("ok.txt", "boom.txt", "none.txt"):
        (tmp_path / name).write_text(name)

    def prepare(text: str) -> str:
        if text == "boom.txt":
            raise ValueError("no entry found")
        return None if text == "none.txt" else text.upper()  # type: ignore[return-value]

    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)], prepare=prepare)}
    assert docs["ok.txt"].text == "OK.TXT" and docs["ok.txt"].problem is None
    assert "prepare() raised ValueError: no entry found" in str(docs["boom.txt"].problem)
    assert "prepare() returned NoneType, not str" in str(docs["none.txt"].problem)


def test_a_fifo_named_directly_is_a_failed_document_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (doc,) = iter_documents([str(fifo)])  # never opened: opening a FIFO blocks
    assert doc.problem is not None and "not a regular file" in doc.problem


def test_a_repeated_jsonl_id_is_a_failed_line_not_a_lost_document(tmp_path: Path) -> None:
    (tmp_path / "dup.jsonl").write_text('{"id": 1, "text": "Ada"}\n{"id": 1, "text": "Bob"}\n')
    first, second = iter_documents([str(tmp_path / "dup.jsonl")])
    assert first.text == "Ada" and first.problem is None
    assert second.problem_type == "InvalidInputLineError" and second.id.endswith("dup.jsonl:2")
    assert second.problem is not None and "id 1 already used on line 1" in second.problem


def test_bad_jsonl_lines_deep_in_a_file_are_failed_documents_and_the_rest_go_on(
        tmp_path: Path) -> None:
    good = [f'{{"id": "r{i}", "text": "doc {i}"}}' for i in range(500)]
    lines = [*good[:300], '{"id": "broken", "text": "cut', '{"body": "no text field"}',
             '["a", "list"]', '{"id": "n", "text": 7}', *good[300:]]
    (tmp_path / "big.jsonl").write_text("\n".join(lines) + "\n")
    docs = list(iter_documents([str(tmp_path / "big.jsonl")]))
    assert [d.text for d in docs if d.problem is None] == [f"doc {i}" for i in range(500)]
    bad = [d for d in docs if d.problem is not None]
    assert [d.id.rsplit(":", 1)[1] for d in bad] == ["301", "302", "303", "304"]
    assert {d.problem_type for d in bad} == {"InvalidInputLineError"}
    assert "not JSON" in (bad[0].problem or "")
    assert "no string field 'text'" in (bad[1].problem or "") and "body" in (bad[1].problem or "")
    assert "not an object" in (bad[2].problem or "")


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin"))
    assert [d.text for d in iter_documents(["-"])] == ["from stdin"]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("from bytes ü".encode())))
    assert [d.text for d in iter_documents(["-"])] == ["from bytes ü"]


def test_a_file_that_several_inputs_name_is_read_once(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # overlapping --input arguments (a path and a glob, a directory and a file in it,
    # a/../a.txt, stdin twice) read one file twice: paid twice, two records of one id
    (tmp_path / "a.txt").write_text("alpha")
    (tmp_path / "b.txt").write_text("beta")
    os.link(tmp_path / "b.txt", tmp_path / "b-link.txt")
    specs = [str(tmp_path / "a.txt"), str(tmp_path / "*.txt"), str(tmp_path),
             os.path.join(str(tmp_path), "..", tmp_path.name, "a.txt")]
    docs = list(iter_documents(specs))
    assert [d.text for d in docs] == ["alpha", "beta"]
    assert docs[0].id == str(tmp_path / "a.txt")
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin"))
    assert [d.text for d in iter_documents(["-", "-"])] == ["from stdin"]


def test_binary_stdin_is_refused_like_a_binary_file(monkeypatch: pytest.MonkeyPatch) -> None:
    elf = b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 40
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(elf)))
    (doc,) = iter_documents(["-"])
    assert doc.problem is not None and "binary" in doc.problem
    # its id is the input's own, as a readable stdin's (``-#`` and the digest of its
    # bytes, the documented form), never a bare ``-`` shared by every unreadable stdin
    assert doc.id == f"-#{hashlib.sha1(elf).hexdigest()[:12]}"


def test_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="matches no file"):
        list(iter_documents([str(tmp_path / "nothing*.txt")]))
    (tmp_path / "bad.jsonl").write_text('{"body": "x"}\n')
    (doc,) = iter_documents([str(tmp_path / "bad.jsonl")])
    assert doc.problem is not None and "no string field 'text'" in doc.problem


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


def test_nothing_in_a_directory_is_skipped_silently(tmp_path: Path) -> None:
    import os

    (tmp_path / "ok.txt").write_text("fine text")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "pipe")  # never opened: reading it would block
    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)])}
    assert docs["ok.txt"].problem is None
    assert "cannot read" in (docs["dangling"].problem or "")
    assert "not a regular file" in (docs["pipe"].problem or "")


def test_a_glob_reads_what_it_matches_as_if_each_were_named(tmp_path: Path) -> None:
    """A glob's match is read as that path given alone: a folder is walked, a
    pipe, a device link or a link loop is a failed document (they were dropped
    silently, and a glob matching only folders was refused as matching no file)."""
    import os

    (tmp_path / "2023").mkdir()
    (tmp_path / "2023" / "a.txt").write_text("in a folder")
    (tmp_path / "2023" / "deeper").mkdir()
    (tmp_path / "2023" / "deeper" / "b.txt").write_text("deeper")
    (tmp_path / "top.txt").write_text("top")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "root").symlink_to("/")  # a link to a folder: not followed, as in a walk
    (tmp_path / "2023" / "deeper" / "up").symlink_to(tmp_path)  # (** went round it)
    for spec in (f"{tmp_path}/*", f"{tmp_path}/**", f"{tmp_path}/**/*"):
        docs = {Path(d.id).relative_to(tmp_path).as_posix(): d for d in iter_documents([spec])}
        assert sorted(docs) == ["2023/a.txt", "2023/deeper/b.txt", "loop1", "loop2", "pipe",
                                "top.txt", "zero"], spec
        assert [docs[n].text for n in ("2023/a.txt", "2023/deeper/b.txt", "top.txt")] == [
            "in a folder", "deeper", "top"]
        for name in ("pipe", "zero"):
            assert docs[name].problem == f"{tmp_path / name}: not a regular file; not read"
        assert "cannot read: Too many levels of symbolic links" in (docs["loop1"].problem or "")
    with pytest.raises(InputError, match="matches no file"):
        list(iter_documents([f"{tmp_path}/r*"]))  # only a link to a folder
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="matches no file"):
        list(iter_documents([f"{tmp_path}/em*"]))


def test_failed_documents_name_a_public_error_type(tmp_path: Path) -> None:
    """Every per-document problem names an error class ``agentflow`` exports,
    the same the Python API raises (never the CLI's private ``InputError``)."""
    import agentflow

    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "bin.dat").write_bytes(bytes(range(256)) * 40)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "big.txt.gz").write_bytes(b"not gzip at all")
    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)])}
    assert docs["empty.txt"].problem_type == "EmptyDocumentError"
    assert docs["empty.txt"].reason == agentflow.EmptyDocumentError.reason
    for name in ("bin.dat", "dangling", "big.txt.gz"):
        assert docs[name].problem_type == "UnreadableDocumentError", name
        assert docs[name].reason
    assert all(hasattr(agentflow, d.problem_type or "") for d in docs.values() if d.problem)


def test_binary_detection_looks_at_the_share_of_non_text_bytes(tmp_path: Path) -> None:
    import random

    from agentflow.documents.inputs import decode_text

    rng = random.Random(7)
    noise = bytes(rng.randrange(1, 256) for _ in range(20_000))  # no NUL at all
    assert decode_text(noise) is None
    russian = "Привет, это обычный русский текст для проверки кодировки. " * 40
    assert decode_text(russian.encode("cp1251")) == russian  # a legacy encoding is text
    assert decode_text("naïve café ☕\n".encode()) == "naïve café ☕\n"
    assert decode_text(b"text\x01\x02\x03\x04\x05\x06" * 100) is None  # mostly control bytes
    (tmp_path / "noise.txt").write_bytes(noise)
    [doc] = iter_documents([str(tmp_path / "noise.txt")])
    assert "binary" in (doc.problem or "")


def test_an_unreadable_subdirectory_is_a_failed_record(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="agentflow-unreadable-"))
    try:
        os.chmod(root, 0o755)
        (root / "ok.txt").write_text("fine")
        (root / "secret").mkdir(mode=0o700)
        (root / "secret" / "x.txt").write_text("hidden")
        script = ("import sys; from agentflow.documents.inputs import iter_documents\n"
                  "for d in iter_documents([sys.argv[1]]): print(d.id, '|', d.problem)")
        command = [sys.executable, "-c", script, str(root)]
        if os.getuid() == 0:  # root reads every directory: drop the capabilities that let it
            os.chown(root / "secret", 65534, 65534)
            caps = "-dac_override,-dac_read_search"
            command = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}", *command]
        done = subprocess.run(command, capture_output=True, text=True,
                              cwd=Path(__file__).parent.parent, check=True)
        lines = dict(line.split(" | ") for line in done.stdout.splitlines())
        assert lines[str(root / "ok.txt")] == "None"
        assert "cannot read directory" in lines[str(root / "secret")]
    finally:
        import shutil

        shutil.rmtree(root)


def test_files_are_read_by_kind_pdf_html_and_text(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.pdfs import REPORT_PAGES, report_html_bytes, text_pdf

    (tmp_path / "a.pdf").write_bytes(text_pdf())
    (tmp_path / "b.html.gz").write_bytes(gzip.compress(report_html_bytes()))
    (tmp_path / "c.txt").write_bytes(b"<p>markup quoted in a note</p>")
    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)])}
    assert docs["a.pdf"].kind == "pdf" and docs["a.pdf"].text.startswith(REPORT_PAGES[0])
    assert docs["a.pdf"].pages is not None and len(docs["a.pdf"].pages) == 3
    assert docs["b.html.gz"].kind == "html" and "Renée Façade" in docs["b.html.gz"].text
    assert docs["c.txt"].kind == "text" and docs["c.txt"].text.startswith("<p>")
    forced = next(iter_documents([str(tmp_path / "c.txt")], fmt="html"))
    assert (forced.kind, forced.text) == ("html", "markup quoted in a note")
    markup = next(iter_documents([str(tmp_path / "b.html.gz")], fmt="text"))
    assert markup.kind == "text" and "<table>" in markup.text  # asked for the markup
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text_pdf())))
    (piped,) = iter_documents(["-"])
    assert piped.kind == "pdf" and piped.id.startswith("-#") and piped.pages is not None


def test_unreadable_pdfs_are_failed_documents_with_their_error_type(tmp_path: Path) -> None:
    from tests.pdfs import scanned_pdf, text_pdf

    (tmp_path / "scan.pdf").write_bytes(scanned_pdf(1))
    (tmp_path / "locked.pdf").write_bytes(text_pdf(owner_password="o", user_password="u"))
    (tmp_path / "zip.pdf").write_bytes(b"PK\x03\x04" + bytes(200))
    docs = {Path(d.id).name: d for d in iter_documents([str(tmp_path)])}
    assert {name: d.problem_type for name, d in docs.items()} == {
        "scan.pdf": "NoTextLayerError", "locked.pdf": "EncryptedDocumentError",
        "zip.pdf": "CorruptDocumentError"}
    assert all(d.problem and d.reason and not d.text for d in docs.values())
    assert "its one page has no text" in str(docs["scan.pdf"].reason)


def test_prepare_on_a_pdf_keeps_pages_for_a_cut_and_drops_them_for_a_rewrite(
        tmp_path: Path) -> None:
    from tests.pdfs import text_pdf

    (tmp_path / "a.pdf").write_bytes(text_pdf())
    whole = next(iter_documents([str(tmp_path / "a.pdf")]))
    cut = next(iter_documents([str(tmp_path / "a.pdf")],
                              prepare=lambda t: t[t.index("Costs"):]))
    assert whole.pages is not None and cut.pages is not None
    assert cut.offset == whole.pages[2][0] and cut.pages[2] == (0, len(cut.text))
    assert cut.pages[0] == cut.pages[1] == (0, 0)
    rewritten = next(iter_documents([str(tmp_path / "a.pdf")], prepare=str.upper))
    assert rewritten.pages is None  # ranges of the original would point at other text


def sent_bytes(data: object) -> bytes | None:
    """The bytes a document block would carry: a file is read when its input is sent."""
    from agentflow.documents.deferred import DeferredDocument

    assert isinstance(data, DeferredDocument), data  # never the bytes held from the listing
    return data.load().data


def test_deliver_keeps_the_bytes_of_pdfs_sent_as_document_blocks(tmp_path: Path) -> None:
    from agentflow.documents.routing import pdf_delivery
    from tests.pdfs import scanned_pdf, text_pdf

    (tmp_path / "a.pdf").write_bytes(text_pdf())
    (tmp_path / "scan.pdf").write_bytes(scanned_pdf(1))

    def read(mode: str) -> dict[str, Any]:
        def deliver(has_text: bool) -> str:
            return pdf_delivery(mode, model_reads_pdf=True, has_text=has_text)  # type: ignore[arg-type]
        return {Path(d.id).name: d for d in iter_documents([str(tmp_path)], prepare=str.strip,
                                                           deliver=deliver)}

    auto = read("auto")
    assert auto["a.pdf"].data is None and auto["a.pdf"].pages is not None  # the text layer
    assert sent_bytes(auto["scan.pdf"].data) == (tmp_path / "scan.pdf").read_bytes()
    assert auto["scan.pdf"].text == ""
    assert auto["scan.pdf"].problem is None  # not "empty": the model reads the PDF itself
    both = read("document")
    assert sent_bytes(both["a.pdf"].data) == (tmp_path / "a.pdf").read_bytes()
    assert both["a.pdf"].text.startswith("Quarterly")
    assert both["a.pdf"].pages is not None and len(both["a.pdf"].pages) == 3
    assert read("text")["scan.pdf"].problem_type == "NoTextLayerError"


def test_the_files_met_are_not_held_in_memory(tmp_path: Path) -> None:
    """A corpus's files are listed a folder at a time and the identities of
    those met (to read each once) are kept on disk (SeenIds): what agentflow's
    readers hold after 10,000 files is what one folder's listing needs."""
    import tracemalloc

    from agentflow.documents.inputs import iter_sources

    ours = [tracemalloc.Filter(True, "*/agentflow/documents/*")]
    for d in range(20):
        folder = tmp_path / f"d{d:02}"
        folder.mkdir()
        for i in range(500):
            (folder / f"{i:03}.txt").touch()
    for spec in (str(tmp_path), f"{tmp_path}/**/*.txt"):
        sources = iter_sources([spec])
        tracemalloc.start()
        try:
            for count, _ in enumerate(sources, start=1):
                if count == 1:
                    first = tracemalloc.take_snapshot().filter_traces(ours)
                if count == 10_000:
                    last = tracemalloc.take_snapshot().filter_traces(ours)
        finally:
            tracemalloc.stop()
            sources.close()
        assert count == 10_000
        grown = sum(stat.size_diff for stat in last.compare_to(first, "filename"))
        assert grown < 200_000, (spec, grown)  # a set of them: 1.6 MB
