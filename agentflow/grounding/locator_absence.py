"""When a learned locator that finds nothing is evidence that a field is empty.

A locator (``agentflow.grounding.locators``) learned from worked examples
reads a field where the examples write it. Where it finds nothing in a
document, that says the field is empty only if the document is written the
way the examples are; a document of another layout (prose, other labels)
may well hold the value where no rule looks (``Based in Boston MA`` for a
location the examples label ``Location:``). ``absence_shown`` is the test
both uses share: the embedded model's grammar forces null (an empty list)
only then (``agentflow.grounding.locator_offer``), and a null the locator
agrees with is confident (``agentflow.extraction.confidence.ABSENT``) only
then; otherwise the field is read and scored as if it had no locator.

**Layout.** The examples' *keys* are the line starts that read as a key
(``Package:``, ``Apply by:``, ``ExecStart=``: a word or a few, then ``:``
or ``=``; ``layout_keys``), learned with the locators (``Locator.layout``).
A document shares the examples' layout when it writes at least
``LAYOUT_MIN_KEYS`` of those keys, other than the field's own label (all of
them, when the examples have fewer; one, when an example leaves the field
empty and so shows how its absence looks), and at least half of them.

**Nothing but the layout.** A *sure* null (``absence_confirmed``) needs
more: every line of the document is one the examples' layout accounts for
(``only_layout``): a line that begins with one of the examples' keys (or a
sub-key of one: ``Requires.private`` of ``Requires``), a line
inside such a key's block (a list item, an indented continuation line), or
a line an example writes as it is (a heading such as ``SHIPPING NOTICE``,
``Locator.lines``), or a comment holding another of the examples' keys
(``# max-line-length = 79``: that key's value, set aside). A line of prose
(``The parcel travels with FedEx.``) or
a key the examples never write (``Courier: FedEx``, ``Shipped via: DHL``)
may hold the value, so the null is not sure there, wherever it holds a
token shaped like a token of the field's example values or nearly
(``agentflow.grounding.token_shapes``: ``FedEx`` like ``UPS``; a homepage
``https://x.example/`` written ``www.frob.example.org``; a date
``2024-05-20`` written ``20/05/2024``; ``Summary: Frobs.`` holds nothing
shaped like a homepage). That is asked where an example leaves the field
empty; where none does, a null is sure only in a **nested** document
(``nested_layout``: the rule reads a key nested under another, a YAML
``namespace:`` under ``metadata:``), whose keys are its fields: the document
writes the key nowhere in any form, and nothing at the key's depth but the
examples' keys, keys that hold nothing shaped like the field's values, and
comments. A flat layout's unknown key may name the field otherwise
(``Courier: Evri`` for ``Carrier:``): no sure null there. An INI **group**
is such a nested layout too (``grouped_layout``): where the rule reads only
inside the group its examples write the field under (``Locator.group``:
``[metadata]``), a document that writes that group with nothing in it but
the examples' keys (``license_files = LICENSE``), and the key nowhere,
shows the field empty; without the group, or with a key in it that could
hold the value (``summary = ...`` for a description), it does not.

**The label written empty** (``shown_empty_here``): its label with nothing
after it (``Locator.writes_empty``), or closed at once by the rule's
``right`` on its line (``"Language: \\n"`` of a gettext header, ``name =
""``), or with an empty quoted string alone after it (``MAILTO=""``),
whatever the next line holds; in a JSON document, its key, or that of
a container the value would be inside, written with ``null``, ``[]`` or
``{}`` at its place (``"name": null``, ``"assets": []``: ``agentflow.
grounding.brackets.written_empty``). That label line is no *mention* of the
key (``mentioned_apart``): only the key written on another line is (in a
JSON document: written as a key, with something after it).

**An element its parent does not hold** (``agentflow.grounding.
element_absence.element_absent``): markup is a nested format too, its
elements its fields; a pom's ``<project>`` without ``<packaging>`` shows
the field empty.
"""

from __future__ import annotations

import re

from agentflow.grounding.brackets import empty_key, is_bracketed, written_empty
from agentflow.grounding.depths import line_depths
from agentflow.grounding.element_absence import element_absent
from agentflow.grounding.groups import group_key, group_kind
from agentflow.grounding.items import ITEM_LINE
from agentflow.grounding.lines import KEY_LINE
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.token_shapes import could_hold
from agentflow.grounding.void_blocks import live_text

__all__ = ["LAYOUT_MIN_KEYS", "absence_confirmed", "absence_shown", "element_absent",
           "grouped_layout", "layout_keys", "layout_lines", "mentioned_apart", "nested_layout",
           "only_layout", "shares_layout", "shown_empty_here"]

LAYOUT_MIN_KEYS = 2
"""Keys of the examples (other than the field's own) a document must write to
share their layout (all of them when fewer; and at least half of them)."""



_KEYED = re.compile(r"^[ \t]*(?:- )?[\"']?([^\W\d][\w.-]*(?: [\w.-]+){0,3})[\"']?[ \t]*[:=](.*)$")
"""A line that begins with a key (after a list item's ``- ``, in quotes or
not): group 1 the key, group 2 what follows its separator."""


def layout_keys(text: str) -> frozenset[str]:
    """The keys ``text``'s lines begin with (``Apply by`` of ``Apply by: 10
    March``), letter case folded."""
    return frozenset(m.group(1).casefold() for m in KEY_LINE.finditer(text))




def _fold(line: str) -> str:
    return " ".join(line.split()).casefold()


def layout_lines(text: str) -> frozenset[str]:
    """The lines of ``text`` that begin with no key (headings, list items,
    prose), whitespace and letter case folded: with ``layout_keys``, what an
    example's layout writes."""
    return frozenset(_fold(line) for line in text.splitlines()
                     if line.strip() and not KEY_LINE.match(line))


def _could_hold(rule: Locator, text: str) -> bool:
    """Whether ``text`` holds a token shaped like a token of the field's
    example values, or nearly (``Locator.shapes``, ``agentflow.grounding.
    token_shapes.could_hold``: ``www.frob.example.org`` for a homepage
    ``https://x.example/``; none learned: any text could)."""
    return could_hold(rule.shapes, text)


def only_layout(rule: Locator, source: str) -> bool:
    """Whether every line of ``source`` is one the examples' layout accounts
    for (see the module docstring): a line that begins with one of their keys
    (``Locator.layout``), a list item or indented line under such a key's
    line, or a line one of them writes (``Locator.lines``); any other line
    (prose, a key they never write) only where it holds no token shaped like
    the field's example values (``Locator.shapes``: ``Summary: Frobs.`` holds
    no homepage shaped ``https://x.example/``, ``Courier: FedEx`` may hold a
    carrier shaped ``UPS``)."""
    keys, lines = set(rule.layout), set(rule.lines)
    under_key = False
    for line in source.splitlines():
        if not line.strip():
            continue
        if _commented_key(line, keys - {_own_key(rule)}):
            continue  # another key of the examples', commented out: that key's old value
        key = KEY_LINE.match(line)
        if key is not None:
            name = key.group(1).casefold()
            if name not in keys and not any(name.startswith(k) and name[len(k):][:1] in ".-_"
                                            for k in keys):
                if _could_hold(rule, line):
                    return False  # a key the examples never write (nor a sub-key of one)
                under_key = False
                continue
            under_key = True
            continue
        if under_key and (line[:1] in " \t" or ITEM_LINE.match(line)):
            continue  # inside a known key's block
        if _fold(line) not in lines and _could_hold(rule, line):
            return False  # prose, or a line no example writes
        under_key = False
    return True


_COMMENTED = re.compile(r"^[ \t]*(?:#+|;+|//)[ \t]*")
"""A comment line's marker (``#``, ``;``, ``//``) and the blanks after it."""


def _commented_key(line: str, keys: set[str]) -> bool:
    """Whether ``line`` is a comment that holds a line beginning with one of
    ``keys`` (``# max-line-length = 79``: a key of the examples' written and
    commented out, in a setup.cfg or a shell file): that key's value, set
    aside, as the key's own line would be, not a field's written another
    way. Any other comment is judged as any other line."""
    marker = _COMMENTED.match(line)
    if marker is None:
        return False
    key = KEY_LINE.match(line[marker.end():])
    return key is not None and key.group(1).casefold() in keys


def _own_key(rule: Locator) -> str:
    if rule.heading:
        return rule.heading
    return rule.left.strip(" \t:=").casefold() if rule.labelled else ""


def shares_layout(rule: Locator, source: str) -> bool:
    """Whether ``source`` evidently follows the examples' layout: it writes at
    least ``LAYOUT_MIN_KEYS`` of the examples' keys (``Locator.layout``)
    other than ``rule``'s own label (all of them, when they are fewer; one,
    when an example leaves the field empty, ``Locator.shown_empty``: the
    examples show how its absence looks; none: nothing shows a layout), and
    at least half of them; or so of the keys every example writes
    (``Locator.skeleton``: one example's dependency names or job names do
    not make the layout a document must share)."""
    own, written = {_own_key(rule)}, layout_keys(source)
    return any(_written_enough(set(keys) - own, written, rule.shown_empty)
               for keys in (rule.layout, rule.skeleton))


def _written_enough(keys: set[str], written: frozenset[str], shown_empty: bool) -> bool:
    """Whether ``written`` (a document's keys) holds at least ``LAYOUT_MIN_KEYS``
    of ``keys`` (all of them when fewer; one where ``shown_empty``), and at
    least half of them."""
    count = len(keys & written)
    need = 1 if shown_empty else min(LAYOUT_MIN_KEYS, len(keys))
    return count >= max(1, need) and 2 * count >= len(keys)


def absence_shown(rule: Locator, source: str) -> bool:
    """Whether ``source`` shows that ``rule``'s field is empty, given that the
    rule finds no value there: the document writes the rule's label with
    nothing after it (``Locator.writes_empty``), or it does not write the
    label at all and shares the examples' layout (``shares_layout``); a
    rule without a label (``- `` items, a context of punctuation) only
    when an example leaves the field empty (``Locator.shown_empty``): the
    examples' keys say nothing about where its values would be. A
    label written (``Locator.label_written``: the label, or the key of a rule
    at a line's start, written with something after it) with a value the
    rule does not take (not the examples' kind of value, ``Locator.fits``; an
    end the examples do not write, ``journal = {...}`` without ``},``) shows
    nothing."""
    if shown_empty_here(rule, source) or element_absent(rule, source):
        return True
    if rule.label_written(source):
        return False  # a value is there, just not one the rule reads
    if grouped_layout(rule, source):
        return True
    if not rule.labelled and not rule.shown_empty:
        return False  # no label to miss: only examples that leave the field empty show
        # how its absence looks (a table where they wrote ``- `` items)
    return shares_layout(rule, source)


def shown_empty_here(rule: Locator, source: str) -> bool:
    """Whether ``source`` writes ``rule``'s label with nothing after it
    (``Locator.writes_empty``), or, for a rule that ends its value at a
    ``right`` text, its label and that text at once on a line it reads
    (``"Language-Team: \\n"``, ``name = ""``): the value is closed empty on its
    line, whatever the next line holds (``writes_empty`` asks whether a label
    written alone has its value on the next line, a form's ``Carrier:`` over
    ``DPD``; a closed one has none). Not where the document writes the label
    only at a depth no example writes it at (``Locator.off_depth``)."""
    if rule.writes_empty(source) or _json_empty(rule, source):
        return True
    if not rule.off_depth(source) and rule.writes_quoted_empty(source):
        return True  # ``MAILTO=""``: an empty quoted string, closed on its line
    if not rule.right.strip() or rule.continued or rule.off_depth(source):
        return False
    return any(rule.writes_empty(line) for line in rule.region(live_text(source)).splitlines())


def _json_empty(rule: Locator, source: str) -> bool:
    """Whether ``source``, a JSON document, writes ``rule``'s key, or the key
    of a container its value would be inside, with ``null``, ``[]`` or
    ``{}`` at its place (``agentflow.grounding.brackets.written_empty``:
    ``"name": null``, ``"assets": []`` for the first asset's name)."""
    if not rule.labelled or rule.depth is None or rule.arg is not None or rule.heading:
        return False
    lines = rule.region(live_text(source)).splitlines()
    return is_bracketed(lines) and written_empty(
        lines, (rule.key.casefold(), *rule.parents), rule.depth)


def mentioned_apart(rule: Locator, source: str) -> bool:
    """Whether ``source`` writes ``rule``'s key (``Locator.mentioned``)
    elsewhere than on a line the rule reads as its label with nothing after
    it: the label written empty is evidence for a null (``writes_empty``),
    however its line is written around it (a gettext header's ``"Language:
    \\n"``, the key inside a quoted string up to an escape); the key on any
    other line (``msgid "Language: %s\\n"``, in prose, with a separator the
    rule does not read) may be a value the rule missed. In a JSON document
    (``agentflow.grounding.brackets``) only the key written as a key with
    something after it (``"name": "x"``, not ``"name": null``) is."""
    if not rule.mentioned(source):
        return False
    lines = source.splitlines()
    key = rule.key.casefold()
    if is_bracketed(lines):  # a JSON document's keys are its fields: text inside a string
        # (``{?name,label}`` of a URL template) mentions none, a key written with null none
        written = re.compile(rf'"{re.escape(rule.key)}"[ \t]*:', re.IGNORECASE)
        return any(written.search(line) and empty_key(line) is None
                   and not shown_empty_here(rule, line) for line in lines)
    kept = [line for line in lines
            if key not in line.casefold() or not shown_empty_here(rule, line)]
    return len(kept) == len(lines) or rule.mentioned("\n".join(kept))


def absence_confirmed(rule: Locator, source: str) -> bool:
    """Whether ``source`` shows ``rule``'s field empty firmly enough for a
    *confident* null (``agentflow.extraction.confidence.ABSENT``), given that
    the rule finds no value there: the document writes the rule's label with
    nothing after it, or an example left the field empty without its label
    (``Locator.shown_empty``) and the document shares the examples' layout.
    A layout alone is not enough: a document written like the examples may
    still hold the value without the label (in prose: "travels with FedEx";
    under another label: ``Courier:``), and nothing would then flag a wrong
    null: the document must write nothing but the examples' layout
    (``only_layout``). Where no example leaves the field empty, only a nested
    document written the examples' way shows it (``nested_layout``: its key
    nowhere, nothing at its depth that could hold the value). (``absence_shown``,
    the looser test, still decides where the embedded model's grammar offers
    only null.) A document that writes none of the examples' keys is written
    the way an example that leaves the field empty with none of them is
    (``Locator.bare``: a crontab of job lines alone, beside one with
    ``MAILTO=``): its null is sure where ``only_layout`` holds."""
    if shown_empty_here(rule, source) or element_absent(rule, source):
        return True
    if rule.label_written(source):
        return False
    if grouped_layout(rule, source):
        return True
    if not shares_layout(rule, source):
        # (an example without any of the examples' keys shows the field empty: a
        # document that writes none of them is written its way, ``Locator.bare``)
        return rule.bare and not layout_keys(source) & set(rule.layout) and only_layout(
            rule, source)
    if rule.shown_empty:
        return only_layout(rule, source)
    return nested_layout(rule, source)


def grouped_layout(rule: Locator, source: str) -> bool:
    """Whether ``source`` writes the group ``rule`` reads in (``Locator.group``:
    ``[metadata]``, ``agentflow.grounding.groups``) and that group shows the
    field empty: the rule reads a label, the document writes its key nowhere
    (``mentioned_apart``: not in another group, nor in a comment), and every
    line of the rule's groups is one the examples' layout accounts for
    (``only_layout``: their keys, the lines under them, their group lines; an
    unknown key only where it holds nothing shaped like the field's values, so
    ``summary = A tiny client`` keeps a null ``description`` unsure). A group's
    keys are its fields, as a nested document's are (``nested_layout``),
    whether or not an example shows the field empty. A document that writes
    no group of the rule's does not show it: its other groups' keys may be
    the field's under another name (``[tool.flit.metadata]``'s ``module =``
    for a ``[metadata]`` ``name =``)."""
    if not rule.group or not rule.labelled or rule.heading:
        return False
    keys = [group_key(line) for line in source.splitlines() if line[:1] == "["]
    if not any(k == rule.group or (k and group_kind(k) == rule.group) for k in keys):
        return False
    return not mentioned_apart(rule, source) and only_layout(
        rule, rule.region(live_text(source)))


def nested_layout(rule: Locator, source: str) -> bool:
    """Whether ``source``, a nested document whose layout is the examples'
    (``shares_layout``), writes nothing where ``rule``'s label would be but
    the examples' keys: the rule reads a key nested under another
    (``Locator.depth`` of 1 or more: ``namespace:`` under ``metadata:``), the
    document writes that key nowhere in any form (``Locator.mentioned``: not
    under another parent, not in another document), and every line at the
    key's depth begins with one of the examples' keys (``Locator.layout``) or
    is one an example writes, or holds after its key (or as a whole, where it
    has none) nothing shaped like the field's values (``_could_hold``:
    ``minReadySeconds: 10`` holds no namespace shaped ``store``; another key
    with a word, ``podManagementPolicy: Parallel``, may be the field's), or
    is a comment (``# ...``, where the label begins with no ``#``). A
    nested format's keys are its fields, so where its key is nowhere the
    field is empty, whether or not an example shows it empty; deeper lines
    (a container's ``env:``, a label ``tier: backend``) are other keys' values."""
    if not rule.labelled or rule.heading or rule.depth is None or rule.depth < 1 or (
            rule.mentioned(source)):
        return False
    lines = rule.region(live_text(source)).splitlines()
    keys = set(rule.layout)
    for line, depth in zip(lines, line_depths(lines), strict=True):
        if depth != rule.depth or not line.strip() or _fold(line) in rule.lines or (
                line.lstrip()[:1] == "#" and rule.left.lstrip()[:1] != "#"):
            continue  # (a comment line: no key of the format's, unless the label is one)
        key = _KEYED.match(line)
        if key is None:
            if _could_hold(rule, line):
                return False  # prose, or an item no example writes there
        elif key.group(1).casefold() not in keys and _could_hold(rule, key.group(2)):
            return False  # a key the examples never write, with a value like the field's
    return True

