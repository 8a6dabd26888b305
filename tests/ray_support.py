"""What the Ray engine's tests share: a local Ray cluster (2 CPUs, one per
test module: ``cluster``), a fake OpenAI server on 127.0.0.1 running in a
thread of this process (``ThreadedFake``), the schema, and the inputs and
records on disk."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")


from tests.fakes.base import FakeReply  # noqa: E402
from tests.fakes.openai import OpenAIFake  # noqa: E402

SCHEMA = '''
from pydantic import BaseModel


class Item(BaseModel):
    name: str


INSTRUCTIONS = "Extract the name."
'''


class ThreadedFake:
    """An ``OpenAIFake`` served from its own event loop in a thread, so that
    blocking Ray calls can run in the test. Each reply names the document it
    was asked about (``name`` = the first word of the user message) after
    ``latency`` seconds; ``on_request(n)`` runs with the request count."""

    def __init__(self, latency: float = 0.05) -> None:
        self.latency = latency
        self.count = 0
        self.on_request: Any = None
        self.loop = asyncio.new_event_loop()
        self.fake = OpenAIFake()
        self.fake.record = False
        self.fake.default = self._reply
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def _reply(self, body: Any) -> FakeReply:
        self.count += 1
        if self.on_request is not None:
            self.on_request(self.count)
        user = next(m for m in body["messages"] if m["role"] == "user")
        text = user["content"] if isinstance(user["content"], str) else user["content"][0]["text"]
        name = text.split()[0] if text.split() else "?"
        return FakeReply(text=orjson.dumps({"name": name}).decode(), latency=self.latency)

    def __enter__(self) -> ThreadedFake:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.fake.__aenter__(), self.loop).result(10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.fake.__aexit__(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    @property
    def url(self) -> str:
        return self.fake.url


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR",
             configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture
def schema(tmp_path: Path) -> str:
    path = tmp_path / "schema.py"
    path.write_text(SCHEMA)
    return f"{path}:Item"


def make_docs(root: Path, n: int) -> Path:
    """``n`` small text documents in a new folder ``root``."""
    root.mkdir()
    for i in range(n):
        (root / f"doc{i:03}.txt").write_text(f"doc{i:03} is a document.\n")
    return root


def read_records(out: Path) -> list[dict[str, Any]]:
    """The records of every ``*.jsonl`` file in ``out``."""
    return [orjson.loads(line) for f in sorted(out.glob("*.jsonl"))
            for line in f.read_bytes().splitlines() if line.strip()]

