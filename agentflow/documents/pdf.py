"""A PDF's text layer, page by page, with each page's place in the text kept.

    pdf = read_pdf(Path("report.pdf").read_bytes(), name="report.pdf")
    pdf.text              # the pages' texts joined by a blank line
    pdf.pages[2]          # (start, end): page 3 in pdf.text
    for text in iter_page_texts(raw):   # lazily: one page parsed at a time
        ...

Text comes from ``pypdf`` (the ``pdf`` extra: ``pip install 'agentflow[pdf]'``),
in its default ("plain") extraction mode, one page at a time: a page's
content stream is parsed only when its turn comes, so a 1000-page file is
never held as 1000 parsed pages. A PDF encrypted with an owner password only
(the usual "no copying" flag) opens with the empty user password, as every
viewer does; one that needs a user password is an ``EncryptedDocumentError``.
AES-encrypted files need the ``cryptography`` package (part of the extra).

pypdf's warnings about a malformed file it reads anyway ("incorrect startxref
pointer"...) go to agentflow's log (``agentflow.documents``, event
``pdf_reader_warning``, INFO, the file named), never to stderr
(``agentflow.documents._pdf_warnings``).

A scanned PDF has pages but no text layer (each page is an image): its
``PdfText.text`` is empty (or whitespace) and ``has_text`` is false; whether
that is an error depends on the model (one that reads PDF documents itself
can still take it), so the caller decides (``agentflow.documents.load_document``).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentflow.documents._pdf_warnings import pdf_scope
from agentflow.documents.budget import WorkBudget, count_operators, over_budget
from agentflow.documents.kinds import PDF_MAGIC
from agentflow.documents.pages import PAGE_SEPARATOR, PageMap
from agentflow.errors import (
    CorruptDocumentError,
    DocumentError,
    DocumentTooComplexError,
    EncryptedDocumentError,
)

__all__ = ["PdfText", "iter_page_texts", "read_pdf"]

_INSTALL = "install the 'pdf' extra: pip install 'agentflow[pdf]'"


@dataclass(frozen=True, slots=True)
class PdfText:
    """A PDF's text layer.

    Attributes:
        text: every page's text, in page order, joined by ``PAGE_SEPARATOR``.
        pages: ``pages[n - 1]`` is the ``[start, end)`` range of page ``n`` in
            ``text`` (empty for a page without text).
    """

    text: str
    pages: PageMap

    @property
    def has_text(self) -> bool:
        """Whether any page holds text other than whitespace."""
        return not self.text.isspace() and bool(self.text)


def _reader(raw: bytes, name: str, password: str | None) -> Any:
    """An open ``pypdf.PdfReader`` on ``raw``, decrypted when it can be.

    Raises:
        DocumentError: pypdf (or, for AES, cryptography) is not installed.
        EncryptedDocumentError: a user password is needed (or ``password`` is wrong).
        DocumentTooComplexError: past one of pypdf's safety limits.
        CorruptDocumentError: pypdf cannot parse the file.
    """
    try:
        import pypdf
        from pypdf.errors import DependencyError, WrongPasswordError
    except ImportError:
        raise DocumentError(f"{name}: reading PDFs needs pypdf", path=name,
                            reason=f"pypdf is not installed; {_INSTALL}") from None
    try:
        with pdf_scope(name):
            reader = pypdf.PdfReader(io.BytesIO(raw), password=password)
            locked = reader.is_encrypted and password is None and (
                reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED)
        if locked:
            raise EncryptedDocumentError(
                f"{name}: encrypted PDF; it needs a password to open", path=name,
                reason="the PDF is encrypted with a user password; decrypt it first (e.g. "
                       "qpdf --password=... --decrypt in.pdf out.pdf)")
        return reader
    except DocumentError:
        raise
    except WrongPasswordError:
        raise EncryptedDocumentError(f"{name}: encrypted PDF; the password is wrong", path=name,
                                     reason="the password given does not open the PDF") from None
    except DependencyError as exc:
        raise DocumentError(f"{name}: encrypted PDF; decrypting it needs cryptography",
                            path=name, reason=f"{exc}; {_INSTALL}") from None
    except Exception as exc:  # untrusted bytes: pypdf's parse failures have no single type
        raise _corrupt(name, exc, raw) from None


def _corrupt(name: str, exc: BaseException, raw: bytes, page: int | None = None
             ) -> DocumentError:
    """Why pypdf could not read ``raw``: one of its own safety limits
    (``LimitReachedError``: a stream that inflates past its cap, a page tree
    too large or cyclic) is a ``DocumentTooComplexError`` with ``limit``
    ``"reader"``, like the work budget's limits; any other failure a
    ``CorruptDocumentError``. A ``MemoryError`` is raised as it is: the work
    budget's memory limit (``agentflow.documents.budget.memory_budget``) names it.

    Raises:
        MemoryError: ``exc`` is one.
    """
    if isinstance(exc, MemoryError):
        raise exc
    where = f" (page {page})" if page is not None else ""
    if _reader_limit(exc):
        return DocumentTooComplexError(
            f"{name}: too costly to read{where}: the PDF reader's safety limit: {exc}",
            path=name, limit="reader",
            reason=f"pypdf stopped at one of its safety limits ({str(exc)[:300]}): a "
                   "compressed stream that inflates past its cap (a decompression bomb), or "
                   "a page tree too large or cyclic; such a document is usually malformed or "
                   "hostile. Check the file, or convert it to text first (e.g. pdftotext) "
                   "and pass the .txt")
    if PDF_MAGIC not in raw[:1024]:
        why = "not a PDF: no %PDF- header in its first 1024 bytes"
    else:
        why = f"pypdf cannot read it{where}: {type(exc).__name__}: {exc}"
    return CorruptDocumentError(f"{name}: corrupt PDF{where}", path=name,
                                reason=why[:500])


def _reader_limit(exc: BaseException) -> bool:
    """Whether ``exc`` is pypdf's ``LimitReachedError`` (pypdf >= 5)."""
    try:
        from pypdf.errors import LimitReachedError
    except ImportError:  # an older pypdf: no such limits
        return False
    return isinstance(exc, LimitReachedError)


def iter_page_texts(raw: bytes, *, name: str = "", password: str | None = None,
                    budget: WorkBudget | None = None) -> Iterator[str]:
    """The text of each page of the PDF ``raw``, in page order, one page parsed
    at a time (``""`` for a page without text).

    Args:
        raw: the PDF file's bytes.
        name: the file's name, for error messages.
        password: the user password of an encrypted PDF (``None``: try the empty one).
        budget: the work budget's ``pages`` (before any page is parsed),
            ``operators`` (before any text is extracted) and ``chars``
            (page by page) limits (``agentflow.documents.budget``); ``None``: none.

    Raises:
        DocumentTooComplexError: past a limit of ``budget``, or of pypdf's own
            (``limit`` ``"reader"``: a stream inflating past pypdf's cap, a
            decompression bomb; the message names the page and the limit).
        DocumentError: pypdf (or cryptography, for AES) is not installed.
        EncryptedDocumentError: the PDF needs a user password.
        CorruptDocumentError: the file cannot be parsed, or one of its pages
            cannot (the message names the page).
    """
    reader = _reader(raw, name, password)
    try:
        with pdf_scope(name):
            count = len(reader.pages)
    except Exception as exc:  # a broken page tree
        raise _corrupt(name, exc, raw) from None
    if budget is not None:
        _check_work(reader, count, name, raw, budget)
    chars = 0
    for index in range(count):
        try:
            with pdf_scope(name):  # not across the yield: the caller's context is its own
                text = reader.pages[index].extract_text()
        except Exception as exc:  # a broken content stream, font or resource
            raise _corrupt(name, exc, raw, page=index + 1) from None
        text = text if isinstance(text, str) else ""
        chars += len(text)
        if budget is not None and budget.chars is not None and chars > budget.chars:
            raise over_budget(name, "chars", chars, budget.chars)
        yield text


def _check_work(reader: Any, count: int, name: str, raw: bytes, budget: WorkBudget) -> None:
    """Refuse a PDF past ``budget``'s ``pages`` or ``operators`` limit before
    any page's text is extracted (each distinct content stream is decompressed
    and counted once; a shared one counts once per page that draws it).

    Raises:
        DocumentTooComplexError: past a limit (of ``budget``, or pypdf's own).
        CorruptDocumentError: a page's content cannot be decoded.
    """
    if budget.pages is not None and count > budget.pages:
        raise over_budget(name, "pages", count, budget.pages)
    if budget.operators is None:
        return
    counted: dict[Any, int] = {}
    total = 0
    for index in range(count):
        try:
            with pdf_scope(name):
                total += sum(_stream_operators(stream, counted)
                             for stream in _content_streams(reader.pages[index]))
        except Exception as exc:  # a broken content stream
            raise _corrupt(name, exc, raw, page=index + 1) from None
        if total > budget.operators:
            raise over_budget(name, "operators", total, budget.operators)


def _content_streams(page: Any) -> list[Any]:
    """The content stream objects (indirect references kept) a page draws."""
    contents = page.get("/Contents")
    if contents is None:
        return []
    resolved = contents.get_object()
    return list(resolved) if isinstance(resolved, list) else [contents]


def _stream_operators(ref: Any, counted: dict[Any, int]) -> int:
    """Operators of one content stream (by its object id, counted once)."""
    key = getattr(ref, "idnum", None), getattr(ref, "generation", None)
    if key[0] is None:
        key = (id(ref), None)
    if key not in counted:
        data = ref.get_object().get_data()
        counted[key] = count_operators(data if isinstance(data, bytes) else b"")
    return counted[key]


def read_pdf(raw: bytes, *, name: str = "", password: str | None = None,
             budget: WorkBudget | None = None) -> PdfText:
    """The text layer of the PDF ``raw``: the pages' texts joined by
    ``PAGE_SEPARATOR``, with each page's range (see ``PdfText``).

    Raises:
        the errors of ``iter_page_texts``.
    """
    parts: list[str] = []
    pages: list[tuple[int, int]] = []
    position = 0
    for text in iter_page_texts(raw, name=name, password=password, budget=budget):
        if parts:
            parts.append(PAGE_SEPARATOR)
            position += len(PAGE_SEPARATOR)
        parts.append(text)
        pages.append((position, position + len(text)))
        position += len(text)
    return PdfText("".join(parts), tuple(pages))
