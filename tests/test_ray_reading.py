"""``agentflow.ray.read_documents`` on a local Ray cluster (``tests.ray_support``):
the listing as the pipeline runs, the output folder left out, each file under
the whole work budget, standard input read on the driver."""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")


from agentflow import ray as engine  # noqa: E402
from agentflow.documents.budget import WorkBudget  # noqa: E402
from agentflow.documents.reading import InputError  # noqa: E402
from tests import ray_support  # noqa: E402
from tests.pdfs import hostile_pdf  # noqa: E402
from tests.ray_support import make_docs  # noqa: E402

cluster = ray_support.cluster
schema = ray_support.schema


def test_read_documents_leaves_the_out_folder_out(cluster: None, tmp_path: Path) -> None:
    """A file of the output folder met another way (a link in an input
    folder) is left out, and said."""
    root = make_docs(tmp_path / "in", 2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "part.jsonl").write_text('{"id": "x", "text": "a record"}\n')
    (root / "link.jsonl").symlink_to(out / "part.jsonl")
    skipped: list[Path] = []
    ds = engine.read_documents([str(root)], exclude=out, on_exclude=skipped.append)
    ids = sorted(row["id"] for row in ds.take_all())
    assert ids == sorted(str(p) for p in root.iterdir() if p.name != "link.jsonl")
    engine.tell_listing_notes()  # the listing ran in a task: told on the driver after
    assert skipped == [root / "link.jsonl"]


def test_a_listing_of_an_earlier_ray_session_is_dropped_not_told(
        cluster: None, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A listing made, and never run, before ``ray.shutdown`` and a new
    ``ray.init`` in the same process: its notes actor ended with that cluster, so
    ``tell_listing_notes`` drops it and tells the new session's listings (it
    failed with "Can't find actor ..." before telling any)."""
    root = make_docs(tmp_path / "in", 2)
    out = tmp_path / "out"
    out.mkdir()
    (out / "part.jsonl").write_text('{"id": "x", "text": "a record"}\n')
    (root / "link.jsonl").symlink_to(out / "part.jsonl")
    earlier: list[Path] = []
    engine.read_documents([str(root)], exclude=out, on_exclude=earlier.append)  # never run
    ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    skipped: list[Path] = []
    ds = engine.read_documents([str(root)], exclude=out, on_exclude=skipped.append)
    assert len(ds.take_all()) == 2
    with caplog.at_level("WARNING", logger="agentflow.ray"):
        engine.tell_listing_notes()
    assert skipped == [root / "link.jsonl"]
    assert earlier == []
    assert "listing_notes_dropped" in caplog.text and "on_exclude" in caplog.text


def test_read_documents_lists_the_inputs_as_the_pipeline_runs(cluster: None,
                                                              tmp_path: Path) -> None:
    """Nothing is listed up front (every file was, into one list on the
    driver): files added after ``read_documents`` and before the run are read,
    and a link to a folder is told as skipped."""
    root = make_docs(tmp_path / "in", 3)
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    told: list[tuple[Path, str]] = []
    ds = engine.read_documents([str(root)], on_skip=lambda p, why: told.append((p, why)))
    (root / "sub").mkdir()
    (root / "sub" / "late.txt").write_text("late is a document.\n")
    (root / "doc001b.txt").write_text("doc001b is a document.\n")
    ids = sorted(row["id"] for row in ds.take_all())  # (Ray keeps no order unless asked)
    assert ids == [str(root / n) for n in (
        "doc000.txt", "doc001.txt", "doc001b.txt", "doc002.txt", "sub/late.txt")]
    engine.tell_listing_notes()
    assert [p for p, _ in told] == [root / "linked"] and "not followed" in told[0][1]
    with pytest.raises(InputError, match="matches no file"):  # refused at once, not in a task
        engine.read_documents([str(tmp_path / "none*.txt")])


def test_read_documents_reads_each_file_under_the_whole_work_budget(cluster: None,
                                                                    tmp_path: Path) -> None:
    """The CPU limit holds in Ray's read tasks as in the local engine: a PDF
    whose parse in pure Python passes it, and an HTML page whose parse in
    native code does (its reading process is ended), are each a failed row
    naming the limit; the files beside them are read, and the run ends."""
    root = make_docs(tmp_path / "in", 3)
    (root / "big.txt").write_bytes(b"big is large. " * 30_000)  # not read inline: in the worker
    (root / "select.html").write_bytes(b"<html><body><select>" + b"<option>x" * 40_000)
    (root / "slow.pdf").write_bytes(hostile_pdf(pages=40, operators=200_000))
    budget = WorkBudget(pages=None, operators=None, chars=None, cpu_seconds=1)
    rows = {Path(r["id"]).name: r
            for r in engine.read_documents([str(root)], budget=budget).take_all()}
    assert sorted(rows) == sorted(p.name for p in root.iterdir())
    for name in ("select.html", "slow.pdf"):
        assert rows[name]["problem_type"] == "DocumentTooComplexError", rows[name]
        assert rows[name]["problem"] == (f"{root / name}: too costly to read: CPU seconds: "
                                         "more than 1")
    assert "native code" in rows["select.html"]["reason"]
    assert rows["big.txt"]["text"].startswith("big is large.") and not rows["big.txt"]["problem"]
    assert all(rows[f"doc{i:03}.txt"]["text"] == f"doc{i:03} is a document.\n" for i in range(3))


def test_read_documents_reads_standard_input_on_the_driver_under_the_budget(
        cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task's standard input is not the user's: ``-`` is read on the driver,
    as one document, under the same budget as the files beside it."""
    import io
    import sys

    root = make_docs(tmp_path / "in", 1)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"piped is a text.\n")))
    rows = engine.read_documents([str(root), "-"]).take_all()
    assert sorted(r["text"] for r in rows) == ["doc000 is a document.\n", "piped is a text.\n"]
    assert any(r["id"].startswith("-#") for r in rows)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 40)))
    [row] = engine.read_documents("-", budget=WorkBudget(chars=30)).take_all()
    assert row["problem_type"] == "DocumentTooComplexError" and "(limit 30)" in row["problem"]
    with pytest.raises(InputError, match="standard input"):  # records would be held at once
        engine.read_documents("-", fmt="jsonl")
