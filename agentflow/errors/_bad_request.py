"""The refusals of a request that name why (``BadRequestError``'s subclasses:
over the context window, a grammar the server gave up on, a feature the
model lacks); ``agentflow.errors`` re-exports them (the tree is drawn there)."""

from __future__ import annotations

from typing import Literal

from agentflow.errors._provider import BadRequestError

__all__ = [
    "ContextLengthError",
    "GrammarEngineError",
    "UnsupportedFeature",
    "UnsupportedFeatureError",
]

UnsupportedFeature = Literal["native_output", "tools", "tool_schema", "tool_choice", "thinking"]


class ContextLengthError(BadRequestError):
    """The request does not fit the model's context window (its input, or its
    input with the output tokens asked for): a 400 (some self-hosted servers:
    500) in the vendor's own words, recognised by the provider module (OpenAI
    ``context_length_exceeded``, Anthropic "prompt is too long", Gemini "exceeds
    the maximum number of tokens", llama.cpp ``exceed_context_size_error``, vLLM
    "maximum context length"...). Never retried: the same request fails the
    same way. The message says how to go on: split the input
    (``extract_many(chunking=Chunking(max_tokens=...))``, CLI ``--chunk-chars``),
    or give the model's profile its real ``context_window`` so long documents
    are chunked to fit.

    Attributes:
        limit: the context window in tokens, when the vendor said it, else ``None``.
        requested: the tokens the request needed, when the vendor said it, else ``None``.
        reason: what to do about it (the record's ``error.reason``).
    """

    HINT = ("the request is longer than the model's context window: split long inputs "
            "(extract_many(chunking=Chunking(max_tokens=...)), CLI --chunk-chars) "
            "or set the model profile's context_window so documents are chunked to fit")

    def __init__(
        self,
        message: str,
        *,
        limit: int | None = None,
        requested: int | None = None,
        status: int | None = 400,
        code: str | None = None,
        vendor: str = "",
    ) -> None:
        self.limit = limit
        self.requested = requested
        self.reason = self.HINT
        counts = (f" ({requested} tokens > {limit})" if limit and requested
                  else f" ({limit} tokens)" if limit else "")
        super().__init__(f"{message} -- {self.HINT}{counts}", status=status, code=code,
                         vendor=vendor)


class GrammarEngineError(BadRequestError):
    """The server's constrained-decoding engine gave up on the request's
    grammar while decoding (llama.cpp with llguidance: a lexer over its
    limits, ``LexerTooComplex``, or a grammar it cannot compile), so the reply
    would go on unconstrained. llama.cpp says so only in its log and answers
    200; the embedded model reads its log and stops the reply
    (``agentflow.providers.local``). Not retried: the same grammar fails the
    same way; except where the log cannot say which of the replies then
    decoding failed (``shared``): the stopped reply may be another's
    bystander, so it is retried as a cut stream is (``retryable`` and
    ``partial``), and the one whose grammar fails fails again.

    Attributes:
        reason: the engine's message (``"lexer error: too many expressions
            constructed"``).
        shared: other replies with a grammar were decoding when it failed.
    """

    def __init__(self, message: str, *, reason: str, vendor: str = "",
                 shared: bool = False) -> None:
        self.reason = reason
        self.shared = shared
        self.retryable = self.partial = shared
        super().__init__(message, status=None, code="grammar", vendor=vendor)


class UnsupportedFeatureError(BadRequestError):
    """A 400 that names a feature this model does not support: native response
    format, tools, a forced ``tool_choice`` (e.g. while thinking) or thinking.

    The structured-output engine reacts to it by degrading one step; the
    provider module decides which vendor errors are this one.

    Attributes:
        feature: one of ``"native_output"``, ``"tools"``, ``"tool_schema"`` (a
            function tool's parameter schema refused: the output tool's, on the
            tool path), ``"tool_choice"``, ``"thinking"``.
        schema_only: the vendor refused this request's schema (its size, a
            keyword it does not know), not the feature: another schema would
            pass, so the engine remembers the refusal for that schema only,
            never for every call of the model (a shared agent's other users).
    """

    def __init__(
        self,
        message: str,
        *,
        feature: UnsupportedFeature,
        status: int | None = 400,
        code: str | None = None,
        vendor: str = "",
        schema_only: bool = False,
    ) -> None:
        self.feature: UnsupportedFeature = feature
        self.schema_only = schema_only
        super().__init__(message, status=status, code=code, vendor=vendor)
