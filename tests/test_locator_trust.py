"""Learned locators earn confidence only where they are evidence: a null the
locator agrees with in a document of another layout is no sure null, and the
grammar then keeps the field reachable; a rule read after punctuation alone,
or a located value of another kind than the examples', is never ``HELD``
(the newcomer's probes: a location the examples label ``Location:`` written
as ``Based in Boston MA``; ``, `` to the line's end as a start time)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import (
    ABSENT,
    DISAGREES,
    GROUNDED,
    HELD,
    REVIEW_BELOW,
    UNLOCATED_NULL,
    field_confidence,
)
from agentflow.grounding.locator_absence import absence_confirmed, absence_shown, shares_layout
from agentflow.grounding.locators import apply_locators, learn_locators
from agentflow.grounding.marker import mark_all_strings
from agentflow.output.examples import check_examples
from agentflow.output.schema import OutputSpec
from tests.locator_support import run_one


class Job(BaseModel):
    title: str
    location: str | None = None
    skills: list[str] = []


JOBS = [
    Example("Title: Museum Curator\nLocation: Glasgow\nSkills: research, exhibitions\n",
            Job(title="Museum Curator", location="Glasgow", skills=["research", "exhibitions"])),
    Example("Title: QA Engineer\nLocation: Remote\nSkills: Selenium, Python\n",
            Job(title="QA Engineer", location="Remote", skills=["Selenium", "Python"])),
]
PROSE = "Title: Data Analyst\nBased in Boston MA. Must know SQL, Excel and Tableau.\n"


def test_a_null_in_a_document_of_another_layout_is_no_sure_null() -> None:
    locators = learn_locators(check_examples(JOBS, Job), Job)
    assert {"title", "location", "skills"} <= set(locators)
    assert not shares_layout(locators["location"], PROSE)  # only Title: of their keys
    null = Job(title="Data Analyst")
    confidence, _ = field_confidence(null, PROSE, {}, locators)
    assert confidence["title"] == HELD
    assert confidence["location"] == UNLOCATED_NULL and confidence["skills"] == UNLOCATED_NULL
    # the right values: the locator says nothing here, grounding scores them (not 0.2)
    right = run_one({"title": "Data Analyst", "location": "Boston MA",
                  "skills": ["SQL", "Excel", "Tableau"]}, PROSE, Job, JOBS)
    assert right.ok and right.confidence["location"] == GROUNDED
    assert right.confidence["skills"] == GROUNDED
    wrong = run_one({"title": "Data Analyst", "location": None, "skills": []}, PROSE, Job, JOBS)
    assert wrong.ok and {"location", "skills"} <= set(wrong.needs_review)


def test_a_null_is_sure_where_the_document_shows_the_field_empty() -> None:
    locators = learn_locators(check_examples(JOBS, Job), Job)
    null = Job(title="Data Analyst")
    # the label written with nothing after it
    confidence, _ = field_confidence(null, "Title: Data Analyst\nLocation:\nSkills: \n", {},
                                     locators)
    assert confidence["location"] == ABSENT and confidence["skills"] == ABSENT
    # the examples' layout (their other keys) without the field's label: no example shows
    # the field absent, so that is no sure null (the value may be there unlabelled)
    confidence, _ = field_confidence(Job(title="X", skills=["Go"]),
                                     "Title: X\nSkills: Go\n", {}, locators)
    assert confidence["location"] == UNLOCATED_NULL
    # a value where the located field shows empty: the locator disagrees
    confidence, _ = field_confidence(Job(title="X", location="Paris"),
                                     "Title: X\nLocation:\nSkills:\nIn Paris.\n", {}, locators)
    assert confidence["location"] == DISAGREES


def test_the_grammar_forces_null_only_where_the_document_shows_the_field_empty() -> None:
    locators = learn_locators(check_examples(JOBS, Job), Job)
    schema = mark_all_strings(OutputSpec.of(Job).schema_for("local").schema, None)
    prose = apply_locators(schema, locators, PROSE)
    # another layout: location and skills keep their ordinary grounding (reachable)
    assert prose["properties"]["location"] == schema["properties"]["location"]
    assert prose["properties"]["skills"] == schema["properties"]["skills"]
    assert prose["properties"]["title"]["x-grounded-values"] == ["Data Analyst"]
    empty = apply_locators(schema, locators, "Title: X\nLocation:\nSkills:\n")
    assert all(b.get("type") == "null" for b in empty["properties"]["location"]["anyOf"])
    assert absence_shown(locators["location"], "Title: X\nLocation:\n")


class Event(BaseModel):
    name: str
    start_time: str | None = None


EVENTS = [
    Example("Summer Folk Night\nFriday 12 July 2024, 8:00 pm\nThe Old Mill, Bath\n",
            Event(name="Summer Folk Night", start_time="8:00 pm")),
    Example("Repair Cafe\nSaturday 3 February 2024, 10:00\nSt John's Hall, York\n",
            Event(name="Repair Cafe", start_time="10:00")),
]
RUN = ("ANNUAL CHARITY FUN RUN\nSunday 13 October 2024\n"
       "Start 9:00 at Victoria Park, Leamington Spa\n")


def test_punctuation_the_examples_write_elsewhere_is_no_rule() -> None:
    # ", " to the line's end: the examples write ", " on other lines too (The Old Mill, Bath)
    assert "start_time" not in learn_locators(check_examples(EVENTS, Event), Event)
    for value in ("Leamington Spa", "9:00"):
        result = run_one({"name": "ANNUAL CHARITY FUN RUN", "start_time": value}, RUN, Event,
                      EVENTS)
        assert result.ok and result.confidence["start_time"] < REVIEW_BELOW
        assert result.confidence["start_time"] != DISAGREES


class Invoice(BaseModel):
    vendor: str
    currency: str | None = None


INVOICES = [
    Example("Harbour Fish\nTOTAL DUE GBP 14.20\n", Invoice(vendor="Harbour Fish", currency="GBP")),
    Example("Sunrise Bakery\nTOTAL DUE EUR 11.40\n",
            Invoice(vendor="Sunrise Bakery", currency="EUR")),
]


def test_a_located_value_of_another_kind_than_the_examples_is_not_held() -> None:
    rule = learn_locators(check_examples(INVOICES, Invoice), Invoice)["currency"]
    assert rule.letter and not rule.digit  # GBP, EUR: letters, no digits
    doc = "Cafe Nord\nTOTAL DUE 19.80 EUR\n"
    assert rule.values(doc) == []  # "19.80" is no currency code
    assert doc[20:25] == "19.80" and doc[26:29] == "EUR"
    wrong, _ = field_confidence(Invoice(vendor="Cafe Nord", currency="19.80"), doc,
                                {"currency": [(20, 25)]}, {"currency": rule})
    assert wrong["currency"] < REVIEW_BELOW
    right, _ = field_confidence(Invoice(vendor="Cafe Nord", currency="EUR"), doc,
                                {"currency": [(26, 29)]}, {"currency": rule})
    assert right["currency"] == GROUNDED


class Bill(BaseModel):
    vendor: str
    items: list[str] = []


BILLS = [
    Example("Harbour Fish\nDate: 2 May 2024\nDue: 1 June 2024\n\n- Cod and chips\n- Mushy peas\n",
            Bill(vendor="Harbour Fish", items=["Cod and chips", "Mushy peas"])),
    Example("Sunrise Bakery\nDate: 9 March 2024\nDue: 1 April 2024\n\n- Sourdough loaf\n",
            Bill(vendor="Sunrise Bakery", items=["Sourdough loaf"])),
]
TABLE = ("ACME Office Supplies\nDate: 14 March 2024\nDue: 13 April 2024\n\n"
         "  Printer paper A4      45.00\n  Stapler, heavy duty   18.50\n")


def test_an_unlabelled_rule_finding_nothing_is_no_sure_empty_list() -> None:
    # "- " items: the document shares the examples' keys (Date:, Due:) but writes its
    # items as a table; no example shows an empty list, so nothing shows it is empty
    rule = learn_locators(check_examples(BILLS, Bill), Bill)["items"]
    assert not rule.labelled and not rule.shown_empty and shares_layout(rule, TABLE)
    assert not absence_shown(rule, TABLE)
    confidence, _ = field_confidence(Bill(vendor="ACME Office Supplies"), TABLE, {},
                                     {"items": rule})
    assert confidence["items"] == UNLOCATED_NULL


def test_the_run_says_why_a_loose_rule_was_not_learned() -> None:
    from agentflow.grounding.locator_report import learned_lines

    checked = check_examples(EVENTS, Event)
    lines = learned_lines(learn_locators(checked, Event), checked, Event)
    assert "no rule: start_time (only ', ' before it, which the examples write elsewhere too)" in (
        lines)


class Locale(BaseModel):
    title: str
    source: str | None = None


LOCALES = [  # the title is each example's first quoted string: by chance, not by place
    Example('title      "German locale for Germany"\nsource     "Free Software Foundation"\n'
            'address    "Berlin"\n',
            Locale(title="German locale for Germany", source="Free Software Foundation")),
    Example('title "Walloon locale for Belgium"\nsource "RedHat"\naddress "Liege"\n',
            Locale(title="Walloon locale for Belgium", source="RedHat")),
]
COMMENTED = ('% charset "UTF-8" is assumed\ntitle "Czech locale for the Czech Republic"\n'
             'source "RAP"\n')


def test_a_rule_between_punctuation_the_examples_write_elsewhere_is_no_rule() -> None:
    # ' "' up to '"' finds every quoted string: the first one is the title in both
    # examples only by chance; the line's own key places it instead
    rule = learn_locators(check_examples(LOCALES, Locale), Locale)["title"]
    assert rule.values(COMMENTED) == ["Czech locale for the Czech Republic"]
    wrong = run_one({"title": "UTF-8", "source": "RAP"}, COMMENTED, Locale, LOCALES)
    assert wrong.ok and wrong.confidence["title"] < REVIEW_BELOW
    right = run_one({"title": "Czech locale for the Czech Republic", "source": "RAP"},
                 COMMENTED, Locale, LOCALES)
    assert right.ok and right.confidence["title"] == HELD


def test_a_required_value_the_examples_label_is_not_refuted_by_the_layout() -> None:
    # the title has no "Title:" label here, though the document shares the examples'
    # layout (Location:, Skills:): a field that cannot be null is not shown empty by it
    doc = "Senior Backend Engineer\nLocation: Berlin\nSkills: Go, SQL\n"
    locators = learn_locators(check_examples(JOBS, Job), Job)
    confidence, _ = field_confidence(
        Job(title="Senior Backend Engineer", location="Berlin", skills=["Go", "SQL"]), doc,
        {"title": [(0, 23)]}, locators)
    assert confidence["title"] == GROUNDED
    assert confidence["location"] == HELD and confidence["skills"] == HELD


class Ship(BaseModel):
    order_id: str | None = None
    carrier: str | None = None
    shipped: str | None = None


SHIPS = [Example("SHIPPING NOTICE\nOrder: A-1001\nCarrier: UPS\nShipped: 2024-03-05\n",
                 Ship(order_id="A-1001", carrier="UPS", shipped="2024-03-05")),
         Example("SHIPPING NOTICE\nOrder: C-7730\nCarrier: Royal Mail\nShipped: 2024-04-11\n",
                 Ship(order_id="C-7730", carrier="Royal Mail", shipped="2024-04-11"))]


def test_a_missing_label_in_the_examples_layout_is_no_sure_null() -> None:
    """The document is written like the examples, but the carrier is named in
    prose or under another label: a null there is not confident, since no
    example shows how the field's absence looks."""
    for doc in ("SHIPPING NOTICE\nOrder: A-2003\nShipped: 2024-05-04\n"
                "Your parcel travels with FedEx.\n",
                "SHIPPING NOTICE\nOrder: A-2009\nCourier: Evri\nShipped: 2024-05-09\n"):
        order = doc.split("Order: ")[1].split("\n")[0]
        shipped = doc.split("Shipped: ")[1].split("\n")[0]
        result = run_one({"order_id": order, "carrier": None, "shipped": shipped}, doc, Ship, SHIPS)
        assert result.ok and result.confidence["carrier"] == UNLOCATED_NULL, doc
        assert "carrier" in result.needs_review
    # the label written with nothing after it is still a sure null
    doc = "SHIPPING NOTICE\nOrder: A-2004\nCarrier:\nShipped: 2024-05-05\n"
    result = run_one({"order_id": "A-2004", "carrier": None, "shipped": "2024-05-05"}, doc, Ship,
                  SHIPS)
    assert result.confidence["carrier"] == ABSENT and result.needs_review == ()


def test_a_label_with_its_value_on_the_next_line_is_no_sure_null() -> None:
    """A form or a PDF's text layer writes the label above its value
    (``Carrier:`` then ``DPD``): the label alone says nothing about the
    field, so a null is not confident there, and the grammar does not force
    one; before a key (``Shipped:``) or an example's own line it still is."""
    locators = learn_locators(check_examples(SHIPS, Ship), Ship)
    for doc in ("SHIPPING NOTICE\nOrder: B-2002\nCarrier:\nDPD\nShipped: 2024-05-07\n",
                "SHIPPING NOTICE\r\nOrder: B-2002\r\nCarrier:\r\n\r\nDPD\r\n"
                "Shipped: 2024-05-07\r\n"):
        result = run_one({"order_id": "B-2002", "carrier": None, "shipped": "2024-05-07"}, doc,
                      Ship, SHIPS)
        assert result.confidence["carrier"] == UNLOCATED_NULL, doc
        assert "carrier" in result.needs_review
        assert not absence_shown(locators["carrier"], doc)
    for doc in ("Order: B-2002\nCarrier:\n\nShipped: 2024-05-07\n",
                "Order: B-2002\nCarrier:\nSHIPPING NOTICE\n", "Order: B-2002\nCarrier:\n"):
        assert locators["carrier"].writes_empty(doc), doc


def test_a_label_written_twice_pins_neither_value() -> None:
    """Two notices in one document each write ``Carrier:``: the locator finds
    two carriers, so neither the first nor the second is held."""
    doc = ("SHIPPING NOTICE\nOrder: A-2005\nCarrier: GLS\n\n"
           "SHIPPING NOTICE\nOrder: A-2006\nCarrier: DPD\nShipped: 2024-05-07\n")
    for carrier in ("GLS", "DPD"):
        result = run_one({"order_id": "A-2006", "carrier": carrier, "shipped": "2024-05-07"},
                      doc, Ship, SHIPS)
        assert result.ok and result.confidence["carrier"] == GROUNDED, carrier
        assert "carrier" in result.needs_review
    result = run_one({"order_id": "A-2006", "carrier": "Evri", "shipped": "2024-05-07"}, doc, Ship,
                  SHIPS)  # neither of the two (not even in the document): refused
    assert not result.ok or result.confidence["carrier"] == DISAGREES


class Parcel(BaseModel):
    order: str | None = None
    carrier: str | None = None


PARCELS = [Example("Order: A-100\nCarrier: UPS\n", Parcel(order="A-100", carrier="UPS")),
           Example("Order: A-200\n", Parcel(order="A-200"))]  # leaves the carrier out


def test_a_null_is_sure_only_where_the_document_writes_nothing_but_the_examples_layout() -> None:
    """An example leaves the carrier out, so a missing ``Carrier:`` is how its
    absence looks; but a document that writes a key the examples never do,
    or prose, may hold the carrier there: the null needs review."""
    for doc in ("Order: A-300\nCourier: FedEx\n", "Order: A-301\nShipped via: DHL Express\n",
                "Order: A-302\nThe parcel travels with FedEx.\n"):
        result = run_one({"order": doc.split()[1], "carrier": None}, doc, Parcel, PARCELS)
        assert result.confidence["carrier"] == UNLOCATED_NULL, doc
        assert "carrier" in result.needs_review
    for doc in ("Order: A-303\n", "Order: A-304\nOrder.note: fragile\n"):  # a sub-key of one
        result = run_one({"order": doc.split()[1], "carrier": None}, doc, Parcel, PARCELS)
        assert result.confidence["carrier"] == ABSENT and result.needs_review == (), doc


class Tagged(BaseModel):
    name: str | None = None
    tags: list[str] = []


TAGGED = [Example("Name: alpha\nTags: red, blue\n", Tagged(name="alpha", tags=["red", "blue"])),
          Example("Name: beta\nTags: green\n", Tagged(name="beta", tags=["green"]))]


def test_a_labelled_list_runs_on_over_its_continuation_lines() -> None:
    rule = learn_locators(check_examples(TAGGED, Tagged), Tagged)["tags"]
    doc = "Name: gamma\nTags: x, y,\n  z\n"
    assert rule.continued and rule.values(doc) == ["x", "y", "z"]  # (the wrap's `,` a separator)
    short = run_one({"name": "gamma", "tags": ["x", "y"]}, doc, Tagged, TAGGED)
    assert short.confidence["tags"] == DISAGREES and "tags" in short.needs_review
    whole = run_one({"name": "gamma", "tags": ["x", "y", "z"]}, doc, Tagged, TAGGED)
    assert whole.confidence["tags"] == HELD and whole.needs_review == ()


class Entry(BaseModel):
    name: str
    value: str | None = None


def _entry_rule(value: str) -> Any:
    """The ``value`` rule learned from one example that writes ``value`` and
    one that leaves it out (so a missing ``Value:`` is how its absence looks)."""
    examples = [Example(f"Name: frob\nValue: {value}\n", Entry(name="frob", value=value)),
                Example("Name: quux\n", Entry(name="quux"))]
    return learn_locators(check_examples(examples, Entry), Entry)["value"]


@pytest.mark.parametrize(("value", "holding", "empty"), [
    ("https://frob.example.org/", ["See www.acme.example.org",
                                   "Project site is acme.example.org/docs",
                                   "Site: <http://acme.example.org/?lang=en>"],
     ["Summary: Frobs widgets.", "Requires-Python: >=3.9", "Reads /etc/frob.conf first."]),
    ("mailto:ops@frob.example", ["Write to ops@acme.example today."], ["Write to the ops team."]),
    ("ops@frob.example", ["Contact: mailto:ops@acme.example"], ["Contact the ops team."]),
    ("v1.2.3", ["Now at 2.0.1 in testing."], ["Now in testing."]),
    ("2024-05-20", ["Released 20/05/2024.", "Released 20.05.2024", "Released 20 May 2024."],
     ["Released last spring.", "A well-known tool."]),
    ("Glasgow", ["Based in Stratford-upon-Avon"], ["12345"]),
])
def test_a_null_is_not_sure_where_a_line_writes_the_value_another_way(
        value: str, holding: list[str], empty: list[str]) -> None:
    """A line outside the examples' layout that writes a value shaped nearly
    like the examples' (a homepage without its scheme, an e-mail address
    without ``mailto:``, a version without its ``v``, a date in another
    notation) may hold the field: no sure null; one with nothing of the
    kind (a path is no URL) leaves it sure."""
    rule = _entry_rule(value)
    assert rule.values("Name: acme\n") == [] and absence_confirmed(rule, "Name: acme\n")
    for line in holding:
        assert not absence_confirmed(rule, f"Name: acme\n{line}\n"), line
    for line in empty:
        assert absence_confirmed(rule, f"Name: acme\n{line}\n"), line


def test_a_homepage_written_without_its_scheme_needs_review() -> None:
    sites = [Example("Name: frob\nValue: https://frob.example.org/\n",
                     Entry(name="frob", value="https://frob.example.org/")),
             Example("Name: quux\n", Entry(name="quux"))]
    for doc in ("Name: acme\nSee www.acme.example.org\n",
                "Name: acme\nProject site is acme.example.org/docs\n"):
        result = run_one({"name": "acme", "value": None}, doc, Entry, sites)
        assert result.confidence["value"] == UNLOCATED_NULL and "value" in result.needs_review
    result = run_one({"name": "acme", "value": None}, "Name: acme\n", Entry, sites)
    assert result.confidence["value"] == ABSENT and result.needs_review == ()


class Ticket(BaseModel):
    ticket: str | None = None
    subject: str | None = None
    owner: str | None = None


TICKETS = [Example("Ticket: T-1\nSubject: Printer jams\nOwner: Ann\n",
                   Ticket(ticket="T-1", subject="Printer jams", owner="Ann")),
           Example("Ticket: T-2\nSubject: VPN drops\nOwner: Bo\n",
                   Ticket(ticket="T-2", subject="VPN drops", owner="Bo"))]


def test_a_value_wrapped_onto_a_plain_line_is_never_pinned_cut() -> None:
    """The examples write each value on one line; a document wraps one onto a
    plain next line (a PDF's text layer, mail): the rule reads the first line
    only, so neither that cut value nor the whole one is confident; a next
    line that begins with a capital reads as text of its own."""
    doc = ("Ticket: T-3\nSubject: Laptop will not boot after\nthe BIOS update on Monday\n"
           "Owner: Cy\n")
    for subject in ("Laptop will not boot after",
                    "Laptop will not boot after the BIOS update on Monday"):
        result = run_one({"ticket": "T-3", "subject": subject, "owner": "Cy"}, doc, Ticket,
                      TICKETS)
        assert result.ok and "subject" in result.needs_review, subject
        assert result.confidence["ticket"] == HELD and result.confidence["owner"] == HELD
    own = "Ticket: T-3\nSubject: Laptop will not boot\nOwner: Cy\nPlease call back.\n"
    result = run_one({"ticket": "T-3", "subject": "Laptop will not boot", "owner": "Cy"}, own,
                  Ticket, TICKETS)
    assert result.confidence["subject"] == HELD and result.confidence["owner"] == HELD


class PerlModule(BaseModel):
    package: str
    version: str | None = None


MODULES = [
    Example("package Dpkg::Exit;\n\nuse strict;\nour $VERSION = '2.00';\n",
            PerlModule(package="Dpkg::Exit", version="2.00")),
    Example("package Algorithm::Merge;\n\nuse vars qw($VERSION);\n$VERSION = '0.08';\n",
            PerlModule(package="Algorithm::Merge", version="0.08")),
]


def test_a_rule_finding_several_values_pins_none() -> None:
    # " = '" up to "';": the examples write it once, a document twice; the first
    # by position is not the value (the second is)
    doc = ("package Search::Dict;\nmy $fc_available = '5.015008';\n"
           "our $VERSION = '1.07';\n")
    rule = learn_locators(check_examples(MODULES, PerlModule), PerlModule)["version"]
    assert rule.values(doc) == ["5.015008", "1.07"]
    for version in ("5.015008", "1.07"):
        result = run_one({"package": "Search::Dict", "version": version}, doc, PerlModule, MODULES)
        assert result.ok and "version" in result.needs_review, version


def test_several_words_where_every_example_wrote_one_are_never_pinned() -> None:
    # "package " up to ";": the examples' names are one word; a document writes a
    # version after the name (package NAME VERSION;): the rule reads past the name
    doc = "package builtin 0.006;\nour $VERSION = '0.006';\n"
    rule = learn_locators(check_examples(MODULES, PerlModule), PerlModule)["package"]
    assert not rule.spaced and rule.values(doc) == ["builtin 0.006"]
    for package in ("builtin 0.006", "builtin"):
        result = run_one({"package": package, "version": "0.006"}, doc, PerlModule, MODULES)
        assert result.ok and "package" in result.needs_review, package
    plain = "package File::Compare;\nour $VERSION = '1.1007';\n"
    result = run_one({"package": "File::Compare", "version": "1.1007"}, plain, PerlModule, MODULES)
    assert result.confidence["package"] == HELD and result.needs_review == ()
