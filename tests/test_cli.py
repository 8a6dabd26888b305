"""The `agentflow` command, end to end against a fake OpenAI server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentflow import __version__
from agentflow.cli import main
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

SCHEMA = Path(__file__).resolve().parent.parent / "examples" / "contact.py"


def reply_for(body: Any) -> FakeReply:
    doc = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if "nobody" in doc:
        return FakeReply(text="I cannot find a person in this text.")
    name = doc.split(":")[0]
    return FakeReply(text=json.dumps({"name": name, "email": f"{name.lower()}@x.io",
                                      "phone": None, "company": None, "title": None}))


async def run_cli(*argv: str) -> int:
    return await anyio.to_thread.run_sync(main, list(argv))


@pytest.fixture
async def fake() -> Any:
    async with OpenAIFake() as server:
        server.default = reply_for
        yield server


async def test_extract_appends_resumes_and_reports(fake: OpenAIFake, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("Ann", "Bob"):
        (docs / f"{name}.txt").write_text(f"{name}: a person")
    out = tmp_path / "out.jsonl"
    args = ["extract", "--schema", f"{SCHEMA}:Contact", "--input", str(docs),
            "--model", "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k",
            "--out", str(out), "--limit", "1"]
    assert await run_cli(*args) == 0
    assert await run_cli(*args[:-2]) == 0  # resumes: only Bob is new
    lines = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [Path(r["id"]).name for r in lines] == ["Ann.txt", "Bob.txt"]
    assert lines[0]["ok"] and lines[0]["output"]["email"] == "ann@x.io"
    assert lines[0]["usage"]["requests"] == 1 and lines[0]["attempts"] == 1
    assert len(fake.requests) == 2
    body = fake.requests[0].body
    assert body["response_format"]["type"] == "json_schema"  # native path on gpt-4o-mini
    assert "contact details" in body["messages"][0]["content"]  # the module's INSTRUCTIONS
    assert "1 ok, 0 failed, 1 already done" in capsys.readouterr().err


async def test_failures_are_lines_and_exit_status(fake: OpenAIFake, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.jsonl").write_text(
        '{"id": "1", "text": "Cy: someone"}\n{"id": "2", "text": "nobody here"}\n')
    out = tmp_path / "out.jsonl"
    status = await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                           str(tmp_path / "a.jsonl"), "--model", "openai:gpt-4o-mini",
                           "--base-url", fake.url, "--api-key", "k", "--out", str(out))
    assert status == 1
    records = {r["id"].split("#")[1]: r for r in map(orjson.loads, out.read_bytes().splitlines())}
    assert records["1"]["ok"] and not records["2"]["ok"]
    assert records["2"]["error"]["type"] == "StructuredOutputValidationError"
    assert records["2"]["attempts"] == 3  # the reply, then output_retries=2
    assert "1 ok, 1 failed" in capsys.readouterr().err


async def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_cli("extract", "--schema", "nope.py:X", "--input", "x") == 2
    assert "does not exist" in capsys.readouterr().err
    assert await run_cli("extract", "--schema", f"{SCHEMA}:Missing", "--input", "x") == 2
    assert "no attribute 'Missing'" in capsys.readouterr().err
    assert await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input",
                         str(tmp_path / "none*.txt")) == 2
    assert "matches no file" in capsys.readouterr().err
    assert await run_cli("extract", "--schema", f"{SCHEMA}:Contact", "--input", str(SCHEMA),
                         "--model", "nosuchvendor:x") == 2
    assert "unknown vendor" in capsys.readouterr().err


def test_json_schema_file(tmp_path: Path) -> None:
    from agentflow.cli import load_schema

    path = tmp_path / "s.json"
    path.write_text('{"title": "Thing", "type": "object", "properties": {"a": {"type": '
                    '"integer"}, "b": {"type": "string"}}, "required": ["a"]}')
    model, _ = load_schema(str(path))
    assert model(a="1").a == 1 and model(a=1).b is None


def test_models_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    table = capsys.readouterr().out
    for vendor in ("openai", "deepseek", "glm", "minimax", "anthropic", "gemini", "ollama",
                   "local"):
        assert vendor in table
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert __version__ in capsys.readouterr().out


HISTORY_SCHEMA = '''
from typing import Annotated
from pydantic import BaseModel
from agentflow.extraction.merge import Merge

class Entry(BaseModel):
    version: str

class History(BaseModel):
    entries: Annotated[list[Entry], Merge.by_key("version")]
'''


def history_reply(body: Any) -> FakeReply:
    doc = next(m["content"] for m in body["messages"] if m["role"] == "user")
    versions = [line.split()[1] for line in doc.splitlines() if line.startswith("version ")]
    return FakeReply(text=json.dumps({"entries": [{"version": v} for v in versions]}))


async def test_long_documents_are_chunked_and_a_cap_is_recorded(tmp_path: Path) -> None:
    (tmp_path / "hist.py").write_text(HISTORY_SCHEMA)
    doc = tmp_path / "long.txt"
    doc.write_text("".join(f"version {i}.0\n  some change text here\n\n" for i in range(50)))
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as server:
        server.default = history_reply
        base = ["extract", "--schema", f"{tmp_path / 'hist.py'}:History", "--input", str(doc),
                "--model", "openai:gpt-4o-mini", "--base-url", server.url, "--api-key", "k"]
        assert await run_cli(*base, "--chunk-chars", "300", "--out", str(out)) == 0
        assert await run_cli(*base, "--max-chars", "200", "--no-chunking",
                             "--out", str(tmp_path / "cut.jsonl")) == 0
    (record,) = [orjson.loads(x) for x in out.read_bytes().splitlines()]
    assert [e["version"] for e in record["output"]["entries"]] == [f"{i}.0" for i in range(50)]
    assert record["chunks"]["total"] > 5 and record["chunks"]["failed"] == 0
    assert record["truncated"] is False
    (cut,) = [orjson.loads(x) for x in (tmp_path / "cut.jsonl").read_bytes().splitlines()]
    assert cut["truncated"] == {"kept_chars": cut["truncated"]["kept_chars"],
                                "total_chars": len(doc.read_text())}
    assert 0 < cut["truncated"]["kept_chars"] <= 200 and "chunks" not in cut
    assert len(cut["output"]["entries"]) < 50
