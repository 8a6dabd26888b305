"""What a newcomer met with ``agentflow extract``: counts that disagree, set-up
mistakes that ran (or left files behind), settings changes that went unnoticed."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentflow.cli.progress import Progress
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.test_cli import agentflow, contact_args, one_line, records


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = lambda body: FakeReply(text=json.dumps({"name": "Ann"}))
        yield server


def test_the_progress_line_counts_suspect_records_among_the_failed() -> None:
    progress = Progress(3, io.StringIO())
    progress.add({"id": "a", "ok": True})
    progress.add({"id": "b", "ok": False, "error": {"type": "GroundingError"}})
    progress.add({"id": "c", "ok": False, "error": {"type": "StructuredOutputError"}})
    assert progress.line().endswith("ok 1 · failed 2 · suspect 1")
    assert progress.done == 3 and progress.counts["failed"] == 2


async def test_the_progress_line_and_the_summary_agree(fake: OpenAIFake, tmp_path: Path) -> None:
    for name in ("Ann", "Bob"):
        (tmp_path / f"{name}.txt").write_text(f"{name}: a person")
    # Bob's name is not in his document: not grounded, a suspect failure
    status, _, err = await agentflow(*contact_args(fake, tmp_path))
    assert status == 1
    assert "2/2 (100%)" in err and "ok 1 · failed 1 · suspect 1" in err, err
    assert "1 ok, 1 failed (1 not grounded)" in err, err


def test_extract_help_says_where_the_embedded_model_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    from agentflow.cli import main

    with pytest.raises(SystemExit):
        main(["extract", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "in this process" not in text
    assert "child process" in text


def closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_run_that_exits_2_leaves_no_new_out_file(fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    # nothing listens there: the run stops at the first request, a set-up fault
    args = contact_args(fake, doc, out=out)
    args[args.index("--base-url") + 1] = f"http://127.0.0.1:{closed_port()}/v1"
    status, _, err = await agentflow(*args)
    assert status == 2 and "cannot reach" in err, err
    assert not out.exists()
    # an input that matches nothing, after one that does
    status, _, err = await agentflow(*contact_args(fake, doc, tmp_path / "none*.txt", out=out))
    assert status == 2 and "matches no file" in one_line(err)
    assert not out.exists() and fake.requests == []
    # a file that was there before stays, even empty
    out.touch()
    args[args.index("--out") + 1] = str(out)
    assert (await agentflow(*args))[0] == 2
    assert out.exists() and out.read_bytes() == b""


async def test_an_input_that_names_nothing_to_extract_from_exits_2_before_any_request(
        fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)  # folders in it, but no file
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n\n")
    nothing = tmp_path / "nothing.jsonl"
    nothing.touch()
    jsonl_only = tmp_path / "jsonl_only"
    jsonl_only.mkdir()
    (jsonl_only / "x.jsonl").touch()
    out = tmp_path / "out.jsonl"
    for spec, expected in ((empty, "is a folder with no file in it"),
                           (blank, "the file holds no JSONL record"),
                           (nothing, "the file holds no JSONL record"),
                           (jsonl_only, "its JSONL file holds no JSONL record")):
        status, _, err = await agentflow(*contact_args(fake, doc, spec, out=out))
        line = one_line(err)
        assert status == 2 and expected in line and repr(str(spec)) in line, err
        assert not out.exists()
    status, _, err = await agentflow(*contact_args(fake, empty))
    assert "PDF and HTML files" in one_line(err) and "JSONL records" in err
    assert fake.requests == []
    # an empty text file is a document: a failed record says it is empty
    (empty / "sub" / "e.txt").touch()
    status, _, err = await agentflow(*contact_args(fake, empty, out=out))
    assert status == 1 and records(out)[0]["error"]["type"] == "EmptyDocumentError"


async def test_an_out_file_that_is_also_an_input_is_refused(fake: OpenAIFake,
                                                           tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Ann: a person")
    (docs / "self.txt").write_text("Bob: a person")
    before = (docs / "self.txt").read_bytes()
    link = tmp_path / "link.txt"
    link.symlink_to(docs / "self.txt")
    for inputs, out in (([docs / "self.txt"], docs / "self.txt"),  # named itself
                        ([docs], docs / "self.txt"),  # found in a folder
                        ([tmp_path / "d*" / "*.txt"], link),  # by a glob, through a link
                        ([docs], docs / "new.jsonl")):  # a new file in an input folder
        status, _, err = await agentflow(*contact_args(fake, *inputs, out=out))
        assert status == 2 and "is one of the inputs" in one_line(err), err
        assert str(out) in err
    assert (docs / "self.txt").read_bytes() == before
    assert not (docs / "new.jsonl").exists() and fake.requests == []


async def test_an_out_file_with_notes_says_they_are_kept(fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\nline two\n")
    status, _, err = await agentflow(*contact_args(fake, doc, out=notes))
    assert status == 0
    assert (f"--out {notes} holds 2 lines that are not agentflow records: kept as they are; "
            "records are appended after them") in err
    assert notes.read_text().startswith("my notes\nline two\n{")


WHO = '''from pydantic import BaseModel

from agentflow import Example


class Who(BaseModel):
    name: str


EXAMPLES = [Example("Cy: a person", Who(name="Cy"))]
'''


async def test_changed_examples_are_refused_like_a_changed_schema(fake: OpenAIFake,
                                                                  tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    module = tmp_path / "who.py"
    module.write_text(WHO)
    out = tmp_path / "out.jsonl"
    args = [*contact_args(fake, doc, out=out)]
    args[args.index("--schema") + 1] = f"{module}:Who"
    assert (await agentflow(*args))[0] == 0
    first = records(out)
    assert set(first[0]["settings"]) == {"EXAMPLES", "model", "base_url", "instructions"}
    status, _, err = await agentflow(*args)  # the same module again: done
    assert status == 0 and "1 already done" in err
    module.write_text(WHO.replace('"Cy: a person", Who(name="Cy")',
                                  '"Di: a person", Who(name="Di")'))
    asked = len(fake.requests)
    status, _, err = await agentflow(*args)
    line = err.strip().splitlines()[-1]  # after what the examples taught
    assert status == 2 and ("holds 1 record of this schema made with other settings (the "
                            "schema module's EXAMPLES changed)") in line, err
    assert "--schema-changed new" in line and len(fake.requests) == asked
    assert records(out) == first
    status, _, err = await agentflow(*args, "--schema-changed", "new")
    assert status == 0 and "writing to" in err
    beside = [p for p in os.listdir(tmp_path) if p.startswith("out.") and p != "out.jsonl"]
    assert len(beside) == 1 and records(tmp_path / beside[0])[0]["settings"] != first[0]["settings"]
    # the instructions too, and the fields' grounding markers
    module.write_text(WHO + 'INSTRUCTIONS = "Find the person."\n')
    status, _, err = await agentflow(*args)
    assert status == 2 and "the instructions (--instructions, or the schema module's " \
        "INSTRUCTIONS): text " in err, err
    module.write_text(WHO.replace("    name: str", "    name: Annotated[str, Derived()]").replace(
        "from agentflow import Example", "from typing import Annotated\n\nfrom agentflow import "
        "Example\nfrom agentflow.grounding.marker import Derived"))
    status, _, err = await agentflow(*args)
    assert status == 2 and "Grounded()/Derived() markers (not set in its records, set in " \
        "this run)" in err, err


async def test_records_written_before_settings_were_kept_are_not_refused(
        fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, doc, out=out)
    assert (await agentflow(*args))[0] == 0
    old = records(out)[0]
    del old["settings"]  # as an older agentflow wrote it
    out.write_text(json.dumps(old) + "\n")
    status, _, err = await agentflow(*args)
    assert status == 0 and "1 already done" in err


def test_the_review_page_and_the_ray_engine_compare_settings_alike(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from agentflow.cli import main
    from agentflow.cli.ray import _output_for_schema
    from agentflow.extraction.setup import SetupError

    base = {"ok": True, "output": {"name": "Ann"}, "schema": "0123456789abcdef"}
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join(json.dumps({**base, "id": i, "settings": s}) for i, s in (
        ("a", {"EXAMPLES": "11111111"}), ("b", {"EXAMPLES": "22222222"}), ("c", None))) + "\n")
    assert main(["report", str(mixed), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "2 different settings (the schema module's EXAMPLES changed)" in err, err
    out = tmp_path / "ray_out"
    out.mkdir()
    (out / "part.jsonl").write_text(json.dumps({**base, "id": "a",
                                                "settings": {"EXAMPLES": "11111111"}}) + "\n")
    args = argparse.Namespace(schema_changed="refuse")
    with pytest.raises(SetupError, match="1 record of this schema made with other settings"):
        _output_for_schema(out, base["schema"], args, {"EXAMPLES": "22222222"})
    assert _output_for_schema(out, base["schema"], args, {"EXAMPLES": "11111111"})[0] == out
    args.schema_changed = "new"
    beside, _ = _output_for_schema(out, base["schema"], args, {"EXAMPLES": "22222222"})
    assert beside != out and beside.name.startswith("ray_out.")


async def test_a_field_type_without_a_json_form_exits_2_naming_the_field(
        fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    module = tmp_path / "odd.py"
    module.write_text(
        "from pydantic import BaseModel, ConfigDict\n\n"
        "class Thing:\n    pass\n\n"
        "class Line(BaseModel):\n    amount: complex\n\n"
        "class Invoice(BaseModel):\n    name: str\n    tags: set[str]\n    lines: list[Line]\n\n"
        "class Holder(BaseModel):\n"
        "    model_config = ConfigDict(arbitrary_types_allowed=True)\n"
        "    name: str\n    thing: Thing\n")
    for cls, expected in (("Invoice", "field 'lines[].amount' (complex): a complex number has "
                                      "no JSON form"),
                          ("Holder", "field 'thing' (class Thing): an arbitrary class")):
        args = contact_args(fake, doc)
        args[args.index("--schema") + 1] = f"{module}:{cls}"
        status, _, err = await agentflow(*args)
        assert status == 2 and expected in one_line(err), err
    assert fake.requests == []


def test_the_path_where_a_cut_reply_stopped() -> None:
    from agentflow.output.cut_path import cut_path

    assert cut_path('{"name": "A", "attrs": {"k1": 1, "k2": 3') == "attrs.k2"
    assert cut_path('sure: {"items": [{"a": 1}, {"a": 2, "b": "x\\\\"y') == "items[1].b"
    assert cut_path('{"result": ["a", "b"') == "[1]"  # a wrapped list: no wrapper key
    assert cut_path('{"name": "Ann"}') is None and cut_path("no json") is None


async def test_a_cut_reply_names_the_field_and_what_the_command_offers(
        fake: OpenAIFake, tmp_path: Path) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    module = tmp_path / "tags.py"
    module.write_text("from pydantic import BaseModel\n\n"
                      "class Tagged(BaseModel):\n    name: str\n    counts: dict[str, int]\n")
    fake.default = lambda body: FakeReply(
        text='{"name": "Ann", "counts": {"a": 1, "b": 2, "c', finish_reason="length")
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, doc, out=out)
    args[args.index("--schema") + 1] = f"{module}:Tagged"
    assert (await agentflow(*args))[0] == 1
    error = records(out)[0]["error"]
    assert error["type"] == "OutputTruncatedError"
    assert "while writing 'counts.b'" in error["message"] or "'counts.c'" in error["message"]
    assert "bound 'counts' in the schema" in error["reason"] and "--chunk-chars" in error["reason"]
    assert "max_tokens" not in json.dumps(error)  # the command has no such flag
