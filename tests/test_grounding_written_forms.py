"""Numbers and dates as documents write them, after a newcomer's trial
(recall notices, a Jira export): grouped thousands are never cut to a
prefix (``42,000`` grounds no 42, neither by verification nor by the
embedded model's grammar nor by confidence); a date written with a month's
name and separators (``08/Jan/24``, ``08-Jan-2024``, ``2024-Jan-08``) is
read; a document whose date cannot be read is refused before any request
with a message that says so and what to do; a number or a date gets the
span of the text it is read from (``17,562``, ``08/Jan/24``)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from pydantic import BaseModel

from agentflow import GroundingError
from agentflow.batch import extract_many
from agentflow.extraction.confidence import GROUNDED
from agentflow.extraction.report import render_report
from agentflow.grounding.marker import mark_all_strings
from agentflow.grounding.typed_values import found_in, written_at, written_dates
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat
from agentflow.output.grammar import NoGroundedValueError, substring_grammar
from agentflow.output.grammar_typed import TYPED_ADVICE
from agentflow.output.schema import OutputSpec
from agentflow.providers.local import LocalModel, bundled_available
from agentflow.testing import FunctionModel

SEP = {"key_separator": ": ", "item_separator": ", "}

RECALL = ("Recall Date: April 11, 2024\nName of Product: Cordless Hand Blenders\n"
          "Units: About 42,000\nLot Codes: 2309A, 2310A, 2311B\n")
JIRA = ("Key:               OPS-562\nSummary:           Nightly backup job times out\n"
        "Reporter:          Omar Haddad\nCreated:           08/Jan/24 11:02 PM\n\n"
        "The job is killed by the 3600 s watchdog.\n")


class Recall(BaseModel):
    product: str
    recall_date: dt.date
    units: int


class Bug(BaseModel):
    reporter: str
    reported_on: dt.date


# -- grouped thousands ------------------------------------------------------------

@pytest.mark.parametrize(("text", "written", "cut"), [
    (RECALL, 42000, 42),
    ("is recalling 8,400 packages", 8400, 8),
    ("Potential Number of Units Affected: 17,562", 17562, 17),
    ("Product Quantity: 2,150 cases\nlot GV2841, GV2842", 2150, 2),
])
def test_a_grouped_number_is_never_cut_to_a_prefix(text: str, written: int, cut: int) -> None:
    assert found_in(written, text) and not found_in(cut, text)
    schema = mark_all_strings(dict(OutputSpec.of(Recall).schema_for("local").schema))
    grammar = substring_grammar(schema, text + "\non 2024-04-11", SEP)
    assert grammar is not None
    [offered] = [line for line in grammar.splitlines() if f'"{written}"' in line]
    assert f'"{cut}"' not in offered.split(" | ")  # the units field's alternatives


async def test_a_cut_number_is_refused_and_the_written_one_kept() -> None:
    model = FunctionModel(lambda request: json.dumps({
        "product": "Cordless Hand Blenders", "recall_date": "2024-04-11",
        "units": 42 if len(request.messages) <= 2 else 42000}))
    [result] = [r async for r in extract_many(model, [("p1", RECALL)], Recall)]
    assert result.ok and result.attempts == 2, result.error
    assert result.output.units == 42000
    assert result.confidence["units"] == GROUNDED and "units" not in result.ungrounded


async def test_a_cut_number_is_never_rated_grounded() -> None:
    model = FunctionModel(lambda request: json.dumps({
        "product": "Cordless Hand Blenders", "recall_date": "2024-04-11", "units": 42}))
    [result] = [r async for r in extract_many(model, [("p1", RECALL)], Recall, ground=False)]
    assert result.ok
    assert "units" in result.needs_review and result.confidence["units"] < GROUNDED
    assert "units" in result.ungrounded


# -- dates with a month's name ------------------------------------------------------

@pytest.mark.parametrize(("text", "day"), [
    ("Created: 08/Jan/24 11:02 PM", dt.date(2024, 1, 8)),
    ("Created: 08-Jan-2024", dt.date(2024, 1, 8)),
    ("Created: 8-JAN-24", dt.date(2024, 1, 8)),
    ("Created: 2024-Jan-08", dt.date(2024, 1, 8)),
    ("Created: Jan-08-2024", dt.date(2024, 1, 8)),
    ("Created: Jan 8, 2024", dt.date(2024, 1, 8)),
    ("Created: 8 Jan 2024", dt.date(2024, 1, 8)),
    ("Created: 8th of January 2024", dt.date(2024, 1, 8)),
    ("Created: 31/Dec/99", dt.date(1999, 12, 31)),        # %y: 69-99 are the 1900s
    ("Created: 01/Feb/68", dt.date(2068, 2, 1)),
])
def test_a_date_with_a_months_name_and_separators_is_read(text: str, day: dt.date) -> None:
    assert written_dates(text) == [day]
    assert found_in(day, text)


@pytest.mark.parametrize("text", ["on 01/08/24", "ref 12-Foo-2024", "tag v08-Jan-2024",
                                  "le 8 janvier 2024"])
def test_what_is_no_date_stays_none(text: str) -> None:
    assert written_dates(text) == []


def test_a_two_digit_years_day_and_month_are_no_number() -> None:
    assert not found_in(8, JIRA) and found_in(24, JIRA)  # "24" is written; no 2024
    assert not found_in(2024, JIRA)


async def test_a_jira_export_is_read() -> None:
    model = FunctionModel(lambda request: json.dumps(
        {"reporter": "Omar Haddad", "reported_on": "2024-01-08"}))
    [result] = [r async for r in extract_many(model, [("b4", JIRA)], Bug)]
    assert result.ok and result.attempts == 1, result.error
    schema = mark_all_strings(dict(OutputSpec.of(Bug).schema_for("local").schema))
    grammar = substring_grammar(schema, JIRA, SEP)
    assert grammar is not None and '"\\"2024-01-08\\""' in grammar


# -- a date that cannot be read ------------------------------------------------------

UNREAD = JIRA.replace("08/Jan/24 11:02 PM", "le 8 janvier 2024")


def test_an_unread_date_says_it_could_not_be_read() -> None:
    schema = mark_all_strings(dict(OutputSpec.of(Bug).schema_for("local").schema))
    with pytest.raises(NoGroundedValueError) as raised:
        substring_grammar(schema, UNREAD, SEP)
    reason = raised.value.reasons["reported_on"]
    assert reason.startswith("no date the document writes could be read") and "08/Jan" not in (
        reason) and "05/Mar/24" in reason


def test_the_embedded_model_refuses_an_unread_date_saying_what_to_do() -> None:
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    schema = OutputSpec.of(Bug).schema_for("local").schema
    rf = ResponseFormat("json_schema", mark_all_strings(dict(schema)), source=UNREAD)
    with pytest.raises(GroundingError) as raised:
        LocalModel().build_body([Msg.user("x")], (), GenerateOptions(response_format=rf))
    message = str(raised.value)
    assert "reported_on: no date the document writes could be read" in message
    assert TYPED_ADVICE in message and "Derived()" in message and "`str`" in message
    assert "cut before" not in message
    assert "Derived()" in raised.value.detail


# -- spans of numbers and dates ------------------------------------------------------

async def test_a_number_and_a_date_get_the_span_of_the_text_they_are_read_from() -> None:
    model = FunctionModel(lambda request: json.dumps({
        "product": "Cordless Hand Blenders", "recall_date": "2024-04-11", "units": 42000}))
    [result] = [r async for r in extract_many(model, [("p1", RECALL)], Recall)]
    assert result.ok, result.error
    [(start, end)] = result.spans["units"]
    assert RECALL[start:end] == "42,000"
    [(start, end)] = result.spans["recall_date"]
    assert RECALL[start:end] == "April 11, 2024"
    assert written_at(dt.date(2024, 1, 8), JIRA) is not None
    assert written_at(42, RECALL) is None and written_at("42,000", RECALL) is None


class Report(BaseModel):
    revenue: int


@pytest.mark.parametrize("text", [
    "Revenue grew to 17,562 EUR (see table 3,4).",        # a pair like a decimal comma
    "Revenue grew to 17,562 EUR.\nContact: smith,john@x.org",  # letters joined by a comma
])
async def test_a_grouped_number_is_ok_first_time_and_placed_beside_a_pair_or_a_word_list(
        text: str) -> None:
    # ``3,4`` used to make the document comma-decimal: 17562 was refused, 17.562 placed
    model = FunctionModel(lambda request: json.dumps({"revenue": 17562}))
    [result] = [r async for r in extract_many(model, [("r1", text)], Report)]
    assert result.ok and result.attempts == 1, result.error
    [(start, end)] = result.spans["revenue"]
    assert text[start:end] == "17,562"
    assert not found_in(17, text) and not found_in(562, text)


def test_the_review_page_shows_a_dates_span_without_calling_it_different() -> None:
    start = JIRA.index("08/Jan/24")
    records = [{"id": "b4", "ok": True, "output": {"reporter": "Omar Haddad",
                                                   "reported_on": "2024-01-08"},
                "spans": {"reported_on": [[start, start + 9]]}}]
    html = render_report(records, {"b4": JIRA})
    assert 'data-field="reported_on"' in html and "text differs from value" not in html
    wrong = [{**records[0], "output": {"reporter": "x", "reported_on": "2024-01-09"}}]
    assert "text differs from value" in render_report(wrong, {"b4": JIRA})
