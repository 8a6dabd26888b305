"""A rerun into the same ``--out`` made another way (another model or endpoint,
other flags) is refused, naming each setting with its old and new value; what
does not change a record (concurrency, the key, ...) resumes; records written
before agentflow kept a setting are not compared on it, and say so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentflow.extraction.run_settings import RUN_DEFAULTS, run_settings
from agentflow.extraction.settings_changes import setting_changes, unlike_settings
from tests.fakes.openai import OpenAIFake
from tests.test_cli import contact_args, records, reply_for, run_cli

KEY = "sk-test-9f8e7d6c5b4a39281706"
PASSWORD = "hunter2-very-secret"


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


def files_beside(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f"{out.stem}.*{out.suffix}"))


def error_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("agentflow: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


async def test_each_flag_that_changes_a_record_is_refused_naming_both_values(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, doc, out=out)
    assert await run_cli(*args) == 0
    first = out.read_bytes()
    held = records(out)[0]["settings"]
    assert held["model"] == "openai:gpt-4o-mini" and held["base_url"] == fake.url.rstrip("/")
    assert len(held["instructions"]) == 8  # a digest of the module's INSTRUCTIONS
    assert not set(held) & set(RUN_DEFAULTS) - {"base_url"}  # defaults are left out
    capsys.readouterr()
    asked = len(fake.requests)
    for flags, said in (
        (["--passes", "2"], "--passes (or the schema module's PASSES): 1 in its records, 2 in "
                            "this run"),
        (["--max-chars", "1000"], "--max-chars (or the schema module's MAX_CHARS): none in its "
                                  "records, 1000 in this run"),
        (["--no-ground"], "the grounding default (--no-ground): on in its records, off in this "
                          "run"),
        (["--instructions", "Find the person."],
         f"the instructions (--instructions, or the schema module's INSTRUCTIONS): text "
         f"{held['instructions']} in its records, text "),
        (["--model", "openai:gpt-4o"], "--model: openai:gpt-4o-mini in its records, "
                                       "openai:gpt-4o in this run"),
        (["--chunk-chars", "500"], "the chunking (--chunk-chars, --items, --no-chunking, or the "
                                   "schema module's CHUNKING): default in its records, "
                                   "max_chars=500 in this run"),
        (["--no-chunking"], "CHUNKING): default in its records, off in this run"),
        (["--allow-partial"], "--allow-partial: off in its records, on in this run"),
        (["--format", "text"], "--format: auto in its records, text in this run"),
        (["--pdf", "text"], "--pdf: auto in its records, text in this run"),
        (["--text-field", "body"], "--text-field: text in its records, body in this run"),
        (["--id-field", "key"], "--id-field: id in its records, key in this run"),
    ):
        argv = [*args, *flags]
        if flags[0] == "--model":  # a later --model wins
            argv = [*args[:args.index("--model")], *args[args.index("--model") + 2:], *flags]
        assert await run_cli(*argv) == 2, flags
        line = error_line(capsys.readouterr().err)
        assert "holds 1 record of this schema made with other settings (" in line, line
        assert said in line, (flags, line)
        assert "--schema-changed new" in line
    assert len(fake.requests) == asked and out.read_bytes() == first  # nothing asked or written
    # two at once: both named
    assert await run_cli(*args, "--passes", "3", "--max-chars", "50") == 2
    line = error_line(capsys.readouterr().err)
    assert "1 in its records, 3 in this run; --max-chars" in line, line


async def test_what_does_not_change_a_record_resumes(fake: OpenAIFake, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("Ann", "Bob"):
        (tmp_path / f"{name}.txt").write_text(f"{name}: a person")
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, tmp_path / "Ann.txt", tmp_path / "Bob.txt", out=out)
    assert await run_cli(*args, "--limit", "1") == 0
    # another key, concurrency, a retry flag, the default flags spelled out, the same
    # endpoint with a trailing slash: the same records
    argv = [*args, "--concurrency", "3", "--retry-failed", "--passes", "1", "--format",
            "auto", "--pdf", "auto", "--ground", "--wait"]
    argv[argv.index("--api-key") + 1] = "another-key"
    argv[argv.index("--base-url") + 1] = fake.url.rstrip("/") + "/"
    assert await run_cli(*argv) == 0
    assert "1 ok, 0 failed, 1 already done" in capsys.readouterr().err
    assert len(records(out)) == 2
    assert records(out)[0]["settings"] == records(out)[1]["settings"]


MODULE = '''from pydantic import BaseModel

INSTRUCTIONS = "Extract the person named."
{passes}

class Who(BaseModel):
    name: str
'''


async def test_a_setting_is_its_value_whichever_way_it_was_given(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    module = tmp_path / "who.py"
    module.write_text(MODULE.format(passes="PASSES = 2"))
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, doc, out=out)
    args[args.index("--schema") + 1] = f"{module}:Who"
    assert await run_cli(*args) == 0
    assert records(out)[0]["settings"]["passes"] == "2"
    module.write_text(MODULE.format(passes=""))  # the flag now gives what the module gave
    assert await run_cli(*args, "--passes", "2") == 0
    assert "1 already done" in capsys.readouterr().err
    assert await run_cli(*args) == 2  # one pass now
    assert "2 in its records, 1 in this run" in error_line(capsys.readouterr().err)


async def test_the_endpoint_is_recorded_and_named_without_its_credentials(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    args = [a for a in contact_args(fake, doc, out=out) if a not in ("--api-key", "k")]
    at = args.index("--base-url") + 1
    args[at] = fake.url.replace("http://", f"http://agentflow:{PASSWORD}@")
    assert await run_cli(*args) == 0
    assert records(out)[0]["settings"]["base_url"] == fake.url.rstrip("/")
    # the same endpoint with a key instead of the user info: the same records
    args[at] = fake.url
    assert await run_cli(*args, "--api-key", KEY) == 0
    # another endpoint: refused, named without the credentials it carries
    moved = fake.url.replace("127.0.0.1", "localhost").rstrip("/")
    for url, key in ((moved.replace("http://", f"http://agentflow:{PASSWORD}@"), []),
                     (f"{moved}?api_key={KEY}", ["--api-key", KEY])):
        args[at] = url
        assert await run_cli(*args, *key) == 2
        err = capsys.readouterr().err
        line = error_line(err)
        assert f"--base-url: {fake.url.rstrip('/')} in its records, {moved}" in line, line
        text = err + out.read_text()
        for secret in (KEY, PASSWORD):
            for i in range(len(secret) - 7):
                assert secret[i:i + 8] not in text, text


async def test_records_written_before_the_run_settings_are_not_compared_on_them(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, doc, out=out)
    assert await run_cli(*args) == 0
    record = records(out)[0]
    module_only = {k: v for k, v in record["settings"].items() if k == "markers"}
    # as agentflow wrote them before it kept the run's settings: the module's digests only
    # (INSTRUCTIONS among them), and before that no settings at all
    old = {**record, "settings": {**module_only, "INSTRUCTIONS": "0badc0de", "PASSES": "1234abcd"}}
    older = {k: v for k, v in record.items() if k != "settings"} | {"id": "other"}
    out.write_text(json.dumps(old) + "\n" + json.dumps(older) + "\n")
    assert await run_cli(*args, "--passes", "2") == 0  # unknown: not compared, said so
    err = capsys.readouterr().err
    assert ("2 records were written before agentflow recorded the model and flags a run "
            "used: not compared with this run's (their inputs count as done") in err, err
    assert "1 already done" in err
    # the module's own settings are still compared with them
    old["settings"]["EXAMPLES"] = "12345678"
    out.write_text(json.dumps(old) + "\n")
    assert await run_cli(*args) == 2
    assert "the schema module's EXAMPLES (set in its records, not set in this run)" in \
        error_line(capsys.readouterr().err)


def test_settings_compare_by_a_table() -> None:
    new = run_settings(model="openai:a", instructions="x")
    assert new == {"model": "openai:a", "instructions": run_settings(
        model="b", instructions="x")["instructions"]}
    rows: list[tuple[dict[str, str], dict[str, str], list[str]]] = [
        (new, new, []),
        (new, {**new, "passes": "1"}, []),  # a default written out is the default
        (new, {**new, "passes": "2"}, ["passes"]),
        (new, {**new, "model": "openai:b"}, ["model"]),
        ({"EXAMPLES": "1"}, {**new, "EXAMPLES": "1", "passes": "2"}, []),  # run: unknown
        ({"EXAMPLES": "1"}, {**new, "EXAMPLES": "2"}, ["EXAMPLES"]),
        ({"INSTRUCTIONS": "1"}, new, []),  # taken over by the run's instructions
        ({"INSTRUCTIONS": "1"}, {"INSTRUCTIONS": "2"}, ["INSTRUCTIONS"]),  # both old: compared
        ({}, {"markers": "1"}, ["markers"]),
    ]
    for held, now, changed in rows:
        assert [c.key for c in setting_changes(held, now)] == changed, (held, now)
    assert unlike_settings([(new, 3), ({**new, "pdf": "text"}, 1)], new) == [
        ({**new, "pdf": "text"}, 1)]


async def test_the_review_page_refuses_records_made_two_ways(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentflow.cli import main

    base = {"ok": True, "output": {"name": "Ann"}, "schema": "0123456789abcdef"}
    made = run_settings(model="openai:a", instructions="x")
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b"".join(orjson.dumps({**base, "id": i, "settings": s}) + b"\n" for i, s in (
        ("a", made), ("b", {**made, "model": "openai:b"}))))
    assert main(["report", str(mixed), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert ("2 different settings (--model: openai:a in some records, openai:b in others)"
            in err), err
    # records written before the run's settings were kept, beside ones written since:
    # one run's as far as anyone can tell (as extract resumed them)
    fine = tmp_path / "fine.jsonl"
    fine.write_bytes(b"".join(orjson.dumps({**base, "id": i, "settings": s}) + b"\n" for i, s in (
        ("a", {"INSTRUCTIONS": "0badc0de"}), ("b", made), ("c", None))))
    assert main(["report", str(fine), "-o", str(tmp_path / "f.html")]) == 0


async def test_schema_changed_new_writes_a_run_made_another_way_beside_and_resumes_it(
        fake: OpenAIFake, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    out = tmp_path / "out.jsonl"
    args = contact_args(fake, doc, out=out)
    assert await run_cli(*args) == 0
    argv = [*args, "--passes", "2", "--schema-changed", "new"]
    assert await run_cli(*argv) == 0
    beside = files_beside(out)
    assert len(beside) == 1 and records(beside[0])[0]["settings"]["passes"] == "2"
    capsys.readouterr()
    assert await run_cli(*argv) == 0
    assert "1 already done" in capsys.readouterr().err
    assert len(records(out)) == 1 and len(records(beside[0])) == 1


def test_the_ray_engine_compares_run_settings_alike(tmp_path: Path) -> None:
    import argparse

    from agentflow.cli.ray import _output_for_schema
    from agentflow.extraction.setup import SetupError

    made = run_settings(model="openai:a", instructions="x")
    out = tmp_path / "ray_out"
    out.mkdir()
    (out / "part.jsonl").write_bytes(orjson.dumps({
        "id": "a", "ok": True, "schema": "0123456789abcdef", "settings": made}) + b"\n")
    args = argparse.Namespace(schema_changed="refuse")
    with pytest.raises(SetupError, match=r"--max-chars .*: none in its records, 9 in this run"):
        _output_for_schema(out, "0123456789abcdef", args, {**made, "max_chars": "9"})
    assert _output_for_schema(out, "0123456789abcdef", args, made)[0] == out
