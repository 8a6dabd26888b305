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
