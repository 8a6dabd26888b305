"""A user's program, type-checked as a user checks it: ``mypy --strict`` (the
installed mypy, in a subprocess) on a file outside the repository, importing
``agentflow`` (and ``agentflow.providers``) from the installed package, with
no path set up for it. The correct program passes; the faulty one is reported
at the typo'd attribute and at the wrong type, because ``call(msg, Contact)``
returns a ``Msg[Contact]``, ``stream(msg, Contact)`` yields events whose
``Complete`` carries a ``Contact``, and ``extract_many`` / ``extract_many_sync``
yield ``ExtractResult[Contact]``.

mypy finds the package the way it finds any installed one (PEP 561:
``py.typed``, a site-packages path), in both installs a user has: the
editable one ``make`` builds (this test's own interpreter), where it is a
plain path entry (``[tool.setuptools] package-dir``), never an import hook
mypy cannot follow; and a normal one (the wheel built from this tree,
unpacked into a fresh venv's site-packages that reaches the dependencies
through a ``.pth`` line).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
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


def _mypy(tmp: Path, name: str, source: str, python: str) -> tuple[int, str]:
    """Run the installed mypy --strict on ``source`` saved as ``tmp/name``, from
    ``tmp`` (outside the repository: nothing but the install provides agentflow),
    resolving imports as the interpreter ``python`` does."""
    program = tmp / name
    program.write_text(textwrap.dedent(source), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-color-output", "--show-error-codes",
         "--python-executable", python, "--cache-dir", str(tmp / ".mypy-cache"), name],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, done.stdout + done.stderr


def _run(python: str, code: str, cwd: Path) -> str:
    done = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True,
                          cwd=cwd)
    return done.stdout.strip()


def _normal_install(work: Path) -> str:
    """A fresh venv holding agentflow as a normal install of the wheel built
    from this tree; its dependencies come from this interpreter's site-packages
    (a ``.pth`` line, so that directory's own ``.pth`` files, the editable
    install's among them, are not read). Returns its python."""
    source = work / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "agentflow", source / "agentflow", ignore=ignore)
    wheels = work / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", str(wheels), str(source)],
        check=True, capture_output=True, timeout=600)
    wheel = next(wheels.glob("agentflow-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "agentflow/py.typed" in names and "agentflow/providers/registry.py" in names
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = str(env_dir / "bin" / "python")
    site = _run(python, "import sysconfig; print(sysconfig.get_paths()['purelib'])", work)
    zipfile.ZipFile(wheel).extractall(site)
    Path(site, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = _run(python, "import agentflow.providers.registry as r; print(r.__file__)", work)
    assert where.startswith(site), where
    return python


@pytest.fixture(scope="module", params=["editable", "normal"])
def install(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> tuple[Path, str]:
    """``(work directory, python)`` of one install kind: ``editable`` is this
    test's own interpreter (the editable install ``make`` builds), ``normal``
    a fresh venv with the wheel."""
    work = tmp_path_factory.mktemp(f"user-{request.param}")
    assert not str(work).startswith(str(ROOT))
    if request.param == "editable":
        return work, sys.executable
    return work, _normal_install(work)


def test_the_editable_install_is_a_static_path() -> None:
    """The editable install is a path line in a ``.pth`` file (setuptools'
    static mode), not an import hook (``import ...finder; ....install()``), which
    mypy cannot follow; a normal install puts the package in site-packages."""
    import agentflow

    site = Path(sysconfig.get_paths()["purelib"])
    editable = sorted(site.glob("__editable__.agentflow-*.pth"))
    package = Path(agentflow.__file__).parent
    if not editable:  # a normal install
        assert package.parent == site
        return
    lines = [line for p in editable for line in p.read_text().splitlines() if line.strip()]
    assert lines == [str(ROOT)]  # no 'import' line: nothing runs at start-up
    assert package == ROOT / "agentflow" and (package / "py.typed").is_file()
    assert (package / "providers" / "registry.py").is_file()


def test_the_package_is_found_as_an_installed_typed_package(install: tuple[Path, str]) -> None:
    """mypy resolves agentflow and agentflow.providers to the install (PEP 561),
    from a directory that holds no agentflow of its own."""
    probe = '''
        import agentflow
        import agentflow.providers.registry
        reveal_type(agentflow.ReActAgent)
        reveal_type(agentflow.providers.registry.get_model)
        '''
    status, out = _mypy(install[0], "probe.py", probe, install[1])
    assert "import-not-found" not in out and "import-untyped" not in out, out
    assert re.search(r'Revealed type is "def \(name: (builtins\.)?str, model: ', out), out
    assert re.search(r'Revealed type is "def \(spec: (builtins\.)?str', out), out
    assert status == 0, out


def test_a_correct_user_program_passes_mypy_strict(install: tuple[Path, str]) -> None:
    status, out = _mypy(install[0], "good.py", GOOD, install[1])
    assert status == 0, out
    assert "Success: no issues found" in out


def test_a_faulty_user_program_is_reported_where_it_is_wrong(install: tuple[Path, str]) -> None:
    status, out = _mypy(install[0], "bad.py", BAD, install[1])
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
