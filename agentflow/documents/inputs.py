"""Documents for the ``extract`` command: paths, globs, directories, ``.gz``,
JSONL and stdin -> ``Document`` items, lazily. What the specs name (globs
expanded, directories walked, each file once by its identity) is
``agentflow.documents.listing``; this module reads each file it names.

Each file is read by its kind (``agentflow.documents``: magic bytes, then
suffix; ``--format`` forces one): a PDF gives its text layer with its page
map (``Document.pages``), an HTML page its text, anything else is decoded
as plain text. A PDF or HTML page that cannot be read (corrupt, encrypted,
scanned without a text layer, its reader not installed) is a ``Document``
whose ``problem_type`` names the ``DocumentError`` subclass at fault.

Ids are stable across runs (the path, plus ``#<line>`` or the record's id for
JSONL; stdin: ``-#`` and a hash of the text), so an output file can be
resumed. A document that cannot be used (unreadable file or directory, a
broken link or a pipe/device found in a directory, corrupt ``.gz``, binary,
larger than ``MAX_INPUT_BYTES``, empty) comes out with its ``problem`` set,
so the caller records it as failed without asking a model to invent an
answer: nothing named is skipped silently.

Plain text is decoded by the documented order of
``agentflow.documents.encoding`` (BOM, UTF-8, then ``charset-normalizer``'s
detection, each strict): text whose bytes no encoding reads is a
``DocumentEncodingError`` record, never decoded with replacement characters.
Binary detection looks at the share of non-text bytes, not only NULs: valid
text is binary when more than ``MAX_CONTROL_SHARE`` of its characters are
control characters, and bytes mostly invalid in every encoding are binary.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentflow._slots_init import slot_init
from agentflow.documents.budget import DEFAULT_BUDGET, WorkBudget, over_budget
from agentflow.documents.deferred import DeferredDocument
from agentflow.documents.encoding import MAX_CONTROL_SHARE, decode_text
from agentflow.documents.jsonl import jsonl_records
from agentflow.documents.kinds import DocumentKind, sniff_kind
from agentflow.documents.listing import Skipped, expand, file_identity
from agentflow.documents.loading import load_document
from agentflow.documents.pages import PageMap, shift_pages
from agentflow.documents.reading import MAX_INPUT_BYTES, InputError, Unusable, read_bytes
from agentflow.documents.seen import MISSING, SeenIds
from agentflow.errors import DocumentError, EmptyDocumentError

__all__ = ["FORMATS", "MAX_CONTROL_SHARE", "MAX_INPUT_BYTES", "Document", "InputError",
           "Source", "decode_text", "document_of", "failed_document", "file_document",
           "is_jsonl", "iter_documents", "iter_sources", "prepared", "read_document",
           "read_source"]

FORMATS = ("auto", "text", "jsonl", "pdf", "html")
"""``iter_documents(fmt=)``: ``auto`` tells each file's kind (``.jsonl``/``.ndjson``
by suffix, then ``agentflow.documents.kinds.sniff_kind``); the others force one."""


@slot_init  # one is made per input (a JSONL line): its slots set through their setters
@dataclass(frozen=True, slots=True)
class Document:
    """One input document.

    Attributes:
        id: stable across runs (see the module docstring).
        text: what the model reads (a PDF's text layer, an HTML page's text).
        problem: why it cannot be used, if so (the record's ``error.message``).
        offset: where ``text`` starts in the file's text when ``prepare`` cut a
            prefix (0 otherwise, or when ``prepare`` rewrote the text).
        kind: ``"text"``, ``"pdf"`` or ``"html"``.
        pages: a PDF's page map into ``text`` (``agentflow.documents.pages``;
            ``None`` for other kinds, or when ``prepare`` rewrote the text).
        problem_type: the error type behind ``problem`` (``None``: ``InputError``).
        reason: what to do about ``problem``, in words (the record's ``error.reason``).
        data: the PDF when it goes to the model as a document block
            (``iter_documents(deliver=)``): a ``DeferredDocument`` that reads the
            file when its input is sent (the bytes themselves for stdin, which
            cannot be read twice); ``text`` is then its text layer, sent beside
            it, or empty (a scan).
    """

    id: str
    text: str
    problem: str | None = None
    offset: int = 0
    kind: str = "text"
    pages: PageMap | None = None
    problem_type: str | None = None
    reason: str | None = None
    data: bytes | DeferredDocument | None = field(default=None, repr=False)


def failed_document(problem: Unusable, doc_id: str) -> Document:
    """The failed document ``problem`` makes."""
    return Document(doc_id, "", problem=str(problem), problem_type=problem.problem_type,
                    reason=problem.reason or None)


def file_document(path: Path, fmt: str, deliver: Callable[[bool], str] | None = None,
                  budget: WorkBudget | None = None, *, stdin: bool = False) -> Document:
    """``path`` read by its kind (``fmt``: ``auto`` sniffs, else forced); a PDF
    goes as ``deliver(has_text)`` says (see ``iter_documents``); read under
    ``budget``'s count limits (its CPU and memory limits are the caller's).
    ``stdin``: ``path`` holds standard input's bytes (spooled there by
    ``agentflow.documents.readahead``): named and identified as ``-``.

    Raises:
        Unusable: unreadable, corrupt ``.gz``, too large, or binary plain text
            (a text file whose bytes do not decode is a ``Document`` with
            ``problem_type`` ``DocumentEncodingError``).
    """
    raw = read_bytes(path)
    return document_of(raw, Path("-") if stdin else path, fmt, deliver, budget)


def document_of(raw: bytes, path: Path, fmt: str,
                deliver: Callable[[bool], str] | None = None,
                budget: WorkBudget | None = None) -> Document:
    """The document of file ``path`` whose bytes (gunzipped) are ``raw``
    (``path`` ``-``: standard input's), read by its kind as ``file_document``
    says; past ``budget``'s ``chars`` (any kind), a failed document naming
    the limit.

    Raises:
        Unusable: binary plain text (standard input's is a failed document,
            its id ``-#`` and its bytes' digest, as a readable one's).
    """
    name = "" if str(path) == "-" else str(path)
    kind: DocumentKind = (sniff_kind(raw[:1024], name) if fmt == "auto" else
                          "pdf" if fmt == "pdf" else "html" if fmt == "html" else "text")
    doc_id = name or f"-#{hashlib.sha1(raw).hexdigest()[:12]}"
    try:
        if kind == "text":
            text = decode_text(raw, name=name)
            if text is None:
                if not name:  # standard input: identified by its bytes, as when readable
                    return failed_document(Unusable(f"{path}: binary file, not text"), doc_id)
                raise Unusable(f"{path}: binary file, not text")
            _check_chars(name or "-", text, budget)
            return Document(name or f"-#{_digest(text)}", text)
        if kind == "pdf" and deliver is not None:
            return _pdf_document(doc_id, raw, name or "-", deliver, budget)
        loaded = load_document(raw, name=name or "-", kind=kind, budget=budget)
        _check_chars(name or "-", loaded.text, budget)
    except DocumentError as exc:
        return Document(doc_id, "", problem=str(exc), kind=kind,
                        problem_type=type(exc).__name__, reason=exc.reason or None)
    return Document(doc_id, loaded.text, kind=loaded.kind, pages=loaded.pages)


def _check_chars(name: str, text: str, budget: WorkBudget | None) -> None:
    """Raise when ``text`` is past ``budget``'s ``chars`` (a PDF is checked
    page by page as it is read; plain text and HTML once decoded).

    Raises:
        DocumentTooComplexError: ``limit`` ``"chars"``.
    """
    if budget is not None and budget.chars is not None and len(text) > budget.chars:
        raise over_budget(name, "chars", len(text), budget.chars)


def _pdf_document(doc_id: str, raw: bytes, name: str, deliver: Callable[[bool], str],
                  budget: WorkBudget | None = None) -> Document:
    """A PDF as ``deliver`` (``agentflow.documents.routing.pdf_delivery``, bound to the
    mode and model) says: its text layer, the file for a document block (read
    again when its input is sent: ``agentflow.documents.deferred``), or both.

    Raises:
        DocumentError: unreadable, or (delivery ``no_text``) without a text layer.
    """
    loaded = load_document(raw, name=name, kind="pdf", allow_no_text=True, budget=budget)
    has_text = bool(loaded.text.strip())
    delivery = deliver(has_text)
    if delivery not in ("document", "document+text"):
        if not has_text:  # raises the NoTextLayerError that says why
            load_document(raw, name=name, kind="pdf")
        return Document(doc_id, loaded.text, kind="pdf", pages=loaded.pages)
    # stdin cannot be read twice: its bytes are kept; a file is read when it is sent
    data = raw if name in ("", "-") else DeferredDocument(name)
    return Document(doc_id, loaded.text if has_text else "", kind="pdf",
                    pages=loaded.pages if has_text else None, data=data)


def is_jsonl(path: Path, fmt: str) -> bool:
    """Whether ``path`` is read as JSONL, one document per line: ``fmt``
    ``jsonl``, or ``auto`` and a ``.jsonl``/``.ndjson`` suffix (``.jsonl.gz`` too)."""
    if fmt != "auto":
        return fmt == "jsonl"
    suffixes = path.suffixes
    return ".jsonl" in suffixes or ".ndjson" in suffixes


def _jsonl_records(path: Path, text_field: str, id_field: str,
                   budget: WorkBudget | None = None) -> Iterator[Document]:
    """One document per non-blank line of ``path``; a line that is not a
    document is one failed document (id ``FILE:LINE``), and the lines after it
    go on (``agentflow.documents.jsonl``). A record whose text is past
    ``budget``'s ``chars`` is a failed document naming the limit, as a file is."""
    for doc_id, got in jsonl_records(path, text_field, id_field):
        if isinstance(got, Unusable):
            yield failed_document(got, doc_id)
            continue
        try:
            _check_chars(doc_id, got, budget)
        except DocumentError as exc:
            yield Document(doc_id, "", problem=str(exc), problem_type=type(exc).__name__,
                           reason=exc.reason or None)
            continue
        yield Document(doc_id, got)


def iter_documents(
    specs: Sequence[str],
    *,
    fmt: str = "auto",
    text_field: str = "text",
    id_field: str = "id",
    prepare: Callable[[str], str] | None = None,
    deliver: Callable[[bool], str] | None = None,
    budget: WorkBudget | None = DEFAULT_BUDGET,
) -> Iterator[Document]:
    """Every document named by ``specs`` (files, globs, directories, ``-``); a
    file that several specs name is read once, under the first name given.
    Each is read in this process, under ``budget``'s count limits (a PDF's
    pages, content-stream operators and characters: a hostile PDF is a failed
    document, not hours of parsing); its CPU and memory limits need a worker
    process (``agentflow.documents.readahead``, as ``agentflow extract`` reads).

    Args:
        fmt: one of ``FORMATS``: ``auto`` (JSONL by suffix, then each file's
            kind by its bytes and name), ``text``, ``jsonl``, ``pdf`` or ``html``.
        text_field / id_field: JSONL record fields.
        prepare: applied to each text (e.g. keep a changelog's latest entry).
            Texts are never cut here: a cap is ``extract_many(max_chars=)``,
            which records it.
        deliver: how each PDF reaches the model, from whether it has a text layer
            (``agentflow.documents.routing.pdf_delivery`` with the mode and model
            bound): ``document`` / ``document+text`` keep its bytes in
            ``Document.data`` (a scan then has empty text, not a problem);
            ``None``: the text layer only.

    Raises:
        InputError: a spec matches nothing (unreadable, binary and empty
            documents, and malformed JSONL lines, come out with a ``problem``).
    """
    for source in iter_sources(specs, fmt):
        if isinstance(source, Document):
            yield source
            continue
        for doc in read_source(source, fmt=fmt, text_field=text_field, id_field=id_field,
                               deliver=deliver, budget=budget):
            yield prepared(doc, prepare)


@dataclass(frozen=True, slots=True)
class Source:
    """One input file to read (``iter_sources``).

    Attributes:
        path: the file (``-``: stdin).
        jsonl: read as JSONL (one document per line).
    """

    path: Path
    jsonl: bool


def iter_sources(specs: Sequence[str], fmt: str = "auto", *,
                 exclude: tuple[int, int] | None = None,
                 on_exclude: Callable[[Path], None] | None = None,
                 on_skip: Callable[[Path, str], None] | None = None,
                 ) -> Iterator[Document | Source]:
    """The files ``specs`` name, lazily, each once (under the first name given),
    as ``Source`` items; an entry that cannot be read comes as a failed
    ``Document`` (see ``iter_documents``).

    Args:
        exclude: the device and inode of a file never to read (the run's output:
            met under any name, it is left out and ``on_exclude`` told each name).
            Each file is looked at here anyway (to read it once), so this costs
            nothing more.
        on_skip: told each entry left out on purpose and why (a link to a folder
            met in a walk: ``agentflow.documents.listing``); ``None``: logged as
            a warning (logger ``agentflow.documents``).

    Raises:
        InputError: a spec matches nothing.
    """
    seen = SeenIds()  # the files met, on disk: memory does not grow with the corpus
    try:
        for spec in specs:
            for path, problem in expand(spec):
                if isinstance(problem, Skipped):
                    if on_skip is not None:
                        on_skip(path, str(problem))
                    else:
                        logging.getLogger("agentflow.documents").warning("skipped %s", problem)
                    continue
                if problem is not None:
                    yield failed_document(Unusable(problem), str(path))
                    continue
                identity = file_identity(path)
                if exclude is not None and identity == exclude:  # told under each name
                    if on_exclude is not None:
                        on_exclude(path)
                    continue
                # named again (a path and a glob, ./x and x, - twice): read once
                if seen.setdefault(_identity_key(identity), None) is not MISSING:
                    continue
                yield Source(path, is_jsonl(path, fmt))
    finally:
        seen.close()


def _identity_key(identity: object) -> str:
    """``file_identity``'s value as a ``SeenIds`` key."""
    if isinstance(identity, tuple):
        return f"{identity[0]}:{identity[1]}"
    return f"/{identity}"  # "-" or an unresolvable path: never of the form above


def read_source(source: Source, *, fmt: str = "auto", text_field: str = "text",
                id_field: str = "id", deliver: Callable[[bool], str] | None = None,
                budget: WorkBudget | None = None) -> Iterator[Document]:
    """The documents of one source, before ``prepare`` (see ``iter_documents``);
    read under ``budget``'s count limits (a JSONL record's text within its
    ``chars``, as a file's). Never raises for a bad file: its problem is a
    failed ``Document``."""
    try:
        if source.jsonl:
            yield from _jsonl_records(source.path, text_field, id_field, budget)
        else:
            yield file_document(source.path, fmt, deliver, budget)
    except Unusable as exc:
        yield failed_document(exc, str(source.path))


def prepared(doc: Document, prepare: Callable[[str], str] | None) -> Document:
    """``doc`` through the schema module's ``prepare`` (a failed one as it is)."""
    return doc if doc.problem else _prepared(doc, prepare)


def read_document(path: str | Path, *, fmt: str = "auto",
                  prepare: Callable[[str], str] | None = None,
                  budget: WorkBudget | None = None) -> Document:
    """One file, read as ``iter_documents`` reads a file that is not JSONL: by its
    kind (``fmt``: ``auto`` sniffs; ``text``, ``pdf`` or ``html`` force one),
    then through ``prepare``. A file that cannot be used comes back with its
    ``problem`` set (never raised): what ``agentflow report`` re-reads sources with."""
    path = Path(path)
    try:
        doc = file_document(path, "auto" if fmt == "jsonl" else fmt, budget=budget)
    except Unusable as exc:
        return failed_document(exc, str(path))
    return doc if doc.problem else _prepared(doc, prepare)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:12]


def _prepared(doc: Document, prepare: Callable[[str], str] | None) -> Document:
    """``doc`` through the schema module's ``prepare``; a ``prepare`` that raises
    or returns something other than text makes this document a failed one
    (the others go on)."""
    if doc.data is not None and not doc.text.strip():
        return doc  # a scan sent as a document block: no text to prepare
    if prepare is None:
        text = doc.text
    else:
        try:
            text = prepare(doc.text)
        except Exception as exc:  # the user's code: this document fails, not the run
            return Document(doc.id, "", problem=(
                f"{doc.id}: prepare() raised {type(exc).__name__}: {exc}"))
        if not isinstance(text, str):
            return Document(doc.id, "", problem=(
                f"{doc.id}: prepare() returned {type(text).__name__}, not str"))
    if not text.strip():
        return Document(doc.id, text, problem=f"{doc.id}: empty document", kind=doc.kind,
                        problem_type=EmptyDocumentError.__name__,
                        reason=EmptyDocumentError.reason)
    found = 0 if doc.text.startswith(text) else doc.text.find(text)
    offset = max(found, 0)
    pages = doc.pages
    if pages is not None and text is not doc.text:  # page ranges follow a cut, not a rewrite
        pages = shift_pages(pages, found, len(text)) if found >= 0 else None
    return Document(doc.id, text, offset=offset, kind=doc.kind, pages=pages, data=doc.data)
