"""The ``extract`` command's progress line.

    37/300 (12%) · 1.9 docs/s · ETA 2m18s · ok 33 · failed 4 · suspect 1 · review 4 · chunks 1/4

On a terminal the line is redrawn in place (at most 10 times a second); on
anything else (a log file, a CI job) a full line is printed at the first
result, then every ``interval`` seconds, and once at the end. ``failed``
counts every record that is not ``ok``, as the summary line and the review
page do; ``suspect`` counts those of them whose error names a suspect output
(degenerate or ungrounded values) the model gave: a failure before any
request (``attempts`` 0) is none (``agentflow.extraction.report.suspect_record``,
the rule the review page counts by): a subset of ``failed``, so ``ok`` plus
``failed`` is the count done. ``review`` (shown once there is one) counts the ``ok`` records
with a field whose confidence is low (the record's ``needs_review``,
``agentflow.extraction.confidence``): they are also in ``ok``; ``fields``
says which fields, for the summary. ``chunks`` (shown once a long document
is split) counts the chunks of long documents done so far (``chunk``, an
``extract_many`` ``on_progress``).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Literal, TextIO

from agentflow.extraction.report import suspect_record

if TYPE_CHECKING:
    from agentflow.extraction.chunked import ChunkProgress

__all__ = ["BEFORE_REQUEST_LABEL", "SUSPECT_LABELS", "Progress", "format_duration", "outcome"]

SUSPECT_LABELS = {"GroundingError": "not grounded", "DegenerateOutputError": "degenerate"}
"""How the summary names the suspect failures the engine raises."""

BEFORE_REQUEST_LABEL = "refused before any request"
"""How the summary names a failure of one of those types raised before any
request (``attempts`` 0: no value of the document can fill a required
field): no answer was refused, so it is no suspect one."""

Outcome = Literal["ok", "failed", "suspect"]


def outcome(record: dict[str, Any]) -> Outcome:
    """``ok``, ``suspect`` (an answer refused as untrustworthy:
    ``agentflow.extraction.report.suspect_record``; never a failure before
    any request, ``attempts`` 0) or ``failed``."""
    if record.get("ok") is True:
        return "ok"
    return "suspect" if suspect_record(record) else "failed"


def format_duration(seconds: float) -> str:
    """``42s``, ``2m18s``, ``3h05m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


MIN_RATE_SECONDS = 1.0
"""Elapsed time before the progress line shows a rate (``-`` until then)."""

class Progress:
    """Counts results and shows the progress line on ``stream``.

    Args:
        total: inputs this run will process (``None``: not known ahead, as when
            inputs are read as the run goes: the line shows the count done,
            without a percentage or an ETA).
        stream: where the line goes (stderr).
        interval: seconds between lines when ``stream`` is not a terminal.
    """

    def __init__(self, total: int | None, stream: TextIO, *, interval: float = 5.0) -> None:
        self.total = total
        self.stream = stream
        self.interval = interval
        self.counts: dict[Outcome, int] = {"ok": 0, "failed": 0, "suspect": 0}
        """Records counted: ``ok``, ``failed`` (every record not ok) and
        ``suspect`` (the failed ones with a suspect output: also in ``failed``)."""
        self.review = 0
        """``ok`` records with a field that needs review."""
        self.fields: dict[str, int] = {}
        """Field name -> ``ok`` records in which it needs review."""
        self.tty = stream.isatty()
        self._start = time.monotonic()
        self._shown = float("-inf")
        self._drawn = False
        self._shown_state: tuple[int, int | None] = (0, None)
        self._chunks: dict[str, tuple[int, int]] = {}

    @property
    def done(self) -> int:
        """Results counted so far."""
        return self.counts["ok"] + self.counts["failed"]

    def add(self, record: dict[str, Any]) -> None:
        """Count ``record`` and show the line when due."""
        kind = outcome(record)
        self.counts["ok" if kind == "ok" else "failed"] += 1
        if kind == "suspect":
            self.counts["suspect"] += 1  # a kind of failure: counted in failed too
        flagged = record.get("needs_review") if record.get("ok") is True else None
        if isinstance(flagged, list) and flagged:
            self.review += 1
            counted = self.fields
            for name in flagged:
                key = str(name)
                counted[key] = counted.get(key, 0) + 1
        now = time.monotonic()
        due = 0.1 if self.tty else self.interval
        if now - self._shown >= due or (self.total is not None and self.done == self.total):
            self._show(now)

    def chunk(self, event: ChunkProgress) -> None:
        """Note a long document's chunk progress (``done`` of ``total`` chunks)."""
        self._chunks[event.id] = (event.done, event.total)
        if self.tty:
            now = time.monotonic()
            if now - self._shown >= 0.1:
                self._show(now)

    def line(self, now: float | None = None) -> str:
        """The progress line."""
        elapsed = (now if now is not None else time.monotonic()) - self._start
        done = self.done
        rate = done / elapsed if elapsed > 0 else 0.0
        total = self.total
        pct = f" ({100 * done // total}%)" if total else ""
        eta = (format_duration((total - done) / rate) if total is not None and rate > 0
               and done < total else "-")
        counted = f"{done}/{total}{pct}" if total is not None else f"{done} done"
        c = self.counts
        chunks = ""
        if self._chunks:
            chunks = (f" · chunks {sum(d for d, _ in self._chunks.values())}/"
                      f"{sum(t for _, t in self._chunks.values())}")
        # under a second a rate says nothing (inputs failed before any model call)
        shown = f"{rate:.2f}" if elapsed >= MIN_RATE_SECONDS else "-"
        review = f" · review {self.review}" if self.review else ""
        eta_part = f" · ETA {eta}" if total is not None else ""
        return (f"{counted} · {shown} docs/s{eta_part} · ok {c['ok']} · "
                f"failed {c['failed']} · suspect {c['suspect']}{review}{chunks}")

    def review_note(self) -> str:
        """``; 3 ok need review (version 2, homepage 1)`` for the summary line,
        or ``""`` when no ``ok`` record needs review."""
        if not self.review:
            return ""
        names = ", ".join(f"{name} {n}" for name, n in
                          sorted(self.fields.items(), key=lambda kv: (-kv[1], kv[0])))
        return f"; {self.review} ok need{'s' if self.review == 1 else ''} review ({names})"

    def _show(self, now: float) -> None:
        self._shown = now
        self._shown_state = (self.done, self.total)
        if self.tty:
            self.stream.write("\r\x1b[K" + self.line(now))
            self._drawn = True
        else:
            self.stream.write(self.line(now) + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line (a terminal's is erased: the summary follows). The last
        line shown has the final count, with the total if it became known after
        the last result (inputs listed as the run goes can end after their last
        record), also when the last results came faster than lines are drawn."""
        if self.done and self._shown_state != (self.done, self.total):
            self._show(time.monotonic())
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
