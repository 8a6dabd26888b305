"""A long document's chunks: where a field's learned rule reads it, only the chunks
that read it decide it (agentflow.extraction.chunk_reads, merge.ChunkOutput.reads)."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from agentflow import Example, ModelProfile
from agentflow.batch import extract_many
from agentflow.extraction.chunk_reads import ChunkReads
from agentflow.extraction.merge import ChunkOutput, Merge, merge_outputs, rules_of
from agentflow.grounding.locator_offer import apply_locators
from agentflow.grounding.locators import VALUES_KEY, learn_locators
from agentflow.grounding.output_checks import LOCATED_KEY, call_located
from agentflow.messages import Msg
from agentflow.output.examples import check_examples
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply


class Package(BaseModel):
    name: str | None = None
    version: str | None = None
    license: str | None = None


EXAMPLES = [
    Example('{\n  "name": "left-trim",\n  "version": "2.1.0",\n  "scripts": {\n'
            '    "test": "node test.js"\n  },\n  "license": "MIT",\n  "private": true\n}\n',
            Package(name="left-trim", version="2.1.0", license="MIT")),
    Example('{\n  "name": "http-cache",\n  "version": "0.9.3",\n  "license": "ISC",\n'
            '  "engines": {\n    "node": ">=18"\n  }\n}\n',
            Package(name="http-cache", version="0.9.3", license="ISC")),
]


def manifest(deps: int = 120) -> str:
    """A package.json whose ``license`` comes after a long dependency list, and
    whose dependencies' block writes a nested ``"version"`` of its own."""
    lines = ['{', '  "name": "npm",', '  "version": "11.19.1",', '  "dependencies": {']
    lines += [f'    "dep-{i}": "^{i}.0.0",' for i in range(deps)]
    lines += ['    "last": "1.0.0"', '  },', '  "templateOSS": {', '    "version": "4.29.0",',
              '    "node": "^20"', '  },',
              '  "license": "Artistic-2.0",', '  "private": true', '}']
    return "\n".join(lines) + "\n"


def rules() -> dict[str, Any]:
    return learn_locators(check_examples(EXAMPLES, Package), Package)


def test_a_chunk_reads_the_fields_whose_document_values_the_rule_finds_in_it() -> None:
    text = manifest()
    cut = text.index('    "dep-100"')
    reads = ChunkReads(rules(), text)
    assert reads(text[:cut]) == {"name", "version"}
    # the second chunk begins inside "dependencies": its own depths read the nested
    # "version" as a top-level one, but that is not the document's version
    assert reads(text[cut:]) == {"license"}
    assert reads(text) == {"name", "version", "license"}


def test_without_a_value_anywhere_a_chunk_writing_the_label_reads_the_field() -> None:
    text = manifest().replace('"license": "Artistic-2.0",', '"license": "",')
    cut = text.index('    "dep-100"')
    reads = ChunkReads(rules(), text)
    assert "license" not in reads(text[:cut]) and "license" in reads(text[cut:])


def test_a_chunk_is_offered_the_values_it_reads_for_the_whole_document() -> None:
    """The second chunk begins inside "dependencies": alone, it writes "license" at
    depth 0, a depth no example writes it at, so its own grammar offers nothing for
    it; the whole document's rule reads its value there, and that is offered."""
    text = manifest()
    cut = text.index('    "dep-100"')
    rule = rules()
    reads = ChunkReads(rule, text)
    assert reads.located(text[cut:]) == {"license": "Artistic-2.0"}
    assert reads.located(text[:cut]) == {"name": "npm", "version": "11.19.1"}
    schema = {"type": "object", "properties": {name: {"anyOf": [
        {"type": "string", "x-grounded": True}, {"type": "null"}]} for name in rule}}
    alone = apply_locators(schema, rule, text[cut:])
    assert alone["properties"]["license"] == schema["properties"]["license"]  # nothing offered
    assert VALUES_KEY in str(alone["properties"]["version"])  # the nested "4.29.0", alone
    offered = apply_locators(schema, rule, text[cut:], reads.located(text[cut:]))
    assert offered["properties"]["license"][VALUES_KEY] == ["Artistic-2.0"]
    message = Msg.user(text[cut:], metadata={LOCATED_KEY: {"license": "Artistic-2.0", "x": 1}})
    assert call_located([message]) == {"license": "Artistic-2.0"}


def test_chunks_that_do_not_read_a_field_neither_win_nor_conflict() -> None:
    rule = rules_of(Package)
    first = ChunkOutput(0, 100, {"name": "npm", "license": "npx"}, reads=frozenset({"name"}))
    second = ChunkOutput(90, 200, {"name": "npm-packlist", "license": "Artistic-2.0"}, index=1,
                         reads=frozenset({"license"}))
    merged = merge_outputs([first, second], rule)
    assert merged.data == {"name": "npm", "version": None, "license": "Artistic-2.0"}
    assert merged.conflicts == ()
    # a field no chunk reads is merged as before: the first value, the other a conflict
    plain = merge_outputs([ChunkOutput(0, 100, {"name": "a"}), ChunkOutput(90, 200, {"name": "b"},
                                                                           index=1)], rule)
    assert plain.data["name"] == "a" and [c.path for c in plain.conflicts] == ["name"]
    # reading chunks that disagree still conflict; a reading chunk's null leaves the others
    both = merge_outputs([
        ChunkOutput(0, 100, {"name": "a"}, reads=frozenset({"name"})),
        ChunkOutput(90, 200, {"name": "b"}, index=1, reads=frozenset({"name"})),
        ChunkOutput(190, 300, {"name": "c"}, index=2)], rule)
    assert both.data["name"] == "a" and [v for v, _, _ in both.conflicts[0].values] == ["a", "b"]
    none = merge_outputs([ChunkOutput(0, 100, {"license": None}, reads=frozenset({"license"})),
                          ChunkOutput(90, 200, {"license": "x"}, index=1)], rule)
    assert none.data["license"] == "x"
    votes = merge_outputs([ChunkOutput(0, 100, {"name": "a"}, reads=frozenset({"name"})),
                           ChunkOutput(90, 200, {"name": "b"}, index=1),
                           ChunkOutput(190, 300, {"name": "b"}, index=2)],
                          {"name": Merge.must_agree()})
    assert votes.data["name"] == "a" and votes.conflicts == ()


def guess(text: str) -> dict[str, Any]:
    """A weak model: a field's value where its chunk writes the key at the top
    level, else the first quoted value it sees (a guess)."""
    out: dict[str, Any] = {}
    first = re.search(r': "([^"]+)"', text)
    for name in ("name", "version", "license"):
        found = re.search(rf'^  "{name}": "([^"]*)"', text, re.MULTILINE)
        out[name] = found.group(1) if found else (first.group(1) if first else None)
    return out


async def test_a_two_chunk_manifest_keeps_the_reading_chunks_values_sure() -> None:
    text = manifest()
    sent: list[str] = []

    async def reply(request: RecordedRequest) -> Reply:
        piece = [m.text for m in request.messages if m.role == "user"][-1]
        sent.append(piece)
        return Reply(tool_calls=[Call("generate_response", guess(piece[piece.find("{"):]))])

    model = FunctionModel(reply, profile=ModelProfile(context_window=1200, max_output_tokens=100))
    results = [r async for r in extract_many(model, [("npm", text)], Package, examples=EXAMPLES)]
    (result,) = results
    assert result.ok, result.error
    assert result.chunks is not None and result.chunks.total >= 2
    assert result.output == Package(name="npm", version="11.19.1", license="Artistic-2.0")
    assert result.conflicts == ()
    assert result.needs_review == () and min(result.confidence.values()) >= 0.9


def _offered(node: Any) -> str | None:
    """The first value a grammar node offers (``VALUES_KEY``), if it offers any."""
    if isinstance(node, dict):
        if VALUES_KEY in node:
            return str(node[VALUES_KEY][0])
        return next((v for b in node.get("anyOf", []) if (v := _offered(b))), None)
    return None


async def test_on_a_grammar_model_each_chunk_is_offered_what_the_whole_document_reads() -> None:
    """A stand-in for the embedded model: it takes the value its grammar offers,
    else guesses. The second chunk alone offers nothing for "license" (its depth
    is the chunk's, not the document's); it is offered the whole document's value."""
    text = manifest()
    offers: list[dict[str, str | None]] = []

    def grammar_model(request: RecordedRequest) -> Reply:
        rf = request.options.response_format
        assert rf is not None and rf.source is not None
        props = (rf.schema or {})["properties"]
        offered = {name: _offered(node) for name, node in props.items()}
        offers.append(offered)
        guessed = guess(rf.source[rf.source.find("{"):] if "{" in rf.source else rf.source)
        return Reply(text=json.dumps({n: offered[n] or guessed[n] for n in props}))

    profile = ModelProfile(supports_tools=False, native_output="json_schema",
                           schema_dialect="local", substring_grammar=True,
                           context_window=1200, max_output_tokens=100)
    model = FunctionModel(grammar_model, profile=profile)
    (result,) = [r async for r in extract_many(model, [("npm", text)], Package,
                                               examples=EXAMPLES)]
    assert result.ok, result.error
    assert result.chunks is not None and result.chunks.total == len(offers) >= 2
    assert offers[-1]["license"] == "Artistic-2.0"
    assert result.output == Package(name="npm", version="11.19.1", license="Artistic-2.0")
    assert result.needs_review == ()


class Entry(BaseModel):
    first_link: str | None = None
    first_updated: str | None = None


FEEDS = [Example(f'<feed>\n  <title>{t}</title>\n  <entry>\n    <link href="{a}"/>\n'
                 f"    <updated>{u}</updated>\n  </entry>\n  <entry>\n    <link href=\"{b}\"/>\n"
                 f"    <updated>{v}</updated>\n  </entry>\n</feed>\n",
                 Entry(first_link=a, first_updated=u))
         for t, a, u, b, v in [("Notes", "https://n.example/2", "2024-02-01", "https://n.example/1",
                                "2024-01-01"),
                               ("Bits", "https://b.example/9", "2023-09-09", "https://b.example/8",
                                "2023-08-08")]]


def test_a_later_records_value_is_not_the_fields_in_another_chunk() -> None:
    """A first-entry field of a chunked feed: the chunk holding only the
    second entry does not read it (newcomer23 probe, finding 4: it read
    the second entry's value, offered it, and conflicted with the first)."""
    rules = learn_locators(check_examples(FEEDS, Entry), Entry)
    text = FEEDS[0].text.replace("Notes", "Diary").replace("n.example", "d.example")
    cut = text.index("  <entry>", text.index("</entry>"))
    reads = ChunkReads(rules, text)
    assert reads(text[:cut]) == {"first_link", "first_updated"}
    assert reads(text[cut:]) == frozenset()  # was both
    assert reads.located(text[cut:]) == {}
