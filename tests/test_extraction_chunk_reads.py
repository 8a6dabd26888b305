"""A long document's chunks: where a field's learned rule reads it, only the chunks
that read it decide it (agentflow.extraction.chunk_reads, merge.ChunkOutput.reads)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from agentflow import Example, ModelProfile
from agentflow.batch import extract_many
from agentflow.extraction.chunk_reads import ChunkReads
from agentflow.extraction.merge import ChunkOutput, Merge, merge_outputs, rules_of
from agentflow.grounding.locators import learn_locators
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
