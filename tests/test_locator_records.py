"""A list rule is checked as a single value's is, and a field read only in a
later record is not pinned (newcomer17 probe, faults 5 and 6): an item with
a comment, a key the rule does not read (``url=``), a continued list whose
label two records write with different items, a ``Signed-By:`` found only
in the second stanza of an APT ``.sources`` file."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import (
    DISAGREES,
    GROUNDED,
    HELD,
    UNLOCATED_NULL,
    field_confidence,
)
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locator_records import first_record
from agentflow.grounding.locator_rule import VALUES_KEY
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Submodules(BaseModel):
    paths: list[str] = Field(default_factory=list, description="each submodule's path")
    urls: list[str] = Field(default_factory=list, description="each submodule's url")


SUBMODULES = [
    Example('[submodule "fmt"]\n\tpath = vendor/fmt\n\turl = https://github.com/fmtlib/fmt.git\n'
            '[submodule "theme"]\n\tpath = docs/theme\n\turl = https://github.com/x/theme\n',
            Submodules(paths=["vendor/fmt", "docs/theme"],
                       urls=["https://github.com/fmtlib/fmt.git", "https://github.com/x/theme"])),
    Example('[submodule "zlib"]\n\tpath = third_party/zlib\n\turl = https://github.com/madler/zlib\n'
            '\tbranch = develop\n[submodule "lint"]\n\tpath = tools/lint\n'
            '\turl = https://gitlab.com/x/lint.git\n',
            Submodules(paths=["third_party/zlib", "tools/lint"],
                       urls=["https://github.com/madler/zlib", "https://gitlab.com/x/lint.git"])),
]


def _urls(doc: str, urls: list[str]) -> float:
    rules = learn_locators(check_examples(SUBMODULES, Submodules), Submodules)
    confidence, _ = field_confidence(Submodules(urls=urls), doc, {}, {"urls": rules["urls"]})
    return confidence["urls"]


def test_a_list_item_with_a_comment_no_example_item_shows_is_not_pinned() -> None:
    doc = ('[submodule "a"]\n\tpath = libs/a\n\turl = https://example.org/a.git ; mirror\n'
           '[submodule "b"]\n\tpath = libs/b\n\turl = https://example.org/b.git # old\n')
    assert _urls(doc, ["https://example.org/a.git ; mirror", "https://example.org/b.git # old"]
                 ) == GROUNDED
    plain = doc.replace(" ; mirror", "").replace(" # old", "")
    assert _urls(plain, ["https://example.org/a.git", "https://example.org/b.git"]) == HELD


def test_a_list_whose_key_is_written_where_the_rule_does_not_read_is_not_pinned() -> None:
    doc = ('[submodule "a"]\n\tpath=libs/a\n\turl:: https://example.org/a.git\n'
           '[submodule "b"]\n\tpath = libs/b\n\turl = https://example.org/b.git\n')
    assert _urls(doc, ["https://example.org/b.git"]) == GROUNDED  # one of two read
    # ``url=`` is the examples' ``url = `` spaced otherwise, ``url: `` its INI form: read
    # (agentflow.grounding.label_forms)
    for other in ("url=", "url: "):
        spaced = doc.replace("url:: ", other)
        assert _urls(spaced, ["https://example.org/a.git", "https://example.org/b.git"]) == HELD
        assert _urls(spaced, ["https://example.org/b.git"]) == DISAGREES


class AptSource(BaseModel):
    uris: str | None = Field(None, description="URIs:")
    suites: list[str] = Field(default_factory=list, description="Suites:, one item per word")
    signed_by: str | None = Field(None, description="Signed-By:")


STANZAS = [
    Example("Types: deb\nURIs: https://download.docker.com/linux/debian\nSuites: bookworm\n"
            "Signed-By: /etc/apt/keyrings/docker.asc\n",
            AptSource(uris="https://download.docker.com/linux/debian", suites=["bookworm"],
                      signed_by="/etc/apt/keyrings/docker.asc")),
    Example("Types: deb\nURIs: http://archive.ubuntu.com/ubuntu/\nSuites: noble noble-updates\n"
            "Signed-By: /usr/share/keyrings/ubuntu-archive-keyring.gpg\n",
            AptSource(uris="http://archive.ubuntu.com/ubuntu/", suites=["noble", "noble-updates"],
                      signed_by="/usr/share/keyrings/ubuntu-archive-keyring.gpg")),
]


def _stanza(doc: str, out: AptSource) -> dict[str, float]:
    rules = learn_locators(check_examples(STANZAS, AptSource), AptSource)
    return field_confidence(out, doc, {}, rules)[0]


def test_a_continued_list_whose_records_differ_is_not_pinned_as_a_single_value_is_not() -> None:
    doc = ("Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
           "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
           "Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n"
           "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    out = AptSource(uris="http://deb.debian.org/debian", suites=["bookworm", "bookworm-updates"],
                    signed_by="/usr/share/keyrings/debian-archive-keyring.gpg")
    confidence = _stanza(doc, out)
    assert confidence["uris"] == GROUNDED and confidence["suites"] == GROUNDED
    assert confidence["signed_by"] == HELD  # written twice, the same both times
    assert _stanza(doc, out.model_copy(update={"suites": ["sid"]}))["suites"] == DISAGREES
    same = doc.replace("bookworm-security", "bookworm bookworm-updates")
    assert _stanza(same, out)["suites"] == HELD


def test_a_value_found_only_in_a_later_record_is_not_pinned() -> None:
    doc = ("Types: deb\nURIs: https://packages.example.org/stable\nSuites: stable\n\n"
           "Types: deb\nURIs: https://packages.example.org/testing\nSuites: testing\n"
           "Signed-By: /usr/share/keyrings/example-testing.gpg\n")
    out = AptSource(uris="https://packages.example.org/stable", suites=["stable"],
                    signed_by="/usr/share/keyrings/example-testing.gpg")
    assert _stanza(doc, out)["signed_by"] == GROUNDED
    assert _stanza(doc, out.model_copy(update={"signed_by": None}))["signed_by"] == (
        UNLOCATED_NULL)  # the first stanza's null may well be right (was DISAGREES)
    rule = learn_locators(check_examples(STANZAS, AptSource), AptSource)["signed_by"]
    schema = {"type": "object", "properties": {"signed_by": {"anyOf": [
        {"type": "string", "x-grounded": True}, {"type": "null"}]}}}
    offered = apply_locators(schema, {"signed_by": rule}, doc)["properties"]["signed_by"]
    assert offered["anyOf"] == [{"type": "string", "x-grounded": True, VALUES_KEY: [
        "/usr/share/keyrings/example-testing.gpg"]}, {"type": "null"}]  # null beside it
    # a comment paragraph before the first record is no record
    one = "# managed by hand\n\n" + doc.split("\n\n")[1] + "\n"
    assert first_record(one) is None
    later = out.model_copy(update={"uris": "https://packages.example.org/testing",
                                   "suites": ["testing"]})
    assert _stanza(one, later)["signed_by"] == HELD


def test_the_examples_show_the_first_of_several_blocks_is_meant() -> None:
    """DEP-5: every example writes ``Copyright:`` in two paragraphs, the
    field's value the first (``Files: *``): the rule pins the first block."""

    class Copyright(BaseModel):
        copyright: list[str] = Field(default_factory=list, description="holders of most files")

    examples = [Example(f"Files: *\nCopyright: 2015 {a}\n           2019 {b}\n\n"
                        f"Files: debian/*\nCopyright: 2020 {c}\n",
                        Copyright(copyright=[f"2015 {a}", f"2019 {b}"]))
                for a, b, c in [("Jane Roe", "Acme Ltd.", "Ann Example"),
                                ("Sam Poe", "Bo Li", "Al Doe")]]
    rule = learn_locators(check_examples(examples, Copyright), Copyright)["copyright"]
    assert rule.several
    doc = "Files: *\nCopyright: 2001 Kim Lee\n\nFiles: debian/*\nCopyright: 2002 Jo Park\n"
    confidence, _ = field_confidence(Copyright(copyright=["2001 Kim Lee"]), doc, {},
                                     {"copyright": rule})
    assert confidence["copyright"] == HELD


def test_a_rule_that_finds_nothing_says_what_it_said_before() -> None:
    """Only a value found in a later record is unpinned: a value the rule
    finds nowhere in a document of two records still disagrees."""
    doc = "Types: deb\nURIs: https://a.example.org\n\nTypes: deb\nX-Note: second record\n"
    out = AptSource(uris="https://a.example.org", signed_by="/usr/share/keyrings/x.gpg")
    assert first_record(doc) is not None and _stanza(doc, out)["signed_by"] == DISAGREES
