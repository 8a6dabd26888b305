"""How an OpenAI-style reply ends, as vendors report it: its finish reason
in any server's words, normalized (``finish_reason``), and its token usage
(``parse_usage``). ``ChunkParser`` (``_openai_chunks``, which re-exports
both) reads them.

Wire facts follow shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentflow.model import FinishReason, Usage
from agentflow.providers._payload import counted

__all__ = ["finish_reason", "parse_usage"]

_FINISH: dict[str, FinishReason] = {
    "stop": "stop", "eos": "stop", "end_turn": "stop",
    "length": "length", "max_tokens": "length", "model_context_window_exceeded": "length",
    "tool_calls": "tool_calls", "function_call": "tool_calls",
    "content_filter": "content_filter", "sensitive": "content_filter",
    "insufficient_system_resource": "error", "network_error": "error", "error": "error",
    "abort": "error",
    "refusal": "refusal",
    # other servers' words for the same ends (read case-blind, ``finish_reason``)
    "eos_token": "stop", "end": "stop", "stop_sequence": "stop", "complete": "stop",
    "model_length": "length",
    "tool_use": "tool_calls", "tool_call": "tool_calls",
    "safety": "content_filter", "recitation": "content_filter", "blocklist": "content_filter",
    "prohibited_content": "content_filter", "spii": "content_filter",
    "guardrail_intervened": "content_filter", "content_filtered": "content_filter",
    "language": "content_filter", "image_safety": "content_filter",
    "image_prohibited_content": "content_filter", "image_recitation": "content_filter",
    "malformed_function_call": "error", "timeout": "error",
    "malformed_response": "error", "unexpected_tool_call": "error",
    "too_many_tool_calls": "error", "continuation": "length",
    "escalation": "content_filter", "model_armor": "content_filter",
    "pup_limited_disabled": "content_filter",
}
"""``abort``: vLLM and SGLang end a request their engine aborted (shutdown, a
scale-down or sleep pause, an abort request) with it over HTTP 200 and then
``[DONE]`` (vllm-project/vllm#57082): the text so far is cut, not an answer.
``model_length``: Mistral's end at the model's context window, the text cut as
by ``length`` (camel-ai/camel#4266); ``eos_token``: TGI before 2.2
(huggingface/text-generation-inference#2344), ``end``: gateways
(earendil-works/pi#2107); Anthropic's, Bedrock's, Gemini's and Cohere's own
words (``tool_use``, ``guardrail_intervened``, ``SAFETY``, ``COMPLETE``...)
as gateways relay them unmapped."""


def finish_reason(raw: str) -> FinishReason:
    """A vendor's finish reason, normalized (GLM ``sensitive`` -> ``content_filter``,
    DeepSeek ``insufficient_system_resource`` and vLLM ``abort`` -> ``error``,
    Mistral ``model_length`` -> ``length``; any case; unknown -> ``other``)."""
    known = _FINISH.get(raw)
    if known is not None:
        return known
    return _FINISH.get(raw.lower(), "other") if isinstance(raw, str) else "other"


def parse_usage(data: Any) -> Usage | None:
    """``Usage`` from a ``usage`` object (``prompt_tokens``, ``completion_tokens``,
    ``prompt_tokens_details.cached_tokens``, DeepSeek's
    ``prompt_cache_hit_tokens`` or Moonshot's top-level ``cached_tokens``,
    ``completion_tokens_details.reasoning_tokens``; cache writes as OpenRouter
    reports them, ``prompt_tokens_details.cache_write_tokens``
    (openrouter.ai/docs/use-cases/usage-accounting), or as gateways relaying
    Anthropic's usage do, top-level ``cache_creation_input_tokens``
    (LiteLLM's ``Usage``)).

    Raises:
        ValueError, TypeError, AttributeError: counts that are not numbers, or
            details that are not objects (``ReplyGuard`` makes them typed).
    """
    if data is None or not isinstance(data, Mapping):  # None first: no ABC check per chunk
        return None
    prompt = data.get("prompt_tokens") or data.get("input_tokens") or 0
    completion = data.get("completion_tokens") or data.get("output_tokens") or 0
    details = data.get("prompt_tokens_details") or {}
    out_details = data.get("completion_tokens_details") or {}
    cached = (details.get("cached_tokens") or data.get("prompt_cache_hit_tokens")
              or data.get("cached_tokens") or 0)
    written = (details.get("cache_write_tokens") or data.get("cache_creation_input_tokens")
               or 0)
    reasoning = out_details.get("reasoning_tokens") or 0
    return counted(Usage(int(prompt), int(completion), int(cached), int(reasoning),
                         cache_write_tokens=int(written)))
