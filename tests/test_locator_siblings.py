"""A value found only in a later sibling block is another record's (newcomer18
probe, finding 1): the first docker-compose service, GitHub Actions job,
ssh_config ``Host`` block, git config remote or ``---`` document lacks the
key and a later one sets it; the rule read the later one and pinned it at
0.99, and the grammar offered it as the only choice. Now such a value is
offered beside null and scored as if the field had no locator, and a null
is not called wrong."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import (
    DISAGREES,
    HELD,
    REVIEW_BELOW,
    UNLOCATED_NULL,
)
from agentflow.grounding.locator_rule import VALUES_KEY
from agentflow.grounding.locator_siblings import later_sibling_only
from agentflow.grounding.sibling_blocks import record_spans
from tests.locator_support import learned_rules, offered_node, scored


class Service(BaseModel):
    image: str | None = Field(None, description="the first service's image")
    restart: str | None = Field(None, description="the first service's restart")


COMPOSE = [
    Example("version: '3.8'\nservices:\n  web:\n    image: nginx:1.25\n    restart: always\n"
            "    ports:\n      - \"80:80\"\n  api:\n    image: shop/api:2\n    restart: no\n",
            Service(image="nginx:1.25", restart="always")),
    Example("services:\n  db:\n    image: postgres:16\n    restart: unless-stopped\n"
            "  wiki:\n    image: requarks/wiki:2\n    restart: unless-stopped\n",
            Service(image="postgres:16", restart="unless-stopped")),
]
BUILD_ONLY = ("version: '3.9'\nservices:\n  app:\n    build: .\n    ports:\n      - \"8000:8000\"\n"
              "  redis:\n    image: redis:7-alpine\n    restart: always\n")


def test_a_later_services_value_is_not_pinned_and_null_is_offered() -> None:
    rules = learned_rules(COMPOSE, Service)
    assert rules["image"].record == "under 0 services"
    assert later_sibling_only(rules["image"], BUILD_ONLY)
    assert scored(Service(image="redis:7-alpine"), BUILD_ONLY, rules, "image") < REVIEW_BELOW
    assert scored(Service(), BUILD_ONLY, rules, "image") == UNLOCATED_NULL  # was DISAGREES
    offered = offered_node(rules["image"], BUILD_ONLY)
    assert offered["anyOf"][0][VALUES_KEY] == ["redis:7-alpine"]
    assert {"type": "null"} in offered["anyOf"]


def test_the_first_services_own_value_stays_pinned() -> None:
    rules = learned_rules(COMPOSE, Service)
    doc = BUILD_ONLY.replace("    build: .\n", "    image: app:1\n").replace(
        "    image: redis:7-alpine\n", "")
    assert not later_sibling_only(rules["image"], doc)
    assert scored(Service(image="app:1"), doc, rules, "image") == HELD
    assert scored(Service(), doc, rules, "image") == DISAGREES
    assert offered_node(rules["image"], doc)[VALUES_KEY] == ["app:1"]  # the only choice
    both = BUILD_ONLY.replace("    build: .\n", "    image: app:1\n")  # each service its own:
    assert scored(Service(image="app:1"), both, rules, "image") == HELD  # the first's is meant
    assert scored(Service(image="redis:7-alpine"), both, rules, "image") == DISAGREES


class Job(BaseModel):
    runs_on: str | None = Field(None, description="the first job's runs-on")


def test_a_workflows_second_job_is_another_record() -> None:
    """One job an example: the job's name differs from example to example, so
    ``test:`` and ``build:`` are records, not fixed keys."""
    examples = [
        Example("name: CI\non:\n  push:\njobs:\n  test:\n    runs-on: ubuntu-22.04\n"
                "    steps:\n      - run: make\n", Job(runs_on="ubuntu-22.04")),
        Example("name: Nightly\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
                "    steps:\n      - run: ./build.sh\n", Job(runs_on="ubuntu-latest")),
    ]
    rules = learned_rules(examples, Job)
    doc = ("name: Release\njobs:\n  call:\n    uses: ./.github/workflows/build.yml\n"
           "  publish:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: twine upload\n")
    assert scored(Job(runs_on="ubuntu-24.04"), doc, rules, "runs_on") < REVIEW_BELOW
    assert "in the first block under 'jobs:'" in rules["runs_on"].describe()
    # two jobs of different runners: no example shows the first job's is meant over
    # another's (each writes one job), so neither is pinned
    two = doc.replace("    uses: ./.github/workflows/build.yml\n", "    runs-on: macos-14\n")
    assert scored(Job(runs_on="macos-14"), two, rules, "runs_on") < REVIEW_BELOW


class Meta(BaseModel):
    name: str | None = Field(None, description="metadata name")


def test_a_key_every_example_writes_alike_is_no_record() -> None:
    """``metadata:`` is the format's key, not a record's name: no record kind."""
    examples = [Example("kind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n    - 80\n",
                        Meta(name="web")),
                Example("kind: Pod\nmetadata:\n  name: db\nspec:\n  containers:\n    - x\n",
                        Meta(name="db"))]
    assert learned_rules(examples, Meta)["name"].record == ""


class SshHost(BaseModel):
    user: str | None = Field(None, description="the first Host block's User")


SSH = [
    Example("Host build\n    HostName build.example.com\n    User ci\n\nHost backup\n"
            "    HostName 10.0.4.20\n    User backup\n", SshHost(user="ci")),
    Example("Host gitlab\n  HostName gitlab.example.org\n  User git\nHost pi\n"
            "  HostName 192.168.1.50\n  User pi\n", SshHost(user="git")),
]


def test_an_ssh_configs_later_host_block_is_another_record() -> None:
    rules = learned_rules(SSH, SshHost)
    assert rules["user"].record == "head host"
    for gap in ("\n", ""):  # with a blank line between the blocks, or none
        doc = f"Host *\n    ServerAliveInterval 60\n{gap}Host prod\n    User ops\n"
        assert scored(SshHost(user="ops"), doc, rules, "user") < REVIEW_BELOW
        assert scored(SshHost(), doc, rules, "user") == UNLOCATED_NULL
    for doc in ("Host jump\n    User deploy\nHost app\n    Port 2222\n",
                "Host jump\n    User deploy\nHost app\n    User app\n"):
        assert scored(SshHost(user="deploy"), doc, rules, "user") == HELD


class Remote(BaseModel):
    url: str | None = Field(None, description="the first remote's url")


def test_a_later_ini_group_of_the_same_kind_is_another_record() -> None:
    examples = [
        Example('[remote "origin"]\n\turl = https://a.example/x.git\n\tfetch = +refs/*\n'
                '[remote "fork"]\n\turl = https://b.example/x.git\n',
                Remote(url="https://a.example/x.git")),
        Example('[remote "upstream"]\n\turl = https://c.example/y.git\n'
                '[remote "mine"]\n\turl = https://d.example/y.git\n',
                Remote(url="https://c.example/y.git")),
    ]
    rules = learned_rules(examples, Remote)
    assert rules["url"].record == 'group [remote "*"]'
    doc = ('[remote "origin"]\n\tfetch = +refs/heads/*\n'
           '[remote "fork"]\n\turl = https://e.example/z.git\n')
    assert scored(Remote(url="https://e.example/z.git"), doc, rules, "url") < REVIEW_BELOW
    assert scored(Remote(url="https://e.example/z.git"), doc.replace(
        "\tfetch = +refs/heads/*\n", "\turl = https://e.example/z.git\n"), rules, "url") == HELD


class Release(BaseModel):
    notes: str | None = Field(None, description="the first document's notes")


def test_a_later_yaml_document_is_another_record() -> None:
    examples = [
        Example("---\nrelease: 1.2\nnotes: fixes\n---\nrelease: 1.1\nnotes: first\n",
                Release(notes="fixes")),
        Example("release: 3.0\nnotes: rewrite\n---\nrelease: 2.9\nnotes: last\n",
                Release(notes="rewrite")),
    ]
    rules = learned_rules(examples, Release)
    assert rules["notes"].record == "doc"
    doc = "---\nrelease: 2.0\n---\nrelease: 1.9\nnotes: old\n"
    assert scored(Release(notes="old"), doc, rules, "notes") < REVIEW_BELOW
    assert scored(Release(), doc, rules, "notes") == UNLOCATED_NULL


def test_record_spans() -> None:
    lines = BUILD_ONLY.splitlines()
    assert [(a, name) for a, _, name in record_spans(lines, "under 0 services")] == [
        (2, "app"), (6, "redis")]
    assert record_spans(lines, "under 0 volumes") == []
    ssh = ["# global", "Host a b", "  User x", "Host c", "Match host d", "  User y"]
    assert record_spans(ssh, "head host") == [(1, 3, "a b"), (3, 6, "c")]
    assert [s[:2] for s in record_spans(["a: 1", "---", "# c", "---", "b: 2"], "doc")] == [
        (0, 1), (4, 5)]


def test_a_line_break_inside_struck_text_does_not_move_the_first_records_end() -> None:
    """Struck-out text holding a form feed or a lone carriage return (blanked
    by ``live_text``, so one line there, two for ``str.splitlines``) before
    the services: the first service's value on its last line is still its own."""
    rules = learned_rules(COMPOSE, Service)
    for brk in ("\x0c", "\r"):
        doc = (f"# <del>generated{brk}by hand</del>\nservices:\n  app:\n    restart: always\n"
               "    image: app:1\n  redis:\n    image: redis:7-alpine\n")
        assert not later_sibling_only(rules["image"], doc)
