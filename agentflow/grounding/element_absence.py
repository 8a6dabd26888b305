"""A markup element a document's parent element does not hold: a sure null.

Markup is a nested format too, as YAML and JSON are (``agentflow.grounding.
locator_absence.nested_layout``: a nested key written nowhere is a sure
null), its elements its fields. A rule reading an element's content after
its start tag (``<packaging>``) under the parent elements every example
writes it under (``Locator.parents``, at ``Locator.depth``: a pom's
``<project>``) shows the field empty (``element_absent``) in a markup
document that writes such a parent, each closed (a long document's chunk
cut inside it shows nothing), where no such parent holds the element (a
comment is no part of the document: ``<!-- <packaging>pom</packaging> -->``
holds none; one written elsewhere, ``<name>`` of a ``<developer>``, is
another thing's), nor any other child element the examples never write
beside it (``Locator.elements``, ``element_names``) holding text shaped like
the field's values, nor such text of its own (``<description>Demo
project</description>`` may name the project). Then the null is sure
(``agentflow.extraction.confidence.ABSENT``), whether or not an example
shows the field empty, a value is ``DISAGREES``, and the grammar offers only
null (``agentflow.grounding.locator_offer``), also where the document writes
the element only under other parents (``Locator.off_depth``).
"""

from __future__ import annotations

from agentflow.grounding.label_forms import start_tag
from agentflow.grounding.locator_rule import Locator
from agentflow.grounding.markup import element_children, is_markup
from agentflow.grounding.token_shapes import could_hold
from agentflow.grounding.void_blocks import live_text

__all__ = ["element_absent", "element_names"]


def _element(rule: Locator) -> str | None:
    """The element whose content ``rule`` reads after its start tag, nested
    under parent elements (``<packaging>`` under ``<project>``), letter case
    folded; ``None`` for any other rule (attributes in its label included)."""
    tag = start_tag(rule.left.lstrip())
    if tag is None or tag[1] or not rule.labelled or rule.many or rule.arg is not None or (
            rule.heading or rule.depth is None or rule.depth < 1 or not rule.parents):
        return None
    return _local(tag[0])


def _local(name: str) -> str:
    """An element's name less its namespace prefix, letter case folded."""
    return name.rpartition(":")[2].casefold()


def element_names(rule: Locator, texts: list[str]) -> tuple[str, ...]:
    """``Locator.elements``: the names of the child elements the markup
    ``texts`` (the examples') write in the parents ``rule`` reads its
    element in (``_element``), sorted; ``()`` for another rule."""
    if _element(rule) is None or rule.depth is None:
        return ()
    names = {_local(name) for text in texts if is_markup(text.splitlines())
             for held in element_children(text, rule.parents, rule.depth) or []
             for name, _ in held}
    return tuple(sorted(names - {""}))


def element_absent(rule: Locator, source: str) -> bool:
    """Whether ``source``, a markup document, shows ``rule``'s element absent
    from the parents the examples write it under (see the module docstring):
    it writes such a parent, each closed, and none holds the element (a
    namespace prefix aside), a child element the examples never write there
    (``Locator.elements``) holding text shaped like the field's values
    (``agentflow.grounding.token_shapes.could_hold``), or such text of its own."""
    own = _element(rule)
    if own is None or rule.depth is None:
        return False
    text = rule.region(live_text(source))
    if "<" not in text or not is_markup(text.splitlines()):
        return False
    held = element_children(text, rule.parents, rule.depth)
    if not held:
        return False
    known = set(rule.elements)
    return not any(
        (name and _local(name) == own) or (
            (not name or _local(name) not in known) and could_hold(rule.shapes, inner))
        for children in held for name, inner in children)
