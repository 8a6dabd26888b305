"""A learned locator reads its label where its examples write it (newcomer17
probe, findings 2 and 4): at the nesting depth every example writes the label
at (a CITATION.cff's top-level ``version:``, never the one under
``references:``), inside the fenced block every example writes the value in
(a Markdown page's ``---`` front matter, never a code block of its body),
inside the kind of group every example writes it under (``[submodule "*"]``,
never ``[lfs]``); and a value that begins with a marker line no example's
value begins with (a YAML block scalar's ``>-``) is never pinned. Each was
read and pinned at 0.99 before."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentflow import Example
from agentflow.extraction.confidence import HELD, REVIEW_BELOW, field_confidence
from agentflow.grounding.depths import line_depths
from agentflow.grounding.fences import fence_key, fence_of, in_fence
from agentflow.grounding.groups import group_kind, in_group
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locator_rule import VALUES_KEY, block_marker
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Citation(BaseModel):
    title: str | None = Field(None, description="top-level title:")
    version: str | None = Field(None, description="top-level version:")


CFF = [
    Example("cff-version: 1.2.0\ntitle: Widget Toolkit\nauthors:\n  - given-names: Jane\n"
            "    family-names: Roe\nversion: 3.2.1\n",
            Citation(title="Widget Toolkit", version="3.2.1")),
    Example("cff-version: 1.2.0\nauthors:\n- family-names: Lovelace\ntitle: Engine Notes\n"
            "version: 1.0.4\npreferred-citation:\n  type: article\n  title: Sketch\n",
            Citation(title="Engine Notes", version="1.0.4")),
]
NESTED_FIRST = ("cff-version: 1.2.0\ntitle: Gadget\nreferences:\n  - type: software\n"
                "    title: Widget Toolkit\n    version: 0.9.2\nversion: 4.0.0\n")
NESTED_ONLY = ("cff-version: 1.2.0\ntitle: Gadget\nlicense: MIT\nreferences:\n"
               "  - type: software\n    title: Widget Toolkit\n    version: 0.9.2\n")


def test_line_depths_are_relative_to_the_enclosing_lines() -> None:
    assert line_depths(["a:", "  b:", "    c: 1", "", "  d: 2", "e: 3"]) == [0, 1, 2, 2, 1, 0]
    assert line_depths(["  a: 1", "  b: 2", "    c"]) == [0, 0, 1]  # indented as a whole
    # a group line encloses nothing: its keys are at depth 0, indented or not
    assert line_depths(['[submodule "x"]', "\tpath = x", "[project]", "  name = y"]) == [0] * 4


def test_a_label_is_read_at_the_depth_every_example_writes_it_at() -> None:
    rules = learn_locators(check_examples(CFF, Citation), Citation)
    version = rules["version"]
    assert version.depth == 0
    # the top-level key, not the nested one written first (0.9.2 before)
    assert version.values(NESTED_FIRST) == ["4.0.0"]
    assert not version.off_depth(NESTED_FIRST)
    confidence, _ = field_confidence(Citation(title="Gadget", version="4.0.0"), NESTED_FIRST,
                                     {}, rules)
    assert confidence["version"] == HELD


def test_a_label_written_only_nested_is_never_pinned() -> None:
    rules = learn_locators(check_examples(CFF, Citation), Citation)
    version = rules["version"]
    assert version.off_depth(NESTED_ONLY)
    for value in ("0.9.2", None):  # the nested value (pinned at 0.99 before), or a null
        confidence, _ = field_confidence(Citation(title="Gadget", version=value), NESTED_ONLY,
                                         {}, rules)
        assert confidence["version"] < REVIEW_BELOW
        assert confidence["title"] == HELD
    # the grammar offers the field's ordinary grounding, not the nested value alone
    schema = {"type": "object", "properties": {name: {"anyOf": [
        {"type": "string", "x-grounded": True}, {"type": "null"}]} for name in rules}}
    offered = apply_locators(schema, rules, NESTED_ONLY)
    assert offered["properties"]["version"] == schema["properties"]["version"]
    assert offered["properties"]["title"][VALUES_KEY] == ["Gadget"]


class Page(BaseModel):
    title: str | None = Field(None, description="front matter title:")
    description: str | None = Field(None, description="front matter description:")


PAGES = [
    Example("---\ntitle: npm-stars\nsection: 1\ndescription: View starred packages\n---\n\n"
            "### Synopsis\n\n```bash\nnpm stars [<user>]\n```\n",
            Page(title="npm-stars", description="View starred packages")),
    Example("---\ntitle: Scope\nsection: 7\ndescription: Scoped packages\n---\n\n"
            "### Description\n\nAll npm packages have a name.\n",
            Page(title="Scope", description="Scoped packages")),
]


def test_fence_lines_and_blocks() -> None:
    assert fence_key("---\r") == "---" and fence_key("```yaml") == "```"
    assert fence_key("-- x") == "" and fence_key("--") == "" and fence_key("a---") == ""
    text = "---\na: 1\n---\nb: 2\n```\nc: 3\n```\n"
    assert fence_of(text, text.index("a:")) == "^---"
    assert fence_of(text, text.index("b:")) == ""
    assert fence_of(text, text.index("c:")) == "```"
    assert in_fence(text, "^---").split("\n")[:4] == ["---", "a: 1", "---", "    "]
    assert in_fence("title: x\n", "^---").strip() == ""  # no block: nothing to read


def test_a_key_is_read_inside_the_fenced_block_every_example_writes_it_in() -> None:
    rules = learn_locators(check_examples(PAGES, Page), Page)
    description = rules["description"]
    assert description.fence == "^---"
    in_body = ("---\ntitle: Writing front matter\nsection: 7\n---\n\nSuch as:\n\n```yaml\n"
               "title: My page\ndescription: A short summary\n```\n")
    no_front_matter = "# npm-legacy\n\ndescription: this page predates front matter\n"
    assert description.values(in_body) == []  # ("A short summary", 0.99, before)
    assert description.values(no_front_matter) == []
    assert rules["title"].values(in_body) == ["Writing front matter"]
    nested = "---\nseo:\n  description: How to configure npm\nsection: 7\n---\n"
    assert description.off_depth(nested)
    confidence, _ = field_confidence(Page(description="How to configure npm"), nested, {}, rules)
    assert confidence["description"] < REVIEW_BELOW


def test_a_value_that_begins_with_a_marker_line_no_example_shows_is_never_pinned() -> None:
    rules = learn_locators(check_examples(PAGES, Page), Page)
    description = rules["description"]
    assert not description.marked
    for marker in (">-", "|"):
        doc = (f"---\ntitle: npm-folded\ndescription: {marker}\n  Download and install node\n"
               "  on every platform\n---\n")
        (value,) = description.values(doc)  # read below its block indicator (newcomer22)
        assert " ".join(value.split()) == "Download and install node on every platform"
        assert not description.pins(f"{marker}\n  {value}")  # the marker read with it: never
        confidence, _ = field_confidence(Page(title="npm-folded", description=value), doc, {},
                                         rules)
        assert confidence["description"] < REVIEW_BELOW  # across lines, as no example's value
        assert confidence["title"] == HELD
    assert not block_marker("Download\n and more") and not block_marker(">-")


class Submodules(BaseModel):
    urls: list[str] = Field(default_factory=list, description="each submodule's url =")


MODULES = [
    Example('[submodule "vendor/fmt"]\n\tpath = vendor/fmt\n\turl = https://x.org/fmt.git\n'
            '[submodule "docs/theme"]\n\tpath = docs/theme\n\turl = https://x.org/theme\n',
            Submodules(urls=["https://x.org/fmt.git", "https://x.org/theme"])),
    Example('[submodule "zlib"]\n\tpath = zlib\n\turl = https://x.org/zlib.git\n'
            '[submodule "json"]\n\tpath = json\n\turl = git@x.org:json.git\n',
            Submodules(urls=["https://x.org/zlib.git", "git@x.org:json.git"])),
]


def test_a_list_is_read_inside_the_kind_of_group_its_examples_write_it_under() -> None:
    assert group_kind('[submodule "a/b"]') == '[submodule "*"]' and group_kind("[lfs]") == ""
    assert in_group('[submodule "a"]\nurl = a\n[lfs]\nurl = l\n', '[submodule "*"]').split(
        "\n")[:4] == ['[submodule "a"]', "url = a", "     ", "       "]
    rule = learn_locators(check_examples(MODULES, Submodules), Submodules)["urls"]
    assert rule.group == '[submodule "*"]'
    doc = ('[submodule "a"]\n\tpath = a\n\turl = https://e.org/a.git\n[lfs]\n'
           '\turl = https://lfs.e.org/repo\n[submodule "b"]\n\tpath = b\n\turl = https://e.org/b.git\n')
    # the [lfs] url is no submodule's (an item of the list, 0.99, before)
    assert rule.values(doc) == ["https://e.org/a.git", "https://e.org/b.git"]
