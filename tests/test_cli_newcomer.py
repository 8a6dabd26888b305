"""What a newcomer met with ``agentflow extract``: counts that disagree, set-up
mistakes that ran (or left files behind), settings changes that went unnoticed."""

from __future__ import annotations

import io
import json
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
