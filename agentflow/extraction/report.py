"""The review page: extraction records and their sources -> one self-contained HTML page.

    stats = write_report(records, sources, sink.write)   # streams, one document at a time
    html = render_report(records, {"a.txt": text})        # the same, as one string

Records have the CLI JSONL record shape (``id``, ``ok``, ``output``, ``error``
``{type, message, reason?}``, ``spans``, ``usage``, ``attempts``,
``duration_s``, ``chunks``, ``truncated``, ``source_offset``). When several
records share an id, the last one wins (a results file is appended to, so the
last line is the newest).

The page holds, top to bottom: a summary (records ok / needs review /
failed / suspect, by error type, and checks of the spans against the
sources; *needs review*: ``ok`` records whose ``needs_review`` names a
low-confidence field, ``agentflow.extraction.confidence``), the failed records
with their error type and reason, then one card per document: its source text
with every span highlighted and labelled by its field path, and beside it a
table of every leaf of the output with its value, its field's confidence and
what that level means (the record's ``confidence``), and its span offsets.
The rows of the fields that need review are shaded; a value with no span
that the document does not write (the record lists it as ``ungrounded``) is
marked *not in the document* (``_report_fields``). The filter buttons (all,
ok, needs review, failed, suspect), each with its count, and the id search
only toggle classes: the page is a static file. Everything is inline (CSS, a
small script); nothing is fetched from the network.

Offsets. Spans are ``[start, end)`` Python ``str`` indices (code points) into
the text the model saw. ``Source.offset`` says where that text starts inside
the text shown (0 when the source is the text the model saw). The text is cut
into pieces in Python and every piece is HTML-escaped, so astral characters
(emoji) and combining marks keep their offsets in the browser; the page's
script does no offset arithmetic. To keep the rendered text equal to the
source, CR is written as ``&#13;`` (the HTML parser would turn CR LF into LF),
a newline follows ``<pre>`` (the parser drops one there), and the characters
HTML cannot carry (NUL, lone surrogates) become U+FFFD, one for one.

Overlapping spans. A span nested in another is a ``<mark>`` nested in the
other's. A span that crosses another's boundary cannot nest, so it is split
into fragments at that boundary; every fragment carries the same
``data-span`` id and colour, and only the first carries the label (and the
``id`` that the field table links to). So each span is exactly one highlight:
one element, or several fragments sharing one ``data-span``, whose text
together is the span's text. Labels are CSS generated content, so they are
not part of the page's text. A zero-length span is an empty labelled mark.

Checks. A span is drawn only when ``0 <= start <= end <= len(text)``; others
are listed as invalid. When the output value at a span's field path is a
string and differs from the span's text (compared with whitespace runs
collapsed and case folded), the highlight is outlined and counted: the source
probably changed since extraction, or was re-read without the schema
module's ``prepare``.

The records' shapes and reading live in ``_report_records``, what the page
says about each field in ``_report_fields``, the HTML of the page's parts in
``_report_parts``; this module writes the page.
"""

from __future__ import annotations

import functools
import io
import tempfile
from collections.abc import Callable, Iterable, Sequence

from agentflow.extraction._report_assets import SCRIPT
from agentflow.extraction._report_parts import (
    _checks,
    _document,
    _failures,
    _head,
    _summary,
    _unavailable_row,
)
from agentflow.extraction._report_records import (
    KEPT_UNAVAILABLE,
    Record,
    ReportStats,
    Source,
    Sources,
    _error,
    _Latest,
    _lookup,
    is_suspect,
    latest_records,
    review_fields,
    suspect_record,
)

__all__ = [
    "ReportStats",
    "Source",
    "is_suspect",
    "latest_records",
    "render_report",
    "suspect_record",
    "write_report",
]


def render_report(records: Iterable[Record], sources: Sources, *,
                  title: str = "agentflow review", notes: Sequence[str] = ()) -> str:
    """The review page as one string (see ``write_report``)."""
    buffer = io.StringIO()
    write_report(records, sources, buffer.write, title=title, notes=notes)
    return buffer.getvalue()


def write_report(records: Iterable[Record], sources: Sources, write: Callable[[str], object], *,
                 title: str = "agentflow review", notes: Sequence[str] = ()) -> ReportStats:
    """Write the review page of ``records`` through ``write``, one document at a time.

    Args:
        records: extraction records (the last of each id wins). An iterable that
            can be read again (a list, or ``agentflow.extraction.review.ResultsFile``,
            which re-reads its file) is read in passes and never held: memory does
            not grow with the number of records. An iterator (a generator) can be
            read once, so its records are held.
        sources: ``id -> text the model saw``, or a function ``record -> Source``,
            called once per document while its card is written (so sources need
            not all be in memory). Ids missing from a mapping are shown as
            unavailable.
        write: receives the page in pieces (e.g. a text file's ``write``).
        title: the page title.
        notes: lines shown in the summary (e.g. skipped lines of a results file).

    Returns:
        The counts the page shows.

    Raises:
        InvalidRecordError: a record without a string ``id`` or boolean ``ok``.
    """
    if iter(records) is records:  # read once only: held, to be read in passes
        records = list(records)
    latest = _Latest(records)  # pass 1: which record of each id is the last
    try:
        return _write(records, latest, _lookup(sources), write, title, notes)
    finally:
        latest.close()


def _write(records: Iterable[Record], latest: _Latest, lookup: Callable[[Record], Source],
           write: Callable[[str], object], title: str, notes: Sequence[str]) -> ReportStats:
    """The page, from three more passes over ``records``: the counts the
    summary shows, the failed records, then a card per document."""
    stats = ReportStats(records=latest.count, superseded=latest.superseded)
    for record in latest.of(records):
        if record["ok"]:
            stats.ok += 1
            flagged = review_fields(record)
            stats.review += bool(flagged)
            for name in flagged:
                stats.review_fields[name] = stats.review_fields.get(name, 0) + 1
            continue
        kind = _error(record)[0]
        stats.failed += 1
        if suspect_record(record):
            stats.suspect += 1
            stats.suspect_by_type[kind] = stats.suspect_by_type.get(kind, 0) + 1
        stats.by_error_type[kind] = stats.by_error_type.get(kind, 0) + 1
    colours: dict[str, int] = {}
    write(_head(title, stats.records))
    write(_summary(stats, notes))
    for piece in _failures(enumerate(latest.of(records), start=1), stats.failed):
        write(piece)
    write('<div id="docs">\n')
    # the checks list every source not available, after the cards: kept on disk meanwhile
    with tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as rows:
        for number, record in enumerate(latest.of(records), start=1):
            kept = len(stats.unavailable)
            write(_document(number, record, lookup(record), colours, stats))
            for row in stats.unavailable[kept:]:
                rows.write(_unavailable_row(*row))
                stats.unavailable_total += 1
            del stats.unavailable[KEPT_UNAVAILABLE:]
        write("</div>\n")
        rows.seek(0)
        for piece in _checks(stats, iter(functools.partial(rows.read, 1 << 16), "")):
            write(piece)
    write(f"</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
    return stats
