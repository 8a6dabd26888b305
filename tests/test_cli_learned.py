"""`agentflow extract` says what the worked examples taught, before the first
request: one line per field, the learned locator in words or why there is
none (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentflow.cli import main
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake

MODULE = '''
from typing import Annotated
from pydantic import BaseModel
from agentflow import Derived, Example

class Pkg(BaseModel):
    name: str | None = None
    version: str | None = None
    component: str | None = None
    count: int | None = None
    slug: Annotated[str | None, Derived()] = None

EXAMPLES = [
    Example("Name: frob\\nVersion: 1.0\\n## Frob Core v1.0\\nCount: 2\\n",
            Pkg(name="frob", version="1.0", component="Frob Core", count=2)),
    Example("Name: quux\\nVersion: 2.5\\n## Quux v2.5\\nCount: 7\\n",
            Pkg(name="quux", version="2.5", component="Quux", count=7)),
]
'''


async def test_the_learned_rules_are_said_once_per_field_before_any_request(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = tmp_path / "pkg.py"
    schema.write_text(MODULE)
    doc = tmp_path / "zed.txt"
    doc.write_text("Name: zed\nVersion: 3.1\n## zed v3.1\nCount: 4\n")
    async with OpenAIFake() as fake:
        fake.default = lambda body: FakeReply(text=json.dumps(
            {"name": "zed", "version": "3.1", "component": "zed", "count": 4, "slug": "z"}))
        args: list[Any] = ["extract", "--schema", f"{schema}:Pkg", "--input", str(doc),
                           "--model", "openai:gpt-4o-mini", "--base-url", fake.url,
                           "--api-key", "k", "--out", str(tmp_path / "out.jsonl")]
        assert await anyio.to_thread.run_sync(main, args) == 0
    err = capsys.readouterr().err.splitlines()
    said = [line.removeprefix("agentflow: ") for line in err if line.startswith(
        ("agentflow: learned: ", "agentflow: no rule: "))]
    assert said == [
        "learned: name: at the start of a line after 'Name: ', to the end of the line, "
        "and on over its continuation lines (from 2 of 2 examples)",
        "learned: version: at the start of a line after 'Version: ', to the end of the line, "
        "and on over its continuation lines (from 2 of 2 examples)",
        "no rule: component (the 2 examples filling it write it after '## ', but no rule "
        "read there held on each)",
        "learned: count: at the start of a line after 'Count: ', to the end of the line, "
        "and on over its continuation lines (from 2 of 2 examples)",
        "no rule: slug (Derived(): not copied from the document)",
    ]
    assert err.index("agentflow: " + said[0]) == 0  # before the progress line and the summary
