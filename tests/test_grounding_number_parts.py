"""What a number field may be grounded on, after an attack on the readings
(``agentflow.grounding.number_readings``, ``date_readings``): a comma list
of three-digit numbers keeps its items as well as the grouped number (the
embedded model's grammar offers both); a date's day and month and a time
of day are no number (a date's year is); no number is read out of a
hexadecimal token or a word such as ``TOP10``; a version is no date; a run
of thousands of digits is skipped, never a crash."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from pydantic import BaseModel

from agentflow import GroundingError
from agentflow.batch import extract_many
from agentflow.grounding.typed_values import found_in, written_dates, written_numbers
from agentflow.output.grammar_typed import number_literals, typed_reason
from agentflow.testing import FunctionModel

INT = {"type": "integer"}


class Order(BaseModel):
    quantity: int
    unit_price: float
    total: Decimal
    shipped: dt.date


def answering(answer: dict[str, object]) -> FunctionModel:
    """A model that always answers ``answer`` (as JSON)."""
    return FunctionModel(lambda request: json.dumps(answer))


# -- comma lists ---------------------------------------------------------------

@pytest.mark.parametrize("text", ["Sizes: 100,250,500 ml; 3,4,5", "qty,price,total\n100,250,500"])
def test_a_comma_list_of_three_digit_numbers_keeps_each_item(text: str) -> None:
    # the document writes lists without a space (3,4,5; a CSV header)
    assert written_numbers(text)[:4] == [100250500, 100, 250, 500]  # grouped, then each item
    offered = number_literals(INT, text)
    assert offered is not None and {"100250500", "100", "250", "500"} <= set(offered)


@pytest.mark.parametrize("text", [
    "Units: About 42,000\nLot Codes: 2309A, 2310A",       # lists with a space: no list here
    "recalling 8,400 packages of 6 oz slices",
    "Potential Number of Units Affected: 17,562",
    "Product Quantity: 2,150 cases\nlot GV2841, GV2842",
])
def test_grouped_thousands_offer_no_prefix(text: str) -> None:
    [written] = [n for n in written_numbers(text) if n >= 1000 and n != 2309 and n != 2310]
    assert number_literals(INT, text) == [str(n) for n in written_numbers(text)]
    for prefix in (written // 1000, written % 1000):
        assert not found_in(prefix, text), prefix
        assert str(prefix) not in (number_literals(INT, text) or [])


@pytest.mark.parametrize("text", [
    "Total: 42,000 units\nContact: smith,john@x.org",   # an e-mail address
    "Total: 42,000 units, contact smith,john@x.org",    # ...on the number's own line
    "Author: Smith,J\nUnits: 42,000",
    "Sizes M,L,XL at 42,000 units",
    "id,qty\nUnits: 42,000",                             # a header, but no row of 2 cells
    "qty,price,total\n42,000",                           # a row of 2 cells under 3 names
    "42,000\nqty,price",                                 # a row above the header
    "Lots GV2841,GV2842 qty 42,000",                    # a word list beside, not joined
])
def test_letters_joined_by_commas_elsewhere_make_no_list(text: str) -> None:
    # one ``x,y`` anywhere used to make every comma-joined run a list: 42 for 42,000
    assert found_in(42000, text) and not found_in(42, text) and not found_in(0, text)
    assert "42" not in (number_literals(INT, text) or [])


@pytest.mark.parametrize(("text", "items"), [
    ("Lots GV2841,100,250", [100, 250]),                # joined to a cell with a letter
    ("A17,3,4", [3, 4]),
    ("100,250,EUR", [100, 250]),
    ("id,qty,price\n100,250,500\n300,400,500", [100, 250, 300, 400]),
    ("id,qty\n\n5,000", [5, 0]),                        # a row of 2 cells under 2 names
    ('"qty","price"\n100,250', [100, 250]),
    ("date,qty,price\n2024-03-05,100,200", [100, 200]),
])
def test_a_list_joined_to_a_word_or_in_a_csv_row_keeps_each_item(
        text: str, items: list[int]) -> None:
    assert all(found_in(item, text) for item in items), text


@pytest.mark.parametrize(("text", "value"), [
    ("cost $1,234 in all", 1),                  # a currency before: an amount, no list
    ("paid USD1,234 in full", 234),
    ("Sold 1,200.50 units", 1),                 # a decimal part: an amount, no list
    ("Sold 1,200.50 units", Decimal("200.50")),
])
def test_an_amount_is_no_list(text: str, value: object) -> None:
    assert not found_in(value, text), (text, value)


async def test_the_cells_of_a_csv_row_are_ok() -> None:
    model = answering({"quantity": 100, "unit_price": 200, "total": "300",
                       "shipped": "2024-03-05"})
    text = "qty,price,total\n100,200,300\nshipped 2024-03-05"
    [result] = [r async for r in extract_many(model, [("doc", text)], Order)]
    assert result.ok and result.attempts == 1, result.error


# -- dates and times -------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("Delivered on 2024-03-05.", 3), ("Delivered on 2024-03-05.", 5),
    ("Delivered on 03/05/2024.", 5), ("Delivered on 03/05/2024.", 3),
    ("Delivered on 05.03.2024.", 5), ("Delivered on 05-03-2024.", 3),
    ("Delivered on 5 March 2024.", 5), ("Delivered March 5, 2024.", 5),
    ("Meeting at 10:45.", 10), ("Meeting at 10:45.", 45),
    ("at 2024-03-05T10:45:30+01:00", 30), ("at 2024-03-05T10:45:30+01:00", 1),
])
def test_a_date_or_time_part_is_no_number(text: str, value: int) -> None:
    assert not found_in(value, text), (text, value)


def test_a_dates_year_is_a_number_and_ranges_still_read() -> None:
    for text in ("2024-03-05", "03/05/2024", "05.03.2024", "05-03-2024", "5 March 2024"):
        assert written_numbers(f"on {text}.") == [2024], text
    assert written_dates("on 05-03-2024") == [dt.date(2024, 3, 5), dt.date(2024, 5, 3)]
    assert written_numbers("Copyright 1995-2005, 3 boxes at 12:5") == [1995, 2005, 3, 12, 5]
    assert number_literals(INT, "Shipped 2024-03-05, 3 boxes") == ["2024", "3"]


async def test_an_order_invented_from_its_date_is_refused() -> None:
    model = answering({"quantity": 3, "unit_price": 5, "total": "42.00", "shipped": "2024-03-05"})
    text = "Order shipped 2024-03-05. Total 42.00 EUR."
    [result] = [r async for r in extract_many(model, [("doc", text)], Order)]
    assert not result.ok and isinstance(result.error, GroundingError)
    assert [path for path, _ in result.error.unfound] == ["quantity", "unit_price"]


# -- words, hexadecimal tokens, versions ----------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("Brand colour #1e3 on white.", 1000), ("Brand colour #1e3 on white.", 1),
    ("colour #12ab", 12),
    ("Our TOP10 picks", 10), ("Drawn in CAD3 software", 3), ("USD100", 100),
])
def test_no_number_inside_a_hex_token_or_a_word(text: str, value: int) -> None:
    assert not found_in(value, text), (text, value)


@pytest.mark.parametrize(("text", "value"), [
    ("issue #12", 12), ("paid USD1,234 in full", 1234), ("EUR12.50 due", 12.5),
    ("USD 100 due", 100), ("CAD 3", 3),
])
def test_a_currency_code_before_an_amount_is_read_past(text: str, value: object) -> None:
    assert found_in(value, text), (text, value)


def test_a_version_is_no_date() -> None:
    assert written_dates("release v1.2.2024") == []
    assert not found_in(dt.date(2024, 2, 1), "release v1.2.2024")


# -- very long digit runs -------------------------------------------------------------

def test_a_run_of_thousands_of_digits_is_skipped_never_a_crash() -> None:
    text = "Serial " + "7" * 4301 + " qty 3"
    assert number_literals(INT, text) == ["3"]
    assert number_literals({"type": "number"}, text) == ["3"]
    assert not found_in(10 ** 5000 - 1, "9" * 5000)
    assert found_in(10 ** 100, "1e100") and not found_in(10 ** 101, "1" + "0" * 101)
    reason = typed_reason({"type": "integer", "minimum": 10 ** 4400}, "number", "qty 3")
    assert reason.endswith("(a whole number, minimum 1.000e+4400)")
