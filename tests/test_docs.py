"""Every ```python block of README.md and docs/**/*.md runs, and the site builds.

Each page is one test: its python blocks run in order in one namespace (a later
block may use an earlier block's names), in a temporary working directory, with
no network beyond 127.0.0.1 (name lookups of any other host fail the test).
A block whose first statement needs an event loop uses top-level ``await`` (as
in a notebook or ``python -m asyncio``): it runs on the page's loop.

Vendor models stay offline without the block knowing: every ``"vendor:model"``
string of a page whose vendor has a fake in ``tests/fakes/`` gets that fake
vendor server on 127.0.0.1, and the vendor is registered through the public
``agentflow.providers.registry.register_vendor`` so that the real adapter is
built with the fake's ``base_url`` (and a test key). What the fake answers:

* the replies of an HTML comment right before the block (invisible on the
  site), ``<!-- fake-reply: {"name": "Ada"} -->`` (a JSON value: the reply
  text, sent as JSON; a list of them: several replies, in order);
* otherwise an instance the request's output schema allows (the schema of
  the ``generate_response`` tool or of the response format), built by
  ``example_of``; or ``"Done."`` for a request that asks for no output.

A block that cannot run offline is marked ``<!-- not-run: KEY -->`` and KEY
must be a key of ``NOT_RUN`` below, with the reason; ```sh blocks are not run.
``test_site_builds_strict`` runs ``mkdocs build --strict`` into a temp dir.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentflow.providers import registry
from tests.fakes.base import FakeReply, FakeServer
from tests.fakes.serve import build_fake

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

NOT_RUN: Mapping[str, str] = {}
"""Why a block marked ``<!-- not-run: KEY -->`` cannot run offline, by KEY (none
does today: every python block of the docs runs)."""
MAX_NOT_RUN = 3
"""A block that is not run is the rare exception: at most this many in all."""

VENDOR_STRING = re.compile(r"""["']([a-z]+):[A-Za-z0-9][\w.\-:/]*["']""")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<lang>[\w+-]*)[^\n`]*$")
DIRECTIVE = re.compile(r"<!--\s*(?P<kind>fake-reply|not-run)\s*:\s*(?P<value>.*?)\s*-->", re.S)
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", None}


@dataclass
class Block:
    """A fenced code block: its language, text (indentation removed), the line
    of its opening fence (1-based) and the directives of the comments above it."""

    lang: str
    code: str
    line: int
    replies: list[str] = field(default_factory=list)
    not_run: str | None = None


def blocks_of(text: str) -> list[Block]:
    """The fenced code blocks of a markdown text, with their directives (the
    HTML comments right above the fence, blank lines between them allowed)."""
    lines = text.splitlines()
    found: list[Block] = []
    i = previous_end = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, ticks, lang = m["indent"], m["ticks"], m["lang"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not re.match(rf"^{re.escape(indent)}{ticks}\s*$", lines[j]):
            line = lines[j]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            j += 1
        block = Block(lang, "\n".join(body) + "\n", i + 1)
        above = "\n".join(lines[previous_end:i]).rstrip()
        comments: list[str] = []
        while above.endswith("-->") and "<!--" in above:
            start = above.rindex("<!--")
            comments.insert(0, above[start:])
            above = above[:start].rstrip()
        for d in DIRECTIVE.finditer("\n".join(comments)):
            if d["kind"] == "not-run":
                block.not_run = d["value"]
            else:
                value = orjson.loads(d["value"])
                items = value if isinstance(value, list) else [value]
                block.replies += [v if isinstance(v, str) else orjson.dumps(v).decode()
                                  for v in items]
        found.append(block)
        i = previous_end = j + 1
    return found


# -- the fake answers --------------------------------------------------------

def example_of(schema: Any, defs: Mapping[str, Any] | None = None) -> Any:
    """A small instance of a JSON Schema in any vendor's dialect (``$ref``,
    ``anyOf``, enums, objects, arrays within their ``minItems``, strings by
    ``format``; upper-case type names as Gemini's OpenAPI subset writes them)."""
    if not isinstance(schema, dict):
        return None
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        return example_of(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return example_of(options[0], defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if str(k).lower() != "null"), "null")
    kind = str(kind).lower() if kind is not None else None   # Gemini writes "INTEGER"...
    if kind == "object" or "properties" in schema:
        return {name: example_of(sub, defs) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [example_of(schema.get("items", {}), defs)
                for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return float(max(1, schema.get("minimum", 1)))
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    formats = {"email": "ada@example.org", "date": "2024-01-31",
               "date-time": "2024-01-31T12:00:00Z", "uri": "https://example.org/"}
    return formats.get(schema.get("format", ""), "example")


def output_schema(body: Any) -> Any:
    """The output schema a request asks for, in any vendor's wire format: the
    parameters of its ``generate_response`` tool, else its response format."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("name") == "generate_response":
                found.extend(v for v in node.values() if isinstance(v, dict) and "type" in v)
            for key in ("response_format", "responseSchema", "responseJsonSchema", "format"):
                v = node.get(key)
                if isinstance(v, dict):
                    inner = v.get("json_schema", {}).get("schema") if "json_schema" in v else v
                    if isinstance(inner, dict) and ("properties" in inner or "type" in inner):
                        found.append(inner)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(body)
    return found[0] if found else None


def default_reply(body: Any) -> FakeReply:
    """The fake's answer when no reply is scripted (see the module docstring)."""
    schema = output_schema(body)
    text = "Done." if schema is None else orjson.dumps(example_of(schema)).decode()
    return FakeReply(text=text)


# -- one page ----------------------------------------------------------------

class LoopThread:
    """An event loop on its own thread, for the fake servers."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout=60)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def vendors_named(code: str) -> set[str]:
    """The registered vendors a code text names in ``"vendor:model"`` strings
    (aliases resolved) that have a fake server."""
    from tests.fakes.serve import FAKES

    names = {registry.ALIASES.get(v, v) for v in VENDOR_STRING.findall(code)}
    return {v for v in names if v in FAKES}


def redirected(vendor: str, target: str, url: str) -> Callable[..., Any]:
    """A factory building ``vendor``'s real adapter against the fake at ``url``."""
    module, _, attr = target.partition(":")

    def factory(model_name: str, **kwargs: Any) -> Any:
        import importlib

        create = getattr(importlib.import_module(module), attr)
        kwargs.setdefault("base_url", url)
        kwargs.setdefault("api_key", "test-key")
        return create(model_name, **kwargs)

    factory.__qualname__ = f"redirected_{vendor}"
    return factory


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No network beyond this machine: name lookups of other hosts and connections
    to other addresses fail the block that makes them."""
    real_lookup = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def refuse(where: object) -> OSError:
        return OSError(f"docs test: no network to {where!r} (only 127.0.0.1)")

    def local_only(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in LOCAL_HOSTS:
            raise refuse(name)
        return real_lookup(host, *args, **kwargs)

    def is_local(address: Any) -> bool:
        return not isinstance(address, tuple) or address[0] in LOCAL_HOSTS

    def connect(self: socket.socket, address: Any) -> None:
        if not is_local(address):
            raise refuse(address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not is_local(address):
            raise refuse(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", local_only)
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


def make_fixtures(where: Path) -> None:
    """The files the documentation's examples open, in the page's working
    directory: ``invoice.pdf`` (one page with a text layer, made by fpdf2), and
    ``tests/`` linked to the repository's (pages that use its test servers, such
    as ``tests/mcp_server.py``, run as from a checkout)."""
    from fpdf import FPDF

    (where / "tests").symlink_to(ROOT / "tests", target_is_directory=True)

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Invoice INV-7 - total 120.50 EUR")
    pdf.output(str(where / "invoice.pdf"))


def run_code(block: Block, namespace: dict[str, Any], runner: asyncio.Runner,
             filename: str) -> None:
    """Run one block: top-level ``await`` on the page's loop, else plainly."""
    code = compile(block.code, filename, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                   dont_inherit=True)
    result = eval(code, namespace)  # the documentation's own examples
    if asyncio.iscoroutine(result):
        runner.run(result)


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def python_blocks(path: Path) -> list[Block]:
    return [b for b in blocks_of(path.read_text()) if b.lang in ("python", "py")]


@pytest.mark.parametrize("path", [p for p in PAGES if python_blocks(p)], ids=page_id)
def test_every_python_block_runs(path: Path, tmp_path: Path, offline: None,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    make_fixtures(tmp_path)
    monkeypatch.syspath_prepend(str(ROOT))
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    blocks = python_blocks(path)
    for block in blocks:
        if block.not_run is not None:
            assert block.not_run in NOT_RUN, (
                f"{page_id(path)}:{block.line}: not-run key {block.not_run!r} has no reason "
                f"in tests/test_docs.py NOT_RUN")
    vendors = set().union(*(vendors_named(b.code) for b in blocks if b.not_run is None))
    servers = LoopThread()
    fakes: dict[str, FakeServer] = {}
    saved = {v: registry.VENDORS[v] for v in vendors}
    vendors_before = dict(registry.VENDORS)
    try:
        for vendor in sorted(vendors):
            fake = build_fake(vendor)
            fake.default = default_reply
            servers.run(fake.__aenter__())
            fakes[vendor] = fake
            registry.register_vendor(vendor, redirected(vendor, saved[vendor], fake.url))
        namespace: dict[str, Any] = {"__name__": "__docs__"}
        with asyncio.Runner() as runner:
            for block in blocks:
                if block.not_run is not None:
                    continue
                for vendor in vendors_named(block.code) or set(fakes):
                    fakes[vendor].add(*(FakeReply(text=r) for r in block.replies))
                try:
                    run_code(block, namespace, runner, f"{page_id(path)}:{block.line}")
                except BaseException as exc:
                    raise AssertionError(
                        f"{page_id(path)}, the block at line {block.line} raised "
                        f"{type(exc).__name__}: {exc}") from exc
                for fake in fakes.values():
                    assert not fake.script, (
                        f"{page_id(path)}:{block.line}: scripted replies left unread: "
                        f"{list(fake.script)}")
    finally:
        for vendor in set(registry.VENDORS) - set(vendors_before):
            del registry.VENDORS[vendor]          # a vendor a page registered
        for vendor, target in vendors_before.items():
            if registry.VENDORS.get(vendor) != target or vendor in saved:
                registry.register_vendor(vendor, target)
        for fake in fakes.values():
            servers.run(fake.__aexit__())
        servers.close()


def test_blocks_not_run_are_the_rare_exception_and_say_why() -> None:
    marked = [(page_id(p), b.line, b.not_run) for p in PAGES for b in python_blocks(p)
              if b.not_run is not None]
    assert all(key in NOT_RUN for _, _, key in marked), marked
    assert len(marked) <= MAX_NOT_RUN, marked


def test_every_page_is_in_the_site_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    missing = [str(p.relative_to(ROOT / "docs")) for p in PAGES[1:]
               if str(p.relative_to(ROOT / "docs")) not in nav]
    assert not missing, f"pages under docs/ missing from mkdocs.yml's nav: {missing}"


async def test_an_unscripted_request_gets_an_instance_of_its_output_schema() -> None:
    from pydantic import BaseModel

    from agentflow import AgentState, ReActAgent
    from agentflow.providers.registry import get_model

    class Ticket(BaseModel):
        title: str
        priority: int
        tags: list[str]

    for vendor in ("openai", "anthropic", "gemini"):
        async with build_fake(vendor) as fake:
            fake.default = default_reply
            model = get_model(f"{vendor}:{'gpt-4o-mini' if vendor == 'openai' else 'x'}",
                              base_url=fake.url, api_key="k")
            async with ReActAgent("t", model) as agent:
                reply = await agent.call("file a ticket", Ticket, state=AgentState())
            assert reply.output == Ticket(title="example", priority=1, tags=["example"]), vendor
            assert fake.requests, vendor


def test_the_offline_guard_refuses_other_hosts(offline: None) -> None:
    with pytest.raises(OSError, match="no network"):
        socket.getaddrinfo("example.com", 443)
    with socket.socket() as sock, pytest.raises(OSError, match="no network"):
        sock.connect(("93.184.215.14", 443))


def test_the_collector_reads_fences_and_directives() -> None:
    text = ("Intro\n\n<!-- fake-reply: {\"a\": 1} -->\n```python\nx = 1\n```\n\n"
            "* item\n\n    ```sh\n    make test\n    ```\n\n"
            "<!-- not-run: ray-cluster -->\n\n```python\ny = 2\n```\n")
    blocks = blocks_of(text)
    assert [(b.lang, b.code, b.line) for b in blocks] == [
        ("python", "x = 1\n", 4), ("sh", "make test\n", 10), ("python", "y = 2\n", 16)]
    assert blocks[0].replies == ['{"a":1}'] and blocks[0].not_run is None
    assert blocks[2].not_run == "ray-cluster" and blocks[2].replies == []


def test_example_of_satisfies_the_schemas_it_is_given() -> None:
    from pydantic import BaseModel, TypeAdapter

    class Item(BaseModel):
        sku: str
        qty: int

    class Invoice(BaseModel):
        number: str
        items: list[Item]
        paid: bool | None = None

    schema = TypeAdapter(Invoice).json_schema()
    Invoice.model_validate(example_of(schema))


def _mkdocs() -> list[str]:
    exe = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "mkdocs"]


def test_site_builds_strict(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HTTP", "HTTPS"))}
    env["NO_MKDOCS_2_WARNING"] = "1"
    done = subprocess.run(
        [*_mkdocs(), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "agent" / "index.html").is_file()
