"""Requests over the model's context window, in the words of the servers that
refuse them: ``context_length_error`` turns such an error reply into a
``ContextLengthError`` (never retried; its message says to chunk the input).

Wordings recognised (each from the vendor's docs, SDK or a public report):

* OpenAI and OpenAI-compatible vendors (DeepSeek, Moonshot...): code
  ``context_length_exceeded``, "This model's maximum context length is 8192
  tokens. However, you requested 9000 tokens (...)"; the Responses API "Your
  input exceeds the context window of this model".
* vLLM: the same "maximum context length is N tokens" sentence (also "and
  your request has N input tokens"), "The decoder prompt (length N) is longer
  than the maximum model length of M" (vllm-project/vllm engine input checks).
* llama.cpp ``llama-server``: type ``exceed_context_size_error`` with
  ``n_prompt_tokens`` and ``n_ctx`` (ggml-org/llama.cpp#15780; 400, 500 in
  older builds), "request (4390 tokens) exceeds the available context size
  (4096 tokens)", "Context size has been exceeded." (ggml-org/llama.cpp#19774);
  llama-cpp-python "Requested tokens (2285) exceed context window of 2048".
* Anthropic: "prompt is too long: 210000 tokens > 200000 maximum", "input
  length and `max_tokens` exceed context limit: 188240 + 21333 > 200000".
* Gemini: "The input token count (1200000) exceeds the maximum number of
  tokens allowed (1048576)."
* Ollama: "input length exceeds the context length" / "exceeds maximum context
  length" (when it refuses instead of truncating).
* Gateways relaying any of these (their messages carry the upstream text).

Vendors with words of their own (DashScope's "Range of input length should be
[1, N]", GLM's code ``1261``) pass them as ``extra`` from their module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentflow.errors import ContextLengthError

__all__ = ["CONTEXT_WORDS", "context_length_error", "item_kind"]

CONTEXT_WORDS = re.compile(
    r"context[_ ]length[_ ]exceeded|exceed_context_size|maximum context length|"
    r"exceeds? the (?:available )?context (?:size|window|length)|context window of|"
    r"exceeds? (?:the )?context (?:window|limit)|exceed context limit|"
    r"context (?:window|length) exceeds|"
    r"context size has been exceeded|prompt is too long|"
    r"exceeds the maximum number of tokens|longer than the maximum model length|"
    r"input length exceeds|exceeds maximum context length|"
    r"model token limit|too many tokens in (?:the )?(?:prompt|input)", re.I)
"""Wordings of a request over the context window (see the module docstring)."""

_NUMBERS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # (pattern, limit first?)
    (re.compile(r"maximum context length is (\d+) tokens.{0,80}?"
                r"(?:requested|has|resulted in) (\d+)", re.I | re.S), True),
    (re.compile(r"(\d+) tokens > (\d+)", re.I), False),
    (re.compile(r"(\d+) \+ (\d+) > (\d+)", re.I), False),
    (re.compile(r"token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)",
                re.I), False),
    (re.compile(r"request \((\d+) tokens\) exceeds the available context size \((\d+)", re.I),
     False),
    (re.compile(r"prompt \(length (\d+)\) is longer than the maximum model length of (\d+)",
                re.I), False),
    (re.compile(r"requested tokens \((\d+)\) exceed context window of (\d+)", re.I), False),
    (re.compile(r"maximum context length is (\d+)", re.I), True),
)


def _counts(message: str, error: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """``(limit, requested)`` from llama.cpp's fields or the message's numbers."""
    n_ctx, n_prompt = error.get("n_ctx"), error.get("n_prompt_tokens")
    if isinstance(n_ctx, int) and isinstance(n_prompt, int):
        return n_ctx, n_prompt
    for pattern, limit_first in _NUMBERS:
        found = pattern.search(message)
        if found is None:
            continue
        numbers = [int(g) for g in found.groups()]
        if len(numbers) == 3:  # input + max_tokens > limit
            return numbers[2], numbers[0] + numbers[1]
        if len(numbers) == 1:
            return numbers[0], None
        return (numbers[0], numbers[1]) if limit_first else (numbers[1], numbers[0])
    return None, None


def context_length_error(
    vendor: str, status: int | None, message: str, code: str | None, data: Any = None,
    *, extra: re.Pattern[str] | None = None, codes: frozenset[str] = frozenset(),
) -> ContextLengthError | None:
    """The ``ContextLengthError`` for an error reply saying the request is over
    the context window, else ``None``.

    Args:
        vendor: the provider name, for the error.
        status: the HTTP status (400, 413, 422 or 500 are read; any other
            status is never this error; ``None``: an error inside a stream).
        message: the error's message (``error_message``).
        code: the error's code or type (``context_length_exceeded``,
            ``exceed_context_size_error``...).
        data: the parsed error body, for llama.cpp's ``n_ctx`` /
            ``n_prompt_tokens``.
        extra: a vendor's own wording, besides ``CONTEXT_WORDS``.
        codes: a vendor's own codes for it (GLM ``"1261"``).
    """
    if status not in (None, 400, 413, 422, 500):
        return None
    label = (code or "").lower()
    if not (label in codes or "context_length" in label or "exceed_context" in label
            or CONTEXT_WORDS.search(message) or (extra is not None and extra.search(message))):
        return None
    node = data[0] if isinstance(data, list) and data else data
    error = node.get("error") if isinstance(node, Mapping) else None
    limit, requested = _counts(message, error if isinstance(error, Mapping) else {})
    return ContextLengthError(message, limit=limit, requested=requested, status=status,
                              code=code, vendor=vendor)


def item_kind(vendor: str, status: int | None, message: str, code: str | None) -> str:
    """The ``BatchItemError.kind`` of a batch request the vendor answered with
    an error: ``"context_length"`` when the error says the request is over the
    context window (the batch runner raises ``ContextLengthError`` for it),
    else ``"error"``."""
    found = context_length_error(vendor, status if status is not None else 400, message, code)
    return "context_length" if found is not None else "error"
