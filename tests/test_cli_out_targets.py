"""Where a run writes is tried before any request: an ``--out`` that passes a
look (a regular file, an existing folder) but takes no record (a file of
``/proc`` or ``/sys``, a folder where no file can be made) is a set-up error,
exit 2 and one line naming it, with nothing asked of the model. The kinds:
``extract --out`` (the records file), the batch journal beside it, ``report
-o`` (the page, made beside its target) and ``--engine ray --out`` (a folder;
tests/test_ray.py)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentflow.cli import main
from agentflow.extraction.outfile import waiting_notice
from agentflow.extraction.setup import SetupError
from agentflow.extraction.targets import appendable, check_new_files
from tests.fakes.openai import OpenAIFake
from tests.test_cli import contact_args, one_line, reply_for, run_cli

PSEUDO = [p for p in ("/proc/version", "/proc/self/comm",
                      "/sys/kernel/mm/transparent_hugepage/enabled") if os.path.isfile(p)]


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


@pytest.mark.skipif(not PSEUDO, reason="no /proc or /sys files here")
async def test_an_out_file_that_takes_no_record_is_refused_before_any_request(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "Ann.txt"
    doc.write_text("Ann: a person")
    for out in PSEUDO:
        before = await anyio.Path(out).read_bytes()
        assert await run_cli(*contact_args(fake, doc, out=Path(out))) == 2, out
        line = one_line(capsys.readouterr().err)
        assert f"--out {out}: " in line, line  # (not root: "not writable", at the open)
        assert "records cannot be appended to it" in line or "not writable" in line, line
        assert await anyio.Path(out).read_bytes() == before
    assert fake.requests == []


def test_a_disk_file_is_appendable_and_a_folder_takes_new_files(tmp_path: Path) -> None:
    fd = os.open(tmp_path / "out.jsonl", os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        assert appendable(fd) is None
    finally:
        os.close(fd)
    check_new_files(tmp_path / "not" / "yet", "--out x/")  # made by the writer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # the probe is gone
    (tmp_path / "file").write_text("")
    with pytest.raises(SetupError, match=r"--out x/: .*file is not a directory"):
        check_new_files(tmp_path / "file" / "sub", "--out x/")


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc here")
def test_a_folder_where_no_file_can_be_made_is_refused(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SetupError, match=r"--out /proc/self/x/: cannot write files in /proc/self"):
        check_new_files(Path("/proc/self/x"), "--out /proc/self/x/")
    results = tmp_path / "out.jsonl"
    results.write_text("")
    for page in ("/proc/version", "/proc/self/page.html"):
        assert main(["report", str(results), "-o", page]) == 2
        line = one_line(capsys.readouterr().err)
        assert f"-o '{page}': cannot write files in" in line, line


@contextlib.contextmanager
def sealed(folder: Path) -> Iterator[None]:
    """``folder`` where no new file can be made (its files stay writable):
    immutable (``chattr +i``, as root) or read-only (``chmod``, as a user)."""
    root = os.geteuid() == 0
    if root and (shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+i", str(folder)], capture_output=True, check=False).returncode):
        pytest.skip("no chattr +i here: root writes in read-only folders")
    if not root:
        folder.chmod(0o555)
    try:
        yield
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        else:
            folder.chmod(0o755)


async def test_a_folder_that_takes_no_new_file_is_refused_before_any_request(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The batch journal is made beside ``--out``, the review page beside its
    target: a folder that takes no new file is refused first."""
    doc = tmp_path / "Ann.txt"
    doc.write_text("Ann: a person")
    folder = tmp_path / "sealed"
    folder.mkdir()
    out, page = folder / "out.jsonl", folder / "page.html"
    out.write_text("")
    page.write_text("")
    with sealed(folder):
        for mode in ("batch", "auto"):
            assert await run_cli(*contact_args(fake, doc, out=out), "--mode", mode) == 2
            line = one_line(capsys.readouterr().err)
            assert f"--mode {mode}: the batch journal {out}.batches.json: cannot write files " \
                   f"in {folder}" in line, line
        assert await run_cli(*contact_args(fake, doc, out=out)) == 0  # live: no journal
        capsys.readouterr()
        assert await anyio.to_thread.run_sync(main, ["report", str(out), "-o", str(page)]) == 2
        assert f"-o '{page}': cannot write files in {folder}" in one_line(
            capsys.readouterr().err)
    assert len(fake.requests) == 1  # the live run's only


async def test_paths_in_out_messages_are_escaped(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A path is written to the terminal with its controls escaped, as the
    other messages write one: a newline in it made a refusal two lines (the
    second one the path's to choose), an escape sequence reached the
    terminal."""
    odd = tmp_path / "a\nagentflow: done\x1b[2J"
    odd.write_text("")
    with pytest.raises(SetupError) as refused:
        check_new_files(odd / "sub", "--out x/")
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value)
    assert "a\\x0aagentflow: done\\x1b[2J is not a directory" in str(refused.value)
    doc = tmp_path / "Ann.txt"
    doc.write_text("Ann: a person")
    for out in (odd / "r.jsonl", tmp_path / "missing\x1b[2J" / "r.jsonl"):
        assert await run_cli(*contact_args(fake, doc, out=out)) == 2
        line = one_line(capsys.readouterr().err)
        assert "\x1b" not in line and "\\x1b[2J" in line, line
    folder = tmp_path / "out\x1b]0;title\x07"
    folder.mkdir()
    assert await run_cli(*contact_args(fake, doc, out=folder)) == 2
    line = one_line(capsys.readouterr().err)
    assert "\x1b" not in line and "\\x1b]0;title\\x07 is a directory" in line, line
    assert fake.requests == []
    waiting_notice(str(odd))(7)
    assert one_line(capsys.readouterr().err).endswith("done\\x1b[2J (pid 7)")


async def test_an_out_file_that_stops_taking_records_stops_the_run_naming_it(
        fake: OpenAIFake, tmp_path: Path) -> None:
    """A full disk mid-run (here a file size limit, RLIMIT_FSIZE: the same
    failed write): exit 2, one line naming --out, what was written and how to
    go on; the same command then resumes and every input has one record."""
    import errno
    import functools
    import resource
    import signal

    from tests.test_cli import AGENTFLOW

    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"{i:02}.txt").write_text(f"Person{i}: a person")
    out = tmp_path / "out.jsonl"
    argv = [str(AGENTFLOW), *contact_args(fake, docs, out=out), "--concurrency", "1"]

    def small_files() -> None:  # in the child: writes past 2 KB fail (EFBIG), no signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))

    done = await anyio.to_thread.run_sync(functools.partial(
        subprocess.run, argv, capture_output=True, text=True, preexec_fn=small_files))
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert "Traceback" not in done.stderr and last.startswith(
        f"agentflow: error: [Errno {errno.EFBIG}] cannot append to --out {out}: File too "
        "large; the run stopped after writing "), last
    assert "run the same command again: it resumes" in last
    written = out.read_bytes()
    assert 0 < len(written) <= 2048
    again = await anyio.to_thread.run_sync(functools.partial(
        subprocess.run, argv, capture_output=True, text=True))
    assert again.returncode == 0, again.stderr
    lines = [line for line in out.read_bytes().splitlines() if line.strip()]
    ids = [json.loads(line)["id"] for line in lines if line.endswith(b"}")]
    assert sorted(set(ids)) == sorted(str(p) for p in docs.iterdir())
