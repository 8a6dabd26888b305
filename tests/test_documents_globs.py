"""Globs expanded lazily: the same matches as glob.glob(recursive=True) on a
tree without links, in name order folder by folder, and ** never through a
link to a folder."""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

from agentflow.documents.globs import iglob_sorted

PATTERNS = ["*", "*.txt", "**", "**/*.txt", "a/**", "a/**/*.txt", "a/*/x.txt", "**/b",
            "a/b/**", "?", "[ab]/*", ".*", "**/.h*", "a/.hidden/*", "a/b/x.txt", "none/*",
            "a/**/**/x.txt", "*/b/*"]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("top.txt", "a/x.txt", "a/b/x.txt", "a/b/c/x.txt", "a/b/y.md", "b/z.txt",
                 "a/.hidden/x.txt", ".h/x.txt", "a/.dot.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_matches_are_globs(tree: Path, pattern: str) -> None:
    want = {p.rstrip("/") for p in glob.glob(pattern, recursive=True)} - {""}
    got = list(iglob_sorted(pattern))
    assert set(got) == want, pattern
    absolute = f"{tree}/{pattern}"
    assert set(iglob_sorted(absolute)) == {
        p.rstrip("/") for p in glob.glob(absolute, recursive=True)}, absolute


def test_each_folder_is_read_in_name_order(tree: Path) -> None:
    assert list(iglob_sorted("**/*.txt")) == [
        "top.txt", "a/x.txt", "a/b/x.txt", "a/b/c/x.txt", "b/z.txt"]


def test_a_double_star_goes_round_links_to_folders(tree: Path) -> None:
    os.symlink("/", tree / "a" / "root")
    os.symlink(tree, tree / "a" / "b" / "up")  # a loop
    got = list(iglob_sorted("**/*.txt"))
    assert got == ["top.txt", "a/x.txt", "a/b/x.txt", "a/b/c/x.txt", "b/z.txt"]
    assert list(iglob_sorted("a/*/x.txt")) == ["a/b/x.txt"]  # one level: followed, as glob
    os.symlink(tree / "a" / "b", tree / "link")
    assert "link/x.txt" in iglob_sorted("*/x.txt")

