"""extract_many's inputs are texts: a text that is not a ``str`` (``None``,
bytes, a dict) is a typed error naming the input and the type, never turned
into the document ``"None"`` or ``"b'...'"`` with ``str()``; so is an id whose
``str()`` is no name (``None``, bytes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
import pytest
from pydantic import BaseModel

from agentflow.batch import ExtractInput, ExtractResult, extract_many
from agentflow.errors import InvalidInputError
from agentflow.ray import ExtractionSpec
from agentflow.ray._extract import _Extractor
from agentflow.testing import FunctionModel, RecordedRequest, Reply


class Person(BaseModel):
    name: str | None = None


def first_word(request: RecordedRequest) -> Reply:
    return Reply(text=json.dumps({"name": request.messages[-1].text.split()[0]}))


@pytest.mark.parametrize(("text", "said"), [
    (None, r"input 'x': the text is a NoneType \(None\), not a str; give the document's text"),
    (b"Ann Lee", r"input 'x': the text is a bytes \(b'Ann Lee'\), not a str; decode it first"),
    (bytearray(b"Ann"), r"input 'x': the text is a bytearray .*decode it first"),
    ({"text": "Ann Lee"}, r"input 'x': the text is a dict \(\{'text': 'Ann Lee'\}\)"),
    (7, r"input 'x': the text is a int \(7\)"),
])
async def test_a_text_that_is_not_a_str_is_refused_before_any_request(
        text: Any, said: str) -> None:
    model = FunctionModel(first_word)
    with pytest.raises(InvalidInputError, match=said) as caught:  # a collection: checked first
        async for _ in extract_many(model, [("a", "Ann Lee"), ("x", text)], Person):
            pass
    assert isinstance(caught.value, TypeError)
    assert model.requests == []


async def test_a_lazy_iterable_is_refused_when_the_bad_input_is_reached() -> None:
    def inputs() -> Iterator[tuple[str, Any]]:
        yield ("a", "Ann Lee")
        yield ("b", None)
        yield ("c", "Cy Young")

    got: list[ExtractResult] = []
    with pytest.raises(InvalidInputError, match="input 'b': the text is a NoneType"):
        async for result in extract_many(FunctionModel(first_word), inputs(), Person):
            got.append(result)
    assert [(r.id, r.output) for r in got] == [("a", Person(name="Ann"))]  # c never sent


@pytest.mark.parametrize(("raw_id", "said"), [
    (None, r"input 1: the id is None, a NoneType"),
    (b"x", r"input 1: the id is b'x', a bytes"),
])
async def test_an_id_whose_str_is_no_name_is_refused(raw_id: Any, said: str) -> None:
    model = FunctionModel(first_word)
    with pytest.raises(InvalidInputError, match=said):
        async for _ in extract_many(model, [("a", "Ann"), (raw_id, "Bob")], Person):
            pass
    assert model.requests == []


async def test_an_id_that_names_the_document_is_still_taken() -> None:
    results = [r async for r in extract_many(FunctionModel(first_word),
                                             [(5, "Ann Lee"), ("b", "Bob Ray")], Person)]
    assert [(r.id, r.ok) for r in results] == [("5", True), ("b", True)]


def test_extract_input_refuses_a_text_or_an_id_that_is_not_a_str() -> None:
    with pytest.raises(InvalidInputError, match=r"input 'a': the text is a bytes"):
        ExtractInput("a", b"Ann")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"ExtractInput id is a int \(3\)"):
        ExtractInput(3, "Ann")  # type: ignore[arg-type]
    assert ExtractInput("a", "", ()).text == ""  # media-only inputs keep an empty text


def test_a_ray_row_whose_text_is_null_gets_a_typed_record_and_the_others_run() -> None:
    spec = ExtractionSpec(Person, lambda: FunctionModel(first_word), concurrency=2, actors=1)
    extractor = _Extractor(spec)
    try:
        out = extractor({"id": np.array(["a", "b", "c"], dtype=object),
                         "text": np.array(["Ann Lee", None, b"Bob"], dtype=object)})
    finally:
        extractor.loop.close()
    records = {r["id"]: r for r in map(orjson.loads, out["record"])}
    assert records["a"]["ok"] and records["a"]["output"] == {"name": "Ann"}
    for rid, kind in [("b", "NoneType"), ("c", "bytes")]:
        assert not records[rid]["ok"]
        assert records[rid]["error"]["type"] == "InvalidInputError"
        assert f"input {rid!r}: the text is a {kind}" in records[rid]["error"]["message"]
