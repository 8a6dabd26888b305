"""A learned locator verifies a vendor model's value with whitespace folded
(issue 30, items 3-4): a document that wraps a field's value over
continuation lines (deb822, e-mail headers) holds it as the model writes it
on one line, so the field is confident; a value cut short, with a label or
a separator at its edge, or another value is still no match."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.batch import extract_many
from agentflow.extraction.confidence import DISAGREES, GROUNDED, HELD, field_confidence
from agentflow.grounding.locator_rule import same_text
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples
from agentflow.testing import FunctionModel, RecordedRequest


class Pkg(BaseModel):
    package: str | None = Field(None, description="the package name")
    depends: str | None = Field(None, description="what it depends on")
    maintainer: str | None = Field(None, description="who maintains it")


EXAMPLES = [
    Example("Package: frob\nMaintainer: Jo Doe <jo@example.org>\n"
            "Depends: libc6 (>= 2.34),\n libfrob1 (= 1.0-2)\nSection: utils\n",
            Pkg(package="frob", depends="libc6 (>= 2.34), libfrob1 (= 1.0-2)",
                maintainer="Jo Doe <jo@example.org>")),
    Example("Package: quux\nDepends: perl\nMaintainer: Al Roe <al@example.net>\n",
            Pkg(package="quux", depends="perl", maintainer="Al Roe <al@example.net>")),
]

DOC = ("Package: acme-tools\nVersion: 2.1-1\nMaintainer: Debian Acme Team\n"
       "  <acme@lists.example.org>\nDepends: libc6 (>= 2.36),\n"
       "         libacme2 (>= 2.1),\n\t libgcc-s1 (>= 3.0)\nSection: devel\n")
DEPENDS = "libc6 (>= 2.36), libacme2 (>= 2.1), libgcc-s1 (>= 3.0)"
MAINTAINER = "Debian Acme Team <acme@lists.example.org>"


def test_whitespace_runs_and_line_breaks_compare_as_one_space() -> None:
    assert same_text("a,\n   b\n\tc", "a, b c") and same_text(" a  b ", "a b")
    assert not same_text("a b", "ab") and not same_text("a, b", "a b")
    # the clean form of a located value (no separator at its edges) is its value too
    assert same_text("Acme Ltd.,\n", "Acme Ltd.", clean=True)
    assert not same_text("Acme Ltd.,\n", "Acme Ltd.")
    assert not same_text("4.16.0", ": 4.16.0", clean=True)  # the value's own edge stays checked


def test_a_value_wrapped_over_continuation_lines_holds_on_one_line() -> None:
    rules = learn_locators(check_examples(EXAMPLES, Pkg), Pkg)
    assert rules["depends"].continued and rules["maintainer"].continued
    assert "\n" in rules["depends"].values(DOC)[0]  # the document's own text
    out = Pkg(package="acme-tools", depends=DEPENDS, maintainer=MAINTAINER)
    confidence, _ = field_confidence(out, DOC, {}, rules)
    assert confidence == {"package": HELD, "depends": HELD, "maintainer": HELD}
    for wrong in ("libc6 (>= 2.36), libacme2 (>= 2.1)",  # cut short
                  f"Depends: {DEPENDS}",  # with its line's label
                  f"{DEPENDS},",  # with a separator the document does not end it with
                  "libc6 (>= 2.36), libacme2 (>= 2.1), libgcc-s1 (>= 3.1)"):  # another value
        confidence, _ = field_confidence(out.model_copy(update={"depends": wrong}), DOC, {},
                                         rules)
        assert confidence["depends"] == DISAGREES, wrong


class Mail(BaseModel):
    subject: str | None = Field(None, description="the subject")
    sender: str | None = Field(None, description="who sent it")
    references: list[str] = Field(default_factory=list, description="earlier messages")


MAILS = [
    Example("From: Jo <jo@example.org>\nReferences: <1@example.org>\n  <2@example.org>\n"
            "Subject: Meeting moved to\n  Thursday at noon\n\nBody.\n",
            Mail(subject="Meeting moved to Thursday at noon", sender="Jo <jo@example.org>",
                 references=["<1@example.org>", "<2@example.org>"])),
    Example("Subject: Lunch\nReferences: <3@example.net>\nFrom: Al <al@example.net>\n\nHi.\n",
            Mail(subject="Lunch", sender="Al <al@example.net>", references=["<3@example.net>"])),
]
MESSAGE = ("Received: by mx.example.com\nFrom: Bo Lee\n <bo@example.com>\n"
           "References: <7@example.com>\n\t<8@example.com>\nSubject: Budget review for\n"
           "\tthe second   quarter,\n\tdraft 2\nDate: Mon, 1 Jan 2024 09:00:00 +0000\n\n"
           "Subject: not a header\n")


async def test_a_vendor_s_one_line_values_of_a_folded_mail_header_are_confident() -> None:
    """End to end on a vendor-style model (it writes each value on one line,
    as RFC 5322 unfolds a header): the folded fields are held; the subject,
    whose label the body writes again ("Subject: not a header"), is not: a
    locator that finds two different values pins neither."""
    def answer(request: RecordedRequest) -> str:
        return json.dumps({"subject": "Budget review for the second quarter, draft 2",
                           "sender": "Bo Lee <bo@example.com>",
                           "references": ["<7@example.com>", "<8@example.com>"]})

    (result,) = [r async for r in extract_many(FunctionModel(answer), [MESSAGE], Mail,
                                               examples=MAILS)]
    assert result.ok, result.error
    assert result.confidence == {"subject": GROUNDED, "sender": HELD, "references": HELD}
    assert result.needs_review == ("subject",)
