"""Anthropic Messages API adapter (``POST /v1/messages``).

Wire facts (shared/providers.md §3; docs.anthropic.com/en/api/messages,
.../build-with-claude/{extended-thinking,prompt-caching,structured-outputs}):

* Auth: ``x-api-key`` plus the required ``anthropic-version: 2023-06-01``.
* Only ``user``/``assistant`` roles. Leading system messages become the
  top-level ``system`` blocks; a system message later in the conversation
  travels as ``<system-reminder>`` text in a user turn. Consecutive turns of
  one role are merged; tool results go in the next user turn, first; a
  conversation ending on an assistant turn gets a user nudge (Claude 4.6+
  refuse assistant prefill).
* Tools: ``{"name","description","input_schema"}``; ``tool_choice`` is
  ``auto`` / ``any`` (our ``required``) / ``tool`` (our ``specific``) / ``none``.
* Streaming: typed SSE (``message_start``, ``content_block_start/delta/stop``,
  ``message_delta`` with cumulative usage, ``message_stop``, ``ping``,
  ``error``). A stream without ``message_stop`` was cut.
* Extended thinking: ``thinking`` blocks carry a ``signature`` and, like
  ``redacted_thinking`` blocks, must be sent back unchanged in tool loops; a
  forced ``tool_choice`` is refused while thinking (400 "Thinking may not be
  enabled when tool_choice forces tool use."), so profiles set
  ``forced_tool_choice_with_thinking=False``.
* Prompt caching: ``cache_control: {"type":"ephemeral"}`` on at most 4 blocks;
  set here on the last tool, the last system block and the last message
  block, never on a block of a message whose metadata has ``CACHE_CONTROL=False``.
* Native structured output: ``output_config.format`` ``json_schema`` (every
  object closed with ``additionalProperties: false``), on for the 4.5+ models.
  A schema with a map (``dict[str, X]``) is refused before sending, and a
  400 refusing a schema feature of ``output_config`` is an
  ``UnsupportedFeatureError``: either way the engine takes the tool path.

Vendor extensions sent (outside the anthropic SDK's request types; checked by
tests/test_sdk_conformance.py): ``temperature``, only when the caller sets it
(the SDK dropped it in 1.0; the API still takes it on models with sampling
options, platform.claude.com/docs/en/about-claude/model-deprecations). The
SDK's own auth (``Authorization: Bearer``) and newer ``anthropic-version``
dates are accepted too; we keep ``x-api-key`` and ``2023-06-01``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import aiohttp
import orjson

from agentflow.errors import (
    ProviderError,
    TruncatedStreamError,
    UnsupportedFeature,
    UnsupportedFeatureError,
)
from agentflow.media_tokens import AreaImages, MediaTokens
from agentflow.messages import Msg
from agentflow.model import (
    FinishChunk,
    FinishReason,
    GenerateOptions,
    ModelChunk,
    ModelProfile,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSpec,
    Usage,
    UsageChunk,
)
from agentflow.providers._anthropic_batch import STATUS_OF_ERROR_TYPE, AnthropicBatchAPI
from agentflow.providers._anthropic_request import (
    THINKING_BLOCKS,
    UNCACHEABLE,
    closed_schema,
    conversation,
    set_breakpoints,
    tool_choice,
)
from agentflow.providers._batch_wire import WholeReplyBatches
from agentflow.providers._http import (
    HttpClient,
    HttpSettings,
    api_key_from,
    default_error,
    error_message,
    iter_sse,
    own_host,
    parse_retry_after,
    shared_governor,
)
from agentflow.providers._payload import ReplyGuard
from agentflow.providers._profiles import ProfileRule, match_profile
from agentflow.ratelimit import RateLimitSnapshot, model_family, seconds_until

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "AnthropicChatModel",
    "create",
    "map_error",
    "rate_family",
    "rate_limit_headers",
]

VENDOR = "anthropic"
API_VERSION = "2023-06-01"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_KEY_VARIABLES = ("ANTHROPIC_API_KEY",)
"""Environment variables the API key is read from, in order (``agentflow models`` lists them)."""

_BASE = ModelProfile(
    forced_tool_choice_with_thinking=False,
    parallel_tool_calls_flag=True,
    input_modalities=frozenset({"text", "image", "pdf"}),
    url_input_modalities=frozenset({"image", "pdf"}),
    image_media_types=frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"}),
    max_image_bytes=3_932_160,  # 5 MiB of base64, the text the API measures
    max_document_bytes=32_000_000,
    max_inline_bytes=32_000_000,
    max_document_pages=100,
    media_tokens=MediaTokens(AreaImages(), pdf_page=3_000),
)
"""Every Claude 3+ model: images (JPEG, PNG, GIF, WebP; "maximum allowed size of 5MB per
image" on the API: docs.anthropic.com/en/docs/build-with-claude/vision; the API
measures the base64 text: "image exceeds 5 MB maximum: N bytes > 5242880 bytes",
so 3,932,160 raw bytes) and PDFs
("Maximum request size: 32MB", "Maximum pages per request: 100"; base64 or URL
sources: docs.anthropic.com/en/docs/build-with-claude/pdf-support; 32 MB is also the
Messages API's request size limit: docs.anthropic.com/en/api/overview). Tokens: an
image is "tokens = (width px * height px)/750" after its long edge is scaled to at most
1568 px (docs.anthropic.com/en/docs/build-with-claude/vision, "Evaluate image size"); a
PDF page is its text plus an image of the page, "1,500-3,000 tokens per page"
(docs.anthropic.com/en/docs/build-with-claude/pdf-support), taken at 3,000.
Parallel tool use can be turned off: ``tool_choice`` ``auto``/``any``/``tool`` take
``disable_parallel_tool_use`` (shared/providers.md §3; anthropic SDK
``ToolChoiceAutoParam``), sent for ``parallel_tool_calls=False``, which the
structured-output engine sets on the tool path (C02: one output call, not one per
item)."""
_THINKING = _BASE.with_(supports_thinking=True)
_NATIVE = _THINKING.with_(native_output="json_schema")

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("claude-*-4-[5-9]*", _NATIVE.with_(
        context_window=200_000, max_output_tokens=64_000),
                "output_config json_schema (4.5+)"),
    ProfileRule("claude-opus-4-1*", _NATIVE.with_(context_window=200_000, max_output_tokens=32_000),
                "output_config json_schema"),
    ProfileRule("claude-*-4*", _THINKING.with_(context_window=200_000, max_output_tokens=32_000),
                "extended thinking; no native output"),
    ProfileRule("claude-3-7-*", _THINKING.with_(context_window=200_000, max_output_tokens=64_000),
                "extended thinking; no native output"),
    ProfileRule("claude-3-[a-z]*", _BASE.with_(context_window=200_000, max_output_tokens=4_096,
                                               input_modalities={"text", "image"},
                                               url_input_modalities={"image"}),
                "Claude 3 (Haiku, Sonnet, Opus): images but no PDF support"),
    ProfileRule("claude-3*", _BASE.with_(context_window=200_000, max_output_tokens=4_096),
                "no thinking, no native output"),
    ProfileRule("claude-*-[5-9]*", _NATIVE.with_(context_window=200_000, max_output_tokens=64_000),
                "Claude 5 families (fable, mythos, haiku, sonnet, opus; SDK Model literal)"),
    ProfileRule("claude-*-[5-9]", _NATIVE.with_(context_window=200_000, max_output_tokens=64_000),
                "Claude 5 families"),
    ProfileRule("claude-mythos*", _NATIVE.with_(context_window=200_000, max_output_tokens=64_000),
                "Claude Mythos (preview)"),
)
"""Model-name globs -> profile. Native output (``output_config``) only on the
models the structured-outputs doc lists (Sonnet/Opus/Haiku 4.5+, Opus 4.1);
thinking on 3.7 and 4.x; unknown names get the thinking profile without native output.

Context window 200,000 tokens for every row; output caps from
docs.anthropic.com/en/docs/about-claude/models/overview: 64,000 for the 4.5
models and Claude 3.7 Sonnet, 32,000 for Opus 4/4.1 (Sonnet 4's 64,000 shares
Opus 4's pattern, so the lower figure), 4,096 for the Claude 3 family's
smallest (Claude 3 Haiku/Opus)."""
DEFAULT_PROFILE = _THINKING
"""The profile of model names no pattern matches: thinking, no native output."""


def _number(headers: Mapping[str, str], name: str) -> float | None:
    value = headers.get(name)
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def rate_limit_headers(headers: Mapping[str, str]) -> RateLimitSnapshot | None:
    """Anthropic's rate-limit headers (docs.anthropic.com/en/api/rate-limits;
    shared/providers.md §3): ``anthropic-ratelimit-requests-{limit,remaining,reset}``
    and ``anthropic-ratelimit-tokens-*`` (the most restrictive token limit in
    force), else ``anthropic-ratelimit-input-tokens-*``; resets are RFC 3339
    times; ``retry-after`` (seconds) on 429. ``None`` when none is present.
    """
    prefix = "anthropic-ratelimit-"
    dim = "tokens" if f"{prefix}tokens-remaining" in headers else "input-tokens"
    snap = RateLimitSnapshot(
        requests_limit=_number(headers, f"{prefix}requests-limit"),
        requests_remaining=_number(headers, f"{prefix}requests-remaining"),
        requests_reset=seconds_until(headers.get(f"{prefix}requests-reset")),
        tokens_limit=_number(headers, f"{prefix}{dim}-limit"),
        tokens_remaining=_number(headers, f"{prefix}{dim}-remaining"),
        tokens_reset=seconds_until(headers.get(f"{prefix}{dim}-reset")),
        retry_after=parse_retry_after(headers),
    )
    return None if snap == RateLimitSnapshot() else snap


_TIER = re.compile(r"claude-(?:(opus|sonnet|haiku)-(\d+)|(\d+)(?:-\d+)?-(opus|sonnet|haiku))")


def rate_family(model: str) -> str:
    """The model class Anthropic's limits apply to: ``claude-sonnet-4-5-20250929``
    and ``claude-sonnet-4-0`` -> ``claude-sonnet-4``; ``claude-3-5-haiku-latest`` ->
    ``claude-haiku-3`` (limits are per model class, docs.anthropic.com/en/api/rate-limits)."""
    match = _TIER.match(model)
    if match is None:
        return model_family(model)
    tier = match.group(1) or match.group(4)
    major = match.group(2) or match.group(3)
    return f"claude-{tier}-{major}"


WHOLE_REPLY_MAX_TOKENS = 128_000 * 600 // 3600
"""The largest ``max_tokens`` Anthropic's SDK sends without streaming (21,333)."""


class AnthropicChatModel(WholeReplyBatches):
    """A Claude model over the Messages API.

    Args:
        model: e.g. ``"claude-sonnet-4-5"``.
        api_key: defaults to ``$ANTHROPIC_API_KEY``.
        base_url: API root, without ``/v1``.
        profile: overrides the ``PROFILES`` entry.
        settings: HTTP timeouts and retries.
        max_tokens: reply cap in tokens when the request sets none (the API requires one).
        thinking_budget: extended-thinking budget in tokens (>= 1024). Setting
            it turns thinking on by default; ``GenerateOptions.thinking`` still wins.
        stream: stream replies (SSE) or ask for whole ones.
        cache: set prompt-cache breakpoints.
    """

    batch_api_type = AnthropicBatchAPI
    """Batches (``BatchCapable``) go through ``AnthropicBatchAPI``."""

    vendor = VENDOR

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        profile: ModelProfile | None = None,
        settings: HttpSettings | None = None,
        max_tokens: int = 4096,
        thinking_budget: int | None = None,
        stream: bool = True,
        cache: bool = True,
    ) -> None:
        env = "ANTHROPIC_API_KEY" if own_host(base_url, DEFAULT_BASE_URL) else ""
        key = api_key_from(api_key, env)
        headers = {"anthropic-version": API_VERSION, **({"x-api-key": key} if key else {})}
        client = HttpClient(base_url, headers=headers, vendor=VENDOR, error_mapper=map_error,
                            settings=settings, rate_headers=rate_limit_headers,
                            governor=shared_governor(VENDOR, base_url, key, rate_family(model),
                                                     settings))
        resolved = profile or match_profile(PROFILES, model, DEFAULT_PROFILE)
        if thinking_budget is not None:
            resolved = resolved.with_(supports_thinking=True, thinking_default=True)
        super().__init__(model, client=client, profile=resolved, stream=stream)
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget or 2048
        self.cache = cache

    def streams(self, options: GenerateOptions) -> bool:
        """As the base, but a reply that may take long keeps streaming when the
        request only hints that nobody reads the deltas: the official SDK
        refuses a non-streaming request whose ``max_tokens`` (thinking budget
        included) makes it expect over 10 minutes (3,600 s per 128,000 tokens,
        i.e. over ``WHOLE_REPLY_MAX_TOKENS``; anthropic-sdk-python
        ``_calculate_nonstreaming_timeout``, "Streaming is required for
        operations that may take longer than 10 minutes")."""
        if options.stream is not False:
            return super().streams(options)
        max_tokens = options.max_tokens or self.max_tokens
        if self.profile.thinking_active(options) and self.thinking_budget >= max_tokens:
            max_tokens += self.thinking_budget  # as build_request sends it
        return max_tokens > WHOLE_REPLY_MAX_TOKENS

    def build_request(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
        *,
        stream: bool,
    ) -> tuple[str, dict[str, Any]]:
        """The ``/v1/messages`` body."""
        thinking = self.profile.thinking_active(options)
        system, turns = conversation(messages, thinking=thinking, choice=options.tool_choice)
        max_tokens = options.max_tokens or self.max_tokens
        body: dict[str, Any] = {"model": self.model_name, "max_tokens": max_tokens}
        if system:
            body["system"] = [block for block, _ in system]
        body["messages"] = [{"role": role, "content": [b for b, _ in blocks]}
                            for role, blocks in turns]
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description,
                              "input_schema": dict(t.parameters)} for t in tools]
            choice = tool_choice(options.tool_choice, options.parallel_tool_calls)
            if choice is not None:
                body["tool_choice"] = choice
        if thinking:
            if self.thinking_budget >= max_tokens:
                body["max_tokens"] = max_tokens + self.thinking_budget
            body["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        elif options.thinking is False and self.profile.supports_thinking:
            body["thinking"] = {"type": "disabled"}
        if options.temperature is not None and not thinking:  # thinking forbids temperature
            body["temperature"] = options.temperature
        fmt = options.response_format
        if fmt is not None and fmt.type == "json_schema" and fmt.schema is not None:
            body["output_config"] = {"format": {"type": "json_schema",
                                                "schema": closed_schema(fmt.schema)}}
        if self.cache:
            set_breakpoints(body, system, turns)
        if stream:
            body["stream"] = True
        body.update(options.extra)
        return "/v1/messages", body

    async def parse_stream(self, response: aiohttp.ClientResponse) -> AsyncIterator[ModelChunk]:
        """Chunks of the typed SSE stream.

        Raises:
            ProviderError: an ``event: error`` (529 ``overloaded_error`` ->
                ``OverloadedError``...).
            TruncatedStreamError: the stream ended before ``message_stop``, or
                reached it without a ``stop_reason`` (``partial=True``).
            ProviderConnectionError: an event is malformed, or the reply had
                neither content nor a ``stop_reason`` (``message_stop`` alone).
        """
        guard = ReplyGuard(VENDOR, stream=True)
        reader = _StreamReader()
        finished = False
        async for event in iter_sse(response):
            if not event.data:
                continue
            for chunk in guard.fold(reader.feed, guard.load(event.data)):
                finished = finished or chunk.type == "finish"
                yield chunk
            if reader.done:
                guard.end()
                if not finished:
                    raise TruncatedStreamError("the stream reached message_stop without a "
                                               "stop_reason; the reply is incomplete",
                                               vendor=VENDOR)
                return
        raise TruncatedStreamError("the stream ended before message_stop", vendor=VENDOR)

    def parse_reply(self, data: Any) -> Iterable[ModelChunk]:
        """Chunks of a whole ``message`` object."""
        reader = _StreamReader()
        reader.message = dict(data)
        yield UsageChunk(_usage(data.get("usage") or {}))
        for index, block in enumerate(data.get("content") or []):
            yield from reader.block(index, block)
        yield from reader.finish(data.get("stop_reason"))


def create(model_name: str, **kwargs: Any) -> AnthropicChatModel:
    """Registry factory: ``AnthropicChatModel(model_name, **kwargs)``."""
    return AnthropicChatModel(model_name, **kwargs)


# ----------------------------------------------------------------------------- reply

_STOP: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "tool_use": "tool_calls",
    "max_tokens": "length", "model_context_window_exceeded": "length",
    "refusal": "refusal", "pause_turn": "other",
}


def _merge_usage(usage: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """Fold ``message_delta``'s usage into ``message_start``'s. The counts are
    cumulative (docs.anthropic.com, "Streaming Messages": "The token counts
    shown in the usage field of the message_delta event are cumulative"), so a
    count never goes down: an Anthropic-compatible server that sends
    ``input_tokens: 0`` (or ``null``, which the anthropic SDK's
    ``accumulate_event`` skips too) in ``message_delta`` keeps the count of
    ``message_start`` (envoyproxy/ai-gateway#1631), and one that sent 0 in
    ``message_start`` takes the later count (sgl-project/sglang#20678)."""
    for key, value in delta.items():
        old = usage.get(key)
        if value is None or (isinstance(value, int | float) and isinstance(old, int | float)
                             and value < old):
            continue
        usage[key] = value


def _usage(raw: Mapping[str, Any]) -> Usage:
    """Anthropic counts cache reads/writes apart from ``input_tokens``; ours
    include them."""
    cached = int(raw.get("cache_read_input_tokens") or 0)
    written = int(raw.get("cache_creation_input_tokens") or 0)
    return Usage(input_tokens=int(raw.get("input_tokens") or 0) + cached + written,
                 output_tokens=int(raw.get("output_tokens") or 0), cached_tokens=cached)


class _StreamReader:
    """Folds typed stream events (or a whole message's blocks) into chunks."""

    def __init__(self) -> None:
        self.done = False
        self.usage: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.thinking: list[dict[str, Any]] = []
        self.message: dict[str, Any] = {}
        """The ``message`` of ``message_start`` (its ``model`` and ``id``)."""

    def feed(self, data: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """Chunks of one stream event (``ping`` and unknown events give none).

        Raises:
            ProviderError: an ``error`` event.
        """
        kind = data.get("type")
        if kind == "message_start":
            self.message = dict(data.get("message") or {})
            self.usage = dict(self.message.get("usage") or {})
            yield UsageChunk(_usage(self.usage))
        elif kind == "content_block_start":
            index, block = data["index"], dict(data["content_block"])
            self.blocks[index] = block
            if block["type"] == "tool_use":
                yield ToolCallDelta(index, id=block["id"], name=block["name"])
            elif block["type"] == "text" and block.get("text"):
                yield TextDelta(block["text"])
        elif kind == "content_block_delta":
            yield from self._delta(data["index"], data["delta"])
        elif kind == "content_block_stop":
            block = self.blocks.get(data["index"], {})
            yield from self._start_input(data["index"], block)
            yield from self._stop(block)
        elif kind == "message_delta":
            _merge_usage(self.usage, data.get("usage") or {})
            yield UsageChunk(_usage(self.usage))
            yield from self.finish((data.get("delta") or {}).get("stop_reason"))
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            raise _stream_error(data)

    def _delta(self, index: int, delta: Mapping[str, Any]) -> Iterable[ModelChunk]:
        block = self.blocks.setdefault(index, {"type": "text"})
        kind = delta.get("type")
        if kind == "text_delta":
            yield TextDelta(delta["text"])
        elif kind == "input_json_delta":
            block["streamed"] = True
            if delta.get("partial_json"):
                yield ToolCallDelta(index, arguments=delta["partial_json"])
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
            yield ThinkingDelta(delta["thinking"])
        elif kind == "signature_delta":
            block["signature"] = delta["signature"]

    @staticmethod
    def _start_input(index: int, block: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """At a streamed tool_use's end: the ``input`` that came whole in its
        ``content_block_start`` when no ``input_json_delta`` followed.
        Anthropic sends ``{}`` there, then deltas; some Anthropic-compatible
        servers send it all at the start, which was read as ``{}``."""
        given = block.get("input")
        if block.get("type") == "tool_use" and not block.get("streamed") and given:
            yield _input_delta(index, given)

    def _stop(self, block: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """At a block's end: keep thinking blocks whole for the next request."""
        if block.get("type") not in UNCACHEABLE:
            return
        self.thinking.append(dict(block))
        yield ThinkingDelta(signature=block.get("signature") or None,
                            provider_data={THINKING_BLOCKS: list(self.thinking)})

    def block(self, index: int, block: Mapping[str, Any]) -> Iterable[ModelChunk]:
        """Chunks of one block of a whole message."""
        kind = block.get("type")
        if kind == "text" and block.get("text"):
            yield TextDelta(block["text"])
        elif kind == "tool_use":
            yield _input_delta(index, block.get("input"), block["id"], block["name"])
        elif kind == "thinking" and block.get("thinking"):
            yield ThinkingDelta(block["thinking"])
        yield from self._stop(block)

    def finish(self, stop_reason: str | None) -> Iterable[ModelChunk]:
        """The normalized finish chunk for ``stop_reason``."""
        if stop_reason:
            model, reply_id = self.message.get("model"), self.message.get("id")
            yield FinishChunk(_STOP.get(stop_reason, "other"), stop_reason,
                              model if isinstance(model, str) else None,
                              reply_id if isinstance(reply_id, str) else None)


def _input_delta(index: int, given: Any, call_id: str | None = None,
                 name: str | None = None) -> ToolCallDelta:
    """A tool_use's ``input`` as a tool-call delta: an object as it is; a
    string as argument *text* for the tolerant decoder (the API returns the
    model's raw text there when it was not valid JSON, e.g. with Python
    triple quotes: anthropics/anthropic-sdk-python#804), so a bad one is sent
    back to the model as invalid instead of failing the reply; absent or
    ``null`` as ``{}``; anything else as its JSON text (refused by validation)."""
    if isinstance(given, Mapping):
        return ToolCallDelta(index, call_id, name, arguments_obj=given)
    if given is None:
        return ToolCallDelta(index, call_id, name, arguments_obj={})
    text = given if isinstance(given, str) else orjson.dumps(given).decode()
    return ToolCallDelta(index, call_id, name, arguments=text)


# ----------------------------------------------------------------------------- errors

def _unsupported(message: str) -> UnsupportedFeature | None:
    """The feature a 400 message says the model refuses, or ``None``."""
    text = message.lower()
    if "tool_choice forces tool use" in text:
        return "tool_choice"
    if ("output_config" in text or "output_format" in text or "structured output" in text) and (
        "not support" in text or "unsupported" in text or "not available" in text
        or "schema" in text  # a schema feature refused ("...format.schema: For 'object'...")
    ):
        return "native_output"
    if "thinking" in text and ("not support" in text or "unsupported" in text):
        return "thinking"
    return None


def map_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """An Anthropic error (``{"type":"error","error":{"type","message"}}``) as a
    ``ProviderError``: by status (529 -> ``OverloadedError``, 429 ->
    ``RateLimitedError`` with ``retry-after``...), and a 400 naming a refused
    feature -> ``UnsupportedFeatureError``."""
    message, code, _ = error_message(body)
    if status == 400:
        feature = _unsupported(message)
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, code=code, vendor=VENDOR)
    return default_error(VENDOR, status, headers, body)


def _stream_error(data: Mapping[str, Any]) -> ProviderError:
    """A mid-stream ``event: error`` mapped as if it were the HTTP error."""
    error = data.get("error")
    kind = error.get("type") if isinstance(error, Mapping) else None
    return map_error(STATUS_OF_ERROR_TYPE.get(str(kind), 500), {}, orjson.dumps(data))
