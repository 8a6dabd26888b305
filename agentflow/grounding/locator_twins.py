"""A value an example writes in several places: which of them a locator is
learned from (``anchors``), and what is kept when more than one place makes
a rule that holds (``twinned``). ``agentflow.grounding.locators`` learns
the rules and documents them.

Each example's value is first placed where it first occurs (``agentflow.
grounding.locator_places.seen_at``). An example may write it earlier inside
another value (``NAME="Debian"`` after ``PRETTY_NAME="Debian 12"``), or
twice by the format's habit (``[submodule "cub"]`` over ``path = cub``,
as ``git submodule add`` writes it): the first place then teaches no rule,
or a rule that holds on the examples by coincidence. So a rule is also
learned from each other place the first example that fills the field
writes its value (its first item) at, every other value (item) taken at
the place whose line reads most like it (``locator_places.closest``: the
same label). Where the first places teach no rule (neither a context rule
nor an ``arg`` or ``items`` one), a rule that holds from another place is
the field's (``NAME="``). Where rules of several places hold, the examples
cannot tell which is the field's: the rule kept is the one whose label
reads as a key (``path = ``), the others are its ``Locator.twins``, and on
a document where they read other values (``path = external/cub`` under
``[submodule "cub"]``; a place the document does not write says nothing)
the field is not pinned (``Locator.twins_agree``:
``agentflow.extraction.confidence`` scores it as if it had no rule, and the
grammar offers its ordinary grounding).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from agentflow.grounding.chance_places import own_place, word_cut
from agentflow.grounding.echo_keys import echo_keys
from agentflow.grounding.label_forms import start_tag
from agentflow.grounding.locator_places import Seen, common_end, example_value, places_at
from agentflow.grounding.locator_rule import Locator
from agentflow.output.examples import CheckedExample

__all__ = ["KEY_LABEL", "MAX_OTHER_PLACES", "MAX_PLACES", "anchors", "beside_context", "echoed",
           "key_label", "named", "twinned"]

KEY_LABEL = re.compile(r"[^\W\d][\w.-]*(?: [\w.-]+){0,3}[ \t]*[:=][ \t]*\Z")
"""A key of a ``key: value`` / ``key=value`` line (``Version: ``, ``ExecStart=``,
``path = ``): the only line start one example alone makes a label of, and the
label ``twinned`` prefers."""

_ITEM_KEY = re.compile(r"(?:[-*+][ \t]+)?(?P<key>(?:[^\W\d][\w.-]*(?: [\w.-]+){0,3}"
                       r"|(?P<q>[\"'])[@\w][\w.@/-]*(?P=q))[ \t]*[:=][ \t]*)(?P<open>[\"'{\[(]?)\Z")
"""A key one example alone makes a label of: bare (``Version: ``, ``- cron: '``) or
quoted (``"main": "``, a JSON member's), before an opener of its value or none."""
_ATTRIBUTE_KEY = re.compile(r"<[A-Za-z_][\w.:-]*(?:[ \t]+[A-Za-z_][\w.:-]*[ \t]*=[ \t]*"
                            r"(?:\"[^\"]*\"|'[^']*'))*[ \t]+[A-Za-z_][\w.:-]*[ \t]*=[ \t]*"
                            r"(?P<open>[\"'])\Z")
"""An attribute of a start tag, up to its value's opening quote
(``<PackageReference Include="``): the element and the attribute name its key."""
_CLOSE = {'"': '"', "'": "'", "{": "}", "[": "]", "(": ")"}


def key_label(left: str, right: str, word: str = "") -> bool:
    """Whether a label ``left`` (the value up to ``right``) reads as a key
    (``KEY_LABEL``), also after a list marker (YAML ``- cron: ``) and before
    the opener of a quoted or bracketed value that ``right`` closes
    (``- cron: '`` up to ``'``, ``journal = {`` up to ``},``), a quoted key
    (a JSON member, ``"main": "`` up to ``"``), or a markup element's start
    tag whose end tag ``right`` begins (``<AssemblyName>`` up to ``</``
    before the ``word`` ``AssemblyName``: the element's name is its key,
    ``agentflow.grounding.label_forms.tag_label``), or an attribute of a
    start tag before the quote ``right`` closes (``<PackageReference
    Include="`` up to ``"``): the line starts one example alone makes a
    label of."""
    tag = start_tag(left)
    if tag is not None:
        end = right + word if right == "</" else right
        return re.match(rf"</{re.escape(tag[0])}(?![\w.:-])", end, re.IGNORECASE) is not None
    match = _ITEM_KEY.match(left) or _ATTRIBUTE_KEY.match(left)
    if match is None:
        return False
    opener = match.group("open")
    return not opener or right.startswith(_CLOSE[opener])


MAX_PLACES = 8
"""The most places ``anchors`` learns from: a value the first example writes
in more places is a common word of its text (``yes``, ``2``), not one the
format writes twice by habit, and a rule learned (and checked leave-one-out)
from each of them cost seconds per field on a page of prose."""


MAX_OTHER_PLACES = 8
"""The most other places of one example's value ``beside_context`` compares
(the first ones)."""


def _items(value: object) -> list[str]:
    """A field's value as its non-blank strings (a single value: one)."""
    values = value if isinstance(value, list) else [value]
    return [v.strip() for v in values if isinstance(v, str) and v.strip()]


def anchors(name: str, examples: Sequence[CheckedExample]) -> list[Seen]:
    """The places of the first value (item) of the first example that fills
    field ``name``, when some example writes one of its values (items) in
    more than one place (``places_at``), else ``[]``: a rule is learned
    from each of them as well (``learn_locator``'s ``like``). ``[]`` too
    when that first value has more than ``MAX_PLACES`` places."""
    first: list[Seen] = []
    several = False
    for example in examples:
        for i, value in enumerate(_items(example_value(example, name))):
            places = places_at(value, example.text)
            if not first and i == 0:
                first = places
            several = several or len(places) > 1
    return first if several and len(first) <= MAX_PLACES else []


def twinned(rules: Sequence[Locator]) -> Locator:
    """One rule of ``rules`` (different rules that each held on every
    example), the others its ``twins``: the first whose label reads as a
    key (``path = ``, not ``[submodule "``), else the first. Where the
    label of exactly one of them is the field's own name (``named``:
    ``<RootNamespace>`` of ``root_namespace`` beside ``<AssemblyName>``,
    the examples writing one value in both), the schema tells the places
    apart: that rule alone, without twins.

    Raises:
        IndexError: when ``rules`` is empty.
    """
    own = [r for r in rules if named(r)]
    if len(own) == 1 and len(rules) > 1:
        return own[0]
    keyed = [r for r in rules if r.anchored and r.arg is None and KEY_LABEL.match(r.left)]
    main = keyed[0] if keyed else rules[0]
    others = tuple(r for r in rules if r is not main)
    return dataclasses.replace(main, twins=others) if others else main


def named(rule: Locator) -> bool:
    """Whether ``rule`` reads after a label whose key is its field's name,
    letter case, ``_``, ``-``, ``.`` and spaces aside (``RootNamespace`` of
    ``root_namespace``, ``"main": "`` of ``main``)."""
    return rule.labelled and rule.arg is None and _folded(rule.key) == _folded(rule.field)


def _folded(name: str) -> str:
    return re.sub(r"[\W_]+", "", name).casefold()


def echoed(rule: Locator, examples: Sequence[CheckedExample]) -> Locator:
    """A single-value ``rule`` with the other keys every example that fills the
    field writes its value after as well (``Locator.echoes``; ``agentflow.
    grounding.echo_keys``): not its own key, nor its twins'."""
    if rule.many or not rule.labelled:
        return rule
    values = [(e.text, v) for e in examples if isinstance(v := example_value(e, rule.field), str)
              and v.strip()]
    echoes = echo_keys(values, [r.key for r in (rule, *rule.twins)])
    return dataclasses.replace(rule, echoes=echoes) if echoes else rule


def beside_context(rule: Locator, examples: Sequence[CheckedExample]) -> str | None:
    """The text every example that fills ``rule``'s field writes just before its
    value at a place the rule does not read (cut to whole words; ``""``: none
    in common), or ``None``: the rule names its place (a label, a list's items,
    an argument), fewer than two examples fill the field, or one writes its
    value at the rule's place alone."""
    if rule.many or rule.labelled or rule.arg is not None or rule.items or rule.marker:
        return None
    others: list[list[Seen]] = []
    for example in examples:
        value = example_value(example, rule.field)
        if not isinstance(value, str) or not value.strip():
            continue
        places = [p for p in places_at(value.strip(), example.text)
                  if not own_place(p.before, rule.left, rule.anchored) or not p.after.startswith(
                      rule.right)]
        if not places:
            return None
        others.append(places[:MAX_OTHER_PLACES])
    if len(others) < 2:
        return None
    best = ""
    for first in others[0]:
        befores = [first.before] + [
            max((p.before for p in places), key=lambda b: len(common_end([first.before, b])))
            for places in others[1:]]
        common = word_cut(common_end(befores), befores)
        best = common if len(common) > len(best) else best
    return best
