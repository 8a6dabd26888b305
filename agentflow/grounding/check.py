"""The result of checking an output's grounded values (``GroundingCheck``,
made by ``agentflow.grounding.placing.check_grounding``): the spans found,
each kind of failure, and the message the model reads back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from agentflow._slots_init import slot_init

__all__ = ["GroundingCheck", "Span", "sibling_path"]

Span = tuple[int, int]


@slot_init
@dataclass(frozen=True, slots=True)
class GroundingCheck:
    """The result of checking an output's grounded values against a source.

    Attributes:
        spans: field path -> ``[(start, end)]`` for every value found.
        unfound: ``(path, value)`` of every value not found in the source.
        empty: ``(path, optional)`` of grounded values that are empty (or
            whitespace); ``optional``: the field allows null.
        cut: ``(path, value, token)`` of whole-token values found only
            inside a longer token (``token``: the first such, e.g.
            ``("version", "1.5.2-1", "2:1.5.2-1")``); also in ``unfound``.
        cut_lines: ``(path, value, line)`` of whole-line values found only
            as part of a line (``line``: the content of the first such
            line); also in ``unfound``.
        cut_items: ``(path, value, item)`` of whole-item values found in the
            document but never as exactly one list item (``item``: the first
            item the first occurrence overlaps, ``""`` when it overlaps
            none); also in ``unfound``.
        off_line: ``(path, value, line)`` of values found in the document
            but on no line their marker's ``line`` expression matches
            (``line``: that expression); also in ``unfound``.
        shortened: ``(path, value, longer)`` of values under
            ``Grounded(longest=True)`` found in the document only as part of
            a longer span the field's rules and pattern also allow
            (``longer``: the longest such around the first occurrence); also
            in ``unfound``.
        misordered: ``(path, value, after)`` of values found in the
            document but nowhere after the value of the field their
            marker's ``after`` names (``after``: that field's name); also in
            ``unfound``.
        preceding: path of each ``misordered`` value -> the value of the
            field it must follow, as the document writes it (the message
            names it: that value may be the wrong one).
        unclean: ``(path, value, why)`` of values under ``Grounded(clean=True)``
            whose edges are not clean (``agentflow.grounding.edges``: a
            separator or a label at an edge; ``why`` says which); also in
            ``unfound``.
        nullable: paths of ``unfound`` values whose field allows null (the
            message offers it: a model that writes ``"null"``, ``"N/A"`` or a
            guess for a field the document does not fill is told it may leave
            it null).
    """

    spans: dict[str, list[Span]] = field(default_factory=dict)
    unfound: list[tuple[str, str]] = field(default_factory=list)
    empty: list[tuple[str, bool]] = field(default_factory=list)
    cut: list[tuple[str, str, str]] = field(default_factory=list)
    cut_lines: list[tuple[str, str, str]] = field(default_factory=list)
    cut_items: list[tuple[str, str, str]] = field(default_factory=list)
    off_line: list[tuple[str, str, str]] = field(default_factory=list)
    shortened: list[tuple[str, str, str]] = field(default_factory=list)
    misordered: list[tuple[str, str, str]] = field(default_factory=list)
    preceding: dict[str, str] = field(default_factory=dict)
    nullable: list[str] = field(default_factory=list)
    unclean: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every grounded value was found."""
        return not self.unfound and not self.empty

    @property
    def refused(self) -> list[str]:
        """The paths of ``unfound`` values the source does write, refused by a
        check of their place or edges (``cut``, ``cut_lines``, ``cut_items``,
        ``off_line``, ``shortened``, ``misordered``, ``unclean``): text copied
        from the document, not invented (``agentflow.extraction.dropped``)."""
        checks = (self.cut, self.cut_lines, self.cut_items, self.off_line, self.shortened,
                  self.misordered, self.unclean)
        return list(dict.fromkeys(p for found in checks for p, _, _ in found))

    def message(self, name: Callable[[str], str] | None = None) -> str:
        """A message listing each failing field (for the model and for errors).

        ``name``: spells a field path in the message (default: as it is, python
        field names); the engine passes ``field_keys.key_path`` so the model
        reads the keys of the schema it was sent (its aliases)."""
        show = name or _same
        nullable = set(self.nullable)
        cut = {(p, v): token for p, v, token in self.cut}
        cut_lines = {(p, v): line for p, v, line in self.cut_lines}
        cut_items = {(p, v): item for p, v, item in self.cut_items}
        off_line = {(p, v): line for p, v, line in self.off_line}
        misordered = {(p, v): _field_name(show(sibling_path(p, after)))  # as the model named it
                      for p, v, after in self.misordered}
        shortened = {(p, v): longer for p, v, longer in self.shortened}
        unclean = {(p, v): why for p, v, why in self.unclean}
        lines = [f"- {show(p)}: {v!r} {unclean[p, v]}; copy the value alone, exactly as written"
                 if (p, v) in unclean else
                 f"- {show(p)}: {v!r} cuts through the token {cut[p, v]!r} of the document; "
                 f"copy whole tokens (here {cut[p, v]!r}) exactly as written"
                 if (p, v) in cut else
                 f"- {show(p)}: {v!r} is only part of the line {cut_lines[p, v]!r} of the "
                 f"document; copy whole lines exactly as written"
                 if (p, v) in cut_lines else
                 f"- {show(p)}: {v!r} is not one whole item of a list in the document"
                 + (f" (the item is {cut_items[p, v]!r})" if cut_items[p, v] else
                    " (it is in no list item)")
                 + "; copy one whole item, with its continuation lines, exactly as written"
                 if (p, v) in cut_items else
                 f"- {show(p)}: {v!r} is not on a line of the document that matches "
                 f"{off_line[p, v]!r} (where this field is written); copy it from such a line"
                 if (p, v) in off_line else
                 f"- {show(p)}: {v!r} is only part of {shortened[p, v]!r} in the document, which "
                 f"is a whole value of this field; copy the whole value as written"
                 if (p, v) in shortened else
                 f"- {show(p)}: {v!r} is not after the value of {misordered[p, v]!r} in the "
                 f"document (this field is written after it); copy it from the text that "
                 f"follows that value"
                 + (f" ({self.preceding[p]!r}), or correct {misordered[p, v]!r} if that "
                    f"value is the wrong one" if p in self.preceding else "")
                 if (p, v) in misordered else
                 f"- {show(p)}: {v!r} is not found in the document; copy the text exactly as "
                 f"it is written there" for p, v in self.unfound]
        lines = [line + (", or use null if the document does not say" if p in nullable else "")
                 for line, (p, _) in zip(lines, self.unfound, strict=True)]
        lines += [f"- {show(p)}: empty text; copy it from the document"
                  + (", or use null if the document does not say" if optional else
                     ", or leave the item out of the list" if p.endswith("]") else "")
                  for p, optional in self.empty]
        return "\n".join(lines)


def _same(path: str) -> str:
    return path


def _field_name(path: str) -> str:
    """The last field name of ``path`` (``entries[3].version`` -> ``version``)."""
    return path.rpartition(".")[2]


def sibling_path(path: str, name: str) -> str:
    """The path of field ``name`` in the object that holds ``path``
    (``entries[3].distribution``, ``version`` -> ``entries[3].version``;
    a list item ``a.tags[2]`` -> ``a.name``)."""
    parent = path.rpartition(".")[0]
    return f"{parent}.{name}" if parent else name
