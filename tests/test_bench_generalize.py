"""The generalisation benchmark's own parts (benchmarks/generalize): the truth
parsers, the split, and the scoring on hand-made records. No model runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from benchmarks.generalize import truth
from benchmarks.generalize.kinds import KINDS, Kind, sample, split_of
from benchmarks.generalize.scoring import (
    KindFigures,
    confidence_of,
    example_strings,
    field_right,
    floor_extract,
    fold,
    invented,
    review_of,
    score_record,
    targets,
)

STANZA = """Package: libfoo1
Status: install ok installed
Maintainer: Jo Doe <jo@example.org>
Architecture: amd64
Version: 1:2.0-1
Depends: libc6 (>= 2.34), libbar0 | libbaz0,
 zlib1g
Description: foo library
 Long text.
 .
 More.
"""


def test_dpkg_truth_reads_continuations_and_splits_depends() -> None:
    got = truth.dpkg_truth(STANZA)
    assert got == {"package": "libfoo1", "version": "1:2.0-1",
                   "maintainer": "Jo Doe <jo@example.org>", "homepage": None,
                   "summary": "foo library",
                   "depends": ["libc6 (>= 2.34)", "libbar0 | libbaz0", "zlib1g"]}


def test_split_stanzas_and_parse_stanza() -> None:
    stanzas = truth.split_stanzas("A: 1\nB: two\n words\n\n \nA: 3\n")
    assert stanzas == ["A: 1\nB: two\n words", "A: 3"]
    assert truth.parse_stanza(stanzas[0]) == {"A": "1", "B": "two\nwords"}


def test_metadata_truth_reads_the_header_block_only() -> None:
    text = ("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\nRequires-Dist: a>=1\n"
            "Requires-Dist: b; extra == \"x\"\nAuthor-email: A <a@x.org>,\n B <b@x.org>\n\n"
            "Requires-Dist: not-a-header\nSummary: in the body\n")
    got = truth.metadata_truth(text)
    assert got == {"name": "pkg", "version": "1.0", "summary": None,
                   "author_email": "A <a@x.org>, B <b@x.org>", "requires_python": None,
                   "requires_dist": ["a>=1", 'b; extra == "x"']}
    assert "body" not in truth.metadata_header(text)


def test_parse_unit_follows_systemd_syntax() -> None:
    text = """# comment
[Unit]
Description=First
Description=Second
Documentation=man:a(8)
Documentation=https://x.org/doc man:b(1)
After=a.target
After=
After=b.target \\
  c.target
; another comment
[Service]
ExecStart=/bin/one --flag
ExecStart=/bin/two
[Install]
WantedBy=multi-user.target
"""
    got = truth.unit_truth(text)
    assert got == {"description": "Second",
                   "documentation": ["man:a(8)", "https://x.org/doc", "man:b(1)"],
                   "after": ["b.target", "c.target"], "type": None,
                   "exec_start": "/bin/one --flag", "wanted_by": ["multi-user.target"]}


def test_copyright_truth_takes_the_files_star_paragraph() -> None:
    text = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: foo

Files: debian/*
Copyright: 2020 Packager
License: GPL-2+

Files: *
Copyright: 2001 A
 2002 B
 .
License: MIT
 Permission text.
"""
    got = truth.copyright_truth(text)
    assert got == {"upstream_name": "foo", "upstream_contact": None, "source": None,
                   "license": "MIT", "copyright": ["2001 A", "2002 B"]}


def _module(kind: Kind) -> tuple[Any, Any]:
    path, _, name = kind.schema.rpartition(":")
    spec = importlib.util.spec_from_file_location(f"_t_{Path(path).stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), module


@pytest.mark.parametrize("name", list(KINDS))
def test_each_schema_s_examples_agree_with_the_truth_parser(name: str) -> None:
    kind = KINDS[name]
    schema, module = _module(kind)
    assert 1 <= len(module.EXAMPLES) <= 2 and module.INSTRUCTIONS
    for example in module.EXAMPLES:
        assert kind.truth(example.text) == example.output.model_dump()
        assert set(kind.truth(example.text)) == set(schema.model_fields)


def _fake_kind() -> Kind:
    return Kind("fake", "tune", "x.py:X", "hand-made", dict, truth.dpkg_truth)


def test_split_is_fixed_disjoint_and_stable_when_documents_are_added() -> None:
    docs = {f"p{i}": STANZA.replace("libfoo1", f"p{i}") for i in range(40)}
    kind = _fake_kind()
    tune = sample(kind, "tune", 100, docs=docs)
    report = sample(kind, "report", 100, docs=docs)
    assert {i for i, _ in tune}.isdisjoint({i for i, _ in report})
    assert len(tune) + len(report) == 40 and tune and report
    assert sample(kind, "report", 100, docs=docs) == report
    assert sample(kind, "report", 3, offset=2, docs=docs) == report[2:5]
    more = dict(docs, extra=STANZA.replace("libfoo1", "extra"))
    again = [i for i, _ in sample(kind, split_of("fake", "p0"), 100, docs=more)]
    assert [i for i in again if i != "extra"] == [
        i for i, _ in sample(kind, split_of("fake", "p0"), 100, docs=docs)]
    with pytest.raises(ValueError, match="split"):
        sample(kind, "train", 1, docs=docs)


def test_sample_skips_documents_too_long_or_without_truth() -> None:
    docs = {"long": STANZA + "X-Pad: " + "x" * 5000 + "\n", "empty": "nothing here\n",
            "fine": STANZA}
    kind = _fake_kind()
    got = sample(kind, "tune", 10, docs=docs) + sample(kind, "report", 10, docs=docs)
    assert [i for i, _ in got] == ["fine"]


def test_fold_and_field_right() -> None:
    assert fold("  a \n\t b ") == "a b" and fold("  ") is None and fold(None) is None
    assert field_right(" Foo  bar", "Foo bar") and not field_right("foo bar", "Foo bar")
    assert field_right("", None) and not field_right("x", None)
    assert field_right(["b", "a "], ["a", "b"]) and not field_right(["a"], ["a", "a"])
    assert field_right([], []) and not field_right(["a"], [])


def test_invented_counts_values_absent_after_folding() -> None:
    doc = "Name: Foo\n  Bar\nVersion: 1.0\n"
    assert invented({"name": "Foo Bar", "version": "1.0", "x": None, "l": ["Name:", "2.0"]},
                    doc) == ["2.0"]


class Rec(BaseModel):
    a: str | None = None
    b: list[str] = []


def _result(output: Any = None, error: Exception | None = None, **extra: Any) -> Any:
    return SimpleNamespace(ok=error is None, output=output, error=error, **extra)


def test_score_record_and_figures_on_hand_made_records() -> None:
    doc = "a: one\nb: x, y\n"
    want = {"a": "one", "b": ["x", "y"]}
    right = score_record("1", doc, want, _result(Rec(a="one", b=["y", "x"])))
    half = score_record("2", doc, want, _result(Rec(a="uno", b=["x", "y"])))
    failed = score_record("3", doc, want, _result(error=ValueError("boom")))
    assert right.right == {"a": True, "b": True} and right.confident is None
    assert half.right == {"a": False, "b": True} and half.invented == ["uno"]
    assert half.wrong == {"a": ("uno", "one")}
    assert not failed.ok and failed.right == {"a": False, "b": False}
    assert failed.error == "ValueError: boom"
    fig = KindFigures(["a", "b"], [right, half, failed]).as_dict()
    assert fig["accuracy"] == {"a": pytest.approx(1 / 3), "b": pytest.approx(2 / 3)}
    assert fig["mean_accuracy"] == pytest.approx(0.5)
    assert fig["fully_right"] == pytest.approx(1 / 3)
    assert (fig["ok"], fig["failed"], fig["invented_values"], fig["records_with_invented"]) == (
        2, 1, 1, 1)
    assert "confidence" not in fig


def test_confidence_and_review_are_read_tolerantly() -> None:
    doc = "a: one\nb: x, y\n"
    want = {"a": "one", "b": ["x", "y"]}
    conf = _result(Rec(a="one", b=["x", "z"]),
                   confidence={"a": 0.99, "b[0]": 0.95, "b[1]": SimpleNamespace(value=0.4)})
    assert confidence_of(conf) == {"a": 0.99, "b": 0.4}
    s1 = score_record("1", doc, want, conf, threshold=0.9)
    assert s1.confident == {"a": True, "b": False} and s1.flagged
    flagged = _result(Rec(a="one", b=["x", "y"]), needs_review=["/b/0"])
    assert review_of(flagged, ["a", "b"]) == {"b"}
    s2 = score_record("2", doc, want, flagged)
    assert s2.confident == {"a": True, "b": False}
    clean = score_record("3", doc, want, _result(Rec(a="one", b=["x", "y"]), needs_review=False))
    assert clean.confident == {"a": True, "b": True} and clean.flagged is False
    assert review_of(_result(Rec(), needs_review=True), ["a", "b"]) == {"a", "b"}
    assert confidence_of(_result(Rec())) is None and review_of(_result(Rec()), ["a"]) is None
    fig = KindFigures(["a", "b"], [s1, s2, clean]).as_dict()["confidence"]
    assert fig["records_rated"] == 3 and fig["fields_confident"] == 4
    assert fig["confident_accuracy"] == 1.0 and fig["unconfident_accuracy"] == 0.5
    assert fig["share_flagged"] == pytest.approx(2 / 3) and fig["unflagged_fully_right"] == 1.0


def test_floor_takes_label_value_lines() -> None:
    doc = "Requires-Python: >=3.9\nName: pkg\nRequires-Dist: a\nRequires-Dist: b, c\nX=1 2\n"
    got = floor_extract({"requires_python": None, "name": None, "requires_dist": [],
                         "x": [], "summary": None}, doc)
    assert got == {"requires_python": ">=3.9", "name": "pkg", "requires_dist": ["a", "b", "c"],
                   "x": ["1", "2"], "summary": None}


def test_copies_of_the_examples_and_targets() -> None:
    doc = "a: one\n"
    seen = example_strings([Rec(a="Jane  Roe", b=["x"]), {"a": "two"}])
    assert seen == {"Jane Roe", "x", "two"}
    s = score_record("1", doc, {"a": "one", "b": []}, _result(Rec(a="Jane Roe", b=["one"])),
                     examples=seen)
    assert s.invented == ["Jane Roe"] and s.copied == ["Jane Roe"]
    fig = KindFigures(["a", "b"], [s]).as_dict()
    assert fig["copied_from_examples"] == 1 and fig["ok_fully_right"] == 0.0
    assert fig["lowest_field"] == "a"
    assert targets(fig) == {"mean_accuracy": False, "lowest_field": False, "fully_right": False,
                            "invented_values": False, "confident_accuracy": None}
    good = score_record("2", doc, {"a": "one", "b": []},
                        _result(Rec(a="one"), needs_review=[]))
    assert targets(KindFigures(["a", "b"], [good]).as_dict()) == dict.fromkeys(
        ["mean_accuracy", "lowest_field", "fully_right", "invented_values",
         "confident_accuracy"], True)


def test_review_flags_decide_and_levels_are_counted() -> None:
    doc = "a: one\nb: x, y\n"
    want = {"a": "one", "b": ["x", "y"]}
    # the shape ExtractResult may carry: numbers per field and the flagged fields
    r1 = _result(Rec(a="one", b=["x"]), confidence={"a": 0.5, "b": 0.99}, needs_review=("b",))
    r2 = _result(Rec(a="one", b=["x", "y"]), confidence={"a": 0.99, "b": 0.99},
                 needs_review=(), ungrounded=("a",))
    s1, s2 = (score_record(str(i), doc, want, r, threshold=0.9) for i, r in enumerate((r1, r2)))
    assert s1.confident == {"a": True, "b": False}  # the flags, not the threshold, decide
    assert s2.confident == {"a": True, "b": True} and not s2.flagged
    assert s1.ungrounded is None and s2.ungrounded == 1
    assert KindFigures(["a", "b"], [s1, s2]).as_dict()["ungrounded_values"] == 1
    fig = KindFigures(["a", "b"], [s1, s2]).as_dict()["confidence"]
    assert fig["by_confidence"] == {"0.99": [2, 3], "0.50": [1, 1]}
    assert list(fig["by_confidence"]) == ["0.99", "0.50"]
    assert fig["confident_accuracy"] == 1.0 and fig["unconfident_accuracy"] == 0.0


def test_man_truth_reads_the_title_line_and_the_name_section() -> None:
    page = ('.\\" generated\n.TH "SYSTEMD\\-FOO" "8" "" "systemd 252" "systemd-foo"\n.nh\n'
            '.SH "NAME"\nsystemd-foo, systemd\\-foo.service \\- Does\nthings well\n'
            '.SH SYNOPSIS\n.B foo\n.SH DESCRIPTION\nLong text.\n')
    head = truth.man_head(page)
    assert head is not None and head.startswith(".TH ") and "DESCRIPTION" not in head
    assert truth.man_truth(head) == {
        "title": "SYSTEMD\\-FOO", "section": "8", "date": None, "source": "systemd 252",
        "manual": "systemd-foo", "summary": "Does things well"}
    assert truth._roff_args('.TH A 1 "say ""hi""" x') == ["A", "1", 'say "hi"', "x"]
    assert truth.man_head(".Dd May 1, 2020\n.Dt LS 1\n") is None  # mdoc: not this kind
    assert truth.man_truth(".TH X 1\n.SH NAME\nx\n")["summary"] is None
