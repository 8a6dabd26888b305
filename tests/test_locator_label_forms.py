"""A learned label is the label however a document spaces or delimits it
(the session-18 newcomer's probe): a label written with other whitespace
around its separator (``title={`` for ``title = {``, ``name      = "``) or
another opener of the examples' family (``title = "`` for ``title = {``) is
read with the value's end the examples show; a label written with a value the
rule cannot end never forces null in the grammar; and a kind of value the
examples only happen to share (a digit in ``MIT OR Apache-2.0`` and
``GPL-3.0-only``) is no filter that skips the document's value for a later one."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.locator_absence import absence_confirmed, absence_shown
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Entry(BaseModel):
    title: str | None = Field(None, description="the title field")
    journal: str | None = Field(None, description="the journal field")
    year: str | None = Field(None, description="the year field")


ENTRIES = [
    Example("@article{a,\n  title = {Sparse graphs},\n  journal = {Data Letters},\n"
            "  year = {2019},\n  pages = {1--9},\n}\n",
            Entry(title="Sparse graphs", journal="Data Letters", year="2019")),
    Example("@article{b,\n  year = {2022},\n  title = {Tidal harmonics},\n"
            "  journal = {Open Software},\n  volume = {7},\n}\n",
            Entry(title="Tidal harmonics", journal="Open Software", year="2022")),
]


def test_a_label_written_with_an_end_the_examples_do_not_show_never_forces_null() -> None:
    rule = learn_locators(check_examples(ENTRIES, Entry), Entry)["journal"]
    assert rule.right == "},"
    doc = "@article{c,\n  title = {Waves},\n  year = {2020},\n  journal = {Ocean Notes}\n}\n"
    assert rule.values(doc) == []  # the entry's last field: no "}," after it
    assert rule.label_written(doc)
    assert not absence_shown(rule, doc) and not absence_confirmed(rule, doc)
    gone = "@article{c,\n  title = {Waves},\n  year = {2020},\n  pages = {3--4},\n}\n"
    assert not rule.label_written(gone) and absence_shown(rule, gone)


def test_a_label_is_read_with_other_spacing_around_its_separator() -> None:
    rule = learn_locators(check_examples(ENTRIES, Entry), Entry)["title"]
    assert rule.left == "title = {" and rule.anchored
    assert rule.values("@book{d,\n  title={Waves and tides},\n}\n") == ["Waves and tides"]
    assert rule.values("@book{d,\n  title     =    {Waves},\n}\n") == ["Waves"]
    assert rule.values("@book{d,\n  subtitle = {Waves},\n}\n") == []  # another key
    assert rule.values("@book{d,\n  title : {Waves},\n}\n") == []  # another separator


def test_another_opener_of_the_family_is_read_up_to_its_own_closer() -> None:
    rule = learn_locators(check_examples(ENTRIES, Entry), Entry)["title"]
    doc = '@book{d,\n  title = "Literate Programming",\n  year = "1984",\n}\n'
    assert rule.values(doc) == ["Literate Programming"]
    # the value ends where its own opener closes, never at the examples' "},"
    assert rule.values('@book{d,\n  title = "A {B}", note = {C},\n}\n') == ["A {B}"]
    assert rule.values('@book{d,\n  title = "unclosed,\n}\n') == []


class Crate(BaseModel):
    name: str | None = None
    version: str | None = None


CRATES = [
    Example('[package]\nname = "tidy"\nversion = "0.3.2"\n', Crate(name="tidy", version="0.3.2")),
    Example('[package]\nversion = "1.0.0"\nname = "rgb"\n', Crate(name="rgb", version="1.0.0")),
]


def test_a_quote_stands_for_the_other_quote_never_a_brace() -> None:
    rules = learn_locators(check_examples(CRATES, Crate), Crate)
    assert rules["name"].values("[package]\nname        = 'aligned'\n") == ["aligned"]
    assert rules["version"].values("[package]\nversion.workspace = true\n") == []
    assert rules["version"].values("[package]\nversion = { workspace = true }\n") == []


class Compose(BaseModel):
    version: str | None = None
    title: str | None = None


MIXED = [
    Example("version: '3.8'\ntitle={Shop},\n", Compose(version="3.8", title="Shop")),
    Example('version: "3"\nTitle = {Wiki},\n', Compose(version="3", title="Wiki")),
]


def test_examples_that_space_or_quote_a_label_otherwise_learn_one_rule() -> None:
    rules = learn_locators(check_examples(MIXED, Compose), Compose)
    assert rules["version"].anchored and rules["version"].left == "version: '"
    assert rules["title"].anchored and rules["title"].right == "},"
    doc = 'version: "2.4"\ntitle  =  {Blog},\n'
    assert rules["version"].values(doc) == ["2.4"] and rules["title"].values(doc) == ["Blog"]


class Package(BaseModel):
    license: str | None = None
    released: str | None = None


PACKAGES = [
    Example("Package: tidy\nLicense: MIT OR Apache-2.0\nReleased: May 2023\n",
            Package(license="MIT OR Apache-2.0", released="May 2023")),
    Example("Package: rgb\nReleased: 1 June 2024\nLicense: GPL-3.0-only\n",
            Package(license="GPL-3.0-only", released="1 June 2024")),
]


def test_digits_inside_the_examples_words_are_no_kind_of_value() -> None:
    rules = learn_locators(check_examples(PACKAGES, Package), Package)
    assert not rules["license"].digit  # Apache-2.0, GPL-3.0-only: digits inside words
    assert rules["released"].digit  # 2023, 1 and 2024: figures
    doc = "Package: zee\nLicense: Zlib\nReleased: 3 March 2025\n"
    assert rules["license"].values(doc) == ["Zlib"]
    confidence, _ = field_confidence(Package(license="Zlib", released="3 March 2025"), doc, {},
                                     rules)
    assert confidence == {"license": HELD, "released": HELD}
    assert rules["released"].values("Package: zee\nReleased: soon\n") == []


def test_a_code_mostly_of_digits_is_a_figure() -> None:
    # NW-10452 and 2023-0871: codes of digits, so "please ask in store" is no invoice number
    from agentflow.grounding.locator_rule import figure

    assert figure("NW-10452") and figure("2023-0871") and figure("8:00 pm") and figure("v1.2.3")
    assert not figure("Apache-2.0") and not figure("GPL-3.0-only") and not figure("smith2019graphs")


class Host(BaseModel):
    host: str | None = None


HOSTS = [
    Example("Host github.com\n  User git\n", Host(host="github.com")),
    Example("Host prod-db\n  User ops\n", Host(host="prod-db")),
]


def test_a_labelled_value_of_another_kind_is_unchecked_never_a_later_label_s() -> None:
    rule = learn_locators(check_examples(HOSTS, Host), Host)["host"]
    assert rule.letter and rule.labelled
    doc = "Host *\n  User me\n\nHost prod\n  User ops\n"
    assert rule.values(doc) == []  # not "prod": the first Host line is the examples' place
    for value in ("prod", "*", None):
        confidence, _ = field_confidence(Host(host=value), doc, {}, {"host": rule})
        assert confidence["host"] < REVIEW_BELOW
    assert not absence_shown(rule, doc)  # the label is written: the grammar keeps the field open


class Meta(BaseModel):
    name: str | None = None
    license: str | None = None


METAS = [
    Example('{\n  "name": "tidy",\n  "license": "MIT",\n  "private": true\n}\n',
            Meta(name="tidy", license="MIT")),
    Example('{\n  "license": "ISC",\n  "name": "rgb",\n  "private": false\n}\n',
            Meta(name="rgb", license="ISC")),
]


def test_a_quoted_key_is_a_key_however_spaced() -> None:
    rule = learn_locators(check_examples(METAS, Meta), Meta)["name"]
    assert rule.left == '"name": "'
    # a minified document's members are read one a line, as a JSON parser reads them
    # (``agentflow.grounding.member_lines``; newcomer24 probe)
    assert rule.values('{"license":"0BSD","name":"zed"}\n') == ["zed"]
    nested = '{"license":"0BSD","meta":{"name":"zed"}}\n'
    assert rule.off_depth(nested)  # only another object's name: offered, never pinned
    assert rule.values('{\n  "name":"zed",\n  "license" : "0BSD",\n}\n') == ["zed"]
