"""A per-document work budget: how much one input may cost to read.

    budget = WorkBudget(pages=5_000, operators=5_000_000, chars=50_000_000, cpu_seconds=60,
                        memory_bytes=2 * 1024**3)

A PDF is untrusted input: 14 KB whose pages share one compressed content
stream of a million text operators cost pypdf (pure Python, holding the GIL)
about 30 s of CPU per page. Reading a document therefore stops at the first
limit it passes, with a ``DocumentTooComplexError`` that names the limit
(``limit``: ``"pages"``, ``"operators"``, ``"chars"``, ``"cpu_seconds"`` or
``"memory_bytes"``):

* ``pages``: the PDF's page count, checked before any page is parsed;
* ``operators``: content-stream operators of all pages together (a stream
  shared by many pages counts once per page, as it is parsed once per page),
  counted in the decompressed streams before any text is extracted, by a
  regular expression (string literals skipped): cheap next to the parse;
* ``chars``: characters of extracted text, checked page by page (a PDF), or
  once decoded (plain text, HTML; standard input as a file);
* ``cpu_seconds``: CPU time of the whole read, enforced in the worker
  process that reads it (``agentflow.documents.reader_pool``) by
  ``RLIMIT_CPU``: the kernel's ``SIGXCPU`` interrupts the pure-Python parse
  (Unix only; the limit is rounded up to whole seconds). A parse in native
  code (Lexbor's quadratic ``<select>`` of 500,000 ``<option>``: minutes)
  never returns to Python, where that signal is handled: ``CPU_GRACE``
  seconds later a profiling timer (``ITIMER_PROF``, CPU time too) ends the
  worker process itself, and the pool names the limit
  (``reader_pool.read_alone``);
* ``memory_bytes``: memory the read may add to its worker process, enforced
  there by ``RLIMIT_AS`` (address space): an allocation past it fails, and
  the read with it (a ``MemoryError``; Lexbor's parse fails as a whole), so
  a page of 50 MB of text (about 1.1 GB to read) or a 256 MB page of small
  tags cannot take the machine's memory (Unix only).

The PDF reader's own safety limits (pypdf's: a compressed stream that
inflates past its output cap, 75 MB by default, a decompression bomb; a page
tree too large or cyclic) end the read with the same error, ``limit``
``"reader"`` (``agentflow.documents.pdf``), not as a corrupt file.

``agentflow extract`` reads its inputs (standard input too) in worker
processes under ``DEFAULT_BUDGET`` (``agentflow.documents.reader_pool``; a
small plain-text file, which cannot come near it, in the listing thread:
``agentflow.documents.small``); ``agentflow report`` re-reads sources under
the same one.
"""

from __future__ import annotations

import contextlib
import math
import re
import resource
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agentflow.errors import DocumentTooComplexError

__all__ = ["CPU_GRACE", "DEFAULT_BUDGET", "WorkBudget", "count_operators", "cpu_budget",
           "memory_budget", "over_budget"]


@dataclass(frozen=True, slots=True)
class WorkBudget:
    """The most one document may cost to read (``None``: no limit on that measure).

    Attributes:
        pages: PDF pages.
        operators: content-stream operators, all pages together.
        chars: characters of extracted text.
        cpu_seconds: CPU seconds of the read (in a worker process).
        memory_bytes: memory the read may add (in a worker process).
    """

    pages: int | None = 5_000
    operators: int | None = 5_000_000
    chars: int | None = 50_000_000
    cpu_seconds: float | None = 60.0
    memory_bytes: int | None = 2 * 1024**3


DEFAULT_BUDGET = WorkBudget()
"""The budget ``agentflow extract`` and ``agentflow report`` read each document under."""

_WHAT = {"pages": "pages", "operators": "content-stream operators",
         "chars": "characters of text", "cpu_seconds": "CPU seconds",
         "memory_bytes": "bytes of memory"}


def over_budget(name: str, limit: str, measured: float, cap: float) -> DocumentTooComplexError:
    """The error of document ``name`` past its ``limit`` (``measured`` > ``cap``)."""
    what = _WHAT[limit]
    shown = (f"more than {cap:g}" if limit == "cpu_seconds" else
             f"more than {cap:,.0f}" if limit == "memory_bytes" else
             f"{measured:,.0f} (limit {cap:,.0f})")
    return DocumentTooComplexError(
        f"{name}: too costly to read: {what}: {shown}", path=name, limit=limit,
        measured=measured, cap=cap,
        reason=f"reading it stopped at the work budget's {limit} limit ({_amount(limit, cap)} "
               f"{what}); "
               "a document this costly is usually malformed or hostile. Check the file, or "
               "convert it to text first (e.g. pdftotext) and pass the .txt")


def _amount(limit: str, cap: float) -> str:
    return f"{cap:g}" if limit == "cpu_seconds" else f"{cap:,.0f}"


_STRINGS = re.compile(rb"\((?:[^()\\]|\\.)*\)|<[0-9A-Fa-f\s]*>", re.S)
_OPERATORS = re.compile(rb"(?<![\w/.#+\-])[A-Za-z'\"][A-Za-z0-9*'\"]*")


def count_operators(content: bytes) -> int:
    """Operators in one decompressed content stream (names, numbers and
    string literals are operands; ``true``/``false``/``null`` count too: an
    upper bound)."""
    return len(_OPERATORS.findall(_STRINGS.sub(b" ", content)))


CPU_GRACE = 3.0
"""CPU seconds past ``cpu_seconds`` after which a read that Python could not
interrupt (native code) ends its worker process (``cpu_budget``)."""


class _CpuSpent(BaseException):
    """Raised by the ``SIGXCPU`` handler inside ``cpu_budget`` (a BaseException:
    a reader's ``except Exception`` does not swallow it)."""


def _on_xcpu(signum: int, frame: Any) -> None:
    raise _CpuSpent


@contextlib.contextmanager
def cpu_budget(name: str, seconds: float | None) -> Iterator[None]:
    """Run the block under at most ``seconds`` more CPU seconds of this
    process (``RLIMIT_CPU``); past it, ``DocumentTooComplexError`` (``limit``
    ``"cpu_seconds"``). Native code that holds on past it (the signal waits
    for Python) ends the process ``CPU_GRACE`` CPU seconds later
    (``SIGPROF``, left to its default action: ``-SIGPROF`` is its exit code).
    For a worker process only: the whole process is limited while the block
    runs. ``None``: no limit."""
    if seconds is None:
        yield
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    previous = signal.signal(signal.SIGXCPU, _on_xcpu)
    previous_prof = signal.signal(signal.SIGPROF, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_PROF, seconds + 1 + CPU_GRACE)  # past the rounded limit
    try:
        with _soft_limit(resource.RLIMIT_CPU,
                         math.ceil(usage.ru_utime + usage.ru_stime + seconds)):
            yield
    except _CpuSpent:
        raise over_budget(name, "cpu_seconds", seconds, seconds) from None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous_prof)
        signal.signal(signal.SIGXCPU, previous)


@contextlib.contextmanager
def _soft_limit(kind: int, cap: int) -> Iterator[None]:
    """Run the block with ``kind``'s soft limit (``resource.RLIMIT_*``) at
    ``cap`` (never above the hard limit), restored after."""
    soft, hard = resource.getrlimit(kind)
    resource.setrlimit(kind, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(kind, (soft, hard))


def _address_space() -> int | None:
    """This process's address space in bytes (``None``: not known here)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def memory_budget(name: str, limit: int | None) -> Iterator[None]:
    """Run the block with at most ``limit`` more bytes of address space for this
    process (``RLIMIT_AS``); an allocation past it fails, and the
    ``MemoryError`` is a ``DocumentTooComplexError`` (``limit``
    ``"memory_bytes"``). For a worker process only: the whole process is
    limited while the block runs. ``None``, or a system without
    ``/proc/self/statm``: no limit."""
    now = _address_space() if limit is not None else None
    if limit is None or now is None:
        yield
        return
    try:
        with _soft_limit(resource.RLIMIT_AS, now + limit):
            yield
    except MemoryError:
        raise over_budget(name, "memory_bytes", limit, limit) from None
