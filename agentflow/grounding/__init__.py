"""Grounding: extracted values that must be verbatim spans of the source text.

**Declaring.** One marker, ``Grounded()``, as ``Annotated`` metadata::

    class Contact(BaseModel):
        name: Annotated[str, Grounded()]                  # a str field
        phone: Annotated[str | None, Grounded()] = None   # null when the text has none
        tags: list[Annotated[str, Grounded()]]            # each item
        notes: Annotated[list[str], Grounded()]           # the same: each item
        city: Annotated[str, Grounded(case_sensitive=False)]
        version: Annotated[str, Grounded(whole_tokens=True)]  # never part of a token
        items: list[Annotated[str, Grounded(whole_lines=True)]]  # whole lines, each
        changes: list[Annotated[str, Grounded(whole_items=True)]]  # list items, each

at any depth (nested models, lists of models, dataclasses, TypedDicts). A
marker on anything but ``str``, ``str | None`` or a list/tuple/set of them
raises ``SchemaError`` naming the field when the call (or ``grounding_plan``)
checks the type. Instead of marking fields one by one, a default grounds
every *free-text* string leaf (a value declared ``str``; never enums,
``Literal`` values, numbers or booleans): ``OutputConfig(ground=True)`` per
agent, ``agent.call(..., ground=True)`` per call, ``extract_many(...,
ground=True)`` per batch; ``ground=Grounded(case_sensitive=False)`` sets the
rules the default applies. An absent value is ``null`` on an optional field:
an empty grounded string is refused ("empty text"). The default also holds
every number leaf (``int``, ``float``, ``Decimal``) and date leaf (``date``,
``datetime``) to the numbers and days the source writes, read by value
(``agentflow.grounding.typed_values``: ``1,200`` is 1200, ``5 March 2024``
is 2024-03-05; a number in any convention the text allows,
``agentflow.grounding.number_readings``: ``1.234,56``, ``1.5e3``, ``12%``
as 12 or 0.12, ``USD1,234``): the grammar of a model that takes one offers only those
(``marker.TYPED_KEY``), and any other value is refused ("1994 is not written
in the document"). A field marked ``Derived()`` opts out of both.

**Choices.** A marker on a ``Literal`` of strings or a ``str`` enum (never
the default) grounds the choice: its label must occur in the source, letter
case ignored (``urgency=HIGH`` holds ``"high"``), under the marker's other
rules (``whole_tokens``, ``line``)::

    urgency: Annotated[Literal["low", "medium", "high"], Grounded(line=r"urgency=")]

so a model can no longer pick a label the document does not say; the
grammar offers only the labels that occur.

**Verbatim** (the one definition, ``locate``): a value is found in the source
when it occurs there exactly; failing that, when it occurs with every run of
whitespace (spaces, tabs, newlines) in the value matching any non-empty run
of whitespace in the source, the value's leading and trailing whitespace
ignored; failing that, when value and source are equal in Unicode
compatibility form (NFKC: ``é`` composed or decomposed, ``ﬁ`` and ``fi``,
full-width letters — one text in two encodings, as PDF text layers write
it; a non-breaking space and a space, ``…`` and ``...``), or equal once
typographic punctuation is read as plain ASCII (curly quotes and ``'``/``"``,
en/em dashes and the minus sign and ``-``, either side: a model writes
``don't`` where the document has ``don’t``, ``1990-1995`` for ``1990–1995``);
failing that, in a markup (XML, HTML) or JSON document, when it occurs
once the document's escapes are read as the characters they stand for
(``Salt &amp; Pepper`` is ``Salt & Pepper``, ``Caf\\u00e9`` is ``Café``:
the value a parser gives, ``agentflow.grounding.escapes``; the span is the
escaped text); letter case matters unless the marker says
``case_sensitive=False``. The span is where it occurs in the source.

**Whole tokens** (``Grounded(whole_tokens=True)``): the value must also begin
and end at token boundaries of the source, so it is one or more whole tokens
with what lies between them. A token is a maximal run of characters that are
neither whitespace nor delimiters (brackets, quotes, ``,`` and ``;``), less a
trailing run of ``. : ! ?`` (``agentflow.grounding.tokens`` defines it once):
``2:1.5.2-1``, ``jelmer@debian.org``, ``urgency=medium`` and
``d/salsa-ci.yml`` are one token each, so ``1.5.2-1``, ``debian`` or ``d`` are
refused there ("cuts through the token ..."), while ``unstable`` out of
``unstable;`` and ``Paris`` out of ``Paris.`` are whole. An occurrence that
cuts a token does not count: the span is the first whole-token occurrence by
the occurrence rule below. The grammar of a model that takes one allows only
such values. Use it for fields whose values are whole words of the text
(identifiers, versions, names, addresses, dates, whole lines).

**Whole lines** (``Grounded(whole_lines=True)``): the value must begin where
a line's content begins and end where a line's content ends (the same line's
or a later one's); a line's content is the line less its indentation, a list
marker (``*``, ``-``, ``+``, ``•``, ``1.``, ``2)`` ... followed by whitespace)
and trailing whitespace (``agentflow.grounding.lines`` defines it once).
Use it for the items of a bulleted or numbered list, the lines of an address,
a paragraph: an item copied from such a list can no longer stop in the middle
of its line ("is only part of the line ..."). Under ``whole_lines`` only
whole-line occurrences are candidates.

**Whole items** (``Grounded(whole_items=True)``): the value must be exactly
one item of a bulleted or numbered list of the source: the text after the
item's marker with its continuation lines (the lines after it indented
deeper than the marker, nested items included; ``agentflow.extraction.
items`` defines it once). Use it for the items of such a list when an item
may run over several lines: a copy can no longer stop at the end of the
item's first line, nor run into the next item ("is not one whole item of a
list ..."). The grammar of a model that takes one lists the document's
items as the only values. Under ``whole_items`` only occurrences that are
exactly an item are candidates.

**On a line** (``Grounded(line=r"urgency=")``): the value must lie within one
line of the source that the regular expression searches (a whole item: its
first line). It says where a field is written, as a ``pattern`` says what it
looks like: a version on the header line, never a version named in a change
line; a total on the line that starts with ``Total``. Only occurrences on
such lines are candidates; elsewhere the value goes back as "is not on a
line that matches ...". The grammar of a model that takes one offers only
spans of those lines. In a JSON Schema: ``"x-grounded-line": "urgency="``
beside ``"x-grounded"``.

**In order** (``Grounded(after="version")``): the value must begin at or
after the end of the value of an earlier field of the same object (declared
before it; ``grounding_plan`` checks), its earliest end among the places its
own rules allow. It says in what order a line or a record writes its fields,
as LangExtract's prompts ask for "extractions in order of appearance":
``package (version) distribution`` is ``version: after="package"`` and
``distribution: after="version"``. A null (or ungrounded) earlier field sets
no bound. On a list, each item is held after the named field. Elsewhere a
value goes back as "is not after the value of 'version' in the document".
The grammar of a model that takes one offers the later field only values
that follow (``agentflow.output.grammar_order``: strings with a line rule or
a pattern, choices, whole items, and lists of them; others are verified
only), so a value of the earlier field that no later value can follow is not
offered either. In a JSON Schema: ``"x-grounded-after": "version"``.

**Longest** (``Grounded(longest=True)``, on a field with a ``pattern``): the
value must not be a proper part of a longer span that the field's other
rules and its pattern also allow (``agentflow.grounding.longest``): a name
with all its first names, never ``Klose <doko@debian.org>`` out of ``Matthias
Klose <doko@debian.org>``. Only occurrences that are such maximal spans are
candidates; elsewhere the value goes back as "is only part of 'Matthias Klose
<doko@debian.org>' in the document". The grammar of a model that takes one
lists only the maximal spans. The pattern must describe a whole value (a
name's pattern that let it start with ``--`` would make ``-- Matthias ...``
the whole value). In a JSON Schema: ``"x-grounded-longest": true``.

The ``ground=True`` default applies ``Grounded()`` (sub-token values allowed):
it grounds every string leaf of schemas not written for grounding, where a
value may rightly be part of a token (a surname out of ``Smith-Jones``, a
domain out of an e-mail address); ``ground=Grounded(whole_tokens=True)`` makes
the default whole-token.

**Spans.** ``[start, end)`` character offsets (Python ``str`` indices) into
the source: the text of the user messages the caller gave the call (every
one of them, joined by a blank line when there are several; never a message
the framework added, such as a reminder or a re-ask). Keyed by field path:
python field names, dotted, ``[i]`` for list items (``maintainer``,
``changes[2]``, ``entries[3].version``); ``{"path": [(start, end)]}``.

**Occurrence rule.** Values are placed in schema order (fields in
declaration order, list items in order). Each takes the first occurrence
that starts at or after the start of the previous value's span and is not
already taken by an earlier value with the same span; failing that, the
first occurrence anywhere not taken; failing that, its first occurrence.
Under ``whole_tokens`` only whole-token occurrences are candidates.
Repeated list items therefore map to successive occurrences (a value that
repeats more often than the document holds it reuses the first one, and
``degenerate.check_degenerate`` refuses a list that repeats it 6 times or
more, ``agentflow.extraction.list_repeats`` flags fewer repeats); items
that overlap in the source simply have overlapping spans.
"""

from __future__ import annotations

from agentflow.grounding.check import GroundingCheck
from agentflow.grounding.locate import locate
from agentflow.grounding.marker import (
    GROUNDED_KEY,
    LINE_KEY,
    WHOLE_ITEMS,
    WHOLE_LINES,
    WHOLE_TOKENS,
    Grounded,
    mark_all_strings,
)
from agentflow.grounding.marker_checks import grounding_plan
from agentflow.grounding.placing import check_grounding
from agentflow.grounding.values import GroundedValue, grounded_values

__all__ = [
    "GROUNDED_KEY",
    "LINE_KEY",
    "WHOLE_ITEMS",
    "WHOLE_LINES",
    "WHOLE_TOKENS",
    "Grounded",
    "GroundedValue",
    "GroundingCheck",
    "check_grounding",
    "grounded_values",
    "grounding_plan",
    "locate",
    "mark_all_strings",
]
