"""Folders walked lazily: each file ``stat``-ed only when the walk reaches it
(a folder of a million files is not stat'ed before the first request), in a
deterministic order."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentflow.documents.inputs import Document, Source, iter_sources


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
