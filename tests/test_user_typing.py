"""A user's program, type-checked as a user checks it: ``mypy --strict`` (the
installed mypy, in a subprocess) on a file outside the repository, importing
``agentflow`` (and ``agentflow.providers``) from the installed package, with
no path set up for it. The correct program passes; the faulty one is reported
at the typo'd attribute and at the wrong type, because ``call(msg, Contact)``
returns a ``Msg[Contact]``, ``stream(msg, Contact)`` yields events whose
``Complete`` carries a ``Contact``, and ``extract_many`` / ``extract_many_sync``
yield ``ExtractResult[Contact]``.

mypy finds the package the way it finds any installed one (PEP 561:
``py.typed``, a site-packages path): in the editable install ``make`` builds
that is a plain path entry (``[tool.setuptools] package-dir``), never an
import hook mypy cannot follow.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PRELUDE = '''
from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from pydantic import BaseModel

from agentflow import (
    AgentState,
    Complete,
    ExtractResult,
    ReActAgent,
    extract_many,
    extract_many_sync,
)
from agentflow.providers.registry import get_model
from agentflow.testing import ScriptedModel


class Contact(BaseModel):
    name: str
    email: str
'''

GOOD = PRELUDE + '''

async def ask(agent: ReActAgent, text: str) -> Contact:
    reply = await agent.call(text, Contact, state=AgentState())
    contact: Contact = reply.output
    name: str = reply.output.name
    assert name
    return contact


async def watch(agent: ReActAgent) -> Contact | None:
    async for event in agent.stream("who?", Contact):
        match event:
            case Complete(output=found):
                return found  # a Contact, never None once an output was asked for
    return None


def ask_sync(agent: ReActAgent) -> str:
    return agent.call_sync("who?", Contact).output.email


def text_reply(agent: ReActAgent) -> str:
    return agent.call_sync("hi").text  # no output type: the reply as before


async def batch(agent: ReActAgent, docs: list[str]) -> list[str]:
    results: AsyncIterator[ExtractResult[Contact]] = extract_many(
        agent, docs, Contact, concurrency=4)
    names = []
    async for result in results:
        if result.output is not None:
            names.append(result.output.name)
    return names


def batch_sync(docs: list[str]) -> list[str]:
    results: Iterator[ExtractResult[Contact]] = extract_many_sync(
        get_model("openai:gpt-4o-mini"), docs, Contact, order="completed")
    return [r.output.email for r in results if r.output is not None]


AGENT = ReActAgent("typed", ScriptedModel([]))
'''

BAD = PRELUDE + '''

async def typo(agent: ReActAgent) -> None:
    reply = await agent.call("x", Contact)
    print(reply.output.nmae)  # BAD: typo


async def wrong_type(agent: ReActAgent) -> None:
    reply = await agent.call("x", Contact)
    x: int = reply.output.name  # BAD: wrong type
    print(x)


def sync_typo(agent: ReActAgent) -> None:
    print(agent.call_sync("x", Contact).output.emial)  # BAD: typo


async def stream_wrong_type(agent: ReActAgent) -> None:
    async for event in agent.stream("x", Contact):
        if isinstance(event, Complete):
            n: int = event.output.email  # BAD: wrong type
            print(n)


async def batch_typo(agent: ReActAgent) -> None:
    async for result in extract_many(agent, ["doc"], Contact):
        if result.output is not None:
            print(result.output.nmae)  # BAD: typo


def batch_sync_optional(agent: ReActAgent) -> None:
    for result in extract_many_sync(agent, ["doc"], Contact):
        print(result.output.name)  # BAD: output is None for a failed input


async def matched_wrong_type(agent: ReActAgent) -> None:
    async for event in agent.stream("x", Contact):
        match event:
            case Complete(output=found):
                m: int = found.name  # BAD: wrong type
                print(m)


def batch_bad_option(agent: ReActAgent) -> None:
    extract_many_sync(agent, ["doc"], Contact, concurency=4)  # BAD: unknown keyword
'''


def _mypy(tmp: Path, name: str, source: str) -> tuple[int, str]:
    """Run the installed mypy --strict on ``source`` saved as ``tmp/name``, from
    ``tmp`` (outside the repository: nothing but the install provides agentflow)."""
    program = tmp / name
    program.write_text(textwrap.dedent(source), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-color-output", "--show-error-codes",
         "--cache-dir", str(tmp.parent / "mypy-cache"), name],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("user") / "project"
    work.mkdir()
    assert not str(work).startswith(str(ROOT))
    return work


def test_the_package_is_found_as_an_installed_typed_package(workdir: Path) -> None:
    """mypy resolves agentflow and agentflow.providers to the install (PEP 561),
    from a directory that holds no agentflow of its own."""
    probe = '''
        import agentflow
        import agentflow.providers.registry
        reveal_type(agentflow.ReActAgent)
        reveal_type(agentflow.providers.registry.get_model)
        '''
    status, out = _mypy(workdir, "probe.py", probe)
    assert "import-not-found" not in out and "import-untyped" not in out, out
    assert 'Revealed type is "def (name: builtins.str' in out, out
    assert "def (spec: builtins.str" in out, out
    assert status == 0, out


def test_a_correct_user_program_passes_mypy_strict(workdir: Path) -> None:
    status, out = _mypy(workdir, "good.py", GOOD)
    assert status == 0, out
    assert "Success: no issues found" in out


def test_a_faulty_user_program_is_reported_where_it_is_wrong(workdir: Path) -> None:
    status, out = _mypy(workdir, "bad.py", BAD)
    assert status == 1, out
    reported = {int(n) for n in re.findall(r"^bad\.py:(\d+): error:", out, re.M)}
    lines = textwrap.dedent(BAD).splitlines()
    expected = {i for i, line in enumerate(lines, 1) if "# BAD" in line}
    assert reported == expected, out
    assert '"Contact" has no attribute "nmae"' in out
    assert re.search(r'Incompatible types in assignment \(expression has type "str", '
                     r'variable has type "int"\)', out)
    assert '"Contact" has no attribute "emial"' in out
    assert 'Item "None" of "Contact | None" has no attribute "name"' in out
    assert '"concurency"' in out
