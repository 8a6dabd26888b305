"""``agentflow extract --engine ray`` on a local Ray cluster against a fake
OpenAI server (``tests.ray_support``): the output directory and resume, the
flags it refuses, a hostile PDF failing alone, another schema, a wrong key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")


from agentflow.cli import main  # noqa: E402
from tests import ray_support  # noqa: E402
from tests.fakes.base import FakeError  # noqa: E402
from tests.pdfs import hostile_pdf  # noqa: E402
from tests.ray_support import SCHEMA, ThreadedFake, make_docs, read_records  # noqa: E402

cluster = ray_support.cluster
schema = ray_support.schema


def test_cli_engine_ray_writes_a_directory_and_resumes(
        cluster: None, schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_docs(tmp_path / "in", 5)
    out = tmp_path / "out"
    with ThreadedFake() as fake:
        args = ["extract", "--engine", "ray", "--actors", "2", "--concurrency", "4",
                "--schema", schema, "--input", str(root), "--model", "openai:gpt-4o-mini",
                "--base-url", fake.url, "--api-key", "k", "--out", str(out)]
        assert main([*args, "--limit", "3"]) == 0
        assert len(read_records(out)) == 3
        assert main(args) == 0
        first = fake.count
        assert main(args) == 0  # everything done: nothing sent
        assert fake.count == first
    records = read_records(out)
    assert sorted(r["id"] for r in records) == sorted(str(p) for p in root.iterdir())
    assert "already done" in capsys.readouterr().err


def test_cli_engine_ray_refuses_an_out_folder_among_the_inputs(
        schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As the local engine refuses an ``--out`` file its inputs name: the
    records would be read back as documents on the next run (a resume)."""
    root = make_docs(tmp_path / "in", 2)
    (root / "res").mkdir()
    (root / "res" / "old.jsonl").write_text('{"id": "x", "ok": true}\n')
    with ThreadedFake() as fake:
        base = ["extract", "--engine", "ray", "--schema", schema, "--model",
                "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k"]
        for inputs, out in (([str(root)], root / "res"),  # the folder it is in
                            ([str(root)], root / "new"),  # made later, in an input folder
                            ([f"{tmp_path}/**/*.jsonl"], root / "res"),  # a glob, a file held
                            ([f"{root}/**/*.jsonl"], root / "empty"),  # a glob, a file written
                            ([str(root / "res" / "old.jsonl")], root / "res")):  # a file in it
            assert main([*base, "--input", *inputs, "--out", str(out)]) == 2, (inputs, out)
            err = capsys.readouterr().err
            assert f"--out {out}/ is among the inputs" in err, err
        assert fake.count == 0
    assert not (root / "new").exists()


def test_cli_engine_ray_fails_the_hostile_pdf_alone(
        cluster: None, schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hostile PDF (20 pages sharing one stream of a million text
    operators) beside text files under ``--engine ray``: one typed failed
    record naming the limit, every text file its ok record."""
    root = make_docs(tmp_path / "in", 4)
    (root / "0-hostile.pdf").write_bytes(hostile_pdf())
    out = tmp_path / "out"
    with ThreadedFake() as fake:
        status = main(["extract", "--engine", "ray", "--schema", schema, "--input", str(root),
                       "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
                       "--out", str(out)])
    assert status == 1
    by_id = {r["id"]: r for r in read_records(out)}
    assert len(by_id) == 5 and all(by_id[str(root / f"doc{i:03}.txt")]["ok"] for i in range(4))
    error = by_id[str(root / "0-hostile.pdf")]["error"]
    assert error["type"] == "DocumentTooComplexError"
    assert "content-stream operators" in error["message"] and "work budget" in error["reason"]
    assert "4 ok, 1 failed" in capsys.readouterr().err


def test_cli_engine_ray_needs_an_out_directory(schema: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text("a")
    assert main(["extract", "--engine", "ray", "--schema", schema,
                 "--input", str(tmp_path / "a.txt")]) == 2
    assert "--out must name a directory" in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["extract", "--engine", "ray", "--schema", schema, "--input",
                 str(tmp_path / "a.txt"), "--out", str(tmp_path / "file")]) == 2
    assert "must be a directory" in capsys.readouterr().err
    assert main(["extract", "--engine", "ray", "--schema", schema, "--input", "-",
                 "--format", "jsonl", "--out", str(tmp_path / "out")]) == 2
    assert "stdin (-) on the driver" in capsys.readouterr().err
    if os.path.isdir("/proc/self"):  # a folder where no file can be made: before the cluster
        assert main(["extract", "--engine", "ray", "--schema", schema, "--input",
                     str(tmp_path / "a.txt"), "--out", "/proc/self/records"]) == 2
        assert ("--out /proc/self/records/: cannot write files in /proc/self"
                in capsys.readouterr().err)


def test_cli_engine_ray_escapes_the_out_path_it_names(schema: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The ``--out`` folder is named with its controls escaped, as the other
    messages name it: a newline in it made a refusal two lines."""
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "file\nagentflow: ok").write_text("")
    outs = [str(tmp_path / "file\nagentflow: ok")]
    if os.path.isdir("/proc/self"):  # a folder where no file can be made
        outs.append("/proc/self/records\nagentflow: ok")
    for out in outs:
        assert main(["extract", "--engine", "ray", "--schema", schema, "--input",
                     str(tmp_path / "a.txt"), "--out", out]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "\\x0aagentflow: ok" in err, err


def test_cli_engine_ray_runs_with_default_flags(
        cluster: None, schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The path a newcomer takes first: no --concurrency, no --actors."""
    root = make_docs(tmp_path / "in", 3)
    out = tmp_path / "out"
    with ThreadedFake() as fake:
        assert main(["extract", "--engine", "ray", "--schema", schema, "--input", str(root),
                     "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
                     "--out", str(out)]) == 0
    assert sorted(r["id"] for r in read_records(out)) == sorted(str(p) for p in root.iterdir())
    assert "Traceback" not in capsys.readouterr().err


def test_cli_engine_ray_refuses_a_directory_of_another_schema(
        cluster: None, schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One output, one schema: every Ray record carries the fingerprint; a run
    with another schema refuses (exit 2, nothing sent) or, with
    --schema-changed new, writes the directory beside it."""
    from agentflow.extraction.fingerprint import schema_fingerprint
    from agentflow.extraction.setup import load_schema

    root = make_docs(tmp_path / "in", 3)
    out = tmp_path / "out"
    other = tmp_path / "other.py"
    other.write_text(SCHEMA.replace("name: str", "name: str\n    age: int | None = None"))
    first, second = (schema_fingerprint(load_schema(ref)[0]) for ref in (schema, f"{other}:Item"))
    assert first != second
    with ThreadedFake() as fake:
        common = ["extract", "--engine", "ray", "--input", str(root), "--model",
                  "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k", "--out", str(out)]
        assert main([*common, "--schema", schema]) == 0
        assert {r["schema"] for r in read_records(out)} == {first}
        sent = fake.count
        capsys.readouterr()
        assert main([*common, "--schema", f"{other}:Item"]) == 2
        err = capsys.readouterr().err
        assert f"holds records of another schema ({first} (3 records))" in err
        assert f"this run's schema is {second}" in err and "--schema-changed new" in err
        assert fake.count == sent  # refused before any request
        assert main([*common, "--schema", f"{other}:Item", "--schema-changed", "new"]) == 0
        assert "writing to" in capsys.readouterr().err
        beside = tmp_path / f"out.{second}"
        assert {r["schema"] for r in read_records(beside)} == {second}
        assert len(read_records(beside)) == 3 and len(read_records(out)) == 3  # out untouched
        assert main([*common, "--schema", schema]) == 0  # the first schema: all done
        assert "3 already done" in capsys.readouterr().err


def test_cli_engine_ray_stops_at_a_wrong_key_with_exit_2(
        cluster: None, schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fault that is the run's (a wrong key: every input would meet it)
    ends the Ray run as it ends the local one: exit 2 naming the error, no
    traceback, no record per input."""
    root = make_docs(tmp_path / "in", 6)
    out = tmp_path / "out"
    with ThreadedFake() as fake:
        fake.fake.default = lambda body: FakeError(
            401, {"error": {"message": "Incorrect API key provided: sk-wrong", "type":
                            "invalid_request_error", "code": "invalid_api_key"}})
        status = main(["extract", "--engine", "ray", "--actors", "1", "--concurrency", "1",
                       "--schema", schema, "--input", str(root), "--model",
                       "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "sk-wrong",
                       "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "AuthenticationError" in err
    assert "Traceback" not in err and "sk-wrong" not in err
    assert not out.exists() or read_records(out) == []  # no failed record per input
