"""An ``--out`` file among the inputs: refused before any request where the
paths tell (a spec naming it, a folder it is in, a glob naming it, standard
input), without listing any folder; left out, with a note, where the reader
meets it under another name (a link to it inside an input folder)."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentflow.documents.glob_names import glob_names
from agentflow.documents.named import out_among_inputs
from tests.fakes.openai import OpenAIFake
from tests.test_cli import AGENTFLOW, contact_args, one_line, records, reply_for, run_cli


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


def tree(root: Path) -> list[Path]:
    """A folder of people, nested, with hidden names; its files."""
    files = [root / "Ann.txt", root / "sub" / "Bob.txt", root / "sub" / "deep" / "Cy.jsonl",
             root / ".hidden" / "Di.txt", root / "sub" / ".Ed.txt", root / "Fay.jsonl"]
    for file in files:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"{file.stem}: a person")
    return files


def test_a_glob_names_a_file_as_glob_reads_it(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    files = tree(root)
    (tmp_path / "link").symlink_to(root)
    monkeypatch.chdir(tmp_path)
    patterns = ["root/*.txt", "root/**", "root/**/*.txt", "root/**/*.jsonl", "root/*/*",
                "root/.*/*.txt", "root/sub/.*", "r*/sub/*", "link/**/*.txt", "./root/s?b/*",
                "root/[AB]*", str(root / "**" / "*"), "root/**/deep/*", "*/Ann.txt",
                "../*/root/*.txt"]
    for pattern in patterns:
        read = {os.path.realpath(p) for p in glob.glob(pattern, recursive=True)}
        for file in files:
            assert glob_names(pattern, file) == (str(file) in read), (pattern, file)
    assert not glob_names("root/Ann.txt", root / "Ann.txt")  # a path is no glob


def test_the_path_check_lists_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    tree(root)
    out = root / "sub" / "out.jsonl"
    fd = os.open(out, os.O_CREAT | os.O_RDWR)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def listed(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a folder was listed")

    for name in ("scandir", "listdir", "walk"):  # what globs and walks read folders with
        monkeypatch.setattr(os, name, listed)
    monkeypatch.setattr(glob, "glob", listed)
    try:
        assert out_among_inputs(out, fd, [str(elsewhere), str(root)]) == (
            str(root), str(root / "sub" / "out.jsonl"))
        assert out_among_inputs(out, fd, [f"{root}/**/*.jsonl"]) == (f"{root}/**/*.jsonl",
                                                                     str(out))
        assert out_among_inputs(out, fd, [str(elsewhere), f"{root}/*.jsonl"]) is None
        assert out_among_inputs(out, fd, [str(out)]) == (str(out), str(out))
    finally:
        os.close(fd)


async def test_an_out_file_the_paths_name_is_refused_before_any_request(
        fake: OpenAIFake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    tree(docs)
    out = tmp_path / "out.jsonl"
    out.write_text("my notes\n")  # not empty: read as JSONL, it names something
    link = tmp_path / "link.jsonl"
    link.symlink_to(out)
    hard = tmp_path / "hard.jsonl"
    hard.hardlink_to(out)
    monkeypatch.chdir(tmp_path)
    for inputs, out_as, named in (
            ([docs / "Ann.txt", link], out, "link.jsonl"),  # a link to it, named
            ([hard], out, "hard.jsonl"),  # a hard link to it, named
            ([Path("./out.jsonl")], out, "out.jsonl"),  # another spelling
            ([Path(".")], link, "out.jsonl"),  # the folder it is in, --out through a link
            ([Path("*.jsonl")], out, "out.jsonl"),  # a glob, relative
            ([tmp_path / "**" / "*.jsonl"], docs / "sub" / "deep" / "Cy.jsonl", "Cy.jsonl")):
        assert await run_cli(*contact_args(fake, *inputs, out=out_as)) == 2, inputs
        line = one_line(capsys.readouterr().err)
        assert "is one of the inputs" in line and named in line, line
    assert fake.requests == [] and out.read_bytes() == b"my notes\n"
    # standard input that is the --out file
    with out.open("rb") as stdin:
        done = await anyio.run_process(
            [str(AGENTFLOW), *contact_args(fake, Path("-"), out=out)], stdin=stdin,
            check=False)
    assert done.returncode == 2
    assert "(standard input, read through --input -)" in one_line(done.stderr.decode())
    assert fake.requests == [] and out.read_bytes() == b"my notes\n"


async def test_an_out_file_met_under_another_name_is_left_out_of_the_inputs(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "Ann.txt").write_text("Ann: a person")
    (docs / "Bob.txt").write_text("Bob: a person")
    out = tmp_path / "out.jsonl"
    out.write_text("")
    (docs / "a-link.jsonl").symlink_to(out)  # met first, before any record is written
    (docs / "z-hard.txt").hardlink_to(out)  # met after records are
    args = contact_args(fake, docs, out=out)
    assert await run_cli(*args) == 0
    err = capsys.readouterr().err
    for name in ("a-link.jsonl", "z-hard.txt"):
        assert (f"agentflow: skipped {docs / name}: it is the --out file {out} (records are "
                "not read back as documents)") in err, err
    assert sorted(Path(r["id"]).name for r in records(out)) == ["Ann.txt", "Bob.txt"]
    assert len(fake.requests) == 2
    assert await run_cli(*args) == 0  # resumed: still only the documents
    assert "0 ok, 0 failed, 2 already done" in capsys.readouterr().err
    assert len(records(out)) == 2
