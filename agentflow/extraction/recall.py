"""Recall passes over a document read in one request (``passes=N``).

A model that copies list items one by one often closes a list early: it
takes the first change of five and stops. ``extract_many(..., passes=N)``
then reads a document that fits one request again, up to ``N - 1`` times,
as LangExtract's extraction passes and GraphRAG's "gleaning" do for recall:

* each later pass is an ordinary engine call on the same text that asks
  only for what it can change: the top-level list fields and the scalars
  whose later values count (``later_pass_type``), so the model does not
  write again the scalars the first pass gave (the header and trailer of a
  changelog entry: ~60 decoded tokens a pass on the main job); its
  user message carries the spans the earlier passes took as list items
  (``Msg.metadata[TAKEN_KEY]``, ``agentflow.grounding.output_checks``).
  Where the model's profile has a substring grammar, whole-item list items
  at those spans are not offered again (``output.grammar.substring_grammar``
  ``taken``), so a greedy model that stopped after item 2 now starts at
  another item instead of repeating itself; elsewhere a later pass is an
  independent sample, as in LangExtract;
* the outputs are merged by the schema's rules (``agentflow.extraction.
  merge``): later passes only add list items not already found (by span,
  or key), scalars keep the first pass's values; list items found by
  different passes are put back in document order (by span), and a list
  over its ``max_length`` keeps its first items in document order;
* a later pass is made only while it can add something: some top-level list
  of the output has room under its ``max_length``, and, for a list of whole
  items (``Grounded(whole_items=True)``), an item of the document not taken
  yet; the passes stop at the first one that adds nothing;
* a failed later pass loses nothing: the earlier passes' result stands
  (the record counts the failed call in ``chunks.failed``);
* passes that disagree on a scalar are reported as chunks are
  (``ExtractResult.conflicts``), also from a pass that added no item; under
  ``Merge.must_agree()`` the record fails with ``MergeConflictError`` and no
  further pass is made.

Documents too long for one request are chunked instead, and their later
passes are cut at other places (``agentflow.extraction.chunked``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, create_model

from agentflow.extraction.chunked import (
    CallResult,
    ChunkReport,
    DocumentOutcome,
    validate_merged,
)
from agentflow.extraction.merge import (
    ChunkOutput,
    Conflict,
    Merge,
    document_order,
    list_index,
    merge_outputs,
    resolve_ref,
    rules_of,
)
from agentflow.grounding.output_checks import TAKEN_KEY
from agentflow.model import Usage
from agentflow.output.derived import derive
from agentflow.output.grammar_values import item_values

__all__ = ["TAKEN_KEY", "PassCall", "later_pass_type", "recall_passes", "room_left",
           "taken_items"]

Spans = dict[str, list[tuple[int, int]]]

PassCall = Callable[[frozenset[tuple[int, int]], type[BaseModel]], Awaitable[CallResult]]
"""``(taken, ask) -> result``: one engine call on the whole document whose user
message carries ``taken`` (spans earlier passes took as list items), with
output type ``ask`` (``later_pass_type``: the list fields only)."""


def later_pass_type(output: type[BaseModel], rules: Mapping[str, Merge]) -> type[BaseModel]:
    """What a later pass asks for: ``output`` with only the fields whose later
    values can count (same name, docstring, field definitions and order): the
    lists (``key``/``span`` rules), the scalars merged by ``majority`` or
    ``must_agree``, and the fields those begin after (``Grounded(after=...)``).
    A ``first``-rule scalar is the first pass's already and a later pass never
    replaces it, so writing it again only costs decoding. ``output`` itself
    when every field counts. It takes ``output``'s few-shot examples
    (``agentflow.output.derived``)."""
    fields = output.model_fields
    keep = {name for name, rule in rules.items() if rule.rule != "first"}
    while True:  # the chains of after= among the kept fields
        more = {rules[n].after for n in keep if rules[n].after in rules} - keep
        if not more:
            break
        keep |= {n for n in more if n is not None}
    if set(fields) <= keep:
        return output
    kept: dict[str, Any] = {name: (info.annotation, info) for name, info in fields.items()
                            if name in keep}
    return derive(create_model(output.__name__, __doc__=output.__doc__,
                               __config__=output.model_config, **kept), output)


def taken_items(spans: Mapping[str, list[tuple[int, int]]], lists: list[str]
                ) -> frozenset[tuple[int, int]]:
    """The spans of the items of the top-level list fields ``lists``
    (``changes[2]`` -> its span; spans inside list items too, e.g.
    ``entries[0].version``): what a later pass should not take again."""
    return frozenset(r for path, ranges in spans.items()
                     if any(list_index(path, name) is not None for name in lists) for r in ranges)


def room_left(output: type[BaseModel], data: Mapping[str, Any], source: str,
              taken: frozenset[tuple[int, int]]) -> bool:
    """Whether another pass could add a list item to ``data``: some top-level
    list field is under its ``maxItems``, and is not a list of whole items
    (``"x-grounded": "whole_items"``) whose every item in ``source`` (that
    its ``pattern`` and ``x-grounded-line`` allow) is already ``taken``."""
    schema = output.model_json_schema()
    for name, node in schema.get("properties", {}).items():
        node = resolve_ref(node, schema)
        arrays = [n for n in [node, *node.get("anyOf", ())] if isinstance(n, Mapping)
                  and n.get("type") == "array"]
        if not arrays:
            continue
        array = arrays[0]
        high = array.get("maxItems")
        if high is not None and len(data.get(name) or ()) >= int(high):
            continue
        item = resolve_ref(array.get("items", {}), schema)
        if isinstance(item, Mapping) and item.get("x-grounded") == "whole_items":
            line = item.get("x-grounded-line")
            if not item_values(source, item.get("pattern"),
                               line if isinstance(line, str) else None, taken):
                continue
        return True
    return False


async def recall_passes(first: CallResult, text: str, output: Any, passes: int,
                        call: PassCall) -> DocumentOutcome:
    """The outcome of ``first`` (pass 1 on ``text``) and up to ``passes - 1``
    later passes (module docstring), merged.

    Args:
        first: the first pass's result (returned as is when it failed, or when
            ``output`` is not a pydantic model with a list field).
        text: the document (the text the model saw).
        output: the output type.
        passes: passes at most (>= 1).
        call: one more engine call on ``text`` with the taken spans and the
            output type to ask for (``later_pass_type``).

    Returns:
        The merged outcome: usage and attempts of every pass; ``chunks`` says
        how many calls were made (``total``), how many later ones failed, and
        ``passes``. Never raises for a failed later pass.
    """
    if (first.error is not None or passes < 2 or not isinstance(output, type)
            or not issubclass(output, BaseModel)):
        return DocumentOutcome(first.output, first.error, first.usage, first.attempts,
                               dict(first.spans))
    rules = rules_of(output)
    lists = [name for name, rule in rules.items() if rule.rule in ("key", "span")]
    outputs = [ChunkOutput(0, len(text), first.output.model_dump(), dict(first.spans))]
    usage: Usage = first.usage
    attempts, calls, failed = first.attempts, 1, 0
    data: dict[str, Any] | None = None  # the merge, once a later pass added something
    spans: Spans = dict(first.spans)
    taken = taken_items(spans, lists)
    ask = later_pass_type(output, rules)
    conflicts: tuple[Conflict, ...] = ()
    for pass_no in range(1, passes):
        if not lists or not room_left(output, data or outputs[0].data, text, taken):
            break
        result = await call(taken, ask)
        calls += 1
        usage, attempts = usage + result.usage, attempts + result.attempts
        if result.error is not None:
            failed += 1
            break
        outputs.append(ChunkOutput(0, len(text), result.output.model_dump(),
                                   dict(result.spans), pass_no=pass_no))
        merged = merge_outputs(outputs, rules)
        more = taken_items(merged.spans, lists)
        before = data or outputs[0].data
        grew = any(len(merged.data.get(n) or ()) > len(before.get(n) or ()) for n in lists)
        added = grew or not more <= taken
        if added or merged.conflicts:  # new items, or a disagreement the record must show
            data, spans, taken = merged.data, dict(merged.spans), more
            conflicts = merged.conflicts
        if not added or any(c.rule == "must_agree" for c in conflicts):
            break  # nothing added (the next pass would repeat it), or the record fails anyway
    report = ChunkReport(calls, failed, passes=calls)
    if data is None:  # no later pass added or disagreed: the first result stands
        return DocumentOutcome(first.output, None, usage, attempts, dict(first.spans), report)
    document_order(output, data, spans, lists)  # items of several passes: in document order
    error, value = validate_merged(output, data, conflicts)
    return DocumentOutcome(value, error, usage, attempts, spans if error is None else {},
                           report, conflicts)
