"""The ids one JSONL file has used, and the line each was first used on
(``agentflow.documents.jsonl``: a repeated id is a failed line naming it).

Most files number their records ``0, 1, 2...`` one a line (or have no id,
and the line number is the id): such ids are kept as one run of consecutive
integers, each on the line its number says (``line - id`` the same for all),
in three ints, with no database statement per line. Every other id goes to a
``SeenIds`` (constant memory, one SQLite statement per call). The run and
the database never hold the same id: the run grows only by the integer after
its last, on the line after its last, and only while that integer is above
every integer id the database holds; so an integer id inside the run was met
there, and any other id was met (if at all) in the database.

An id is the text after the file name (``FILE#<id>``): ``7`` and ``"7"``
are one id, ``"07"``, ``7.0`` or ``"-0"`` another (not an integer's
canonical text), read from the database.
"""

from __future__ import annotations

from agentflow.documents.seen import MISSING, Missing, SeenIds, Value

__all__ = ["LineIds", "integer_id"]


def integer_id(text: str) -> int | None:
    """The integer whose canonical text (``str(n)``) is ``text``, else ``None``."""
    digits = text[1:] if text[:1] == "-" else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    try:
        n = int(text)
    except ValueError:  # past the interpreter's longest integer text
        return None
    return n if str(n) == text else None


class LineIds:
    """The ids of one JSONL file met so far, each with its first line (see
    the module docstring). ``close()`` drops the database."""

    __slots__ = ("_run", "_seen", "_top")

    def __init__(self) -> None:
        self._seen = SeenIds()
        self._run: tuple[int, int, int] | None = None  # first, last, line - id
        self._top: int | None = None  # the largest integer id in the database

    def setdefault(self, doc_id: str, number: int | None, line: int) -> Value | Missing:
        """Add ``doc_id`` (on ``line``) unless it was met; the line it was first
        met on (``MISSING``: it was not). ``number``: the integer whose
        canonical text ends ``doc_id`` (``integer_id``), or ``None``."""
        run = self._run
        if number is not None:
            if run is None:  # the first integer id: no integer is in the database
                self._run = (number, number, line - number)
                return MISSING
            first, last, offset = run
            if first <= number <= last:
                return number + offset
            top = self._top
            if number == last + 1 and line - number == offset and (top is None or number > top):
                self._run = (first, number, offset)
                return MISSING
            met = self._seen.setdefault(doc_id, line)
            if met is MISSING and (top is None or number > top):
                self._top = number
            return met
        return self._seen.setdefault(doc_id, line)

    def close(self) -> None:
        """Drop the database's ids and its temporary file (idempotent)."""
        self._seen.close()
