"""Which spans of a document are records (newcomer22 probe, findings 2 to
4): a blank line that only groups a document's keys opens no record; a
``{ ... }`` block named by its opening line is one, whatever its name (a
later block's value is not pinned as the first's); a value read to its
line's end that ends with the closer of the block around it is not pinned."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import GROUNDED, HELD, UNLOCATED_NULL, field_confidence
from agentflow.grounding.brace_records import braced_end
from agentflow.grounding.locator_records import first_record
from agentflow.grounding.locators import learn_locators
from agentflow.grounding.value_clauses import comment_tail
from agentflow.output.examples import check_examples


class Chart(BaseModel):
    name: str | None = Field(None, description="name:")
    version: str | None = Field(None, description="version:")
    app_version: str | None = Field(None, description="appVersion:")


CHARTS = [Example(f"apiVersion: v2\nname: {n}\ndescription: {d}\ntype: application\n"
                  f"version: {v}\nappVersion: \"{a}\"\n",
                  Chart(name=n, version=v, app_version=a))
          for n, d, v, a in [("webapp", "A web app", "0.3.1", "1.16.0"),
                             ("queue", "A job queue", "2.0.0", "5.4.2")]]


def _chart(doc: str, out: Chart) -> dict[str, float]:
    rules = learn_locators(check_examples(CHARTS, Chart), Chart)
    return field_confidence(out, doc, {}, rules)[0]


def test_a_blank_line_that_groups_keys_opens_no_record() -> None:
    doc = ("apiVersion: v2\nname: ledger\ndescription: A ledger\n\ntype: application\n\n"
           "version: 0.8.0\n\nappVersion: \"3.1.4\"\n")
    out = Chart(name="ledger", version="0.8.0", app_version="3.1.4")
    assert first_record(doc) is None
    assert _chart(doc, out) == {"name": HELD, "version": HELD, "app_version": HELD}  # was 0.8
    # a dependency's nested ``version:`` after the blank line is no second chart
    deps = doc + "dependencies:\n  - name: redis\n    version: 17.2.0\n"
    assert first_record(deps) is None and _chart(deps, out)["version"] == HELD


def test_a_blank_line_before_a_record_alike_still_ends_the_first() -> None:
    doc = ("apiVersion: v2\nname: ledger\ndescription: A ledger\n\n"
           "apiVersion: v2\nname: audit\nversion: 0.9.0\nappVersion: \"1.0\"\n")
    assert first_record(doc) == "apiVersion: v2\nname: ledger\ndescription: A ledger\n"
    out = Chart(name="ledger", version="0.9.0", app_version="1.0")  # the second chart's
    assert _chart(doc, out)["version"] == GROUNDED
    assert _chart(doc, out.model_copy(update={"version": None}))["version"] == UNLOCATED_NULL
    # a list's items, each indented alike, are records too; and two HTTP responses
    items = "- name: a\n  version: 1\n\n- name: b\n  version: 2\n"
    assert first_record(items) == "- name: a\n  version: 1\n"
    chain = ("HTTP/1.1 301 Moved\r\nLocation: https://b.example/\r\nContent-Length: 0\r\n\r\n"
             "HTTP/1.1 200 OK\r\nServer: ECS\r\nContent-Length: 12\r\n\r\n")
    assert first_record(chain) == chain.split("\r\n\r\n")[0] + "\r\n"


def test_a_value_an_example_writes_past_a_blank_line_learns_no_first_record() -> None:
    """The examples show blank lines part no records for the field: a
    document's later key block holds it, whatever its other records."""

    class Recipe(BaseModel):
        name: str | None = Field(None, description="name:")
        license: str | None = Field(None, description="license: under about:")

    examples = [Example(f"package:\n  name: {n}\n\nabout:\n  license: {lic}\n",
                        Recipe(name=n, license=lic))
                for n, lic in [("fastbar", "MIT"), ("quuxlib", "BSD-3-Clause")]]
    rules = learn_locators(check_examples(examples, Recipe), Recipe)
    assert rules["name"].first_record and not rules["license"].first_record
    doc = "package:\n  name: ujson\n  version: 5.9.0\n\nabout:\n  license: BSD-3-Clause\n"
    assert field_confidence(Recipe(name="ujson", license="BSD-3-Clause"), doc, {}, rules
                            )[0] == {"name": HELD, "license": HELD}


class Stanza(BaseModel):
    path: str | None = Field(None, description="the first stanza's log path")
    rotate: str | None = Field(None, description="after 'rotate'")
    create: str | None = Field(None, description="the arguments of 'create'")


STANZAS = [Example(f"{p} {{\n    daily\n    rotate {r}\n    create {c}\n}}\n",
                   Stanza(path=p, rotate=r, create=c))
           for p, r, c in [("/var/log/app/*.log", "7", "0640 app adm"),
                           ("/var/log/backup.log", "4", "644 root root")]]


def _stanza(doc: str, out: Stanza) -> dict[str, float]:
    rules = learn_locators(check_examples(STANZAS, Stanza), Stanza)
    return field_confidence(out, doc, {}, rules)[0]


def test_a_brace_block_named_by_its_opening_line_is_a_record() -> None:
    doc = ("/srv/cache/proxy.log {\n    size 100M\n    rotate 3\n}\n\n"
           "/srv/cache/hits.log {\n    daily\n    rotate 30\n    create 0600 proxy proxy\n}\n")
    assert first_record(doc) == "/srv/cache/proxy.log {\n    size 100M\n    rotate 3\n}\n"
    out = Stanza(path="/srv/cache/proxy.log", rotate="3", create="0600 proxy proxy")
    confidence = _stanza(doc, out)
    assert confidence["path"] == HELD and confidence["create"] == GROUNDED  # was HELD
    assert _stanza(doc, out.model_copy(update={"create": None}))["create"] == UNLOCATED_NULL
    # ``{`` alone under its name, no blank line between the blocks: the same
    alone = doc.replace(" {\n", "\n{\n").replace("}\n\n", "}\n")
    assert first_record(alone) == "/srv/cache/proxy.log\n{\n    size 100M\n    rotate 3\n}\n"
    # one block: nothing to tell
    one = doc.split("\n\n")[1]
    assert first_record(one) is None
    assert _stanza(one, out.model_copy(update={"path": "/srv/cache/hits.log", "rotate": "30"})
                   )["create"] == HELD


def test_brace_records_of_other_formats_and_blocks_inside_them() -> None:
    hcl = ('resource "aws_instance" "web" {\n  ami = "ami-1"\n}\n'
           'resource "aws_instance" "db" {\n  ami = "ami-2"\n  instance_type = "t3.large"\n}\n')
    assert first_record(hcl) == 'resource "aws_instance" "web" {\n  ami = "ami-1"\n}\n'
    bind = ('zone "a.example" {\n\ttype master;\n\tfile "/etc/bind/db.a";\n};\n'
            'zone "b.example" {\n\ttype slave;\n};\n')
    assert braced_end(bind.splitlines()) == 4
    # an nginx server: its location blocks are its own, a blank line inside it ends nothing
    nginx = ("server {\n    listen 80;\n\n    location /a {\n        root /a;\n    }\n"
             "    location /b {\n        root /b;\n    }\n}\n")
    assert braced_end(nginx.splitlines()) is None
    assert braced_end((nginx + "server {\n    listen 81;\n}\n").splitlines()) == 10
    # a brace inside a line, roff's ``\\{``, and a JSON document's braces open no record
    assert braced_end(["location / { return 404; }", "location /b { return 410; }"]) is None
    assert braced_end([".if n \\{", ".B x", ".\\}", ".if t \\{", ".B y", ".\\}"]) is None
    assert braced_end(["[", "  {", '    "a": 1', "  },", "  {", '    "a": 2', "  }", "]"]
                      ) is None


def test_a_value_ending_with_the_closer_of_its_block_is_not_pinned() -> None:
    doc = "/var/log/metrics/*.json { hourly\n rotate 0\n create 0640 metrics metrics }\n"
    rules = learn_locators(check_examples(STANZAS, Stanza), Stanza)
    found = rules["create"].values(doc)
    assert found == ["0640 metrics metrics }"]
    out = Stanza(path="/var/log/metrics/*.json", rotate="0", create=found[0])
    assert _stanza(doc, out)["create"] == GROUNDED  # was HELD
    assert comment_tail("a, b]") and comment_tail("see Smith)") and comment_tail("x */")
    assert not comment_tail("f(x)") and not comment_tail("[a, b]") and not comment_tail("}")
    assert not comment_tail("0640 metrics metrics")
