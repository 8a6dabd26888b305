"""A rule whose place names no word, where every example writes its value at
another place too (newcomer21 probe, finding 4: both READMEs are titled
after the package they install, so ``# `` reads the title; 31 of 125 READMEs
on the machine had their title pinned as the package): the rule's value is
pinned only where the document writes it at that other place as well
(``agentflow.grounding.chance_places``)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.chance_places import written_beside
from agentflow.grounding.locator_report import learned_lines
from agentflow.grounding.locator_twins import beside_context
from agentflow.grounding.locators import apply_locators, learn_locators
from agentflow.grounding.marker import mark_all_strings
from agentflow.output.examples import check_examples
from agentflow.output.schema import OutputSpec


class Install(BaseModel):
    package: str | None = None


EXAMPLES = [
    Example("# fancylog\n\nColourful logging.\n\n## Installation\n\n    $ pip install fancylog\n\n"
            "## Development\n\n    $ pip install -e .[dev]\n", Install(package="fancylog")),
    Example("# tiny-url-slug\n\nMake URL slugs.\n\n## Installation\n\n```bash\n"
            "npm install tiny-url-slug\n```\n\n## License\n\nMIT\n",
            Install(package="tiny-url-slug")),
]
NO_INSTALL = "# GLib\n\nGLib is the low-level core library.\n\n## Installation\n\nSee INSTALL.md.\n"
OTHER_NAME = "# dateutil\n\nDates.\n\n## Installation\n\n    pip install python-dateutil\n"
SAME = "# cachetools\n\nCaches.\n\n## Installation\n\n    pip install cachetools\n"


def test_the_other_place_every_example_writes_the_value_at_is_kept() -> None:
    rules = learn_locators(check_examples(EXAMPLES, Install), Install)
    package = rules["package"]
    assert package.left == "# " and package.anchored and not package.labelled
    assert package.beside == " install "
    assert package.values(NO_INSTALL) == ["GLib"]  # the rule still reads the title
    assert not package.twins_agree(NO_INSTALL) and not package.twins_agree(OTHER_NAME)
    assert package.twins_agree(SAME)


def test_a_title_not_written_at_the_other_place_is_not_sure() -> None:
    rules = learn_locators(check_examples(EXAMPLES, Install), Install)
    for text, value in ((NO_INSTALL, "GLib"), (OTHER_NAME, "dateutil")):
        confidence, _ = field_confidence(Install(package=value), text, {}, rules)
        assert confidence["package"] < REVIEW_BELOW, text
    confidence, _ = field_confidence(Install(package="cachetools"), SAME, {}, rules)
    assert confidence["package"] == HELD  # written at both places, as in the examples


def test_the_grammar_offers_the_title_only_where_both_places_agree() -> None:
    rules = learn_locators(check_examples(EXAMPLES, Install), Install)
    schema = mark_all_strings(OutputSpec.of(Install).schema_for("local").schema, None)
    assert apply_locators(schema, rules, NO_INSTALL)["properties"]["package"] == (
        schema["properties"]["package"])
    assert "cachetools" in json.dumps(apply_locators(schema, rules, SAME)["properties"])


def test_the_run_says_the_examples_write_it_elsewhere_too() -> None:
    checked = check_examples(EXAMPLES, Install)
    (line,) = learned_lines(learn_locators(checked, Install), checked, Install)
    assert "after ' install ' elsewhere too: pinned only where a document does as well" in line


def test_a_labelled_rule_or_a_value_written_once_keeps_no_other_place() -> None:
    keyed = [Example("Name: fancylog\nSee fancylog docs.\n", Install(package="fancylog")),
             Example("Name: slugs\nslugs is small.\n", Install(package="slugs"))]
    rule = learn_locators(check_examples(keyed, Install), Install)["package"]
    assert rule.labelled and beside_context(rule, check_examples(keyed, Install)) is None
    once = [Example("# fancylog\n\nLogging.\n", Install(package="fancylog")),
            Example("# slugs\n\nSlugs.\n", Install(package="slugs"))]
    assert learn_locators(check_examples(once, Install), Install)["package"].beside is None


def test_written_beside_skips_the_rules_own_place_and_cut_tokens() -> None:
    assert not written_beside("GLib", "", NO_INSTALL[:7], "# ", True)  # the title alone
    assert written_beside("GLib", "", NO_INSTALL, "# ", True)  # ``GLib is ...``: anywhere
    assert not written_beside("dateutil", " install ", OTHER_NAME, "# ", True)
    assert written_beside("cachetools", " install ", SAME, "# ", True)
    assert written_beside("x", " install ", "# x\n\n    npm install --global x\n", "# ", True)
