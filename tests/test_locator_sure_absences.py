"""Nulls the examples' layout shows, written a way the examples also write
(newcomer24 probe: right nulls flagged). A key of the examples' commented
out (``# max-line-length = 79`` in ``[flake8]``) is that key's old value, not
the field's; a line an example writes word for word while leaving the field
empty (``license_file = LICENSE`` beside no ``license =``) is no mention of
the field's key; a crontab of job lines alone is written the way an example
that leaves ``MAILTO`` out is. Before, each null scored 0.7. Still unsure:
the field's own key written in any other form (commented, with another
separator, as another key's value), and any line the examples do not account
for that holds a token shaped like the field's values. A label with an
empty quoted string alone after it (``MAILTO=""``) is written empty."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import ABSENT, REVIEW_BELOW, UNLOCATED_NULL, field_confidence
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Cfg(BaseModel):
    name: str | None = None
    license: str | None = None
    ignore: list[str] = Field(default_factory=list)


CFG = [Example("[metadata]\nname = widgetlib\nlicense = Apache-2.0\n\n"
               "[options]\npackages = find:\n\n"
               "[flake8]\nmax-line-length = 88\nignore = E203, W503\n",
               Cfg(name="widgetlib", license="Apache-2.0", ignore=["E203", "W503"])),
       Example("[bdist_wheel]\nuniversal = 1\n\n[flake8]\nignore = E501\nmax-line-length=120\n\n"
               "[metadata]\nlicense_file = LICENSE\n",
               Cfg(ignore=["E501"]))]


class Cron(BaseModel):
    mailto: str | None = None
    shell: str | None = None
    command: str | None = None


CRON = [Example("SHELL=/bin/bash\nMAILTO=ops@example.com\n\n"
                "15 2 * * 1-5 /usr/local/bin/backup --full\n",
                Cron(mailto="ops@example.com", shell="/bin/bash",
                     command="/usr/local/bin/backup --full")),
        Example("*/10 * * * * /home/ann/bin/poll-feeds\n",
                Cron(command="/home/ann/bin/poll-feeds"))]


def _null(examples: list[Example], model: type[BaseModel], field: str, doc: str) -> float:
    rules = learn_locators(check_examples(examples, model), model)
    return field_confidence(model(), doc, {}, rules)[0][field]


def test_a_commented_out_key_of_the_examples_is_no_value_of_the_field() -> None:
    doc = "[metadata]\nname = orbit\n\n[flake8]\n# max-line-length = 79\nmax-line-length = 99\n"
    assert _null(CFG, Cfg, "ignore", doc) == ABSENT
    # the field's own key commented out, or a comment holding a code: may be its value
    for note in ("# ignore = E501", "# E501 is fine here", "; ignore: W503"):
        assert _null(CFG, Cfg, "ignore", doc + note + "\n") < REVIEW_BELOW, note


def test_a_line_an_empty_example_writes_is_no_mention_of_the_key() -> None:
    doc = "[flake8]\nignore = F821\n\n[metadata]\nlicense_file = LICENSE\n"
    assert _null(CFG, Cfg, "license", doc) == ABSENT
    for other in ("license_file = LICENSE  # MIT", "license: MIT", "licence = see LICENSE file",
                  "classifier = License :: OSI Approved :: MIT License"):
        assert _null(CFG, Cfg, "license", doc + other + "\n") < REVIEW_BELOW, other


def test_job_lines_alone_are_the_way_an_example_leaves_mailto_out() -> None:
    doc = "# nightly\n30 3 * * 0 root /usr/sbin/e2scrub_all -A\nPATH=/usr/bin:/bin\n"
    assert _null(CRON, Cron, "mailto", doc) == ABSENT
    for other in ("mailto = ops@example.net", "MAIL=ops@example.net",
                  "# output goes to ops@example.net", "export MAILTO=ops@example.net"):
        assert _null(CRON, Cron, "mailto", doc + other + "\n") < REVIEW_BELOW, other
    # a job line holds paths, as the example's does, but no example shows a shell
    # path beside one without SHELL= in a way the rule could tell apart: unsure
    assert _null(CRON, Cron, "shell", doc) == UNLOCATED_NULL


def test_a_label_with_an_empty_quoted_string_is_a_sure_null() -> None:
    jobs = "*/5 * * * * /usr/bin/php /srv/feeds/update.php --quiet\n"
    for empty in ('MAILTO=""', "MAILTO=''"):
        assert _null(CRON, Cron, "mailto", f"{empty}\n{jobs}") == ABSENT, empty
    for other in ('MAILTO="ops@example.net"', 'MAILTO="" ops@example.net', 'MAILTO="\'\'"'):
        assert _null(CRON, Cron, "mailto", f"{other}\n{jobs}") < REVIEW_BELOW, other
