"""The records of ``agentflow extract``: one JSON object per input (the
shape the CLI docstring lists), where they go (``--out`` or stdout), and
which failed ones a rerun tries again unasked."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from pydantic import BaseModel

from agentflow import errors
from agentflow._secrets import mask_secrets, mask_value
from agentflow.batch import ExtractResult
from agentflow.documents.inputs import Document
from agentflow.documents.names import dumps_record
from agentflow.documents.pages import span_pages
from agentflow.extraction.masked import flag_masked, mask_paths, masked_values
from agentflow.extraction.outfile import OutFile
from agentflow.usage import Usage

__all__ = ["to_record"]  # RecordSink, problem_record, is_transient: the CLI's and Ray's plumbing


@dataclass
class RecordSink:
    """Where ``agentflow extract``'s records go: the locked ``--out`` file
    (``out``), or stdout when ``out`` is ``None`` (one line of strict JSON per
    record, flushed); ``saved`` counts what it wrote. ``schema``: the run's
    schema fingerprint, stamped on every record.

        sink = RecordSink(out=OutFile(...), schema=fingerprint)
        sink.write(to_record(result))   # the record, with schema and settings

    ``write`` raises what the file's or stdout's write raises (``OSError``).
    """

    out: OutFile | None = None
    saved: int = 0
    schema: str | None = None
    settings: dict[str, str] | None = None
    """The run's ``settings_fingerprint``, stamped beside ``schema``."""

    def write(self, record: dict[str, Any]) -> None:
        if self.schema is not None:
            record["schema"] = self.schema
        if self.settings is not None:
            record["settings"] = self.settings
        if self.out is not None:
            self.out.write(record)
        else:
            sys.stdout.write(dumps_record(record).decode() + "\n")
            sys.stdout.flush()
        self.saved += 1


def is_transient(error_type: str) -> bool:
    """Whether a record's error type (its ``error.type``, a class name of
    ``agentflow.errors`` such as ``"RateLimitError"``) is a transient provider
    failure (rate limit, overload, 5xx, timeout, connection): retried on a
    rerun unasked. Any other name, known or not, is ``False``; never raises."""
    cls = getattr(errors, error_type, None)
    return isinstance(cls, type) and issubclass(cls, errors.ProviderError) and cls.retryable


def problem_record(doc: Document) -> dict[str, Any]:
    """The record of an input that could not be read (``doc.problem`` set:
    no file, not text, too large...): ``{"id", "ok": False, "error": {"type",
    "message", "reason"?}, "attempts": 0}``, its type ``doc.problem_type``
    (``"InputError"`` when unset). No request was made for it; never raises."""
    error = {"type": doc.problem_type or "InputError", "message": doc.problem}
    if doc.reason:
        error["reason"] = doc.reason
    return {"id": doc.id, "ok": False, "error": error, "attempts": 0}


def _truncated(error: errors.OutputTruncatedError) -> dict[str, Any]:
    """The record's error for an output cut at the token limit, saying what the
    command line offers (it has no max_tokens flag: the reply limit is the
    model's, and what helps is asking for less per request)."""
    where = f" while writing {error.path!r}" if error.path else ""
    field = repr(error.path.split(".")[0].split("[")[0]) if error.path else "the field"
    return {
        "type": type(error).__name__,
        "message": f"the output was cut off at the reply's token limit{where}: the model "
                   "kept writing without closing it",
        "reason": f"ask for less per request: bound {field} in the schema (a list or set: "
                  "Field(max_length=N); a dict: a model with named fields instead; a string: "
                  "Field(max_length=N)), or read less at a time (--chunk-chars N, --items "
                  "FIELD for a list the document is a run of); a model with a larger reply "
                  "limit may also help (agentflow models, column output)",
    }


_USAGE_FIELDS = tuple(f.name for f in fields(Usage))
"""A record's ``usage`` keys: ``Usage``'s fields, in order (read once)."""
_USAGE_VALUES = attrgetter(*_USAGE_FIELDS)
"""A ``Usage``'s values in ``_USAGE_FIELDS`` order (read in C, one call)."""

_ROUNDED: dict[float, float] = {}
"""Confidence -> ``round(confidence, 3)``, for the few scores records carry
(the levels of ``agentflow.extraction.confidence``; ``round`` with digits
costs more than the rest of a field's record)."""


def _rounded(confidence: Mapping[str, float]) -> dict[str, float]:
    """``confidence`` with each score rounded to 3 digits, as ``round`` does
    (a float's rounding kept: non-zero floats only, so ``-0.0`` stays itself,
    and never an ``int``'s, which ``round`` keeps an ``int``)."""
    out: dict[str, float] = {}
    cache = _ROUNDED
    for name, score in confidence.items():
        if score.__class__ is float and (known := cache.get(score)) is not None:
            out[name] = known
            continue
        out[name] = rounded = round(score, 3)
        if score.__class__ is float and score and len(cache) < _ROUNDED_MAX:
            cache[score] = rounded
    return out


_ROUNDED_MAX = 256
"""The most scores ``_ROUNDED`` keeps."""


def to_record(result: ExtractResult[Any], source_offset: int = 0,
              pages: Sequence[tuple[int, int]] | None = None) -> dict[str, Any]:
    """The record ``agentflow extract`` writes for ``result``: a JSON-ready
    dict (``id``, ``ok``, ``output`` or ``error``, ``confidence``,
    ``needs_review``, ``spans``, ``usage``, ``attempts``, ...; the shape the
    CLI's docstring lists). The output's values are written as validated
    (URLs whole); only a credential agentflow was given is masked in them,
    its field then flagged (``agentflow.extraction.masked``); an error's
    text is masked as every error is (``agentflow._secrets.mask_secrets``).
    Write one per line with ``agentflow.documents.names.dumps_record(record)``
    and ``agentflow report`` reads the file, as it reads the command's.

    Args:
        result: one result of ``extract_many`` (ok or failed).
        source_offset: where the text the spans index starts in the source
            file, in characters (the CLI's ``prepare`` hook; ``0``: the text
            is the file).
        pages: a PDF's page map (``[start, end)`` characters per page), to
            record which page each span is on; ``None``: not a PDF.
    """
    record: dict[str, Any] = {"id": result.id, "ok": result.ok}
    masked: list[str] = []
    if result.ok:
        output = result.output
        record["output"], masked = masked_values(output.model_dump(mode="json") if isinstance(
            output, BaseModel) else output)
    elif isinstance(result.error, errors.OutputTruncatedError):
        record["error"] = _truncated(result.error)
    else:
        record["error"] = {"type": type(result.error).__name__,
                           "message": mask_secrets(str(result.error))}
        reason = getattr(result.error, "detail", None) or getattr(result.error, "reason", None)
        if isinstance(reason, str) and reason:
            record["error"]["reason"] = mask_secrets(reason)
    if result.confidence:  # agentflow.extraction.confidence
        record["confidence"] = _rounded(result.confidence)
        record["needs_review"] = list(result.needs_review)
    if result.ungrounded:
        record["ungrounded"] = list(result.ungrounded)
    if result.cut_lists:  # lists kept at their max_length: how many items the document lists
        record["cut_lists"] = dict(result.cut_lists)
    if result.cut_dicts:  # dicts at their most keys: the document may hold more pairs
        record["cut_dicts"] = dict(result.cut_dicts)
    if result.repeated_items:  # lists holding an item more often than the document writes it
        record["repeated_items"] = mask_value(dict(result.repeated_items), urls=False)
    if result.dropped:  # fields nulled: the model's value could not be placed (allow_partial)
        record["dropped"] = mask_value(dict(result.dropped), urls=False)
    flag_masked(record, masked)
    if result.spans:
        record["spans"] = {path: list(map(list, spans)) for path, spans in result.spans.items()}
    if source_offset:
        record["source_offset"] = source_offset
    if pages is not None:  # a PDF: page n is pages[n - 1]; agentflow.documents.pages
        record["pages"] = [list(p) for p in pages]
        if result.spans:
            record["span_pages"] = span_pages(result.spans, pages)
    usage = result.usage
    record["usage"] = dict(zip(_USAGE_FIELDS, _USAGE_VALUES(usage), strict=True))
    record["attempts"] = result.attempts
    record["duration_s"] = round(result.duration, 3)
    if result.chunks is not None:
        c = result.chunks
        record["chunks"] = {"total": c.total, "failed": c.failed}
        if c.missing:
            record["chunks"]["missing"] = [list(r) for r in c.missing]
        if c.hard_cuts:
            record["chunks"]["hard_cuts"] = list(c.hard_cuts)
        if c.passes > 1:
            record["chunks"]["passes"] = c.passes
    t = result.truncated
    record["truncated"] = {"kept_chars": t.kept_chars, "total_chars": t.total_chars} if t else (
        False)
    if result.conflicts:
        record["conflicts"] = [{"path": c.path, "rule": c.rule, "chosen": c.chosen,
                                "values": [{"value": v, "start": s, "end": e}
                                           for v, s, e in c.values]} for c in result.conflicts]
        record["conflicts"] = mask_value(record["conflicts"], urls=False)
    if masked:  # a credential in the output: also where a dict key of it names a field
        mask_paths(record)
    return record
