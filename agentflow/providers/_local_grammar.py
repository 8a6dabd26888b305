"""The grammar the embedded model is sent for a JSON Schema response format
(``local.LocalModel.apply_response_format``).

    document_grammar(schema, source, taken)   # per document; None: use schema_grammar
    schema_grammar(schema, cache)             # the schema's own, compiled once per schema

llama.cpp's ``response_format`` json_schema is grammar-enforced but lets the
model emit unbounded whitespace; a raw llguidance ``grammar`` built from the
schema with ``whitespace_flexible: false`` gives bounded JSON (5x fewer tokens
on the bundled model), so that is what is sent, with one space after ``:`` and
``,`` (``JSON_SEPARATORS``): the form ``json.dumps`` writes and a base model
has seen most; fully compact JSON costs the bundled model field accuracy
(benchmarks/RESULTS.md, extract). A response format that carries a ``source``
(a call with grounded fields) gets a grammar built for that document
(``agentflow.output.grammar``), never cached (each holds its document).

Grammar-forced tokens (keys, punctuation) still cost one decoding step each:
llama.cpp's llguidance sampler masks and accepts tokens but does not
fast-forward them (ggml-org/llama.cpp#10224: "not yet hooked up"), and the
server has no request field for it.
"""

from __future__ import annotations

from typing import Any

import orjson

from agentflow._lru import LRU
from agentflow.errors import GroundingError
from agentflow.output.grammar import PATTERN_REASON, NoGroundedValueError, substring_grammar
from agentflow.output.grammar_typed import TYPED_ADVICE

__all__ = ["GRAMMAR_CACHE_SIZE", "JSON_SEPARATORS", "document_grammar", "schema_grammar"]

GRAMMAR_CACHE_SIZE = 64
"""Compiled grammars kept per model (one per output schema, least recently used evicted)."""

JSON_SEPARATORS = {"key_separator": ": ", "item_separator": ", "}
"""Separators of the grammar's JSON (llguidance options): ``{"a": 1, "b": 2}``."""


def document_grammar(schema: Any, source: str,
                     taken: frozenset[tuple[int, int]]) -> str | None:
    """The Lark grammar of ``schema`` whose grounded strings are substrings of
    ``source`` (``agentflow.output.grammar.substring_grammar``, ``taken``: the
    list items an earlier pass took); ``None`` when nothing is grounded or the
    source is too long: then ``schema_grammar``, and verification decides.

    Raises:
        GroundingError: a required grounded field has a ``pattern`` that
            nothing in ``source`` matches, or a required number (date)
            field none of whose written numbers (dates) keeps its
            constraints (``unfound`` names it with an empty value, the
            message says why and, for a number or date, what to do:
            ``grammar_typed.TYPED_ADVICE``): no output could be right.

    Refusing before any request, rather than asking with the plain schema
    and flagging the answer, is deliberate: verification
    (``agentflow.grounding.output_checks.check_output``) refuses a number or
    a date the document does not write, read by the same readings, so any
    answer the model gave would be refused too, after spending every
    attempt; the error says what to change instead (make the field optional,
    ``Derived()`` or ``str``). Such a failure has no answer, so it is never
    counted *suspect* (``agentflow.extraction.report.suspect_record``).
    """
    try:
        return substring_grammar(schema, source, JSON_SEPARATORS, taken)
    except NoGroundedValueError as exc:
        # no output could be right: say which field and why, before any decoding
        cut = any(why == PATTERN_REASON for why in exc.reasons.values())
        typed = any(why != PATTERN_REASON for why in exc.reasons.values())
        raise GroundingError(
            f"{exc}" + ("; the document may have been cut before them" if cut else "")
            + (f"; {TYPED_ADVICE}" if typed else ""),
            unfound=[(name, "") for name in exc.fields],
            detail="\n".join([f"- {name}: {why}" for name, why in exc.reasons.items()]
                              + ([TYPED_ADVICE[0].upper() + TYPED_ADVICE[1:] + "."]
                                 if typed else []))) from None


def schema_grammar(schema: Any, cache: LRU[bytes, str]) -> str:
    """llama.cpp's grammar for the JSON Schema ``schema`` with no free
    whitespace (``xllamacpp.json_schema_to_grammar``), kept in ``cache``
    under the schema's canonical JSON. Needs the ``local`` extra."""
    key = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    grammar = cache.get(key)
    if grammar is None:
        import xllamacpp  # type: ignore[import-untyped]  # no py.typed

        bounded = {**schema, "x-guidance": {"whitespace_flexible": False, **JSON_SEPARATORS}}
        grammar = cache.put(key, xllamacpp.json_schema_to_grammar(bounded))
    return grammar
