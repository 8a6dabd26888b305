"""One input that fails in a stage of its own before or after its model call
(not the call itself) is that input's failed record; the others carry on and
the run ends normally. A document holding lone surrogates (text decoded with
``surrogateescape``, a JSON ``"\\ud800"``) ended the whole ``extract_many`` run
as an ``ExceptionGroup`` (a strict UTF-8 count in the chunk budget). A dict
of id -> text given as the inputs was read as its keys, the texts unread; an
id whose ``str()`` raises ended the run with that bare error."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import InvalidInputError, extract_many
from agentflow.testing import FunctionModel


class Who(BaseModel):
    who: str


def _model() -> FunctionModel:
    return FunctionModel(lambda request: '{"who": "doc"}')


async def test_documents_with_lone_surrogates_are_extracted() -> None:
    texts = ["doc \ud800 one", "ok doc", "\udcff" * 10 + " doc"]
    results = [r async for r in extract_many(_model(), texts, Who)]
    assert [(r.id, r.ok, r.output) for r in results] == [
        (str(n), True, Who(who="doc")) for n in range(3)]


class Hostile(str):
    """A text whose encoding fails (any stage of one input that raises)."""

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("cannot encode this text")


async def test_an_input_failing_outside_its_call_is_its_own_failed_record() -> None:
    inputs = [("a", "ok doc"), ("b", Hostile("doc two")), ("c", "doc three")]
    results = [r async for r in extract_many(_model(), inputs, Who, concurrency=1)]
    assert [(r.id, r.ok) for r in results] == [("a", True), ("b", False), ("c", True)]
    error = results[1].error
    assert isinstance(error, RuntimeError) and str(error) == "cannot encode this text"


async def test_a_stage_failing_alike_on_every_input_logs_its_traceback_once(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="agentflow")
    inputs = [(name, Hostile(f"doc {name}")) for name in "abc"]
    results = [r async for r in extract_many(_model(), inputs, Who, concurrency=1)]
    assert [(r.id, r.ok) for r in results] == [("a", False), ("b", False), ("c", False)]
    logged = [r.getMessage() for r in caplog.records if "extract.input_failed" in r.getMessage()]
    assert len(logged) == 3
    assert "Traceback" in logged[0] and "cannot encode this text" in logged[0]
    for line in logged[1:]:  # the same failure again: one short line, no traceback
        assert "Traceback" not in line and "\n" not in line
        assert "traceback='logged before'" in line and "cannot encode this text" in line
    assert all(f"input_id='{name}'" in line for name, line in zip("abc", logged, strict=True))


async def test_a_mapping_of_id_to_text_is_refused_not_read_as_its_keys() -> None:
    model = _model()
    with pytest.raises(TypeError, match=r"inputs must be an iterable of documents, got a dict; "
                                        r"iterating a mapping gives its keys only: "
                                        r"pass inputs.items\(\) for \(id, text\) pairs"):
        async for _ in extract_many(model, {"doc-a": "Ann's text"}, Who):
            pass
    assert model.requests == []
    results = [r async for r in extract_many(model, {"doc-a": "doc text"}.items(), Who)]
    assert [(r.id, r.ok) for r in results] == [("doc-a", True)]


class Unnamed:
    """An id whose ``str()`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("no name")


async def test_an_id_that_cannot_be_written_is_an_input_error() -> None:
    model = _model()
    message = (r"input 1: the id, a Unnamed, cannot be written as text \(str\(\) raised "
               r"RuntimeError\); give a str")
    with pytest.raises(InvalidInputError, match=message):
        async for _ in extract_many(model, [("a", "doc a"), (Unnamed(), "doc b")], Who):
            pass
    assert model.requests == []  # a collection's ids are checked before any request
    got = []
    with pytest.raises(InvalidInputError, match=message):
        async for result in extract_many(model, iter([("a", "doc a"), (Unnamed(), "doc b")]),
                                         Who):
            got.append(result.id)
    assert got == ["a"]
