"""Scoring of the generalisation benchmark: one record's fields against the
truth, invented values, confidence read from whatever a result carries, and
the figures of a kind.

**Exact match, defined.** A value is *folded*: every run of whitespace
becomes one space and the ends are stripped; case and punctuation are kept.
An empty string counts as ``None``. A ``str | None`` field is right when the
folded values are equal (``None`` == ``None``). A ``list[str]`` field is right
when the multisets of folded, non-empty items are equal (order ignored,
duplicates counted). A failed record scores every field wrong.

**Invented value.** In an ``ok`` record, a non-empty string (a field, or an
item of a list) whose folded form is not a substring of the folded
document: it appears nowhere in the document.

**Copied from the examples.** An invented value equal (folded) to a
string of a worked example's output: the model copied the example.

**Ungrounded.** ``result.ungrounded``, when a result carries it: the paths
of values nothing checked against the document; counted over ``ok`` records.

**Confidence.** Read from the result, tolerantly (the framework may not
give it): ``result.confidence`` (or ``confidences``/``field_confidence``),
a mapping from a field path (``"depends"``, ``"depends[0]"``,
``"depends.0"``) to a number in 0..1 or an object with a ``value``/``score``;
a field's confidence is the lowest of its paths. ``result.needs_review``
(or ``review``): the field names (or paths) flagged, or a bool for the
whole record. A field is *reported confident* when the result flags fields
and does not flag it (the framework's own verdict); when the result gives
numbers but no flags, when its number is at least the threshold. The
figures also give each confidence level's accuracy (``by_confidence``), to
tune a threshold on.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["TARGETS", "KindFigures", "Scored", "by_level", "confidence_of", "example_strings",
           "field_right", "floor_extract", "fold", "invented", "review_of", "score_record",
           "targets"]


def fold(value: Any) -> str | None:
    """``value`` with whitespace runs folded to one space and the ends stripped;
    ``None`` for ``None`` or an empty result."""
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def _items(value: Any) -> Counter[str]:
    if value is None:
        return Counter()
    if isinstance(value, str):  # a list field answered with one string
        value = [value]
    return Counter(f for f in (fold(v) for v in value) if f is not None)


def field_right(got: Any, want: Any) -> bool:
    """Whether one field is right (the module docstring's exact match): lists as
    multisets of folded items, anything else as folded strings."""
    if isinstance(want, list) or isinstance(got, list):
        return _items(got) == _items(want)
    return fold(got) == fold(want)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def invented(output: Mapping[str, Any], document: str) -> list[str]:
    """The non-empty strings of ``output`` (fields and list items, nested) whose
    folded form appears nowhere in the folded ``document``."""
    doc = fold(document) or ""
    return [s for s in _strings(output) if (f := fold(s)) is not None and f not in doc]


def example_strings(outputs: Iterable[Any]) -> frozenset[str]:
    """The folded strings of the worked examples' outputs (models or dicts)."""
    return frozenset(f for o in outputs for s in _strings(_dump(o))
                     if (f := fold(s)) is not None)


def _top(path: str) -> str:
    return re.split(r"[.\[/]", path.lstrip("/$."), maxsplit=1)[0]


def _number(value: Any) -> float | None:
    for name in ("value", "score", "confidence", "p"):
        if not isinstance(value, (int, float)) and hasattr(value, name):
            value = getattr(value, name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def confidence_of(result: Any) -> dict[str, float] | None:
    """Per top-level field, the lowest confidence the result gives for it, or
    ``None`` when the result carries no confidence (module docstring)."""
    for name in ("confidence", "confidences", "field_confidence"):
        raw = getattr(result, name, None)
        if isinstance(raw, Mapping) and raw:
            out: dict[str, float] = {}
            for path, value in raw.items():
                number = _number(value)
                if number is not None:
                    key = _top(str(path))
                    out[key] = min(out.get(key, 1.0), number)
            return out
    return None


def review_of(result: Any, fields: Iterable[str]) -> set[str] | None:
    """The fields the result flags for review (a bool flags all of ``fields``), or
    ``None`` when it carries no such flag."""
    for name in ("needs_review", "review"):
        raw = getattr(result, name, None)
        if raw is None or callable(raw):
            continue
        if isinstance(raw, bool):
            return set(fields) if raw else set()
        if isinstance(raw, str):
            return {_top(raw)}
        if isinstance(raw, Mapping):
            return {_top(str(k)) for k, v in raw.items() if v}
        if isinstance(raw, Iterable):
            return {_top(str(getattr(x, "path", getattr(x, "field", x)))) for x in raw}
    return None


@dataclass
class Scored:
    """One document's outcome: ``right[field]``, invented strings, and per field
    whether it was reported confident (``None``: no confidence information)."""

    doc_id: str
    ok: bool
    right: dict[str, bool]
    invented: list[str]
    confident: dict[str, bool] | None
    flagged: bool | None
    error: str | None = None
    wrong: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    copied: list[str] = field(default_factory=list)
    levels: dict[str, float] = field(default_factory=dict)
    ungrounded: int | None = None


def _count(paths: Any) -> int | None:
    """How many values a result labels ungrounded (``None``: it does not say)."""
    if paths is None or isinstance(paths, (str, bytes)) or not isinstance(paths, Iterable):
        return None
    return len(list(paths))


def _dump(output: Any) -> dict[str, Any]:
    if hasattr(output, "model_dump"):
        return dict(output.model_dump(mode="json"))
    return dict(output) if isinstance(output, Mapping) else {}


def score_record(doc_id: str, document: str, truth: Mapping[str, Any], result: Any,
                 threshold: float = 0.9, examples: frozenset[str] = frozenset()) -> Scored:
    """Score one ``ExtractResult``-like object (``ok``, ``output``, ``error``; maybe
    confidence and review flags) against ``truth``; ``examples`` are the worked
    examples' strings (``example_strings``), to tell copies among invented values."""
    fields = list(truth)
    if not getattr(result, "ok", False):
        err = getattr(result, "error", None)
        return Scored(doc_id, False, dict.fromkeys(fields, False), [], None, None,
                      f"{type(err).__name__}: {err}"[:300] if err is not None else "failed")
    output = _dump(result.output)
    right = {f: field_right(output.get(f), truth[f]) for f in fields}
    wrong = {f: (output.get(f), truth[f]) for f in fields if not right[f]}
    conf = confidence_of(result)
    flags = review_of(result, fields)
    confident: dict[str, bool] | None = None
    if conf is not None or flags is not None:
        confident = {f: f not in flags if flags is not None
                     else (conf or {}).get(f, 1.0) >= threshold for f in fields}
    flagged = None if confident is None else not all(confident.values())
    made_up = invented(output, document)
    return Scored(doc_id, True, right, made_up, confident, flagged, wrong=wrong,
                  copied=[v for v in made_up if fold(v) in examples],
                  levels={f: c for f, c in (conf or {}).items() if f in right},
                  ungrounded=_count(getattr(result, "ungrounded", None)))


_SEP = re.compile(r"\s*[:=]\s?")


def floor_extract(fields: Mapping[str, Any], document: str) -> dict[str, Any]:
    """The floor: what a "label: value" regex gets, no model. Each field's name
    is its label (``_`` matches ``-``, ``_``, a space or nothing; any case),
    the value is the rest of the first line ``label:`` or ``label=`` starts;
    a list field takes every such line, split at commas (or at whitespace
    when a line has no comma). ``fields`` maps each field to an example
    value telling its shape (a list or not)."""
    out: dict[str, Any] = {}
    for name, shape in fields.items():
        label = r"[-_ ]?".join(re.escape(p) for p in name.split("_"))
        pattern = re.compile(rf"^[ \t]*{label}[ \t]*[:=][ \t]?(.*)$", re.I | re.M)
        values = [m.group(1).strip() for m in pattern.finditer(document)]
        if isinstance(shape, list):
            items: list[str] = []
            for v in values:
                items += [x.strip() for x in (v.split(",") if "," in v else v.split())]
            out[name] = [x for x in items if x]
        else:
            out[name] = values[0] if values and values[0] else None
    return out


@dataclass
class KindFigures:
    """The figures of one kind (or of all kinds pooled)."""

    fields: list[str]
    scored: list[Scored] = field(default_factory=list)

    def add(self, s: Scored) -> None:
        """Add one document's outcome."""
        self.scored.append(s)

    def as_dict(self) -> dict[str, Any]:
        """The figures: per-field accuracy over every document (failed = wrong),
        their mean, the fully-right share, ok/failed counts, invented values in
        ok records, and confidence calibration when the records carry it."""
        n = len(self.scored)
        ok = [s for s in self.scored if s.ok]
        acc = {f: sum(s.right.get(f, False) for s in self.scored) / n if n else 0.0
               for f in self.fields}
        out: dict[str, Any] = {
            "documents": n, "ok": len(ok), "failed": n - len(ok),
            "accuracy": acc,
            "mean_accuracy": sum(acc.values()) / len(acc) if acc else 0.0,
            "lowest_field": min(acc, key=acc.__getitem__) if acc else None,
            "fully_right": sum(all(s.right.values()) for s in self.scored) / n if n else 0.0,
            "ok_fully_right": sum(all(s.right.values()) for s in ok) / len(ok) if ok else None,
            "invented_values": sum(len(s.invented) for s in ok),
            "records_with_invented": sum(bool(s.invented) for s in ok),
            "copied_from_examples": sum(len(s.copied) for s in ok),
        }
        labelled = [s.ungrounded for s in ok if s.ungrounded is not None]
        if labelled:
            out["ungrounded_values"] = sum(labelled)
        rated = [s for s in ok if s.confident is not None]
        if rated:
            pairs = [(c, s.right[f]) for s in rated for f, c in (s.confident or {}).items()]
            sure = [r for c, r in pairs if c]
            unsure = [r for c, r in pairs if not c]
            flagged = [s for s in rated if s.flagged]
            clean = [s for s in rated if not s.flagged]
            out["confidence"] = {
                "records_rated": len(rated),
                "fields_confident": len(sure),
                "confident_accuracy": sum(sure) / len(sure) if sure else None,
                "unconfident_accuracy": sum(unsure) / len(unsure) if unsure else None,
                "share_flagged": len(flagged) / len(rated),
                "unflagged_fully_right": (sum(all(s.right.values()) for s in clean) / len(clean)
                                          if clean else None),
                "by_confidence": by_level(rated),
            }
        return out


def by_level(scored: Iterable[Scored]) -> dict[str, list[int]]:
    """Per confidence level (two decimals, highest first): ``[right, fields]``
    over the fields that carry a number."""
    levels: dict[str, list[int]] = {}
    for s in scored:
        for f, c in s.levels.items():
            cell = levels.setdefault(f"{c:.2f}", [0, 0])
            cell[0] += s.right[f]
            cell[1] += 1
    return dict(sorted(levels.items(), key=lambda kv: -float(kv[0])))


TARGETS = {"mean_accuracy": 0.90, "lowest_field": 0.80, "fully_right": 0.70,
           "invented_values": 0, "confident_accuracy": 0.98}
"""Issue 30's targets on the reporting kind and unseen files (embedded model)."""


def targets(fig: Mapping[str, Any]) -> dict[str, bool | None]:
    """Whether figures (``KindFigures.as_dict``) meet ``TARGETS``; ``None``
    for a figure they do not have (no confidence). Pooled figures give their
    lowest field as ``lowest_field_accuracy``."""
    acc = fig.get("accuracy") or {}
    conf = (fig.get("confidence") or {}).get("confident_accuracy")
    low = min(acc.values()) if acc else fig.get("lowest_field_accuracy")
    return {
        "mean_accuracy": fig["mean_accuracy"] >= TARGETS["mean_accuracy"],
        "lowest_field": None if low is None else low >= TARGETS["lowest_field"],
        "fully_right": fig["fully_right"] >= TARGETS["fully_right"],
        "invented_values": fig["invented_values"] <= TARGETS["invented_values"],
        "confident_accuracy": None if conf is None else conf >= TARGETS["confident_accuracy"],
    }
