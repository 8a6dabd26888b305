"""Scans over a document's text stay linear on hostile shapes: CPU seconds of
the work on a text 8 times longer against the same work on the short text
done 8 times, the floor measured in the same run (linear: a ratio near 1;
quadratic: near 8).

Each shape once took time growing with the square of the text, since each
step searched or copied the rest of it:

* void text and list headings (``void_blocks.void_spans``, uncached;
  ``list_heading.sections`` and ``heading_of``): unclosed ``<s>`` / ``<del``
  tags, a line of ``~~`` marks (and a pair after them), many void headings, a superseded section of
  cancelled sub-headings, many ``Notes`` lines above a list, headings each
  written inside the list before;
* list items (``items.item_spans``) of one-line items;
* continuation lines (``lines.continuation`` / ``paragraph_continuation``)
  asked of every other line of labelled lines;
* a whitespace-folded search (``locate._plain_occurrences``) of a value whose
  words a repetitive text repeats all but its last;
* the records file read line by line (``outfile.iter_lines``: resume, report);
* a markup document's tokens (``markup`` element paths and spans: each
  ``<x`` without ``>``, ``<!--`` without ``-->``, ``<![CDATA[``, ``<?``,
  ``<!`` without its closer once scanned the rest of the document) and a
  JSON document's strings (``brackets``: a long line of ``"\\`` whose quotes
  never close);
* the depth of each line of a document nesting its elements or objects
  thousands deep (``depths.line_depths``: each line's path held every open
  container; now a document deeper than ``open_containers.MAX_DEPTH`` is read
  by its indentation);
* a long line's values read past a quoted string they begin with
  (``quotes.past_quote`` at each value, as a learned locator does, and
  ``quotes.read_items`` splitting outside quoted items): unquoted values,
  and values that each open a quote none closes;
* a tool call's argument text read as a restarted object
  (``assembled_arguments.restarted_object``): each ``{`` sliced the rest;
* an output's values placed in a long document (``placing.check_grounding``,
  as every output is checked): thousands of distinct list items, each a
  search of the whole text (now an index of the text built once,
  ``occurrence_index``), and one item repeated thousands of times, each
  repeat reading every occurrence and every place taken before it;
* the whole items a list's rules allow that its items left out
  (``hand_rules.held_fields``): each allowed item tested against every item
  taken;
* a reply's fields' token probabilities (``token_confidence.
  field_probabilities``): thousands of list items in another script (each
  leaf encoded the reply before it) and a reply nested thousands deep (a
  call per level: past the recursion limit).

Target: every ratio below 3.

    python benchmarks/bench_linear.py [--n 1000] [--factor 8] [--tries 3] [--only NAME]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import BaseModel

from agentflow.extraction.hand_rules import held_fields
from agentflow.extraction.outfile import iter_lines
from agentflow.grounding import Grounded, GroundedValue, brackets, check_grounding, markup
from agentflow.grounding.brackets import _items as json_items
from agentflow.grounding.brackets import _paths as json_paths
from agentflow.grounding.depths import line_depths
from agentflow.grounding.items import item_spans
from agentflow.grounding.lines import continuation, paragraph_continuation
from agentflow.grounding.list_heading import heading_of, sections
from agentflow.grounding.locate import _plain_occurrences
from agentflow.grounding.markup import _paths as markup_paths
from agentflow.grounding.markup import _spans as markup_spans
from agentflow.grounding.quotes import past_quote, read_items
from agentflow.grounding.void_blocks import void_spans
from agentflow.logprobs import TokenLogprob
from agentflow.output.assembled_arguments import restarted_object
from agentflow.output.token_confidence import field_probabilities

TARGET = 3.0


def scans(text: str) -> None:
    void_spans.__wrapped__(text)  # (not the cached answer)
    sections(text, "notes")
    heading_of(text, len(text))


def every_other_continuation(text: str) -> None:
    lines = text.split("\n")
    for i in range(0, len(lines), 2):
        continuation(lines, i)
        paragraph_continuation(lines, i)


def folded_search(text: str) -> None:
    _plain_occurrences("lime nut " * 80 + "pear", text, False)


def values_of_a_line(text: str) -> None:
    read_items(text, ", ", unquote=True)
    start = 0
    while (at := text.find(": ", start)) >= 0:
        start = at + 2
        past_quote(text, start)


def markup_tokens(text: str) -> None:
    lines = tuple(text.split("\n"))
    markup_paths.__wrapped__(lines)  # (not the cached answers)
    markup_spans.__wrapped__(lines)


def json_tokens(text: str) -> None:
    lines = tuple(text.split("\n"))
    json_paths.__wrapped__(lines)
    json_items.__wrapped__(lines)


def depths_of_lines(text: str) -> None:
    for module in (brackets, markup):  # (not the cached answers)
        for cached in vars(module).values():
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()
    line_depths(text.split("\n"))


def records_file(text: str) -> None:
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
        f.write(text.encode())
        f.flush()
        for _ in iter_lines(Path(f.name)):
            pass


_ITEM = Grounded(whole_tokens=True, clean=True)  # the extraction default's rules


def placed_items(text: str) -> None:
    items = [line[2:] for line in text.split("\n") if line.startswith("- ")]
    check_grounding([GroundedValue(f"items[{i}]", item, _ITEM) for i, item in enumerate(items)],
                    text)


class Changes(BaseModel):
    """A list of whole items, as a changelog's changes."""

    changes: list[Annotated[str, Grounded(whole_items=True)]]


def held_items(text: str) -> None:
    spans = {f"changes[{i}]": [span] for i, span in enumerate(item_spans(text))}
    items = [text[a:b] for [(a, b)] in spans.values()]
    held_fields(Changes, Changes(changes=items), text, spans)


def reply_tokens(text: str) -> None:
    field_probabilities([TokenLogprob(text[i:i + 3], -0.01) for i in range(0, len(text), 3)])


SHAPES: dict[str, tuple[Callable[[int], str], Callable[[str], None]]] = {
    "unclosed <s>": (lambda n: "<s> x\n" * n, scans),
    "a line of ~~": (lambda n: "~~a " * n, scans),
    "a line of ~~, then a pair": (lambda n: "~~a " * n + "~~gone~~", scans),
    "unclosed <del": (lambda n: "<del " * n, scans),
    "opener runs (~~, <s)": (lambda n: "approx ~~5 min " * n + "<s>x <s y " * n, scans),
    "void headings": (lambda n: "CANCELLED\nTotal: 1\n\n" * n, scans),
    "cancelled sub-headings": (
        lambda n: "## Superseded\n" + "### x (cancelled)\nTotal: 1\n" * n, scans),
    "Notes lines": (lambda n: "Notes\n" * n + "Notes:\n" + "- x\n" * n, scans),
    "headings inside the list before": (lambda n: "Notes:\n" + "- a\n  Notes:\n" * n, scans),
    "one-line items": (lambda n: "- lime\n" * (10 * n), item_spans),
    "labelled lines' continuations": (lambda n: "Order: C-3\n" * (10 * n),
                                      every_other_continuation),
    "folded search, repetitive text": (lambda n: "lime  nut " * (10 * n), folded_search),
    "records file, short lines": (lambda n: '{"id":"x"}\n' * (40 * n), records_file),
    "a long line of unquoted values": (lambda n: "k: item, " * (10 * n), values_of_a_line),
    "a long line of unclosed quotes": (lambda n: 'k: "it, ' * (10 * n), values_of_a_line),
    "markup openers without closers": (
        lambda n: "<r>\n</r>\n" + "<x a\n<!-- b\n<![CDATA[ c\n<? d\n<!e\n" * n, markup_tokens),
    "elements never closed": (lambda n: "<r>\n</r>\n" + "<a>\n" * (2 * n), depths_of_lines),
    "objects never closed": (lambda n: '{\n"k": 1,\n' + '"a": {\n' * n, depths_of_lines),
    "JSON strings never closed": (lambda n: '{\n "a": 1,\n' + '"\\' * (10 * n), json_tokens),
    "tool arguments, braces, no restart": (
        lambda n: '{"code": "' + "if (x) { y(); } " * (10 * n) + '"} x}', restarted_object),
    "tool arguments, a run of braces": (lambda n: "{" * (40 * n) + "}", restarted_object),
    "distinct list items placed": (
        lambda n: "".join(f"- lime{i:07d} nut {i % 97}\n" for i in range(2 * n)), placed_items),
    "one list item repeated": (lambda n: "- same thing\n" * (n // 2), placed_items),
    "whole items left out": (lambda n: "".join(f"* x{i}\n" for i in range(2 * n)), held_items),
    "reply items in another script": (
        lambda n: '{"items": [' + ", ".join(f'"café {i} ñ"' for i in range(2 * n)) + "]}",
        reply_tokens),
    "a reply nested deep": (lambda n: '{"a": ' + "[1, " * (4 * n) + "]" * (4 * n) + "}",
                            reply_tokens),
}


def cpu(work: Callable[[str], None], text: str) -> float:
    """CPU seconds of ``work(text)``."""
    start = time.process_time()
    work(text)
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="repeats of the shape (short text)")
    parser.add_argument("--factor", type=int, default=8, help="how much longer the long text is")
    parser.add_argument("--tries", type=int, default=3, help="the least of this many tries")
    parser.add_argument("--only", default="", help="only the shapes whose name holds this")
    args = parser.parse_args()
    print(f"| shape | short text | {args.factor} x short, s | long text, s | ratio | < {TARGET} |")
    print("|---|--:|--:|--:|--:|---|")
    failed = 0
    for name, (make, work) in SHAPES.items():
        if args.only not in name:
            continue
        short, long = make(args.n), make(args.n * args.factor)
        floor = min(sum(cpu(work, short) for _ in range(args.factor))
                    for _ in range(args.tries))
        took = min(cpu(work, long) for _ in range(args.tries))
        ratio = took / floor if floor else float("inf")
        failed += ratio >= TARGET
        print(f"| {name} | {len(short):,} chars | {floor:.4f} | {took:.4f} | {ratio:.2f} | "
              f"{'yes' if ratio < TARGET else 'NO'} |", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
