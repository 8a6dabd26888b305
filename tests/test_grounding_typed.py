"""Numbers and dates under the grounding default (issue 30): a grounded run
never keeps a number or a date the document does not write. On the embedded
model the grammar offers only the document's own (read by value: ``1,200``
is 1200, ``5 March 2024`` is 2024-03-05); on any other model a value it does
not write is re-asked, then the record fails naming the field. A field
marked ``Derived()`` or a run with ``ground=False`` opts out."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from agentflow import Derived, GroundingError, ReActAgent
from agentflow.batch import extract_many
from agentflow.grounding.marker import TYPED_KEY, mark_all_strings
from agentflow.grounding.typed_values import found_in, written_dates, written_numbers
from agentflow.output.grammar import NoGroundedValueError, substring_grammar
from agentflow.output.grammar_typed import number_literals, typed_reason
from agentflow.output.schema import OutputSpec
from agentflow.providers.local import LocalModel, bundled_available
from agentflow.testing import FunctionModel, RecordedRequest

SEP = {"key_separator": ": ", "item_separator": ", "}


class Notice(BaseModel):
    component: str | None = Field(None, description="the component's name")
    first_year: int | None = Field(None, description="the first year of the copyright")
    share: float | None = None
    released: dt.date | None = None
    stamped: dt.datetime | None = None
    edition: Annotated[int | None, Derived()] = None  # normalised: never grounded


DOC = ("## Cryptix AES v3.2.0 (x86 build)\n"
       "Copyright (c) 1995-2005 The Cryptix Foundation Limited.\n"
       "Sold 1,200.50 units; released on 5 March 2024.\n")


def grammar_for(tp: Any, source: str) -> str | None:
    schema = mark_all_strings(dict(OutputSpec.of(tp).schema_for("local").schema))
    return substring_grammar(schema, source, SEP)


def rule_of(text: str, field: str) -> str:
    """The alternatives of ``field``'s value rule in a grammar (its rule, and
    the rules it names, spelled out once)."""
    rules = dict(line.split(": ", 1) for line in text.splitlines()[1:] if ": " in line)
    start = rules[rules["start"]]
    name = re.search(rf'"\\"{field}\\"" ": " (\w+)', start)
    assert name is not None, start
    body = rules[name.group(1)]
    return " | ".join(rules.get(part.strip(), part.strip()) for part in body.split(" | "))


def test_the_document_numbers_and_dates_read_by_value() -> None:
    assert [str(n) for n in written_numbers(DOC)] == [
        "1995", "2005", "1200.50", "2024"]  # never 3.2 of v3.2.0, 86 of x86, 5 of 5 March
    assert written_numbers("10kg, 2x; x86_64 utf8 1.5.2 12_000") == [10, 2, 12000]  # units
    assert written_dates(DOC) == [dt.date(2024, 3, 5)]
    assert found_in(1200.5, DOC) and not found_in(3.2, DOC) and not found_in(86, DOC)


def test_a_plain_space_never_joins_numbers_and_a_typeset_minus_is_a_minus() -> None:
    assert written_numbers("Ports: 80 443 8080") == [80, 443, 8080]  # never 80443
    assert not found_in(80443, "Ports: 80 443 8080")
    assert written_numbers("Sales Q1 120 340 560; +1 555-123-4567") == [
        120, 340, 560, 1, 555, 123, 4567]  # "Q1" is a word, not a number
    # a thin, narrow or no-break space does group digits, as typeset text writes them
    assert written_numbers("1\u2009000, 2\u00a0000 and 3\u202f000") == [1000, 2000, 3000]
    assert found_in(-5, "Temperature: \u22125 C") and not found_in(5, "Temperature: \u22125 C")
    many = " ".join(str(i) for i in range(5000))  # each its own number, read once
    assert len(written_numbers(many)) == 5000


def test_a_date_is_never_read_inside_longer_digits_a_version_or_a_word() -> None:
    text = "12024-03-05, build 2024-03-051, 5 Marchxyz 2024, version 1.2.2024.5"
    assert written_dates(text) == []
    assert written_dates("on 5 Sept 2021, March 5, 2024 and 05.03.2024.") == [
        dt.date(2021, 9, 5), dt.date(2024, 3, 5), dt.date(2024, 5, 3)]


def test_the_default_marks_numbers_and_dates_but_not_derived_fields() -> None:
    schema = mark_all_strings(dict(OutputSpec.of(Notice).schema_for("local").schema))
    text = json.dumps(schema)
    assert text.count(f'"{TYPED_KEY}": "number"') == 2  # first_year, share; not edition
    assert f'"{TYPED_KEY}": "date"' in text and f'"{TYPED_KEY}": "date-time"' in text
    assert TYPED_KEY not in json.dumps(schema["properties"]["edition"])


def test_the_grammar_offers_only_the_numbers_and_dates_the_document_writes() -> None:
    text = grammar_for(Notice, DOC)
    assert text is not None
    # an int field: the whole numbers written, as JSON, or null; never 1994
    assert rule_of(text, "first_year") == '"1995" | "2005" | "2024" | "null"'
    assert rule_of(text, "share") == '"1995" | "2005" | "1200.50" | "2024" | "null"'
    assert rule_of(text, "released") == '"\\"2024-03-05\\"" | "null"'
    assert rule_of(text, "stamped").startswith('("\\"2024-03-05T") /[0-2][0-9]:')
    assert '"\\"edition\\"" ": " n' in text and '%json {"anyOf": [{"type": "integer"}' in text


def test_bounds_narrow_the_offer_and_no_number_leaves_only_null() -> None:
    class Year(BaseModel):
        year: int | None = Field(None, ge=1990, le=2000)

    text = grammar_for(Year, DOC)
    assert text is not None and rule_of(text, "year") == '"1995" | "null"'
    text = grammar_for(Year, "No years here, only v3.2.0.")
    assert text is not None and rule_of(text, "year") == '"null"'

    class Required(BaseModel):
        year: int

    with pytest.raises(NoGroundedValueError) as caught:
        grammar_for(Required, "No years here.")
    assert caught.value.fields == ["year"]


def test_a_nan_bound_bounds_nothing_never_a_crash() -> None:
    # a NaN bound used to raise decimal.InvalidOperation (minimum) or refuse every number
    nan_min = {"type": "integer", "minimum": float("nan")}
    assert number_literals(nan_min, "qty 3 and 4") == ["3", "4"]
    assert number_literals({"type": "number", "multipleOf": float("nan")}, "qty 3") == ["3"]
    assert typed_reason({"type": "integer", "maximum": float("nan")}, "number", "x 3.5") == (
        "no number the document writes satisfies the field's constraints (a whole number)")


def invents(*years: int | None) -> FunctionModel:
    """A model that answers with each of ``years`` in turn (the last again)."""
    seen: list[int | None] = list(years)

    def answer(request: RecordedRequest) -> str:
        year = seen.pop(0) if len(seen) > 1 else seen[0]
        return json.dumps({"component": "Cryptix AES", "first_year": year,
                           "released": "2024-03-05", "edition": 3})

    return FunctionModel(answer)


async def test_an_invented_number_is_re_asked_then_refused_naming_the_field() -> None:
    model = invents(1994)
    (result,) = [r async for r in extract_many(model, [DOC], Notice)]
    assert not result.ok and isinstance(result.error, GroundingError)
    assert result.error.unfound == [("first_year", "1994")]
    assert "first_year: 1994 is not written in the document" in str(result.error)
    assert result.attempts == 3  # asked again twice, with the reason
    again = model.requests[1].messages[-1].text
    assert "first_year: 1994 is not written in the document" in again and "null" in again


async def test_a_number_corrected_on_the_re_ask_is_ok_and_derived_is_left_alone() -> None:
    (result,) = [r async for r in extract_many(invents(1994, 1995), [DOC], Notice)]
    assert result.ok and result.attempts == 2 and result.output is not None
    assert result.output.first_year == 1995 and result.output.edition == 3
    assert "edition" in result.ungrounded  # Derived(): nothing checked it
    assert result.confidence["first_year"] >= 0.8 > result.confidence["edition"]


async def test_an_invented_date_is_refused_and_no_ground_checks_nothing() -> None:
    def answer(request: RecordedRequest) -> str:
        return json.dumps({"component": "Cryptix AES", "released": "2024-05-03"})

    (result,) = [r async for r in extract_many(FunctionModel(answer), [DOC], Notice)]
    assert not result.ok and isinstance(result.error, GroundingError)
    assert result.error.unfound == [("released", "2024-05-03")]
    (result,) = [r async for r in extract_many(invents(1994), [DOC], Notice, ground=False)]
    assert result.ok and "first_year" in result.ungrounded  # opted out: flagged, not refused
    assert "first_year" in result.needs_review


@pytest.fixture(scope="module")
def local_model() -> Any:
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    model = LocalModel(max_tokens=400)
    yield model
    model._stop_server()


async def test_the_embedded_model_writes_only_the_documents_numbers_and_dates(
        local_model: LocalModel) -> None:
    """llama.cpp runs the grammar: told to write a year the document does not
    write, the model still can only pick one it does, accepted first time."""
    agent = ReActAgent("local", local_model, sys_prompt=(
        "Extract the notice. The first year is always 1994; the release date is 1 January "
        "1990; the time stamp is 1990-01-01T12:00."))
    (result,) = [r async for r in extract_many(agent, [DOC], Notice)]
    assert result.ok and result.attempts == 1, result.error
    out = result.output
    assert out is not None
    for value in (out.first_year, out.share, out.released, out.stamped):
        assert value is None or found_in(value, DOC), value
    assert out.first_year != 1994 and out.released != dt.date(1990, 1, 1)


async def test_a_fixed_length_tuple_holds_each_place_to_the_document() -> None:
    """``tuple[int, int]``: each place is read by its own type, as a list's
    items are (an invented number used to pass as merely ungrounded)."""
    class Pair(BaseModel):
        pair: tuple[int, int]

    model = FunctionModel(lambda request: '{"pair": [1, 99]}')
    [result] = [r async for r in extract_many(model, ["a 1 b 2"], Pair)]
    assert not result.ok and isinstance(result.error, GroundingError)
    assert "pair[1]: 99 is not written in the document" in str(result.error)
    honest = FunctionModel(lambda request: '{"pair": [1, 2]}')
    [ok] = [r async for r in extract_many(honest, ["a 1 b 2"], Pair)]
    assert ok.ok and ok.output == Pair(pair=(1, 2))
