"""The batch journal: which vendor batches hold which requests, on disk, so
a restarted run polls the batches it already paid for instead of paying again.

The rule (no double spend):

1. Before a group of requests is submitted, a *submission* is journalled with
   a fresh ``tag``, its ``custom_id -> input id`` map and no batch id.
2. The group is submitted (with the tag, where the vendor keeps one:
   ``BatchFinder``); the returned batch id is journalled at once, before the
   first poll.
3. On restart, a submission with a batch id is polled again (never
   resubmitted); one without is looked up by its tag (``BatchFinder.find``)
   and adopted when found. Only when the vendor cannot look tags up, or the
   tag is not found (the process died before the vendor accepted the
   batch), are its requests submitted again.
4. A journalled batch the vendor no longer has (404: purged after its
   retention, or made under another project or key) is forgotten (``gone``);
   its requests that still have no result are submitted again, once.

Each write replaces the file atomically (a temporary file in the same
directory, flushed and ``fsync``ed, then ``os.replace``): a crash leaves the
previous journal or the new one, never half of one.

File shape (JSON, ``version`` 1)::

    {"version": 1, "submissions": [
        {"tag": "af-...", "batch_id": "batch_abc" | null,
         "requests": {"<custom_id>": "<input id>", ...}}]}
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import orjson

from agentflow.errors import InvalidRecordError

__all__ = ["Journal", "Submission", "journal_path"]

VERSION = 1


def journal_path(out: str | os.PathLike[str]) -> Path:
    """The journal of a results file: ``OUT.batches.json`` beside ``OUT``."""
    path = Path(out)
    return path.with_name(path.name + ".batches.json")


@dataclass(frozen=True, slots=True)
class Submission:
    """One group of requests handed to the vendor (or about to be).

    ``tag``: the runner's id for the submission (sent as batch metadata where
    the vendor keeps it); ``batch_id``: the vendor's id once known;
    ``requests``: ``custom_id -> input id``.
    """

    tag: str
    batch_id: str | None
    requests: Mapping[str, str] = field(default_factory=dict)


class Journal:
    """The journal file of one run (``path``; ``None``: kept in memory only).

    Raises (at construction):
        InvalidRecordError: the file exists but is not a journal.
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self._subs: list[Submission] = []
        if self.path is not None and self.path.exists():
            self._subs = _load(self.path)

    @property
    def submissions(self) -> tuple[Submission, ...]:
        """Every journalled submission, oldest first."""
        return tuple(self._subs)

    def intend(self, requests: Mapping[str, str]) -> Submission:
        """Journal a submission about to be made (rule 1) and return it."""
        sub = Submission(f"af-{secrets.token_hex(8)}", None, dict(requests))
        self._subs.append(sub)
        self._save()
        return sub

    def submitted(self, tag: str, batch_id: str) -> None:
        """Record the vendor's batch id of the submission ``tag`` (rule 2)."""
        self._subs = [replace(s, batch_id=batch_id) if s.tag == tag else s for s in self._subs]
        self._save()

    def abandon(self, tag: str) -> None:
        """Forget a submission the vendor refused or that never reached it."""
        self._subs = [s for s in self._subs if s.tag != tag]
        self._save()

    def gone(self, batch_id: str) -> None:
        """Forget the submissions of ``batch_id``: the vendor no longer has it (rule 4)."""
        self._subs = [s for s in self._subs if s.batch_id != batch_id]
        self._save()

    def _save(self) -> None:
        if self.path is None:
            return
        data = orjson.dumps({"version": VERSION, "submissions": [
            {"tag": s.tag, "batch_id": s.batch_id, "requests": dict(s.requests)}
            for s in self._subs]}, option=orjson.OPT_INDENT_2)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp",
                                   dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _load(path: Path) -> list[Submission]:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InvalidRecordError(f"{path}: not a batch journal ({exc}); move it away to start "
                                 "over (its batches would be paid for again)") from None
    subs = data.get("submissions") if isinstance(data, dict) else None
    if not isinstance(subs, list) or data.get("version") != VERSION:
        raise InvalidRecordError(f"{path}: not a version {VERSION} batch journal")
    out: list[Submission] = []
    for n, s in enumerate(subs):
        ok = (isinstance(s, dict) and isinstance(s.get("tag"), str)
              and isinstance(s.get("requests"), dict)
              and (s.get("batch_id") is None or isinstance(s.get("batch_id"), str)))
        if not ok:
            raise InvalidRecordError(f"{path}: submission {n} is malformed")
        out.append(Submission(s["tag"], s.get("batch_id"),
                              {str(k): str(v) for k, v in s["requests"].items()}))
    return out
