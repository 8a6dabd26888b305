"""The extract command's progress line."""

from __future__ import annotations

import io

from agentflow.cli.progress import Progress, format_duration, outcome


def test_outcomes() -> None:
    assert outcome({"ok": True}) == "ok"
    assert outcome({"ok": False, "error": {"type": "GroundingError"}}) == "suspect"
    assert outcome({"ok": False, "error": {"type": "ProviderError"}}) == "failed"


def test_durations() -> None:
    assert [format_duration(s) for s in (4.4, 138, 11100)] == ["4s", "2m18s", "3h05m"]


def test_line_shows_rate_eta_and_counts_and_is_throttled_off_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(4, stream, interval=3600)
    progress.add({"ok": True})
    progress.add({"ok": False, "error": {"type": "DegenerateOutputError"}})  # throttled
    line = progress.line(progress._start + 2.0)
    # a suspect record is one of the failed, as the summary counts it
    assert line == "2/4 (50%) · 1.00 docs/s · ETA 2s · ok 1 · failed 1 · suspect 1"
    # inputs that fail before any model call finish in microseconds: no rate yet
    assert progress.line(progress._start + 0.001).startswith("2/4 (50%) · - docs/s · ")
    progress.add({"ok": False})
    progress.add({"ok": True})  # the last result is always shown
    shown = stream.getvalue().splitlines()
    assert len(shown) == 2 and shown[0].startswith("1/4 (25%)")
    assert shown[1].startswith("4/4 (100%)") and shown[1].endswith(
        "ETA - · ok 2 · failed 2 · suspect 1")


def test_a_failure_before_any_request_is_not_suspect() -> None:
    # a required date the document writes in no readable form: refused before decoding,
    # no answer was refused as untrustworthy (README: suspect)
    before = {"ok": False, "error": {"type": "GroundingError"}, "attempts": 0}
    after = {"ok": False, "error": {"type": "GroundingError"}, "attempts": 2}
    assert outcome(before) == "failed" and outcome(after) == "suspect"
    assert outcome({"ok": False, "error": {"type": "GroundingError"}}) == "suspect"  # older file


def test_a_logs_last_line_shows_the_total_known_after_the_last_result() -> None:
    """Inputs listed as the run goes can end after their last record: the
    total is set then, and closing writes the final count with it."""
    stream = io.StringIO()
    progress = Progress(None, stream, interval=3600)
    progress.add({"ok": True})  # the first line is shown at once
    progress.add({"ok": True})  # throttled
    progress.total = 2
    progress.close()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("1 done · ") and lines[-1].startswith("2/2 (100%) · ")
    progress.close()  # nothing new: no second copy
    assert stream.getvalue().splitlines() == lines
