"""Every exception agentflow raises, in one place.

Three families, kept apart on purpose:

* **misuse** – the caller got the API wrong; raised before any model request;
* **provider failures** – the vendor's HTTP API refused or failed a request;
* **output failures** – the model misbehaved and no valid structured output
  could be obtained within the retry budget.

The tree::

    AgentflowError
    ├── UsageError                        misuse (also a TypeError/ValueError where fitting)
    │   ├── InvalidInputError             bad message input to call()/stream()
    │   │   ├── MediaTypeError            image/document bytes of an unknown or mismatched type
    │   │   └── UnsupportedInputError     a block the model's profile refuses (.model, .modality)
    │   ├── InvalidModelError             model is not a ChatModel / unknown "vendor:model"
    │   ├── InvalidStateError             AgentState JSON that is malformed or inconsistent
    │   ├── InvalidRecordError            an extraction record / results file that cannot be read
    │   ├── InvalidExampleError           a few-shot example that does not fit the output type
    │   ├── BatchUnavailableError         mode="batch" on a model without a vendor batch API
    │   ├── ToolDefinitionError           a tool that cannot be declared
    │   │   └── ToolNameError             a name outside ^[A-Za-z0-9_-]{1,64}$ or a duplicate
    │   └── SchemaError                   an output type the target dialect cannot express
    ├── ProviderError                     status, code, vendor, message
    │   ├── BadRequestError               400/422
    │   │   └── UnsupportedFeatureError   400 naming a feature the model lacks (.feature)
    │   ├── AuthenticationError           401 (and Gemini's 400 API_KEY_INVALID)
    │   ├── PermissionDeniedError         403
    │   ├── NotFoundError                 404
    │   ├── QuotaExceededError            402 / insufficient_quota: never retried
    │   ├── RateLimitedError              429 (.retry_after seconds)
    │   ├── OverloadedError               503 / 529
    │   ├── ServerError                   other 5xx
    │   ├── ProviderTimeoutError          connect/read timeout
    │   │   └── DeadlineExceededError     the request's total deadline passed (never retried)
    │   ├── ProviderConnectionError       connection refused/reset, stream cut mid-way
    │   │   └── TruncatedStreamError      a stream ended without its finish reason / final frame
    │   ├── BatchRequestError             one request of a vendor batch has no reply (.kind)
    │   └── RedirectError                 3xx: never followed (credentials stay at their origin)
    ├── StateConflictError                a state save lost a race: the stored version moved on
    ├── ToolError                         raised by a tool to return an error result on purpose
    ├── ToolRetriesExceededError          a tool kept failing past its retry budget (.tool)
    ├── ModelRetry                        signal: an output validator asks the model to retry
    └── StructuredOutputError             no valid output (.raw_text, .attempts)
        ├── StructuredOutputValidationError   on_invalid="raise": the output failed the schema
        ├── MultipleStructuredOutputsError    on_multiple="raise": several output calls at once
        ├── OutputTruncatedError              finish reason "length": the output was cut (.usage)
        ├── GroundingError                    grounded values not found in the source (.unfound)
        └── DegenerateOutputError             a repetition loop or repeated items (.problems)

    AgentflowError (input documents, agentflow.documents)
    └── DocumentError                     a file that cannot be turned into text (.path, .reason)
        ├── CorruptDocumentError          its reader cannot parse it (a damaged or mislabelled PDF)
        ├── EncryptedDocumentError        a PDF that needs a password to open
        ├── NoTextLayerError              a PDF with no text to extract (scanned pages: images)
        ├── DocumentTooComplexError       HTML nested too deep to parse in bounded time (.depth)
        ├── DocumentEncodingError         bytes no encoding in the documented order decodes
        └── InvalidInputLineError         a JSONL input line that is not a document (one record)

    AgentflowError (long documents, agentflow.extraction)
    ├── EmptyDocumentError                a document with no text: no model call was made
    ├── ChunkFailedError                  one chunk's call failed (.start, .end; cause chained)
    └── MergeError                        chunk outputs do not merge into the schema (.field)
        └── MergeConflictError            must-agree field on which chunks disagree (.conflicts)

Messages say what was wrong and how to fix it. No error message or repr ever
holds an API key: ``ProviderError`` masks every registered credential and any
echoed prefix of one (``agentflow._secrets``) when it is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from agentflow._secrets import mask_secrets

if TYPE_CHECKING:
    from agentflow.model import Usage

__all__ = [
    "AgentflowError",
    "AuthenticationError",
    "BadRequestError",
    "BatchRequestError",
    "BatchUnavailableError",
    "ChunkFailedError",
    "CorruptDocumentError",
    "DeadlineExceededError",
    "DegenerateOutputError",
    "DocumentEncodingError",
    "DocumentError",
    "DocumentTooComplexError",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "GroundingError",
    "InvalidExampleError",
    "InvalidInputError",
    "InvalidInputLineError",
    "InvalidModelError",
    "InvalidRecordError",
    "InvalidStateError",
    "MediaTypeError",
    "MergeConflictError",
    "MergeError",
    "ModelRetry",
    "MultipleStructuredOutputsError",
    "NoTextLayerError",
    "NotFoundError",
    "OutputTruncatedError",
    "OverloadedError",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "QuotaExceededError",
    "RateLimitedError",
    "RedirectError",
    "SchemaError",
    "ServerError",
    "StateConflictError",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolDefinitionError",
    "ToolError",
    "ToolNameError",
    "ToolRetriesExceededError",
    "TruncatedStreamError",
    "UnsupportedFeature",
    "UnsupportedFeatureError",
    "UnsupportedInputError",
    "UsageError",
]


class AgentflowError(Exception):
    """Base class of every agentflow exception.

    Attributes:
        same_for_every_input: (class data) the fault lies in the run's set-up,
            not in one input, so every other input of a run would meet it too:
            misuse (``UsageError``), a wrong key (``AuthenticationError``), a
            model the vendor does not have (``NotFoundError``). A bulk run
            (``agentflow extract``) stops at the first such error instead of
            failing every record the same way. Faults of one input's content
            (``MediaTypeError``, ``UnsupportedInputError``: raised before any
            request, like misuse, but about that input's bytes) say ``False``.
    """

    same_for_every_input: ClassVar[bool] = False


# --------------------------------------------------------------------------- misuse


class UsageError(AgentflowError):
    """The caller used the API wrongly. Raised before any model request."""

    same_for_every_input = True


class InvalidInputError(UsageError, TypeError):
    """The message input of ``call()``/``stream()`` is not a str, a ``Msg`` or a
    non-empty sequence of them."""


class MediaTypeError(InvalidInputError):
    """Image or document bytes whose magic bytes match no known media type, a
    media type that does not match the bytes, or one the block kind does not
    hold (``agentflow.content``).

    Attributes:
        media_type: the media type given or found, when there is one.
    """

    same_for_every_input = False  # about one input's bytes

    def __init__(self, message: str, *, media_type: str | None = None) -> None:
        super().__init__(message)
        self.media_type = media_type


class UnsupportedInputError(InvalidInputError):
    """An image or document block the model does not accept, by its profile
    (``ModelProfile.input_modalities`` and the limits beside it). Raised before
    any request.

    Attributes:
        model: the model's name.
        modality: ``"image"`` or ``"pdf"``.
    """

    same_for_every_input = False  # about one input's bytes

    def __init__(self, message: str, *, model: str, modality: str) -> None:
        super().__init__(message)
        self.model = model
        self.modality = modality


class InvalidModelError(UsageError, TypeError):
    """The model given to an agent is neither a ``ChatModel`` nor a known
    ``"vendor:model"`` string."""


class InvalidStateError(UsageError, ValueError):
    """Stored ``AgentState`` JSON that is malformed (wrong shapes, unknown
    roles) or inconsistent (a tool call without its result)."""


class InvalidRecordError(UsageError, ValueError):
    """An extraction record that does not have the record shape (a JSON object
    with a string ``id`` and a boolean ``ok``), or a results file line that is
    not JSON. The message names the file and line, or the record's position."""


class InvalidExampleError(UsageError, ValueError):
    """A few-shot example (``agentflow.extraction.examples.Example``) whose
    output does not validate as the output type, or whose grounded values are
    not spans of its own text. The message names the example
    (``examples[i]``) and each failing field."""
class BatchUnavailableError(UsageError, ValueError):
    """``mode="batch"`` on a model whose vendor has no batch API (the model is
    not ``agentflow.batch_api.BatchCapable``); raised before any request."""


class ToolDefinitionError(UsageError, ValueError):
    """A tool cannot be declared (not callable, bad signature, ...)."""


class ToolNameError(ToolDefinitionError):
    """A tool name breaks the cross-vendor rule ``^[A-Za-z0-9_-]{1,64}$`` or is
    used twice in one toolkit."""


class SchemaError(UsageError, ValueError):
    """An output type cannot be expressed in the JSON Schema dialect a vendor
    accepts.

    Attributes:
        path: the field path inside the output type (``"Node.children"``), or ``""``.
        reason: why the dialect cannot express it.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{reason}")


# --------------------------------------------------------------------------- providers

UnsupportedFeature = Literal["native_output", "tools", "tool_choice", "thinking"]


class ProviderError(AgentflowError):
    """A vendor API refused or failed a request.

    Attributes:
        message: the vendor's message, with credentials masked (a key, or a
            prefix of one, the server echoed becomes ``***``).
        status: the HTTP status, or ``None`` for transport failures.
        code: the vendor's error code/type (``"invalid_request_error"``, ``"1214"``...).
        vendor: the provider name (``"openai"``, ``"glm"``...).
        retryable: whether a retry with backoff may succeed.
        retry_after: seconds the vendor asked to wait before a retry, or ``None``.
        partial: ``True`` when part of the reply had already arrived (a stream
            cut mid-way or ended without its finish reason): the reply is
            incomplete and was never taken for an answer.
    """

    retryable: bool = False
    retry_after: float | None = None
    partial: bool = False

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        vendor: str = "",
    ) -> None:
        message = mask_secrets(message)
        self.message = message
        self.status = status
        self.code = code
        self.vendor = vendor
        parts = [p for p in (vendor, str(status) if status else None, code) if p]
        prefix = f"[{' '.join(parts)}] " if parts else ""
        super().__init__(f"{prefix}{message}")


class BadRequestError(ProviderError):
    """HTTP 400/422: the request itself is wrong. Not retried."""


class UnsupportedFeatureError(BadRequestError):
    """A 400 that names a feature this model does not support: native response
    format, tools, a forced ``tool_choice`` (e.g. while thinking) or thinking.

    The structured-output engine reacts to it by degrading one step; the
    provider module decides which vendor errors are this one.

    Attributes:
        feature: one of ``"native_output"``, ``"tools"``, ``"tool_choice"``, ``"thinking"``.
    """

    def __init__(
        self,
        message: str,
        *,
        feature: UnsupportedFeature,
        status: int | None = 400,
        code: str | None = None,
        vendor: str = "",
    ) -> None:
        self.feature: UnsupportedFeature = feature
        super().__init__(message, status=status, code=code, vendor=vendor)


class AuthenticationError(ProviderError):
    """HTTP 401 (or a vendor's equivalent): the API key is missing or wrong."""

    same_for_every_input = True


class PermissionDeniedError(ProviderError):
    """HTTP 403: the key may not use this model or region."""


class NotFoundError(ProviderError):
    """HTTP 404: unknown model or endpoint."""

    same_for_every_input = True


class QuotaExceededError(ProviderError):
    """Billing or quota exhausted (402, OpenAI ``insufficient_quota``). Never retried."""


class RateLimitedError(ProviderError):
    """HTTP 429. Retried with backoff.

    Attributes:
        retry_after: seconds the vendor asked to wait, or ``None``.
    """

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        status: int | None = 429,
        code: str | None = None,
        vendor: str = "",
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, status=status, code=code, vendor=vendor)


class OverloadedError(ProviderError):
    """HTTP 503/529: the vendor is overloaded. Retried with backoff."""

    retryable = True


class ServerError(ProviderError):
    """Other HTTP 5xx (and 408/409). Retried with backoff."""

    retryable = True


class BatchRequestError(ProviderError):
    """One request of a vendor batch has no reply: the vendor answered it with
    an error, or it never ran (the batch expired, was cancelled or was
    rejected), and it was not (or no longer) resubmitted.

    Attributes:
        kind: ``"error"``, ``"expired"`` or ``"cancelled"`` (``BatchItemError.kind``).
        batch_id: the vendor's id of the batch that held the request.
    """

    def __init__(self, message: str, *, kind: str, batch_id: str, status: int | None = None,
                 code: str | None = None, vendor: str = "") -> None:
        super().__init__(message, status=status, code=code, vendor=vendor)
        self.kind = kind
        self.batch_id = batch_id


class ProviderTimeoutError(ProviderError):
    """The connect or read timeout expired. Retried before the first byte."""

    retryable = True


class ProviderConnectionError(ProviderError):
    """The connection failed, or a stream was cut before its terminal marker.

    Attributes:
        partial: ``True`` when bytes of the reply had already arrived (a stream
            cut mid-way); such an error is never retried by the HTTP layer.
    """

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        partial: bool = False,
        status: int | None = None,
        code: str | None = None,
        vendor: str = "",
    ) -> None:
        self.partial = partial
        super().__init__(message, status=status, code=code, vendor=vendor)


class TruncatedStreamError(ProviderConnectionError):
    """A stream ended (the vendor's terminal marker such as ``[DONE]`` or
    ``message_stop``, or end of file) before its finish reason or final
    frame: the reply is incomplete. Always ``partial=True``; never retried by
    the HTTP layer (``ReActAgent(stream_retries=n)`` may send the request again)."""

    def __init__(self, message: str, *, vendor: str = "") -> None:
        super().__init__(message, partial=True, vendor=vendor)


class DeadlineExceededError(ProviderTimeoutError):
    """The request's total deadline (``HttpSettings.deadline``, seconds for
    the whole request: connection, retries and every byte of the reply)
    passed, e.g. a server that trickles keep-alive comments forever. Never
    retried.

    Attributes:
        deadline: the deadline in seconds.
    """

    retryable = False

    def __init__(self, message: str, *, deadline: float, partial: bool = False,
                 vendor: str = "") -> None:
        self.deadline = deadline
        self.partial = partial
        super().__init__(message, vendor=vendor)
class RedirectError(ProviderError):
    """The API answered with a redirect (3xx). Never followed: a request carries
    credentials (``Authorization``, ``x-api-key``...) that must not reach
    another origin, and no vendor API redirects its endpoints. Not retried.

    Attributes:
        location: the redirect target (``Location`` header), or ``""``.
    """

    def __init__(
        self,
        message: str,
        *,
        location: str = "",
        status: int | None = None,
        code: str | None = None,
        vendor: str = "",
    ) -> None:
        self.location = mask_secrets(location)
        super().__init__(message, status=status, code=code, vendor=vendor)


# --------------------------------------------------------------------------- tools


class StateConflictError(AgentflowError):
    """A ``StateStore.save`` found another version than the one the caller
    loaded: another request changed (or created) the conversation meanwhile.
    Nothing was written; reload and run the call again.

    Attributes:
        key: the conversation key.
        expected_version: the version the caller loaded (0: none).
        actual_version: the version stored now (0: none).
    """

    def __init__(self, key: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"conversation {key!r} was changed by another request: expected version "
            f"{expected_version}, found {actual_version}; nothing was saved (reload and retry)"
        )
        self.key = key
        self.expected_version = expected_version
        self.actual_version = actual_version


class ToolError(AgentflowError):
    """Raise inside a tool to hand the model an error result with this message
    (any other exception does the same, with its type name prefixed)."""


class ToolRetriesExceededError(AgentflowError):
    """A tool's calls failed (bad arguments, an exception, ``ToolError``) more
    often in one call than its retry budget allows (``Tool.max_retries``, else
    ``ReActAgent(tool_retries=...)``): the model keeps misusing it, so the
    call stops instead of spending ``max_iters``.

    Attributes:
        tool: the tool's name.
        failures: failed calls of it in this agent call.
        last_error: the last error result the model was given.
    """

    def __init__(self, tool: str, *, failures: int, last_error: str) -> None:
        self.tool = tool
        self.failures = failures
        self.last_error = last_error
        super().__init__(
            f"tool {tool!r} failed {failures} times in one call, past its retry budget; "
            f"last error: {last_error[:300]}. Raise the budget (Tool max_retries / "
            "ReActAgent tool_retries) or fix the tool's description"
        )


class ModelRetry(AgentflowError):
    """Raise from an output validator to reject a valid-but-wrong output: the
    model is asked again with this message (counted in ``output_retries``)."""


# --------------------------------------------------------------------------- output


class StructuredOutputError(AgentflowError):
    """No validated structured output was produced.

    Attributes:
        raw_text: the model's final free text (may be ``""``).
        attempts: model requests the call spent trying to get the output.
        reason: a short machine-readable reason (``"no_output"``, ``"invalid"``,
            ``"truncated"``, ``"multiple"``, ``"not_requested"``).
    """

    def __init__(
        self, message: str, *, raw_text: str = "", attempts: int = 0, reason: str = "no_output"
    ) -> None:
        self.raw_text = raw_text
        self.attempts = attempts
        self.reason = reason
        super().__init__(message)


class StructuredOutputValidationError(StructuredOutputError):
    """The output failed validation and the policy was ``on_invalid="raise"``
    (or the retry budget ran out).

    Attributes:
        errors: pydantic's error list (``loc``, ``msg``, ``type``...).
    """

    def __init__(
        self,
        message: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        raw_text: str = "",
        attempts: int = 0,
    ) -> None:
        self.errors = errors or []
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="invalid")


class MultipleStructuredOutputsError(StructuredOutputError):
    """The model called the output tool more than once in one reply and the
    policy was ``on_multiple="raise"``.

    Attributes:
        count: how many output calls the reply held.
    """

    def __init__(self, message: str, *, count: int, attempts: int = 0) -> None:
        self.count = count
        super().__init__(message, attempts=attempts, reason="multiple")


class OutputTruncatedError(StructuredOutputError):
    """The model stopped at its token limit (finish reason ``length``) before the
    output was complete. Raise ``max_tokens`` or shrink the schema.

    Attributes:
        usage: token usage of the call so far.
    """

    def __init__(
        self, message: str, *, raw_text: str = "", attempts: int = 0, usage: Usage | None = None
    ) -> None:
        self.usage = usage
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="truncated")


class GroundingError(StructuredOutputError):
    """The output validated, but grounded values are not verbatim spans of the
    source (or are empty), still after the ``output_retries`` budget.

    Attributes:
        output: the last validated output (not a result: do not use it as one).
        unfound: ``(field path, value)`` of each value not found in the source.
        empty: field paths of grounded values that were empty.
        detail: one line per failing field (human-readable).
    """

    def __init__(
        self,
        message: str,
        *,
        output: Any = None,
        unfound: list[tuple[str, str]] | None = None,
        empty: list[str] | None = None,
        detail: str = "",
        raw_text: str = "",
        attempts: int = 0,
    ) -> None:
        self.output = output
        self.unfound = list(unfound or [])
        self.empty = list(empty or [])
        self.detail = detail
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="not_grounded")


class DegenerateOutputError(StructuredOutputError):
    """The output validated, but holds what a looping model writes (a unit
    repeated many times, one list item over and over), still after the
    ``output_retries`` budget. See ``agentflow.extraction.degenerate``.

    Attributes:
        output: the last validated output (not a result).
        problems: ``(field path, what is wrong)`` per degenerate value.
        detail: one line per problem (human-readable).
    """

    def __init__(
        self,
        message: str,
        *,
        output: Any = None,
        problems: list[tuple[str, str]] | None = None,
        detail: str = "",
        raw_text: str = "",
        attempts: int = 0,
    ) -> None:
        self.output = output
        self.problems = list(problems or [])
        self.detail = detail
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="degenerate")
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
    """An HTML page nested deeper than ``agentflow.documents.nesting.MAX_HTML_DEPTH``:
    its parse would take time growing with the square of the depth (minutes for
    100,000 levels), so it is refused before parsing.

    Attributes:
        depth: the nesting depth the scan found (at least the cap plus one).
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "", depth: int = 0) -> None:
        self.depth = depth
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
