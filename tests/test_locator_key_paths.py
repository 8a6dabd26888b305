"""A nested key read under the wrong parent key or in the wrong ``---``
document, and a key learned from a coincidence of the examples (newcomer19
probe, findings 1 and 2). A rule knew its label's nesting depth, not the
keys above it: ``bugs.url`` was read and pinned for ``repository.url``, a
later document's ``queue:`` for the one the examples write it in, and a
right null there scored ``DISAGREES``. Now a rule keeps the parent keys and
the document its examples write the value under, reads only there, and a
value found only elsewhere is offered, never pinned. A rule whose examples
also write the value after another key (``title:`` beside ``owner:``) pins
nothing on a document where that key holds another value."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, UNLOCATED_NULL
from agentflow.grounding.key_paths import (
    learn_document,
    marked_document,
    parent_chains,
    parent_keys,
)
from agentflow.grounding.locator_rule import VALUES_KEY
from tests.locator_support import learned_rules, offered_node, scored


class Package(BaseModel):
    name: str | None = Field(None, description="the package name")
    repository_url: str | None = Field(None, description="the source repository's url")


PACKAGES = [
    Example('{\n  "name": "left-trim",\n  "repository": {\n    "type": "git",\n'
            '    "url": "https://example.org/sam/left-trim.git"\n  },\n  "license": "MIT"\n}\n',
            Package(name="left-trim", repository_url="https://example.org/sam/left-trim.git")),
    Example('{\n  "name": "http-cache",\n  "license": "ISC",\n  "repository": {\n'
            '    "type": "git",\n'
            '    "url": "git+https://example.org/acme/http-cache.git"\n  }\n}\n',
            Package(name="http-cache",
                    repository_url="git+https://example.org/acme/http-cache.git")),
]
BUGS_ONLY = ('{\n  "name": "tint",\n  "bugs": {\n    "url": "https://tint.example.org/issues"\n'
             '  },\n  "license": "MIT"\n}\n')
BUGS_FIRST = ('{\n  "name": "queue",\n  "bugs": {\n    "url": "https://example.org/jo/queue/issues"\n'
              '  },\n  "repository": {\n    "type": "git",\n'
              '    "url": "https://example.org/jo/queue.git"\n  }\n}\n')


def test_json_key_under_another_parent_is_not_pinned() -> None:
    rule = learned_rules(PACKAGES, Package)["repository_url"]
    assert rule.parents == ("repository",)
    assert rule.off_depth(BUGS_ONLY)
    assert offered_node(rule, BUGS_ONLY) == {"anyOf": [{"type": "string", "x-grounded": True},
                                                   {"type": "null"}]}  # not narrowed
    rules = {"repository_url": rule}
    wrong = Package(name="tint", repository_url="https://tint.example.org/issues")
    assert scored(wrong, BUGS_ONLY, rules, "repository_url") < REVIEW_BELOW
    assert scored(Package(name="tint"), BUGS_ONLY, rules, "repository_url") == UNLOCATED_NULL


def test_json_key_read_under_its_parent_only() -> None:
    rule = learned_rules(PACKAGES, Package)["repository_url"]
    assert rule.values(BUGS_FIRST) == ["https://example.org/jo/queue.git"]
    right = Package(name="queue", repository_url="https://example.org/jo/queue.git")
    assert scored(right, BUGS_FIRST, {"repository_url": rule}, "repository_url") == HELD
    assert "under 'repository:'" in rule.describe()


class Settings(BaseModel):
    host: str | None = Field(None, description="the server's host")


SETTINGS = [
    Example("server:\n  host: web1.example.org\n  port: 80\ndatabase:\n  host: db1.example.org\n",
            Settings(host="web1.example.org")),
    Example("log: info\nserver:\n  port: 8080\n  host: app.example.net\ncache:\n  host: mem\n",
            Settings(host="app.example.net")),
]


def test_yaml_key_under_another_parent_is_not_pinned() -> None:
    rule = learned_rules(SETTINGS, Settings)["host"]
    assert rule.parents == ("server",)
    doc = "database:\n  host: db9.example.org\nserver:\n  port: 81\n"
    assert rule.off_depth(doc)
    assert scored(Settings(), doc, {"host": rule}, "host") == UNLOCATED_NULL
    assert scored(Settings(host="db9.example.org"), doc, {"host": rule}, "host") < REVIEW_BELOW
    both = "database:\n  host: db9.example.org\nserver:\n  host: web9.example.org\n"
    assert rule.values(both) == ["web9.example.org"]
    assert scored(Settings(host="web9.example.org"), both, {"host": rule}, "host") == HELD


class Job(BaseModel):
    queue: str | None = Field(None, description="the job's queue")


STREAMS = [
    Example("kind: Volume\nmeta:\n  id: vol-1\n---\nkind: Job\nmeta:\n  id: nightly\n"
            "  queue: batch\nsteps:\n  - run: make\n", Job(queue="batch")),
    Example("kind: Task\nmeta:\n  id: build\n  queue: fast\nsteps:\n  - run: test\n",
            Job(queue="fast")),
]
LATER_VOLUME = ("kind: Task\nmeta:\n  id: lint\nsteps:\n  - run: ruff\n---\n"
                "kind: Volume\nmeta:\n  id: cache\n  queue: slow\n")
EARLIER_VOLUME = ("kind: Volume\nmeta:\n  id: cache\n  queue: slow\n---\n"
                  "kind: Job\nmeta:\n  id: docs\n  queue: idle\nsteps:\n  - run: mkdocs\n")


def test_key_of_another_yaml_document_is_not_pinned() -> None:
    rule = learned_rules(STREAMS, Job)["queue"]
    assert rule.document == ("run", "steps")
    assert rule.off_depth(LATER_VOLUME)
    assert scored(Job(), LATER_VOLUME, {"queue": rule}, "queue") == UNLOCATED_NULL
    assert scored(Job(queue="slow"), LATER_VOLUME, {"queue": rule}, "queue") < REVIEW_BELOW
    assert VALUES_KEY not in str(offered_node(rule, LATER_VOLUME))


def test_key_read_in_its_own_yaml_document() -> None:
    rule = learned_rules(STREAMS, Job)["queue"]
    assert rule.values(EARLIER_VOLUME) == ["idle"]  # the document the examples write it in
    assert scored(Job(queue="idle"), EARLIER_VOLUME, {"queue": rule}, "queue") == HELD


def test_document_and_parents_helpers() -> None:
    lines = ["a:", "  b:", "    - c: 1", "      d: 2"]
    assert parent_keys(lines, 3) == ("-", "b", "a")
    assert parent_keys(['{', '  "x": {', '    "y": 1'], 2) == ("x",)
    stream = "kind: A\nx: 1\n---\nkind: B\ny: 2\n"
    assert learn_document([(stream, stream.index("y: 2") + 3)], "y") == ()  # nothing else marks it
    assert marked_document(stream.split("\n"), ["y"]) == (3, 6)
    assert marked_document(["x: 1"], ["x"]) is None  # one document


class App(BaseModel):
    app_title: str | None = Field(None, description="the app's title")


APPS = [
    Example("title: shop\nowner: shop\nsize: 3\n", App(app_title="shop")),
    Example("title: Cache service\nmeta:\n  title: cache\nowner: cache\nsize: 2\n",
            App(app_title="cache")),
]


def test_key_learned_from_a_coincidence_is_not_pinned_where_the_keys_differ() -> None:
    # each example writes its value after ``owner:`` and ``title:``; a rule from the
    # ``title:`` places does not hold (the second example's first ``title:`` is another's)
    rule = learned_rules(APPS, App)["app_title"]
    assert rule.left == "owner: " and rule.echoes == ("title",)
    doc = "title: thumbnailer\nowner: media\nsize: 1\n"
    assert not rule.twins_agree(doc)
    assert scored(App(app_title="media"), doc, {"app_title": rule}, "app_title") < REVIEW_BELOW
    assert VALUES_KEY not in str(offered_node(rule, doc))
    agree = "title: media\nowner: media\nsize: 1\n"
    assert rule.twins_agree(agree)
    assert scored(App(app_title="media"), agree, {"app_title": rule}, "app_title") == HELD
    assert rule.twins_agree("owner: media\n")  # a document without the key says nothing


STREAM_APPS = [
    Example("type: route\ntitle: shop-route\ntags:\n  owner: shop\n---\ntype: app\ntitle: shop\n"
            "tags:\n  owner: shop\nsize: 3\n", App(app_title="shop")),
    Example("type: app\ntitle: cache\ntags:\n  owner: cache\nsize: 2\n", App(app_title="cache")),
]


def test_key_learned_from_a_coincidence_in_a_stream_is_not_pinned() -> None:
    # the ``title:`` of the document the examples write the value in holds too: a twin
    rule = learned_rules(STREAM_APPS, App)["app_title"]
    doc = "type: app\ntitle: thumbnailer\ntags:\n  owner: media\nsize: 1\n"
    assert not rule.twins_agree(doc)
    assert scored(App(app_title="media"), doc, {"app_title": rule}, "app_title") < REVIEW_BELOW


class Kind(BaseModel):
    kind: str | None = Field(None, description="the job document's kind")


def test_held_out_example_read_in_the_document_all_examples_show() -> None:
    # the first example's first document writes ``kind:`` too: a rule learned from the
    # second example alone, read in the marked document, still holds on it
    rules = learned_rules([Example(STREAMS[0].text, Kind(kind="Job")),
                    Example(STREAMS[1].text, Kind(kind="Task"))], Kind)
    rule = rules["kind"]
    assert rule.document == ("queue", "run", "steps")
    assert rule.values(EARLIER_VOLUME) == ["Job"]
    assert scored(Kind(kind="Job"), EARLIER_VOLUME, rules, "kind") == HELD


def test_held_out_example_read_under_the_parent_all_examples_show() -> None:
    bugs_first = ('{\n  "name": "queue",\n  "bugs": {\n    "url": "https://example.org/q/issues"\n'
                  '  },\n  "repository": {\n    "url": "https://example.org/q.git"\n  }\n}\n')
    rules = learned_rules([PACKAGES[0], Example(bugs_first, Package(
        name="queue", repository_url="https://example.org/q.git"))], Package)
    assert rules["repository_url"].parents == ("repository",)
    assert rules["repository_url"].values(BUGS_FIRST) == ["https://example.org/jo/queue.git"]


def test_parent_chains_of_many_rows_are_each_row_s_parent_keys() -> None:
    """``parent_chains`` tells the document's format once for all the rows a
    rule reads (asked per row, a feed's thousands of label rows each read
    every line: quadratic)."""
    for text in ('{\n  "repository": {\n    "url": "a"\n  },\n  "bugs": {\n    "url": "b"\n  }\n}',
                 "<project>\n  <parent>\n    <version>1</version>\n  </parent>\n</project>",
                 "metadata:\n  name: web\nspec:\n  template:\n    name: x\n"):
        lines = text.splitlines()
        rows = range(len(lines))
        assert parent_chains(lines, rows) == {i: parent_keys(lines, i) for i in rows}
        assert any(parent_chains(lines, rows).values())
