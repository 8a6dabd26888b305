"""Numbers written in other conventions (issue 30's follow-up): a number
field is grounded when it equals any reading the text allows
(``agentflow.grounding.number_readings``): European grouping and decimal
comma, exponents, a leading point, percentages, glued currency; never a
value the text does not write."""

from __future__ import annotations

import json
import re
import unicodedata
from decimal import Decimal

import pytest
from pydantic import BaseModel, Field

from agentflow import GroundingError
from agentflow.batch import extract_many
from agentflow.grounding.marker import mark_all_strings
from agentflow.grounding.number_readings import CURRENCY, ISO_4217
from agentflow.grounding.typed_values import found_in, written_at, written_numbers
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat
from agentflow.output.grammar import NoGroundedValueError, substring_grammar
from agentflow.output.schema import OutputSpec
from agentflow.providers.local import LocalModel, bundled_available
from agentflow.testing import FunctionModel

SEP = {"key_separator": ": ", "item_separator": ", "}


def read(text: str) -> list[str]:
    return [format(n, "f") for n in written_numbers(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("Total: 1.234,56 EUR", 1234.56),          # European grouping, decimal comma
    ("Preis 12,50 €", 12.5),
    ("Montant : 1\u00a0234,56", 1234.56),       # no-break space groups digits
    ("Montant : 1\u202f234,56", 1234.56),       # narrow no-break space
    ("Summe 1.234.567 Stück", 1234567),
    ("rate 1.5e3 Hz", 1500),                     # exponent
    ("tolerance 2E-4", Decimal("0.0002")),
    ("p = .5", 0.5),                             # a leading point
    ("p = -.25", -0.25),
    ("grew 12% this year", 12),                  # the number written...
    ("grew 12% this year", 0.12),                # ...and the fraction it stands for
    ("grew 12 percent", 0.12),
    ("5\u2030 of all", Decimal("0.005")),
    ("paid USD1,234 in full", 1234),             # an ISO 4217 code glued before
    ("only \u20ac12 left", 12),                  # a currency symbol
    ("cost $1,234.50", 1234.5),
    ("refund -$5", -5),
    ("Rs 12,34,567", 1234567),                   # Indian grouping
    ("1,234 units", 1234),                       # a comma and three digits: grouping
    ("1.234 units", Decimal("1.234")),           # a point and three digits: both
    ("1.234 units", 1234),
    ("3,5 kg and 42,000 units", 42),             # a decimal comma: its reading too
    ("3,5 kg and 42,000 units", 42000),          # ...and the grouped one kept
    ("1.234,56 and 1.500 units", 1500),
    ("3,4,5 and 17,562", 17),                    # lists written without a space
    ("Revenue grew to 17,562 EUR (see table 3,4).", 17562),  # a pair, not a decimal mark
    ("Revenue grew to 17,562 EUR (see table 3,4).", Decimal("17.562")),
    ("pages 5,6; 1,234 units", 1234),
    ("paid USD1,234 (see table 3,4)", 1234),
    ("Preis 12,50 €, 17,562 Stück", Decimal("17.562")),     # a decimal comma for sure
    ("Preis EUR 3,50, 42,000 Stück", 42),
    ("Maße 3,5 cm, 1.500 Stück", 1500),
])
def test_a_number_written_in_another_convention_is_found(text: str, value: object) -> None:
    assert found_in(value, text), (text, value)


@pytest.mark.parametrize(("text", "value"), [
    ("Ports: 80 443 8080", 80443),               # a plain space never joins digit groups
    ("Total: 1 234,56", 1234.56),
    ("rate 1.5e3 Hz", 1.5),                      # an exponent's mantissa is not the number
    ("tolerance 2E-4", 2),
    ("an x86 build", 86),                        # never out of a word...
    ("hash SHA256", 256),                        # ...nor after letters that are no currency
    ("ABC123", 123),
    ("version 1.5.2", 1.5),                      # a dotted version
    ("host 192.168.1.1", 192.168),
    ("on 05.03.2024", 5.03),
    ("grew 12% this year", 1.2),                 # never another scale
    ("grew 12% this year", 1200),
    ("1.234,56", 123456),
    ("12,50", 1250),
    ("1,234 units", Decimal("1.234")),           # no decimal comma shown: grouping
    ("Units: About 42,000", 42),                 # a prefix never stands for the number
    ("Units affected: 17,562", 17),
    ("Units affected: 17,562", 562),
    ("2,150 cases; lots GV2841, GV2842", 2),     # a list written with a space
    ("sizes 12,50", 12),                         # a decimal comma, not a list
    ("Rs 12,34,567", 12),                        # no part of a comma-joined run alone
    ("a 1,234,56 b", 1234),
    ("1.234,56 and 1.500 units", Decimal("1.5")),  # comma decimal: a point groups
    ("1.234,56", Decimal("1.234")),
    ("Revenue grew to 17,562 EUR (see table 3,4).", 17),  # a pair never cuts a number
    ("(3,4) and 42,000 units", 4),
    ("Preis 12,50 €, 17,562 Stück", 17562),     # a comma-decimal document for sure
    ("Preis 3,50 EUR, 17,562 Stück", 17562),
    ("Preis 1.234,56, 17,562 Stück", 17562),
    ("Maße 3,5 cm, 1.500 Stück", Decimal("1.5")),  # no number grouped by commas
    ("huge 1e999", 1),                           # an exponent too large is no number
])
def test_what_the_text_does_not_write_is_never_found(text: str, value: object) -> None:
    assert not found_in(value, text), (text, value)


@pytest.mark.parametrize(("text", "value"), [
    ("Revenue grew to 17,562 EUR (see table 3,4).", 17562),
    ("Units (pages 5,6): 42,000", 42000),
    ("Umsatz 17,562 EUR (Tabelle 3,4)", Decimal("17.562")),
])
def test_a_pair_like_a_decimal_comma_keeps_the_grouped_reading(text: str, value: object) -> None:
    """Issue: one ``3,4`` made the whole document comma-decimal, so the number
    written (17562) was refused and its comma reading (17.562) placed."""
    written = re.search(r"\d+,\d{3}", text)
    assert written is not None
    assert found_in(value, text) and written_at(value, text) == written.span(), value


@pytest.mark.parametrize("value", [Decimal("sNaN"), Decimal("-sNaN"), Decimal("NaN"),
                                   float("nan"), float("inf"), Decimal("-Infinity")])
def test_a_nan_or_an_infinity_is_never_found_nor_placed(value: object) -> None:
    # a signalling NaN cannot be hashed: it used to raise TypeError
    assert not found_in(value, "NaN sNaN inf Infinity 3")
    assert written_at(value, "NaN sNaN inf Infinity 3") is None


def test_readings_in_document_order_each_once() -> None:
    # each convention's reading at its place; 1234.56 once, where it is first written
    assert read("1.234,56 and 1,234.56") == ["1234.56"]  # no prefix of either alone
    assert read("a 1,234.56 b 1.234,56") == ["1234.56"]
    assert read("3,4,5") == ["3", "4", "5"]
    assert read("12%, 12 %") == ["12", "0.12"]


def test_every_currency_symbol_of_the_bmp_is_read_past() -> None:
    pattern = re.compile(f"[{CURRENCY}]")
    symbols = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) == "Sc"]
    assert symbols and all(pattern.fullmatch(s) for s in symbols)
    assert all(unicodedata.category(chr(c)) == "Sc" for c in range(0x10000)
               if pattern.fullmatch(chr(c)))
    assert all(found_in(7, f"{s}7") for s in symbols)
    assert {"USD", "EUR", "JPY", "CHF", "INR"} <= ISO_4217 and "XXX" not in ISO_4217


def test_the_grammar_offers_each_reading() -> None:
    class Invoice(BaseModel):
        total: float
        rate: float

    schema = mark_all_strings(dict(OutputSpec.of(Invoice).schema_for("local").schema))
    text = substring_grammar(schema, "Gesamt: 1.234,56 EUR, Zins 3%", SEP)
    assert text is not None
    for spelled in ('"1234.56"', '"0.03"', '"3"'):
        assert spelled in text, spelled
    assert '"123456"' not in text and '"1.234"' not in text  # a prefix of 1.234,56


class Year(BaseModel):
    year: int = Field(ge=1990, le=2000)
    share: float = Field(gt=0, lt=10, multiple_of=0.5)


def test_no_fitting_number_names_the_fields_constraints_not_a_pattern() -> None:
    schema = mark_all_strings(dict(OutputSpec.of(Year).schema_for("local").schema))
    with pytest.raises(NoGroundedValueError) as raised:
        substring_grammar(schema, "In 2024 it cost 12.25 (v3.2).", SEP)
    assert raised.value.fields == ["year", "share"]
    assert raised.value.reasons == {
        "year": "no number the document writes satisfies the field's constraints "
                "(a whole number, minimum 1990, maximum 2000)",
        "share": "no number the document writes satisfies the field's constraints "
                 "(more than 0, less than 10, a multiple of 0.5)"}
    assert "pattern" not in str(raised.value)
    with pytest.raises(NoGroundedValueError) as raised:
        substring_grammar(schema, "No figures at all.", SEP)
    assert raised.value.reasons["year"].startswith("no number the document writes could be read")


def test_the_embedded_model_refuses_before_decoding_saying_why() -> None:
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    schema = OutputSpec.of(Year).schema_for("local").schema
    rf = ResponseFormat("json_schema", mark_all_strings(dict(schema)),
                        source="In 2024 it cost 12.5.")
    with pytest.raises(GroundingError) as raised:
        LocalModel().build_body([Msg.user("x")], (), GenerateOptions(response_format=rf))
    message = str(raised.value)
    assert "year: no number the document writes satisfies the field's constraints" in message
    assert "minimum 1990, maximum 2000" in message
    assert "pattern" not in message and "cut" not in message
    assert raised.value.unfound == [("year", ""), ("share", "")]
    assert "- year: no number the document writes" in raised.value.detail


class Invoice(BaseModel):
    total: Decimal = Field(ge=0, le=5000)
    tax: Decimal | None = None


def test_a_decimal_is_constrained_like_a_number_never_copied_text() -> None:
    """pydantic writes a Decimal as ``anyOf [number, string]``; the string
    branch (exact digits) is offered the document's numbers as JSON strings,
    within the number branch's bounds, never the document's text."""
    spec = OutputSpec.of(Invoice)
    for dialect in ("plain", "openai_strict", "gemini"):  # a mark no vendor sees
        assert "x-grounded-decimal" not in json.dumps(spec.schema_for(dialect).schema)
    schema = mark_all_strings(dict(spec.schema_for("local").schema))
    text = substring_grammar(schema, "Total 1.234,50 EUR, ref 99999, tax 12%", SEP)
    assert text is not None and "GROUNDED" not in text and "SOURCE" not in text
    rules = dict(line.split(": ", 1) for line in text.splitlines()[1:])
    offered = " | ".join(rules.values())
    for spelled in ('"1234.50"', '"\\"1234.50\\""', '"0.12"', '"\\"0.12\\""'):
        assert spelled in offered, spelled
    total = rules[re.search(r'"\\"total\\"" ": " (\w+)', rules[rules["start"]]).group(1)]
    spelled_total = " | ".join(rules.get(p.strip(), p) for p in total.split(" | "))
    assert "99999" not in spelled_total  # above the maximum, as a number or a string


async def test_a_decimal_from_the_document_is_ok_first_time() -> None:
    model = FunctionModel(lambda request: '{"total": "1234.50", "tax": "0.12"}')
    [result] = [r async for r in extract_many(model, ["Total 1.234,50 EUR, tax 12%"], Invoice)]
    assert result.ok and result.attempts == 1, result.error
    assert result.output == Invoice(total=Decimal("1234.50"), tax=Decimal("0.12"))
