"""Records written back to back, and values read across folded lines
(newcomer17b probe, findings 1 and 2): a vCard's or an nginx server block's
field found only in a later record is not pinned, blank lines between the
records or none; a value read across a continuation line is pinned only
where an example's value runs across one (an RFC 6350 fold, CRLF and one
space mid-word, is no part of the value)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import GROUNDED, HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.locator_records import first_record
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Contact(BaseModel):
    full_name: str | None = Field(None, description="FN")
    organization: str | None = Field(None, description="ORG")


def _card(fn: str, org: str | None) -> str:
    lines = ["BEGIN:VCARD", "VERSION:3.0", f"FN:{fn}"] + ([f"ORG:{org}"] if org else [])
    return "\r\n".join([*lines, "TEL:+1 555 0100", "END:VCARD"]) + "\r\n"


CARDS = [Example(_card("Ada Lovelace", "Analytical Engines Ltd"),
                 Contact(full_name="Ada Lovelace", organization="Analytical Engines Ltd")),
         Example(_card("Grace Hopper", "US Navy"),
                 Contact(full_name="Grace Hopper", organization="US Navy"))]


def _contact(doc: str, out: Contact) -> dict[str, float]:
    rules = learn_locators(check_examples(CARDS, Contact), Contact)
    return field_confidence(out, doc, {}, rules)[0]


def test_a_record_ends_where_the_line_that_opened_it_is_written_again() -> None:
    doc = _card("Yuki Tanaka", None) + _card("Ken Sato", "Sato Bakery")
    assert first_record(doc) == _card("Yuki Tanaka", None)
    out = Contact(full_name="Yuki Tanaka", organization="Sato Bakery")  # the second card's
    assert _contact(doc, out)["organization"] == GROUNDED
    three = doc + _card("Ola Moe", "Moe Transport")
    assert _contact(three.replace("ORG:Sato Bakery\r\n", ""), out.model_copy(
        update={"organization": "Moe Transport"}))["organization"] == GROUNDED
    one = _card("Ken Sato", "Sato Bakery")
    assert first_record(one) is None
    assert _contact(one, out.model_copy(update={"full_name": "Ken Sato"}))["organization"] == HELD


class Site(BaseModel):
    server_name: str | None = Field(None, description="server_name")
    root: str | None = Field(None, description="root")


SITES = [Example(f"server {{\n    listen 80;\n    server_name {name};\n    root {root};\n\n"
                 f"    location / {{\n        try_files $uri =404;\n    }}\n}}\n",
                 Site(server_name=name, root=root))
         for name, root in [("example.com", "/var/www/example"),
                            ("shop.example.org", "/srv/shop/public")]]


def _site(doc: str, out: Site) -> dict[str, float]:
    rules = learn_locators(check_examples(SITES, Site), Site)
    return field_confidence(out, doc, {}, rules)[0]


def test_a_block_written_again_is_another_record_and_a_closing_brace_opens_none() -> None:
    doc = ("server {\n    listen 80;\n    server_name old.example;\n"
           "    return 301 https://new.example$request_uri;\n}\n"
           "server {\n    listen 443 ssl;\n    server_name new.example;\n    root /srv/new;\n}\n")
    out = Site(server_name="old.example", root="/srv/new")
    assert _site(doc, out)["root"] == GROUNDED
    assert _site(doc.replace("}\nserver", "}\n\nserver"), out)["root"] == GROUNDED
    # one block: ``}`` written three times opens no record
    one = ("server {\n    server_name a.example;\n    location / {\n    }\n"
           "    location /b/ {\n    }\n    root /srv/a;\n}\n")
    assert first_record(one) is None
    assert _site(one, Site(server_name="a.example", root="/srv/a"))["root"] == HELD


def test_a_value_across_a_fold_no_example_shows_is_not_pinned() -> None:
    folded = ("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Alexandra Montgomery-Smythe of the Royal "
              "Botanic Gardens Ke\r\n w\r\nEND:VCARD\r\n")
    rules = learn_locators(check_examples(CARDS, Contact), Contact)
    assert not rules["full_name"].shown_across
    out = Contact(full_name=rules["full_name"].values(folded)[0])
    assert "\n" in str(out.full_name)
    assert _contact(folded, out)["full_name"] < REVIEW_BELOW
    plain = folded.replace("Ke\r\n w", "Kew")
    assert _contact(plain, Contact(full_name=rules["full_name"].values(plain)[0])
                    )["full_name"] == HELD


class Package(BaseModel):
    description: str | None = Field(None, description="Description:, all its lines")


def test_a_value_across_continuation_lines_an_example_shows_is_pinned() -> None:
    examples = [Example(f"Package: {p}\nDescription: {a}\n {b}\nSection: utils\n",
                        Package(description=f"{a}\n {b}"))
                for p, a, b in [("jq", "lightweight JSON processor", "written in C"),
                                ("tree", "list directories", "as a tree")]]
    rules = learn_locators(check_examples(examples, Package), Package)
    assert rules["description"].shown_across
    doc = "Package: ncdu\nDescription: disk usage viewer\n with an ncurses interface\n"
    found = rules["description"].values(doc)[0]
    confidence, _ = field_confidence(Package(description=found), doc, {}, rules)
    assert confidence["description"] == HELD


def test_a_repeated_line_opens_records_only_where_they_are_alike() -> None:
    # a comment header repeating a line of its own: what follows is no second record
    roff = '.\\" top\n.\\" .}f\n.\\" mid\n.\\" .}f\n.TH BASH 1\n.SH NAME\nbash \\- a shell\n'
    assert first_record(roff) is None
    # a description's continuation line written twice: no record opens there
    para = ("Package: jwt\nDescription: tokens\n a\n algorithm\n b\n algorithm\n"
            "Homepage: https://example.org/jwt\n")
    assert first_record(para) is None
