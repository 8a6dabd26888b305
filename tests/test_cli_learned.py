"""`agentflow extract` says what the worked examples taught, before the first
request: one line per field, the learned locator in words or why there is
none (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from agentflow import Example
from agentflow.cli import main
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples
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


class Cron(BaseModel):
    shell: str | None = None
    schedule: str | None = None
    command: str | None = None
    packages: list[str] = []


def _cron(user: str) -> list[Example]:
    return [Example(f"SHELL=/bin/bash\n# backups\n15 2 * * 1-5 {user}/usr/bin/backup --full\n"
                    "PKG pkg-a\nPKG pkg-b\n",
                    Cron(shell="/bin/bash", schedule="15 2 * * 1-5",
                         command="/usr/bin/backup --full", packages=["pkg-a", "pkg-b"])),
            Example("*/10 * * * * /home/ann/bin/poll\n",
                    Cron(schedule="*/10 * * * *", command="/home/ann/bin/poll"))]


def _lines(examples: list[Example]) -> list[str]:
    checked = check_examples(examples, Cron)
    return learned_lines(learn_locators(checked, Cron), checked, Cron)


def test_a_value_at_the_start_of_its_line_is_said_so_once_per_field() -> None:
    """A value with nothing before it on its line was said to be written
    "after ''", in a rule and where no rule held; each field has one line,
    a list field too."""
    learned, unlearned = _lines(_cron("")), _lines(_cron("backup "))
    for lines in learned, unlearned:
        assert [line.split(" (")[0].split(": ")[1] for line in lines] == [
            "shell", "schedule", "command", "packages"]
        assert not any("''" in line for line in lines), lines
    assert learned[1] == ("learned: schedule: at the start of a line, up to ' /' "
                          "(from 2 of 2 examples)")
    assert unlearned[1] == ("no rule: schedule (the 2 examples filling it write it at the "
                            "start of a line, but no rule read there held on each)")
    assert unlearned[2] == ("no rule: command (the 2 examples filling it write it first after "
                            "'15 2 * * 1-5 backup ' and after '*/10 * * * * ': no common place "
                            "that held on each)")
    assert unlearned[3].startswith("no rule: packages (only 1 example fills it, after 'PKG '")


class Project(BaseModel):
    assembly: str | None = None
    namespace: str | None = None


def test_a_value_one_example_writes_twice_is_shown_at_both_places() -> None:
    """``namespace`` was said to be written after the first place of its value
    only, which is the other field's; where an element names the field, one
    example teaches the rule at that element (``<Namespace>``, not
    ``<Assembly>``)."""
    def lines_of(text: str) -> list[str]:
        examples = check_examples([
            Example(text, Project(assembly="Ledger.Cli", namespace="Ledger.Cli")),
            Example("nothing here\n", Project())], Project)
        return learned_lines(learn_locators(examples, Project), examples, Project)

    prose = lines_of("the assembly is Ledger.Cli\nthe namespace is Ledger.Cli\n")
    assert prose[1].startswith("no rule: namespace (only 1 example fills it, after "
                               "'the assembly is ' and after 'the namespace is ': ")
    xml = lines_of("<Assembly>Ledger.Cli</Assembly>\n<Namespace>Ledger.Cli</Namespace>\n")
    assert xml[1].startswith("learned: namespace: at the start of a line after '<Namespace>'")
