"""The records and sources of a review page (``agentflow.extraction.report``):
what a source and the page's counts are, which failures are suspect, the
latest record of each id, and reading a record's error and output leaves."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentflow.errors import InvalidRecordError

__all__ = ["KEPT_UNAVAILABLE", "SUSPECT_MARKERS", "ReportStats", "Source", "answered",
           "is_suspect", "latest_records", "suspect_record"]

Record = Mapping[str, Any]

KEPT_UNAVAILABLE = 1000
"""How many sources not available ``ReportStats.unavailable`` keeps (the first)."""

SUSPECT_MARKERS = ("Degenerate", "Grounding", "Ungrounded")
"""Error type names holding one of these are suspect (see ``is_suspect``)."""


@dataclass(frozen=True, slots=True)
class Source:
    """The text a record's spans point into, as re-read for the page.

    Attributes:
        text: the text to show, or ``None`` when it cannot be had.
        offset: where the text the model saw starts inside ``text`` (code
            points); added to every span.
        problem: why ``text`` is ``None`` (shown on the page).
        note: a remark shown under the source (e.g. how it was re-read).
    """

    text: str | None
    offset: int = 0
    problem: str | None = None
    note: str | None = None


@dataclass(slots=True)
class ReportStats:
    """What a page holds: counts of records, spans and sources.

    ``records`` counts distinct ids (``superseded``: older records of an id);
    ``suspect`` is a part of ``failed`` (``suspect_record``;
    ``suspect_by_type`` counts them per error type); ``review`` a part of ``ok`` (records
    whose ``needs_review`` names a low-confidence field, ``review_fields``
    counts them per field); ``by_error_type`` counts failed records;
    ``spans`` the highlights drawn, ``differing`` those whose text differs from
    the output value, ``invalid_spans`` those not drawn; ``unavailable_total``
    counts the sources that could not be had, and ``unavailable`` holds
    ``(document number, id, why)`` for the first ``KEPT_UNAVAILABLE`` of them
    (the page lists them all; a page of a million records without sources
    holds no million of them in memory).
    """

    records: int = 0
    superseded: int = 0
    ok: int = 0
    review: int = 0
    review_fields: dict[str, int] = field(default_factory=dict)
    failed: int = 0
    suspect: int = 0
    suspect_by_type: dict[str, int] = field(default_factory=dict)
    by_error_type: dict[str, int] = field(default_factory=dict)
    spans: int = 0
    differing: int = 0
    invalid_spans: int = 0
    unavailable: list[tuple[int, str, str]] = field(default_factory=list)
    unavailable_total: int = 0

    def review_note(self) -> str:
        """``; 3 ok need review (version 2, homepage 1)``, as ``extract``'s summary
        says it (``agentflow.cli.progress``), or ``""`` when no ``ok`` record does."""
        if not self.review:
            return ""
        names = ", ".join(f"{name} {n}" for name, n in
                          sorted(self.review_fields.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"; {self.review} ok need{'s' if self.review == 1 else ''} review ({names})"


Sources = Mapping[str, str] | Callable[[Record], Source]
"""Either ``id -> the text the model saw``, or a function from a record to its ``Source``."""


def review_fields(record: Mapping[str, object]) -> list[str]:
    """The fields an ``ok`` record says need review (its ``needs_review``:
    ``agentflow.extraction.confidence``); ``[]`` for any other record."""
    flagged = record.get("needs_review") if record.get("ok") is True else None
    return [str(f) for f in flagged] if isinstance(flagged, list) else []


def is_suspect(error_type: str) -> bool:
    """Whether a failure is *suspect*: the model answered, but the answer was
    rejected as untrustworthy rather than malformed. Decided on the name:

    - names a degenerate output (``DegenerateOutputError``): suspect;
    - names a grounding fault (``GroundingError``, ``Ungrounded...``): suspect;
    - anything else (validation, provider, input errors): not suspect.
    """
    return any(marker in error_type for marker in SUSPECT_MARKERS)


def answered(record: Mapping[str, Any]) -> bool:
    """Whether the model was asked for ``record``: ``False`` only when its
    ``attempts`` is 0 (a failure before any request: a document that could
    not be read, a required field with no value the document writes, refused
    before decoding); a record without ``attempts`` (written by an older
    version) counts as answered."""
    attempts = record.get("attempts")
    return not (isinstance(attempts, int) and not isinstance(attempts, bool) and attempts == 0)


def suspect_record(record: Mapping[str, Any]) -> bool:
    """Whether ``record`` is a suspect failure: not ``ok``, its error type
    suspect (``is_suspect``), and the model answered (``answered``): a
    failure with no answer (``attempts`` 0, a ``GroundingError`` raised
    before any request) is a plain failure, since no answer was refused."""
    if record.get("ok") is True or not answered(record):
        return False
    error = record.get("error")
    kind = error.get("type") if isinstance(error, Mapping) else None
    return isinstance(kind, str) and is_suspect(kind)


def latest_records(records: Iterable[Record]) -> tuple[list[Record], int]:
    """The last record of each id, in the order of those last records, and how
    many earlier records they superseded.

    Raises:
        InvalidRecordError: a record that is not a mapping with a string ``id``
            and a boolean ``ok`` (the message gives its position, from 1).
    """
    latest: dict[str, Record] = {}
    seen = 0
    for seen, record in enumerate(records, start=1):
        _check_record(seen, record)
        latest.pop(record["id"], None)
        latest[record["id"]] = record
    return list(latest.values()), seen - len(latest)


def _check_record(seen: int, record: object) -> None:
    """Refuse what is not an extraction record (``seen``: its position, from 1).

    Raises:
        InvalidRecordError: ``record`` has no string ``id`` or no boolean ``ok``.
    """
    if not isinstance(record, Mapping) or not isinstance(record.get("id"), str) or (
            not isinstance(record.get("ok"), bool)):
        raise InvalidRecordError(
            f"record {seen}: not an extraction record (needs a string 'id' and a "
            "boolean 'ok')")


class _Latest:
    """Which record of each id is the last (the one a page shows), found in one
    pass over ``records`` and held as ``id -> position`` on disk
    (``agentflow.documents.seen.SeenIds``), never as the records: ``of``
    gives them again, from another pass. ``close()`` drops the index.

    Raises:
        InvalidRecordError: as ``latest_records``.
    """

    def __init__(self, records: Iterable[Record]) -> None:
        from agentflow.documents.seen import SeenIds

        self._last = SeenIds()
        seen = 0
        try:
            for seen, record in enumerate(records, start=1):
                _check_record(seen, record)
                self._last[record["id"]] = seen
        except BaseException:
            self._last.close()
            raise
        self.count = len(self._last)
        self.superseded = seen - self.count

    def of(self, records: Iterable[Record]) -> Iterator[Record]:
        """The last record of each id, in the order of those records, read
        again from ``records`` (the same records as the first pass)."""
        for position, record in enumerate(records, start=1):
            rid = record.get("id") if isinstance(record, Mapping) else None
            if isinstance(rid, str) and self._last.get(rid) == position:
                yield record

    def close(self) -> None:
        self._last.close()


# --------------------------------------------------------------------------- records


def _lookup(sources: Sources) -> Callable[[Record], Source]:
    if callable(sources):
        return sources
    texts = sources

    def from_mapping(record: Record) -> Source:
        text = texts.get(record["id"])
        return Source(text) if text is not None else Source(None, problem="no source text given")

    return from_mapping


def _error(record: Record) -> tuple[str, str, str]:
    """``(type, reason, message)`` of a failed record, tolerating odd shapes."""
    error = record.get("error")
    if not isinstance(error, Mapping):
        return "UnknownError", "", "" if error is None else str(error)
    kind = error.get("type")
    reason, message = error.get("reason"), error.get("message")
    return (kind if isinstance(kind, str) and kind else "UnknownError",
            reason if isinstance(reason, str) else "",
            message if isinstance(message, str) else "")


def _status(record: Record) -> str:
    if record["ok"]:
        return "ok"
    return "suspect" if suspect_record(record) else "failed"


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(field path, value)`` for every leaf of an output (empty containers are
    leaves), in document order. Iterative: a results file's record may nest as
    deep as JSON parsers allow (orjson: 1024), past Python's recursion limit."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, Mapping) and item:
            stack.extend(reversed([(f"{at}.{key}" if at else str(key), child)
                                   for key, child in item.items()]))
        elif isinstance(item, list) and item:
            stack.extend(reversed([(f"{at}[{i}]", child) for i, child in enumerate(item)]))
        else:
            yield at, item
