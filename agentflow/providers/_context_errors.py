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
* LM Studio: "Trying to keep the first 15857 tokens when context the
  overflows. However, the model is loaded with context length of only 4096
  tokens" (lmstudio-ai/lmstudio-bug-tracker#237, #546), and mid-reply
  "Reached context length of 32000 tokens with model (arch: gpt-oss) that
  does not currently support mid-generation context overflow" (#1024: prompt
  and reply together over the window); llama.cpp's older
  "the number of tokens to keep from the initial prompt is greater than the
  context length (n_keep: 13055>= n_ctx: 4096)".
* Hugging Face TGI (Inference Endpoints, chat-ui): "Input validation error:
  `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 `inputs`
  tokens and 2047 `max_new_tokens`" (huggingface/chat-ui#1149), "`inputs`
  must have less than 4096 tokens. Given: 4545" (meta-llama/llama#1103).
* OpenAI's 429 "Request too large for gpt-4o ... on tokens per min (TPM):
  Limit 30000, Requested 50000. The input or output tokens must be reduced":
  one request over the account's per-minute budget never fits, however long
  it waits (vanna-ai/vanna-flask#11, continuedev/continue#10602); Groq says
  it with a 413 ("on tokens per minute (TPM): Limit 6000, Requested 7000").
  Only when the request is over the limit: an ordinary 429 ("Rate limit
  reached ... Used ..., Requested ...") stays a retried rate limit.
* Gateways relaying any of these (their messages carry the upstream text).

Vendors with words of their own (DashScope's "Range of input length should be
[1, N]", GLM's code ``1261``) pass them as ``extra`` from their module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentflow.errors import ContextLengthError

__all__ = ["CONTEXT_WORDS", "MIN_OUTPUT_ROOM", "context_length_error", "item_kind"]

MIN_OUTPUT_ROOM = 16
"""The fewest reply tokens a request refused for a ``max_tokens`` over the room
its prompt leaves is sent again with (fewer: the input itself must shrink)."""

CONTEXT_WORDS = re.compile(
    r"context[_ ]length[_ ]exceeded|exceed_context_size|maximum context length|"
    r"exceeds? the (?:available )?context (?:size|window|length)|context window of|"
    r"exceeds? (?:the )?context (?:window|limit)|exceed context limit|"
    r"context (?:window|length) exceeds|"
    r"context size has been exceeded|prompt is too long|"
    r"exceeds the maximum number of tokens|longer than the maximum model length|"
    r"input length exceeds|exceeds maximum context length|"
    r"model token limit|too many tokens in (?:the )?(?:prompt|input)|"
    r"when context the overflows|loaded with (?:a )?context length of only|"
    r"reached context length of \d+ tokens|"
    r"tokens to keep from the initial prompt is greater than the context length|"
    r"`inputs` tokens \+ `max_new_tokens` must be <=|`inputs` must have less than \d+ tokens",
    re.I)
"""Wordings of a request over the context window (see the module docstring)."""

_NUMBERS: tuple[tuple[re.Pattern[str], bool | None], ...] = (
    # (pattern, limit first?; None: limit, then input and output tokens)
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
    (re.compile(r"`inputs` tokens \+ `max_new_tokens` must be <= (\d+)\. Given: (\d+) "
                r"`inputs` tokens and (\d+)", re.I), None),
    (re.compile(r"`inputs` must have less than (\d+) tokens\. Given: (\d+)", re.I), True),
    (re.compile(r"keep the first (\d+) tokens.{0,120}?context length of only (\d+)",
                re.I | re.S), False),
    (re.compile(r"n_keep: (\d+) ?>= ?n_ctx: (\d+)", re.I), False),
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
        if limit_first is None:  # limit, input, output
            return numbers[0], numbers[1] + numbers[2]
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
        status: the HTTP status (400, 413, 422 or 500 are read, and a 429
            for a request over the per-minute token budget; any other status
            is never this error; ``None``: an error inside a stream).
        message: the error's message (``error_message``).
        code: the error's code or type (``context_length_exceeded``,
            ``exceed_context_size_error``...).
        data: the parsed error body, for llama.cpp's ``n_ctx`` /
            ``n_prompt_tokens``.
        extra: a vendor's own wording, besides ``CONTEXT_WORDS``.
        codes: a vendor's own codes for it (GLM ``"1261"``).
    """
    if status in (413, 429):  # Groq answers 413, OpenAI 429
        over = _over_rate_budget(vendor, status, message, code)
        if over is not None or status == 429:
            return over
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


_TOO_LARGE = re.compile(r"request too large.{0,200}?limit:? (\d+), requested:? (\d+)",
                        re.I | re.S)


def _over_rate_budget(vendor: str, status: int, message: str,
                      code: str | None) -> ContextLengthError | None:
    """A 429 saying one request is larger than the per-minute token budget
    ("Request too large ... (TPM): Limit 30000, Requested 50000"): no wait
    lets it through, so it is a ``ContextLengthError`` (the input must be
    split); else ``None`` (a rate limit, retried)."""
    found = _TOO_LARGE.search(message)
    if found is None:
        return None
    limit, requested = int(found.group(1)), int(found.group(2))
    if requested <= limit:
        return None
    return ContextLengthError(message, limit=limit, requested=requested, status=status,
                              code=code, vendor=vendor)


def item_kind(vendor: str, status: int | None, message: str, code: str | None) -> str:
    """The ``BatchItemError.kind`` of a batch request the vendor answered with
    an error: ``"context_length"`` when the error says the request is over the
    context window (the batch runner raises ``ContextLengthError`` for it),
    else ``"error"``."""
    found = context_length_error(vendor, status if status is not None else 400, message, code)
    return "context_length" if found is not None else "error"
