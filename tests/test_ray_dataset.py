"""The Ray Data engine's Python API on a local Ray cluster (``tests.ray_support``):
``extract_dataset`` writes one CLI record per input (JSONL and Parquet
writers), ``read_jsonl``/``read_parquet``, the pool's sizes, and an actor
killed mid-run that loses and duplicates nothing."""

from __future__ import annotations

import gzip
import os
import re
import signal
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import pyarrow.parquet as pq  # noqa: E402

from agentflow import ray as engine  # noqa: E402
from agentflow.documents.budget import WorkBudget  # noqa: E402
from tests import ray_support  # noqa: E402
from tests.pdfs import scanned_pdf, text_pdf  # noqa: E402
from tests.ray_support import ThreadedFake, make_docs, read_records  # noqa: E402

cluster = ray_support.cluster
schema = ray_support.schema


def test_extract_dataset_writes_one_cli_record_per_input(
        cluster: None, schema: str, tmp_path: Path) -> None:
    root = make_docs(tmp_path / "in", 6)
    (root / "zipped.txt.gz").write_bytes(gzip.compress(b"zipped is compressed.\n"))
    (root / "empty.txt").write_text("   \n")
    (root / "report.pdf").write_bytes(text_pdf())
    (root / "scan.pdf").write_bytes(scanned_pdf(1))
    with ThreadedFake() as fake:
        ds = engine.read_documents([str(root)])
        results = engine.extract_dataset(
            ds, schema, model="openai:gpt-4o-mini", base_url=fake.url, api_key="k",
            actors=2, concurrency=4)
        engine.write_jsonl(results, tmp_path / "out")
        engine.write_parquet(results, tmp_path / "parquet")
    records = read_records(tmp_path / "out")
    by_id = {r["id"]: r for r in records}
    assert len(records) == len(by_id) == 10
    for i in range(6):
        record = by_id[str(root / f"doc{i:03}.txt")]
        assert record["ok"] is True and record["output"] == {"name": f"doc{i:03}"}
        assert {"usage", "attempts", "duration_s", "truncated"} <= record.keys()
    assert by_id[str(root / "zipped.txt.gz")]["output"] == {"name": "zipped"}
    empty = by_id[str(root / "empty.txt")]
    assert empty["ok"] is False and empty["error"]["type"] == "EmptyDocumentError"
    pdf = by_id[str(root / "report.pdf")]  # the text layer, with its page map
    assert pdf["output"] == {"name": "Quarterly"} and len(pdf["pages"]) == 3
    scan = by_id[str(root / "scan.pdf")]["error"]
    assert scan["type"] == "NoTextLayerError" and "scanned" in scan["reason"]
    table = pq.read_table(tmp_path / "parquet")
    assert sorted(table.column("id").to_pylist()) == sorted(by_id)
    assert {orjson.loads(r)["id"] for r in table.column("record").to_pylist()} == set(by_id)


def test_read_jsonl_and_parquet(cluster: None, tmp_path: Path) -> None:
    lines = [{"key": f"r{i}", "body": f"text {i}"} for i in range(3)] + [{"key": "r3", "body": ""}]
    lines += [{"body": "no key"}, {"key": None, "body": "null key"}]
    (tmp_path / "in.jsonl").write_bytes(b"\n".join(orjson.dumps(x) for x in lines))
    rows = sorted(engine.read_jsonl(str(tmp_path / "in.jsonl"), text_field="body",
                                    id_field="key").take_all(), key=lambda r: r["id"])
    keyless, rows = rows[:2], rows[2:]  # "#<digest>" sorts first
    assert [(r["id"], r["text"]) for r in rows][:3] == [(f"r{i}", f"text {i}") for i in range(3)]
    assert rows[3]["problem"] and not rows[0]["problem"]
    # a record without an id is refused under an id of its own, never the text "None"
    assert {r["text"] for r in keyless} == {"no key", "null key"}
    assert all(r["id"].startswith("#") and "no id in field 'key'" in r["problem"]
               for r in keyless) and keyless[0]["id"] != keyless[1]["id"]
    import pyarrow as pa

    pq.write_table(pa.table({"key": ["a", "b"], "body": ["x", "y"], "other": [1, 2]}),
                   tmp_path / "in.parquet")
    rows = engine.read_parquet(str(tmp_path / "in.parquet"), text_field="body",
                               id_field="key").take_all()
    assert sorted((r["id"], r["text"]) for r in rows) == [("a", "x"), ("b", "y")]
    # a record past the budget's chars is a failed row naming the limit, as a file is
    (tmp_path / "sizes.jsonl").write_text('{"key": "short", "body": "abcdef"}\n'
                                          '{"key": "long", "body": "abcdefgh"}\n')
    rows = engine.read_jsonl(str(tmp_path / "sizes.jsonl"), text_field="body", id_field="key",
                             budget=WorkBudget(chars=6)).take_all()
    by_id = {r["id"]: r for r in rows}
    assert by_id["short"]["text"] == "abcdef" and not by_id["short"]["problem"]
    assert by_id["long"]["problem_type"] == "DocumentTooComplexError"
    assert by_id["long"]["problem"] == "long: too costly to read: characters of text: 8 (limit 6)"


def _sockets_to(port: int) -> set[str]:
    """Inodes of the established TCP connections whose remote end is 127.0.0.1:``port``."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[2].endswith(f":{port:04X}") and fields[3] == "01":
            inodes.add(fields[9])
    return inodes


def _kill_actor_talking_to(port: int) -> int | None:
    """SIGKILL the Ray Data map actor running ``_Extractor`` (process title
    ``ray::MapWorker(MapBatches(_Extractor))``) that holds a connection to the
    fake on ``port`` (an actor of this run, not an idle one left by another); its pid."""
    wanted = {f"socket:[{inode}]" for inode in _sockets_to(port)}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if not re.match(r"ray::\w*MapWorker\(.*_Extractor", title):
                continue
            links = {os.readlink(fd) for fd in (entry / "fd").iterdir()}
        except OSError:
            continue
        if links & wanted:
            os.kill(int(entry.name), signal.SIGKILL)
            return int(entry.name)
    return None


def test_an_actor_killed_mid_run_loses_and_duplicates_nothing(
        cluster: None, schema: str, tmp_path: Path) -> None:
    root = make_docs(tmp_path / "in", 40)
    killed: list[int | None] = []
    with ThreadedFake(latency=0.1) as fake:
        def on_request(n: int) -> None:
            if n == 12 and not killed:
                killed.append(_kill_actor_talking_to(urlsplit(fake.url).port or 0))
        fake.on_request = on_request
        results = engine.extract_dataset(
            engine.read_documents(str(root)), schema, model="openai:gpt-4o-mini",
            base_url=fake.url, api_key="k", actors=2, concurrency=4, batch_size=5)
        engine.write_jsonl(results, tmp_path / "out")
        sent = fake.count
    assert killed and killed[0] is not None, "no actor process was found to kill"
    records = read_records(tmp_path / "out")
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)) == 40
    assert all(r["ok"] for r in records)
    assert {r["output"]["name"] for r in records} == {f"doc{i:03}" for i in range(40)}
    # Every input was asked at least once; when the killed actor had a request in
    # flight its batch ran again (more than 40), but under load the actor found
    # holding a connection may be between batches, so no count above 40 is promised.
    assert sent >= 40


def test_extract_dataset_refuses_bad_pool_sizes(cluster: None) -> None:
    ds = ray.data.from_items([{"id": "a", "text": "a"}])
    with pytest.raises(ValueError, match="actors"):
        engine.extract_dataset(ds, dict, actors=0)
    with pytest.raises(ValueError, match="concurrency"):
        engine.extract_dataset(ds, dict, actors=4, concurrency=2)
