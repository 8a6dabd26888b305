"""Folders walked lazily: each file ``stat``-ed only when the walk reaches it
(a folder of a million files is not stat'ed before the first request), in a
deterministic order, and a link to a folder told as skipped, with its reason,
where it was dropped silently."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentflow.cli import main
from agentflow.documents.inputs import Document, Source, iter_documents, iter_sources
from agentflow.documents.named import check_named
from agentflow.documents.reading import InputError
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

SCHEMA = Path(__file__).resolve().parent.parent / "examples" / "contact.py"


def names(entries: list[Document | Source], root: Path) -> list[str]:
    return [os.path.relpath(e.path if isinstance(e, Source) else e.id, root) for e in entries]


def test_a_folder_is_not_stat_ed_before_its_first_file_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first file of a folder of 400 comes after a handful of ``stat``
    calls, not 400 (the walk stat'ed every file of a folder before giving the
    first); the rest are stat'ed as they are taken."""
    for n in range(400):
        (tmp_path / f"{n:04d}.txt").write_text(f"doc {n}")
    calls: list[str] = []
    real_stat = os.stat

    def counting(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        calls.append(str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counting)
    sources = iter_sources([str(tmp_path)])
    first = next(sources)
    assert isinstance(first, Source) and first.path == tmp_path / "0000.txt"
    assert len(calls) <= 4, calls
    rest = list(sources)
    monkeypatch.undo()
    assert len(rest) == 399 and len(calls) >= 400


def test_the_walk_order_is_files_by_name_then_each_folder(tmp_path: Path) -> None:
    """Resume keys on ids, and records come in this order run after run: a
    folder's files in name order, then its folders in name order, each walked
    the same way (the order the walk had)."""
    for rel in ("b.txt", "a.txt", "z/2.txt", "z/1.txt", "m/k/x.txt", "m/c.txt", "m/d/y.txt",
                "c.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    got = names(list(iter_sources([str(tmp_path)])), tmp_path)
    assert got == ["a.txt", "b.txt", "c.txt", "m/c.txt", "m/d/y.txt", "m/k/x.txt", "z/1.txt",
                   "z/2.txt"]
    assert names(list(iter_sources([str(tmp_path)])), tmp_path) == got


def test_a_link_to_a_folder_is_told_as_skipped_with_its_reason(tmp_path: Path) -> None:
    """As ``rg`` and ``fd`` do, a walk does not follow a link to a folder (a
    link to ``/`` would walk the file system, a loop forever), but it says so:
    each one is told to ``on_skip`` with why and how to read it (it was left
    out without a word). Named as an input, the link is walked."""
    root = tmp_path / "in"
    (root / "real").mkdir(parents=True)
    (root / "real" / "a.txt").write_text("Ann: a person")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.txt").write_text("Bo: a person")
    (root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (root / "real" / "loop").symlink_to(root, target_is_directory=True)
    told: list[tuple[Path, str]] = []
    got = names(list(iter_sources([str(root)], on_skip=lambda p, why: told.append((p, why)))),
                root)
    assert got == ["real/a.txt"]
    assert [p for p, _ in told] == [root / "linked", root / "real" / "loop"]
    assert told[0][1] == (f"{root / 'linked'}: a link to a folder; not followed (a folder walk "
                          "never follows one, as rg and fd do not: name it with --input to "
                          "read it)")
    # by a glob too (it was dropped silently there as well)
    told.clear()
    list(iter_sources([str(root / "*")], on_skip=lambda p, why: told.append((p, why))))
    assert [p for p, _ in told] == [root / "linked", root / "real" / "loop"]
    # named itself, the link is read
    assert [d.text for d in iter_documents([str(root / "linked")])] == ["Bo: a person"]
    # a folder holding nothing but a link to a folder names nothing to read
    only = tmp_path / "only"
    only.mkdir()
    (only / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(InputError, match="a folder with no file in it"):
        check_named([str(only)])


async def test_extract_says_which_folder_links_it_did_not_follow(tmp_path: Path) -> None:
    root = tmp_path / "in"
    root.mkdir()
    (root / "a.txt").write_text("Ann: a person")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "b.txt").write_text("Bo: a person")
    (root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as fake:
        fake.default = lambda body: FakeReply(text=(
            '{"name": "Ann", "email": null, "phone": null, "company": null, "title": null}'))
        argv = ["extract", "--schema", f"{SCHEMA}:Contact", "--input", str(root),
                "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
                "--out", str(out)]
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = await anyio.to_thread.run_sync(main, argv)
    assert status == 0, err.getvalue()
    assert [orjson.loads(line)["id"] for line in out.read_bytes().splitlines()] == [
        str(root / "a.txt")]
    text = err.getvalue()
    assert f"agentflow: skipped {root / 'linked'}: a link to a folder; not followed" in text
    assert "1 ok, 0 failed, 1 link to a folder not followed;" in text


async def test_a_walk_resumed_skips_what_out_holds_and_reads_the_rest_once(
        tmp_path: Path) -> None:
    """The walk's order is the same at every run, so a run stopped after two
    inputs and run again reads each of the others once."""
    root = tmp_path / "in"
    for rel in ("b.txt", "a.txt", "z/1.txt", "m/k/x.txt", "m/c.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as fake:
        fake.default = lambda body: FakeReply(text=(
            '{"name": "Ann", "email": null, "phone": null, "company": null, "title": null}'))
        argv = ["extract", "--schema", f"{SCHEMA}:Contact", "--input", str(root),
                "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
                "--out", str(out), "--concurrency", "1"]
        assert await anyio.to_thread.run_sync(main, [*argv, "--limit", "2"]) == 0
        assert await anyio.to_thread.run_sync(main, argv) == 0
    ids = [orjson.loads(line)["id"].removeprefix(f"{root}/")
           for line in out.read_bytes().splitlines()]
    assert ids == ["a.txt", "b.txt", "m/c.txt", "m/k/x.txt", "z/1.txt"]


def test_a_folder_past_the_spill_size_is_walked_in_the_same_order_from_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flat folder's names are sorted on disk past ``SPILL_NAMES`` (they
    were all held in memory to sort them): the walk gives the same entries in
    the same order, undecodable names and links included."""
    from agentflow.documents import listing

    root = tmp_path / "in"
    root.mkdir()
    for name in ("b.txt", "a.txt", "Zoë.txt", "ω.txt", "é.txt", "10.txt", "9.txt"):
        (root / name).write_text(name)
    os.close(os.open(os.fsencode(root) + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY))
    for sub in ("m", "k"):
        (root / sub).mkdir()
        for n in range(5):
            (root / sub / f"{n}.txt").write_text(sub)
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (root / "broken").symlink_to(tmp_path / "nowhere")

    def walked() -> list[tuple[str, str | None]]:
        return [(os.path.relpath(p, root), why and why.replace(str(root), "ROOT"))
                for p, why in listing._walk(root)]

    in_memory = walked()
    monkeypatch.setattr(listing, "SPILL_NAMES", 2)
    assert walked() == in_memory
    assert [p for p, _ in in_memory][:3] == ["10.txt", "9.txt", "Zoë.txt"]  # str order
    assert len(in_memory) == 8 + 10 + 2


def test_the_report_reader_keeps_no_jsonl_texts_or_names_in_memory(tmp_path: Path) -> None:
    """``agentflow report``'s reader holds the files it may read and a JSONL
    input's texts on disk (``SeenIds``): it finds each record's text, and
    only the wanted ones are kept."""
    from agentflow.documents.listing import NamedFiles
    from agentflow.documents.seen import SeenIds
    from agentflow.extraction.review import SourceReader

    lines = [orjson.dumps({"id": f"r{n}", "text": f"Doc {n}: a person"}) for n in range(50)]
    (tmp_path / "in.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "a.txt").write_text("Ann: a person")
    base = str(tmp_path / "in.jsonl")
    wanted = {f"{base}#r{n}" for n in (3, 7)}
    reader = SourceReader(inputs=[str(tmp_path)], wanted=wanted)
    try:
        assert isinstance(reader._named, NamedFiles) and len(reader._named) == 2
        assert reader({"id": f"{base}#r7"}).text == "Doc 7: a person"
        assert reader({"id": f"{base}#r3"}).text == "Doc 3: a person"
        assert "holds no record" in (reader({"id": f"{base}#r4"}).problem or "")
        assert reader({"id": str(tmp_path / "a.txt")}).text == "Ann: a person"
        [table] = reader._jsonl.values()
        assert isinstance(table, SeenIds) and len(table) == 2
    finally:
        reader.close()
