"""Substring grammars stay within llguidance's lexer limits (``grammar_cost``).

The document is tests/data/editor.desktop: one application named in two
dozen languages and scripts, as a translated freedesktop entry is (the kind
of document that made llguidance give up with ``LexerTooComplex`` and
llama.cpp decode without the grammar). The last test runs the real llama.cpp
server and its llguidance on the grammar built for a part of it: it asserts
what the server's log says, not timings.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentflow.output.grammar import substring_grammar
from agentflow.output.grammar_cost import LEXER_BUDGET, affordable, lexer_fuel, source_grams
from agentflow.providers._local_grammar import JSON_SEPARATORS
from agentflow.providers.local import LocalModel, bundled_available

DOCUMENT = (Path(__file__).parent / "data" / "editor.desktop").read_text(encoding="utf-8")
WITHIN = "".join(DOCUMENT.splitlines(keepends=True)[:64])  # its first 64 lines
CLEAN = {"type": "string", "x-grounded": True, "x-grounded-clean": True, "maxLength": 200}
SCHEMA = {"type": "object", "properties": {"name": {"anyOf": [CLEAN, {"type": "null"}]}},
          "required": ["name"], "additionalProperties": False}
"""A ``str | None`` field, clean-edged (as worked examples make it)."""


def escaped(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


# ------------------------------------------------------------------ the estimate

def test_the_estimate_counts_distinct_short_strings_not_length() -> None:
    assert source_grams("abab") == len({"a", "b", "ab", "ba", "aba", "bab", "abab"})
    repeated = escaped("x " * 100_000)  # 200 KB: x, " ", "x ", " x", ... "x x ", " x x"
    assert source_grams(repeated) == 8 and affordable(repeated)
    assert lexer_fuel(escaped(WITHIN)) <= LEXER_BUDGET < lexer_fuel(escaped(DOCUMENT))
    assert not affordable(escaped(DOCUMENT)) and affordable(escaped(WITHIN))
    assert not affordable(escaped(WITHIN), factor=3)  # a pattern intersected costs more
    assert source_grams(escaped(DOCUMENT), limit=100) <= 100 + 4 * 4096  # stops counting


def test_a_clean_terminal_intersects_once() -> None:
    """Clean edges are trimmed ones: ``SOURCE & CLEAN_EDGES``, not also ``& TRIMMED``
    (each intersection multiplies what llguidance's lexer builds)."""
    text = substring_grammar(SCHEMA, WITHIN, JSON_SEPARATORS)
    assert text is not None
    assert 'GROUNDED_CLEAN: "\\"" (SOURCE & CLEAN_EDGES) "\\""' in text
    assert "%json" not in text


def test_a_document_over_the_budget_gets_its_fields_plain_schema() -> None:
    """Over the budget no source terminal is built: the grounded field is
    its own JSON Schema (bounds kept, marks dropped) and verification
    decides, as for a source over MAX_SOURCE_CHARS; the rest of the grammar stays."""
    text = substring_grammar(SCHEMA, DOCUMENT, JSON_SEPARATORS)
    assert text is not None and "SOURCE" not in text and "x-grounded" not in text
    field = next(line for line in text.splitlines() if "%json" in line)
    assert json.loads(field.split("%json ", 1)[1])["maxLength"] == 200


# ------------------------------------------------------------------ the real llama.cpp

@pytest.fixture(scope="module")
def model() -> Iterator[LocalModel]:
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    local = LocalModel(parallel=1)
    yield local
    local._stop_server()


def complete(local: LocalModel, grammar: str, tokens: int) -> Any:
    """llama.cpp's ``/completion`` of a fixed prompt under ``grammar``."""
    body = {"prompt": "Application name: ", "grammar": grammar, "n_predict": tokens,
            "temperature": 0}
    request = urllib.request.Request(f"{local._server.address}/completion",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as reply:
        return json.loads(reply.read())


async def test_the_grammar_of_a_document_within_the_budget_is_kept(model: LocalModel) -> None:
    """The real llguidance decodes under the grammar built for the document:
    it logs no failure, and the reply is the grammar's."""
    model._ensure_server()
    log = model._server.log
    before = log.grammar_count
    grammar = substring_grammar(SCHEMA, WITHIN, JSON_SEPARATORS)
    assert grammar is not None and "SOURCE & CLEAN_EDGES" in grammar
    reply = await asyncio.to_thread(complete, model, grammar, 48)
    assert log.grammar_count == before
    value = json.loads(reply["content"])["name"]
    assert value is None or value in WITHIN
