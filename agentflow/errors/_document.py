"""Input documents that cannot become text, and long documents whose chunks
fail or do not merge (``agentflow.errors`` re-exports these; the tree is
drawn there)."""

from __future__ import annotations

from typing import Any

from agentflow.errors._root import AgentflowError

__all__ = [
    "ChunkFailedError",
    "CorruptDocumentError",
    "DocumentEncodingError",
    "DocumentError",
    "DocumentTooComplexError",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "InvalidInputLineError",
    "MergeConflictError",
    "MergeError",
    "NoTextLayerError",
    "UnreadableDocumentError",
]


# --------------------------------------------------------------------------- input documents


class DocumentError(AgentflowError, ValueError):
    """An input file that cannot be turned into the text a model reads (also the
    error when the reader it needs is not installed).

    Attributes:
        path: the file (or ``""`` for bytes without a name).
        reason: what was wrong and what to do about it, in words (the record's
            ``error.reason``).
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "") -> None:
        self.path = path
        self.reason = reason
        super().__init__(message)


class CorruptDocumentError(DocumentError):
    """The file's reader cannot parse it: a damaged PDF (broken cross-reference
    table, truncated stream...) or a file named ``.pdf`` that is not one."""


class EncryptedDocumentError(DocumentError):
    """A PDF encrypted with a user password: it cannot be read without it (a PDF
    encrypted only with an owner password, the common case, opens and is read)."""


class NoTextLayerError(DocumentError):
    """A PDF whose pages hold no extractable text (scanned pages are images), given
    to a model that cannot read PDF documents itself: there is nothing to send.

    Attributes:
        pages: the PDF's page count.
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "", pages: int = 0) -> None:
        self.pages = pages
        super().__init__(message, path=path, reason=reason)


class DocumentTooComplexError(DocumentError):
    """A document too costly to read: an HTML page nested deeper than
    ``agentflow.documents.nesting.MAX_HTML_DEPTH`` (its parse would take time
    growing with the square of the depth: minutes for 100,000 levels, so it is
    refused before parsing), or one past its work budget
    (``agentflow.documents.budget.WorkBudget``: pages, content-stream
    operators, characters, CPU seconds, memory).

    Attributes:
        depth: the nesting depth the scan found (at least the cap plus one; 0
            when a budget limit stopped the read).
        limit: the budget limit passed (``"pages"``, ``"operators"``,
            ``"chars"``, ``"cpu_seconds"``, ``"memory_bytes"``; ``"depth"`` for nesting,
            ``"attributes"`` for an element's attributes;
            ``"reader"``: one of the PDF reader's own safety limits, such as
            a stream inflating past its cap: a decompression bomb).
        measured: what was counted when the read stopped (at least ``cap``).
        cap: the limit's value.
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "", depth: int = 0,
                 limit: str = "", measured: float = 0, cap: float = 0) -> None:
        self.depth = depth
        self.limit = limit or ("depth" if depth else "")
        self.measured, self.cap = measured, cap
        super().__init__(message, path=path, reason=reason)


class DocumentEncodingError(DocumentError):
    """A text or HTML file whose bytes do not decode: its byte-order mark or
    declared encoding is contradicted by its bytes and no other encoding in the
    documented order (``agentflow.documents.encoding``) reads them. Raised
    instead of replacing the bad bytes with U+FFFD (silent mojibake).

    Attributes:
        encoding: the last encoding tried (Python's codec name).
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "",
                 encoding: str = "") -> None:
        self.encoding = encoding
        super().__init__(message, path=path, reason=reason)


class UnreadableDocumentError(DocumentError):
    """An input that cannot be read as a document at all: a file or directory
    that cannot be read (permissions, I/O, a broken link, a pipe), a corrupt
    ``.gz``, a file over the CLI's size cap, or binary data that is none of
    text, PDF or HTML. Reported as a failed record; the other inputs go on."""

    default_reason = "the input cannot be read as a text, PDF or HTML document"


class InvalidInputLineError(DocumentError):
    """One line of a JSONL input that is not a document: not JSON, not a JSON
    object, without a string text field, or repeating an earlier line's id.
    Reported as that line's failed record (id ``FILE:LINE``); the other lines
    go on."""


# --------------------------------------------------------------------------- long documents


class EmptyDocumentError(AgentflowError):
    """The document holds no text (empty or whitespace only); no model call was made."""

    reason = "empty_document"


class ChunkFailedError(AgentflowError):
    """A chunk of a long document could not be extracted (the cause is chained
    as ``__cause__``), so the document's record fails; allow partial results
    to keep the other chunks' output instead.

    Attributes:
        start / end: the chunk's ``[start, end)`` character offsets in the document.
        reason: ``"chunk_failed"``.
    """

    reason = "chunk_failed"

    def __init__(self, message: str, *, start: int, end: int) -> None:
        self.start, self.end = start, end
        super().__init__(message)


class MergeError(AgentflowError):
    """The chunks' outputs do not merge into a valid output: a required field
    that every chunk left null, a merged value the schema refuses, or an
    output type that is not a pydantic model.

    Attributes:
        field: the field path at fault (``""`` when it is the whole output).
        reason: ``"unmergeable"``.
    """

    reason = "unmergeable"

    def __init__(self, message: str, *, field: str = "") -> None:
        self.field = field
        super().__init__(message)


class MergeConflictError(MergeError):
    """Chunks disagree on a field declared ``Merge.must_agree()``.

    Attributes:
        conflicts: the ``agentflow.extraction.merge.Conflict`` items (values per chunk).
        reason: ``"conflict"``.
    """

    reason = "conflict"

    def __init__(self, message: str, *, field: str, conflicts: tuple[Any, ...]) -> None:
        self.conflicts = conflicts
        super().__init__(message, field=field)
