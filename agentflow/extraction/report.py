"""The review page: extraction records and their sources -> one self-contained HTML page.

    stats = write_report(records, sources, sink.write)   # streams, one document at a time
    html = render_report(records, {"a.txt": text})        # the same, as one string

Records have the CLI JSONL record shape (``id``, ``ok``, ``output``, ``error``
``{type, message, reason?}``, ``spans``, ``usage``, ``attempts``,
``duration_s``, ``chunks``, ``truncated``, ``source_offset``). When several
records share an id, the last one wins (a results file is appended to, so the
last line is the newest).

The page holds, top to bottom: a summary (records ok / failed / suspect, by
error type, and checks of the spans against the sources), the failed records
with their error type and reason, then one card per document: its source text
with every span highlighted and labelled by its field path, and beside it a
table of every leaf of the output with its value and span offsets. Everything
is inline (CSS, a small script); nothing is fetched from the network.

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
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from agentflow.errors import InvalidRecordError
from agentflow.extraction._highlight import MISSING, Span, find_spans, markup
from agentflow.extraction._highlight import escape_attr as _a
from agentflow.extraction._highlight import escape_text as _t
from agentflow.extraction._report_assets import SCRIPT, STYLE

__all__ = [
    "ReportStats",
    "Source",
    "is_suspect",
    "latest_records",
    "render_report",
    "write_report",
]

Record = Mapping[str, Any]

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
    ``suspect`` is a part of ``failed``; ``by_error_type`` counts failed records;
    ``spans`` the highlights drawn, ``differing`` those whose text differs from
    the output value, ``invalid_spans`` those not drawn; ``unavailable`` holds
    ``(document number, id, why)`` for each source that could not be had.
    """

    records: int = 0
    superseded: int = 0
    ok: int = 0
    failed: int = 0
    suspect: int = 0
    by_error_type: dict[str, int] = field(default_factory=dict)
    spans: int = 0
    differing: int = 0
    invalid_spans: int = 0
    unavailable: list[tuple[int, str, str]] = field(default_factory=list)


Sources = Mapping[str, str] | Callable[[Record], Source]
"""Either ``id -> the text the model saw``, or a function from a record to its ``Source``."""


def is_suspect(error_type: str) -> bool:
    """Whether a failure is *suspect*: the model answered, but the answer was
    rejected as untrustworthy rather than malformed. Decided on the name:

    - names a degenerate output (``DegenerateOutputError``): suspect;
    - names a grounding fault (``GroundingError``, ``Ungrounded...``): suspect;
    - anything else (validation, provider, input errors): not suspect.
    """
    return any(marker in error_type for marker in SUSPECT_MARKERS)


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
        if not isinstance(record, Mapping) or not isinstance(record.get("id"), str) or (
                not isinstance(record.get("ok"), bool)):
            raise InvalidRecordError(
                f"record {seen}: not an extraction record (needs a string 'id' and a "
                "boolean 'ok')")
        latest.pop(record["id"], None)
        latest[record["id"]] = record
    return list(latest.values()), seen - len(latest)


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
        records: extraction records (the last of each id wins).
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
    docs, superseded = latest_records(records)
    lookup = _lookup(sources)
    stats = ReportStats(records=len(docs), superseded=superseded)
    for record in docs:
        if record["ok"]:
            stats.ok += 1
            continue
        kind = _error(record)[0]
        stats.failed += 1
        stats.suspect += is_suspect(kind)
        stats.by_error_type[kind] = stats.by_error_type.get(kind, 0) + 1
    colours: dict[str, int] = {}
    write(_head(title, len(docs)))
    write(_summary(stats, notes))
    write(_failures(docs))
    write('<div id="docs">\n')
    for number, record in enumerate(docs, start=1):
        write(_document(number, record, lookup(record), colours, stats))
    write("</div>\n")
    write(_checks(stats))
    write(f"</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n")
    return stats


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
    return "suspect" if is_suspect(_error(record)[0]) else "failed"


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(field path, value)`` for every leaf of an output (empty containers are leaves)."""
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    else:
        yield path, value


# --------------------------------------------------------------------------- page parts


def _head(title: str, count: int) -> str:
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_t(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f'<body data-filter="all">\n<header class="top"><h1>{_t(title)}</h1>'
        f"<p>{count} document{'s' * (count != 1)} · generated by agentflow</p></header>\n<main>\n"
    )


def _summary(stats: ReportStats, notes: Sequence[str]) -> str:
    cards = [("records", stats.records, ""), ("ok", stats.ok, "ok"),
             ("failed", stats.failed, "failed"), ("suspect (of failed)", stats.suspect, "suspect")]
    if stats.superseded:
        cards.append(("older records superseded", stats.superseded, ""))
    parts = ['<section id="summary" class="panel"><h2>Summary</h2><div class="cards">']
    parts += [f'<div class="card {cls}" data-count="{name.split()[0]}"><b>{n}</b>{name}</div>'
              for name, n, cls in cards]
    parts.append("</div>")
    if stats.by_error_type:
        parts.append('<table class="by-type"><tr><th>error type</th><th>records</th>'
                     "<th>suspect</th></tr>")
        for kind, n in sorted(stats.by_error_type.items(), key=lambda kv: (-kv[1], kv[0])):
            parts.append(f"<tr><td>{_t(kind)}</td><td>{n}</td>"
                         f"<td>{'yes' if is_suspect(kind) else ''}</td></tr>")
        parts.append("</table>")
    if notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{_t(n)}</li>" for n in notes) + "</ul>")
    parts.append(
        '<div class="controls"><span>Show:</span>'
        '<button type="button" data-filter="all" class="on">all</button>'
        '<button type="button" data-filter="ok">ok</button>'
        '<button type="button" data-filter="failed">failed</button>'
        '<button type="button" data-filter="suspect">suspect</button>'
        '<input id="search" type="search" placeholder="filter by id" aria-label="filter by id">'
        '<label><input id="labels" type="checkbox" checked> field labels</label></div>'
        '<p class="source-note">Each grounded span is highlighted in its source and labelled '
        "by its field path; a span nested in another is drawn inside it, a span crossing "
        "another is split (same colour, label on its first piece). Dashed red outline: the "
        "text differs from the output value. Hatched: text the model did not read (a "
        "chunk that failed, or cut by a cap).</p>"
        "</section>\n")
    return "".join(parts)


def _failures(docs: Sequence[Record]) -> str:
    rows = []
    for number, record in enumerate(docs, start=1):
        if record["ok"]:
            continue
        kind, reason, message = _error(record)
        attempts = record.get("attempts", "")
        rows.append(f'<tr class="failed-record"><td><a href="#doc-{number}">{_t(record["id"])}</a>'
                    f'</td><td class="type">{_t(kind)}</td>'
                    f'<td class="reason">{_t(reason or message)}</td><td>{_t(str(attempts))}</td>'
                    "</tr>")
    head = '<section id="failures" class="panel"><h2>Failed records</h2>'
    if not rows:
        return f"{head}<p>None.</p></section>\n"
    return (f"{head}<table>"
            "<tr><th>id</th><th>error type</th><th>reason</th><th>attempts</th></tr>"
            + "".join(rows) + "</table></section>\n")


def _meta(record: Record, source: Source) -> str:
    bits = []
    if isinstance(record.get("attempts"), int):
        bits.append(f"attempts {record['attempts']}")
    if isinstance(record.get("duration_s"), int | float):
        bits.append(f"{record['duration_s']:.2f} s")
    usage = record.get("usage")
    if isinstance(usage, Mapping) and isinstance(usage.get("total_tokens"), int):
        bits.append(f"{usage['total_tokens']} tokens")
    offset = record.get("source_offset")
    if isinstance(offset, int) and offset:
        bits.append(f"the text the model saw starts at character {offset} of the file")
    truncated = record.get("truncated")
    if isinstance(truncated, Mapping):
        bits.append(f"cut: the model saw {truncated.get('kept_chars')} of "
                    f"{truncated.get('total_chars')} characters")
    chunks = record.get("chunks")
    if isinstance(chunks, Mapping):
        bits.append(f"{chunks.get('total')} chunks, {chunks.get('failed', 0)} failed")
    return " · ".join(_t(str(b)) for b in bits)


def _value(value: Any) -> str:
    if value is None:
        return '<span class="null">null</span>'
    if value == "":
        return '<span class="null">""</span>'
    if isinstance(value, str):
        return _t(value)
    return _t(orjson.dumps(value).decode())


def _fields(record: Record, spans: Sequence[Span], invalid: Sequence[tuple[str, str]],
            doc: int, drawn: bool) -> str:
    by_path: dict[str, list[Span]] = {}
    for span in spans:
        if not span.gap:
            by_path.setdefault(span.path, []).append(span)
    bad: dict[str, list[str]] = {}
    for path, why in invalid:
        bad.setdefault(path, []).append(why)
    output = record.get("output", MISSING)
    rows: list[tuple[str, Any]] = list(_leaves(output)) if output is not MISSING else []
    known = {path for path, _ in rows}
    rows += [(path, MISSING) for path in {**by_path, **bad} if path not in known]
    if not rows:
        return '<p class="source-note">No output.</p>'
    parts = ['<table class="fields"><tr><th>field</th><th>value</th><th>span</th></tr>']
    for path, value in rows:
        own = by_path.get(path, [])
        swatch = f'<span class="sw c{own[0].colour}"></span>' if own else ""
        links = " ".join(
            f'<a class="span-link" href="#s{doc}-{s.key}">[{s.raw[0]}, {s.raw[1]})</a>' if drawn
            else f'<span class="span-link">[{s.raw[0]}, {s.raw[1]})</span>' for s in own)
        warnings = ["text differs from value"] if any(
            s.differs for s in own) else []
        warnings += [_t(w) for w in bad.get(path, [])]
        shown = '<span class="null">(not in the output)</span>' if value is MISSING else (
            _value(value))
        notes = "".join(f'<div class="warn">{w}</div>' for w in warnings)
        parts.append(f'<tr data-field="{_a(path)}"><td class="path">{swatch}{_t(path)}</td>'
                     f'<td class="val">{shown}</td><td>{links}{notes}</td></tr>')
    parts.append("</table>")
    return "".join(parts)


def _document(number: int, record: Record, source: Source, colours: dict[str, int],
              stats: ReportStats) -> str:
    status = _status(record)
    spans, invalid = find_spans(record, source.text, source.offset, colours)
    stats.spans += sum(not s.gap for s in spans) if source.text is not None else 0
    stats.differing += sum(s.differs for s in spans)
    stats.invalid_spans += len(invalid)
    parts = [f'<article class="doc is-{status}{" is-failed" * (status == "suspect")}" '
             f'id="doc-{number}" data-id="{_a(record["id"])}">',
             f'<h3><span class="doc-id">{_t(record["id"])}</span> '
             f'<span class="badge {status}">{status}</span></h3>',
             f'<p class="doc-meta">{_meta(record, source)}</p>']
    if not record["ok"]:
        kind, reason, message = _error(record)
        parts.append(f'<div class="error"><b class="type">{_t(kind)}</b>: '
                     f'<span class="reason">{_t(reason or message)}</span>')
        if reason and message:
            parts.append(f"<details><summary>message</summary>{_t(message)}</details>")
        parts.append("</div>")
    parts.append('<div class="doc-body"><div class="source">')
    if source.text is None:
        problem = source.problem or "source not available"
        stats.unavailable.append((number, record["id"], problem))
        parts.append(f'<p class="source-missing">Source not available: {_t(problem)}</p>')
    else:
        parts.append('<pre class="source-text">\n')
        parts.extend(markup(source.text, spans, number))
        parts.append("</pre>")
    if source.note:
        parts.append(f'<p class="source-note">{_t(source.note)}</p>')
    table = _fields(record, spans, invalid, number, drawn=source.text is not None)
    parts.append(f"</div><div>{table}</div></div></article>\n")
    return "".join(parts)


def _checks(stats: ReportStats) -> str:
    parts = ['<section id="checks" class="panel"><h2>Spans and sources</h2><div class="cards">',
             f'<div class="card" data-count="spans"><b>{stats.spans}</b>spans highlighted</div>',
             f'<div class="card{" failed" * bool(stats.differing)}" data-count="differing">'
             f"<b>{stats.differing}</b>spans whose text differs from the value</div>",
             f'<div class="card{" failed" * bool(stats.invalid_spans)}" data-count="invalid">'
             f"<b>{stats.invalid_spans}</b>invalid spans</div>",
             f'<div class="card{" failed" * bool(stats.unavailable)}" data-count="unavailable">'
             f"<b>{len(stats.unavailable)}</b>sources not available</div></div>"]
    if stats.unavailable:
        parts.append('<table class="unavailable"><tr><th>id</th><th>why</th></tr>')
        parts += [f'<tr><td><a href="#doc-{n}">{_t(i)}</a></td><td>{_t(why)}</td></tr>'
                  for n, i, why in stats.unavailable]
        parts.append("</table>")
    parts.append("</section>\n")
    return "".join(parts)
