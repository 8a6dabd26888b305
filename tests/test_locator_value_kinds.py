"""A located value of another quantity than every example's is never pinned
(``agentflow.grounding.value_kinds``, ``Locator.pins``): a count under the
label the examples write an amount under, a bare number where each example
writes its unit (the newcomer's probe: ``Total: 3 items``; ``Total:
2,400.00`` before VAT where the document pays ``Amount due: £2,880.00``).
The grammar still offers the value; it is scored as if the field had no rule."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import GROUNDED, HELD, field_confidence
from agentflow.grounding.locators import apply_locators, learn_locators
from agentflow.grounding.marker import mark_all_strings
from agentflow.grounding.value_kinds import (
    bare_number,
    decimal_number,
    quantity_kind,
    whole_numbers,
)
from agentflow.output.examples import check_examples
from agentflow.output.schema import OutputSpec


class Bill(BaseModel):
    number: str | None = None
    total: str | None = None


BILLS = [
    Example("Northwind Traders\nInvoice No: NW-10452\nSubtotal: 98.00\nVAT 20%: 19.60\n"
            "Total: £117.60\n", Bill(number="NW-10452", total="£117.60")),
    Example("Acme Hosting\nInvoice No: 2023-0871\nNet: 31.10\nTax 19%: 5.91\n"
            "Total: 37.01 EUR\n", Bill(number="2023-0871", total="37.01 EUR")),
]


class Parcel(BaseModel):
    tracking: str | None = None
    weight: str | None = None


PARCELS = [
    Example("Tracking: 1Z999AA1\nWeight: 2.5 kg\n", Parcel(tracking="1Z999AA1", weight="2.5 kg")),
    Example("Tracking: 9400-1000\nWeight: 12.75 lb\n",
            Parcel(tracking="9400-1000", weight="12.75 lb")),
]


def _scores(output: BaseModel, doc: str, examples: list[Example]) -> dict[str, float]:
    locators = learn_locators(check_examples(examples, type(output)), type(output))
    return field_confidence(output, doc, {}, locators)[0]


def test_the_quantity_kinds_read_off_a_value() -> None:
    for value in ("£117.60", "37.01 EUR", "2,400.00", "1.480,00", "1 480,00", "0,5", "3.5 kg"):
        assert decimal_number(value), value
    for value in ("3 items", "4.16.0", "14.02.2024", "2,400", "8:00", "NW-10452", "v1"):
        assert not decimal_number(value), value
    assert whole_numbers("3 items") and whole_numbers(">=2") and not whole_numbers(">=3.9.0")
    assert not whole_numbers("no digit") and not whole_numbers("£117.60")
    # a number inside a word is a version or a name, no quantity
    assert not decimal_number("MIT OR Apache-2.0") and not decimal_number("GPL-3.0-only")
    assert not decimal_number("v1.2") and not whole_numbers("BSD-3-Clause")
    assert quantity_kind(["MIT OR Apache-2.0", "GPL-3.0-only"]) == (False, False)
    assert bare_number("2,400.00") and bare_number(" -12.5 ") and bare_number("1 480,00")
    assert not bare_number("£2,400.00") and not bare_number("37.01 EUR") and not bare_number("x")
    assert quantity_kind(["£117.60", "37.01 EUR"]) == (True, True)
    assert quantity_kind(["117.60", "37.01 EUR"]) == (True, False)  # one bare: no unit learned
    assert quantity_kind(["4.16.0", "2.0"]) == (False, False)
    assert quantity_kind(["£117.60"]) == (False, False)  # one value is no evidence


def test_a_count_under_the_examples_amount_label_is_not_pinned() -> None:
    doc = ("Greenway Hardware\nInvoice No: GH-55102\nHammer   1   14.90\nTotal: 3 items\n"
           "Amount paid: £21.90\n")
    scores = _scores(Bill(number="GH-55102", total="3 items"), doc, BILLS)
    assert scores["number"] == HELD and scores["total"] == GROUNDED
    parcel = "Tracking: 1Z42\nWeight: 3 parcels\n"
    assert _scores(Parcel(tracking="1Z42", weight="3 parcels"), parcel, PARCELS)["weight"] == (
        GROUNDED)


def test_a_bare_number_where_every_example_writes_its_unit_is_not_pinned() -> None:
    doc = ("Hillside Joinery Ltd\nInvoice No: HJ-0412\nOak staircase   1   2,400.00\n"
           "Total: 2,400.00\nVAT 20%: 480.00\nAmount due: £2,880.00\n")
    assert _scores(Bill(number="HJ-0412", total="2,400.00"), doc, BILLS)["total"] == GROUNDED
    parcel = "Tracking: 1Z42\nWeight: 2.5\n"
    assert _scores(Parcel(tracking="1Z42", weight="2.5"), parcel, PARCELS)["weight"] == GROUNDED
    # the grammar still offers the located value (the model may still be right)
    locators = learn_locators(check_examples(BILLS, Bill), Bill)
    schema = mark_all_strings(OutputSpec.of(Bill).schema_for("local").schema)
    offered = apply_locators(schema, locators, doc)["properties"]["total"]
    assert offered.get("x-grounded-values") == ["2,400.00"]


def test_an_amount_of_the_examples_kind_is_still_pinned() -> None:
    for total in ("£1,480.00", "920.50 EUR", "€ 5.00"):
        doc = f"Blue Fin Cafe\nInvoice No: BF-1\nSubtotal: 1.00\nTotal: {total}\n"
        assert _scores(Bill(number="BF-1", total=total), doc, BILLS)["total"] == HELD, total
    doc = "Tracking: 1Z42\nWeight: 0.75 kg\n"
    assert _scores(Parcel(tracking="1Z42", weight="0.75 kg"), doc, PARCELS)["weight"] == HELD
    # a field whose examples write no decimal amount keeps its rule whatever number it reads
    assert _scores(Parcel(tracking="1Z42", weight="0.75 kg"), doc, PARCELS)["tracking"] == HELD


class Pkg(BaseModel):
    name: str | None = None
    python: str | None = None


def test_a_version_of_several_parts_is_no_count() -> None:
    pkgs = [Example("Name: a\nRequires-Python: >=3.8\n", Pkg(name="a", python=">=3.8")),
            Example("Name: b\nRequires-Python: >=3.9\n", Pkg(name="b", python=">=3.9"))]
    doc = "Name: c\nRequires-Python: >=3.10.1\n"
    assert _scores(Pkg(name="c", python=">=3.10.1"), doc, pkgs)["python"] == HELD
    one = [pkgs[0], Example("Name: b\n", Pkg(name="b"))]  # one value: no kind learned
    doc = "Name: c\nRequires-Python: >=3\n"
    assert _scores(Pkg(name="c", python=">=3"), doc, one)["python"] == HELD
