"""What a rerun of the Ray engine skips (``agentflow.ray``'s resume): the ids
done stay on disk on the driver, the workers get only file names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")


from agentflow import ray as engine  # noqa: E402
from agentflow.documents.seen import SeenIds  # noqa: E402


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))


def test_done_ids_stay_on_disk_and_the_workers_get_only_file_names(tmp_path: Path) -> None:
    """A rerun skips the inputs with an ok record without a set of every id: the
    driver keeps them in a SeenIds, and the filter Ray ships to its workers holds
    the output files' names and sizes (the same size for 10 ids as for 20,000),
    which each worker process reads once."""
    import pickle

    small, big = tmp_path / "small", tmp_path / "big"
    small.mkdir()
    big.mkdir()
    _write_records(small / "a.jsonl", [{"id": f"d{i}", "ok": i % 2 == 0} for i in range(10)])
    _write_records(big / "a.jsonl", [{"id": f"d{i}", "ok": True} for i in range(20_000)])
    (big / "b.jsonl").write_bytes(b'{"id": "torn", "ok": tr')  # a torn line: skipped
    held = engine.read_output_dir(small)
    assert isinstance(held.done, SeenIds) and len(held.done) == 5
    assert [name for name, _ in held.files] == [str(small / "a.jsonl")]
    assert engine.done_ids(small) == {f"d{i}" for i in range(0, 10, 2)}
    many = engine.read_output_dir(big)
    assert len(many.done) == 20_000 and "torn" not in many.done
    sizes = {len(pickle.dumps(engine.NotDone(h.files))) for h in (held, many)}
    assert max(sizes) < 400, sizes  # file names and sizes, whatever the number of ids
    keep = pickle.loads(pickle.dumps(engine.NotDone(held.files)))  # as a worker gets it
    assert [i for i in range(12) if keep({"id": f"d{i}"})] == [1, 3, 5, 7, 9, 10, 11]
    # another run's files (a file added since): read again, not the last run's ids
    _write_records(small / "b.jsonl", [{"id": "d1", "ok": True}])
    again = engine.NotDone(engine.read_output_dir(small).files)
    assert not again({"id": "d1"}) and again({"id": "d3"})
