"""Failures of a model request: the ``ProviderError`` tree (``agentflow.errors``
re-exports it; the tree is drawn there), but the refusals that name why
(``_bad_request``). Messages and locations are masked of every registered
credential (``agentflow._secrets``) when built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentflow._secrets import mask_secrets
from agentflow.errors._root import AgentflowError

if TYPE_CHECKING:
    from agentflow.usage import Usage

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "BatchRequestError",
    "ContentFilteredError",
    "DeadlineExceededError",
    "EmptyReplyError",
    "ModeratedRequestError",
    "NotFoundError",
    "OutOfMemoryError",
    "OverloadedError",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "QuotaExceededError",
    "RateLimitedError",
    "RedirectError",
    "ReplyTooLargeError",
    "ServerError",
    "TruncatedStreamError",
    "UnexpectedReplyError",
]


# --------------------------------------------------------------------------- providers

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
        usage: what the agent call it ended had spent before it (``Usage``:
            the replies it took, as ``Complete.usage`` would have said),
            set when the error leaves a ``ReActAgent`` call; ``None`` for an
            error raised outside one (a bare ``model.stream``).
    """

    retryable: bool = False
    retry_after: float | None = None
    partial: bool = False
    usage: Usage | None = None

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


class AuthenticationError(ProviderError):
    """HTTP 401 (or a vendor's equivalent): the API key is missing or wrong."""

    same_for_every_input = True


class PermissionDeniedError(ProviderError):
    """HTTP 403: the key may not use this model or region."""


class NotFoundError(ProviderError):
    """HTTP 404: unknown model or endpoint."""

    same_for_every_input = True


class QuotaExceededError(ProviderError):
    """Billing or quota exhausted (402, OpenAI ``insufficient_quota``, a daily
    limit). Never retried; the account's, not one input's, so a bulk run
    stops at the first (``same_for_every_input``)."""

    same_for_every_input = True


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


class OutOfMemoryError(ServerError):
    """The server has not the memory (RAM or GPU) to load or run the model: a
    5xx in the vendor's words, recognised by the provider module (Ollama's
    "model requires more system memory", a runner's CUDA out of memory).
    Never retried, unlike other 5xx: a retry meets the same limit. The
    model's, not one input's, so a bulk run stops at the first
    (``same_for_every_input``).

    Attributes:
        hint: what to check, in the provider's terms (free memory, a smaller
            model or context window); also the end of the message.
    """

    retryable = False
    same_for_every_input = True

    def __init__(self, message: str, *, hint: str, status: int | None = 500,
                 code: str | None = None, vendor: str = "") -> None:
        self.hint = hint
        super().__init__(f"{message} -- {hint}", status=status, code=code, vendor=vendor)


class UnexpectedReplyError(ProviderError):
    """A 2xx reply whose body is no API reply: empty, or an HTML page (by its
    content type, or its first tag whatever the type), as a proxy, gateway or
    CDN in front of the API serves one (a Cloudflare challenge, a load
    balancer's error page, a captive portal) or a server that crashed after
    its status line; an event stream that ended before its first event
    (nothing, or keep-alive comments only); or a whole (not streamed) reply
    whose JSON is cut off (it ends mid-value) or malformed. Retried with backoff like a 5xx; the
    last error names the status, the content type and the start of the page
    (of a JSON body: its start and end).

    Attributes:
        content_type: the reply's ``Content-Type`` header (``""``: none).
        excerpt: the page's title and the start of its text (a JSON body's
            start and end), short, with URLs' queries and every registered
            credential masked (``""`` for an empty body).
    """

    retryable = True

    def __init__(self, message: str, *, content_type: str, excerpt: str,
                 status: int | None = 200, vendor: str = "") -> None:
        self.content_type = content_type
        self.excerpt = mask_secrets(excerpt)
        super().__init__(message, status=status, vendor=vendor)


class BatchRequestError(ProviderError):
    """One request of a vendor batch has no reply: the vendor answered it with
    an error, or it never ran (the batch expired, was cancelled or was
    rejected), and it was not (or no longer) resubmitted.

    Attributes:
        kind: ``"error"``, ``"expired"`` or ``"cancelled"`` (``BatchItemError.kind``),
            or ``"timeout"``: its batch was polled past ``BatchSettings.max_wait``.
        batch_id: the vendor's id of the batch that held the request.
    """

    def __init__(self, message: str, *, kind: str, batch_id: str, status: int | None = None,
                 code: str | None = None, vendor: str = "") -> None:
        super().__init__(message, status=status, code=code, vendor=vendor)
        self.kind = kind
        self.batch_id = batch_id


class ContentFilteredError(ProviderError):
    """The vendor's content filter or moderation stopped the reply, or the
    model refused, and there is no answer to show. Not retried: the same
    request is filtered again. Two ways in:

    * a text call's reply ended with finish reason ``content_filter``
      (OpenAI ``content_filter``, Gemini ``SAFETY``, ``RECITATION`` or a
      blocked prompt) or ``refusal`` (Anthropic's ``refusal``) and holds no
      text. A filtered reply that holds text ends the call as usual, with
      ``Complete.finish_reason`` saying so (a call with an output type fails
      with ``StructuredOutputError`` instead);
    * the vendor reported its moderation as an error inside a 200 reply or
      a stream (DashScope ``data_inspection_failed``, MiniMax ``base_resp``
      1026/1027, GLM ``1301``): the provider module names its moderation
      codes; ``code`` is the vendor's, ``finish_reason`` ``content_filter``.

    Attributes:
        finish_reason: ``content_filter`` or ``refusal``.
    """

    def __init__(self, message: str, *, finish_reason: str = "content_filter",
                 code: str | None = None, status: int | None = None,
                 vendor: str = "") -> None:
        self.finish_reason = finish_reason
        super().__init__(message, status=status, code=code or finish_reason, vendor=vendor)


class EmptyReplyError(ProviderError):
    """A text call's model said nothing: a reply with no text and no tool call
    (thinking alone counts as nothing) that ended normally, and again after a
    prompt asked it to answer (to continue, right after tool results)
    (``agentflow.middleware.empty_reply``; Claude's documented "empty
    response with end_turn"). There is no answer: not a silent empty success.
    Not retried by the HTTP layer (each request was answered); the caller may
    send the call again. A call with an output type fails with
    ``StructuredOutputError`` instead."""

    def __init__(self, message: str, *, vendor: str = "") -> None:
        super().__init__(message, code="empty_reply", vendor=vendor)


class ModeratedRequestError(ContentFilteredError, BadRequestError):
    """The vendor's content moderation refused the request itself, answering
    with an HTTP 4xx (DashScope ``DataInspectionFailed``, GLM ``1301`` before
    any reply): both a ``ContentFilteredError`` (moderation: the same request
    is refused again, never retried) and, as the vendor's status says, a
    ``BadRequestError``, so either ``except`` catches it. ``status`` is the
    vendor's (400), ``code`` its moderation code."""


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


class ReplyTooLargeError(ProviderError):
    """A reply (whole or streamed, error bodies too) passed the most bytes one
    reply may hold (``HttpSettings.max_reply_bytes``): a server that streams
    without end, or answers with a body no model reply is (a 2 GB page), is
    cut off there instead of filling the memory. The connection is closed;
    never retried (the same request would get the same reply).

    Attributes:
        limit: the limit passed, in bytes.
    """

    retryable = False

    def __init__(self, message: str, *, limit: int, status: int | None = None,
                 vendor: str = "") -> None:
        self.limit = limit
        super().__init__(message, status=status, vendor=vendor)


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
