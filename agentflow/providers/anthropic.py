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
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import aiohttp

from agentflow._logging import get_logger
from agentflow.errors import BadRequestError, ServerError, TruncatedStreamError
from agentflow.media.tokens import AreaImages, MediaTokens
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ModelProfile, ToolSpec, UsageChunk
from agentflow.providers._anthropic_batch import AnthropicBatchAPI
from agentflow.providers._anthropic_errors import VENDOR, body_error, map_error
from agentflow.providers._anthropic_limits import rate_family, rate_limit_headers
from agentflow.providers._anthropic_pause import continued, continuing_messages, resumed
from agentflow.providers._anthropic_reply import StreamReader, usage_of
from agentflow.providers._anthropic_request import (
    closed_schema,
    conversation,
    history_tools,
    set_breakpoints,
    tool_choice,
)
from agentflow.providers._batch_wire import WholeReplyBatches
from agentflow.providers._context_errors import MIN_OUTPUT_ROOM
from agentflow.providers._http import (
    HttpClient,
    HttpSettings,
    api_key_from,
    iter_sse,
    own_host,
    shared_governor,
)
from agentflow.providers._http_settings import checked_base_url
from agentflow.providers._payload import ReplyGuard
from agentflow.providers._profiles import ProfileRule, match_profile

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "AnthropicChatModel",
    "create",
    "map_error",
    "rate_family",
    "rate_limit_headers",
]

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


WHOLE_REPLY_MAX_TOKENS = 128_000 * 600 // 3600
"""The largest ``max_tokens`` Anthropic's SDK sends without streaming (21,333)."""


_OUTPUT_OVER_WINDOW = re.compile(
    r"input length and `?max_tokens`? exceed context limit: (\d+) \+ (\d+) > (\d+)", re.I)
_log = get_logger("agentflow.providers")


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
        base_url = checked_base_url(VENDOR, base_url)  # before anything reads it
        env = "ANTHROPIC_API_KEY" if own_host(base_url, DEFAULT_BASE_URL) else ""
        key = api_key_from(api_key, env)
        headers = {"anthropic-version": API_VERSION, **({"x-api-key": key} if key else {})}
        client = HttpClient(base_url, headers=headers, vendor=VENDOR, error_mapper=map_error,
                            settings=settings, rate_headers=rate_limit_headers, model=model,
                            body_error=body_error,
                            governor=shared_governor(VENDOR, base_url, key, rate_family(model),
                                                     settings))
        resolved = profile or match_profile(PROFILES, model, DEFAULT_PROFILE)
        if thinking_budget is not None:
            resolved = resolved.with_(supports_thinking=True, thinking_default=True)
        super().__init__(model, client=client, profile=resolved, stream=stream)
        self.max_tokens = max_tokens
        self.thinking_budget = thinking_budget or 2048
        self.cache = cache

    def resend_options(self, error: BadRequestError, options: GenerateOptions
                       ) -> GenerateOptions | None:
        """``max_tokens`` lowered to the room the prompt leaves when the API says
        the prompt fits but not beside it ("input length and `max_tokens` exceed
        context limit: 188240 + 21333 > 200000, decrease input length or
        `max_tokens` and try again"; Claude 3.7 and later refuse instead of
        cutting the reply); else ``None``. It was a ``ContextLengthError``
        telling the caller to split an input that fits."""
        found = _OUTPUT_OVER_WINDOW.search(str(error))
        if found is None:
            return None
        room = int(found.group(3)) - int(found.group(1))
        if not MIN_OUTPUT_ROOM <= room < (options.max_tokens or self.max_tokens):
            return None
        _log.warning("anthropic.max_tokens_over_window", model=self.model_name,
                     max_tokens=room, error=str(error)[:200])
        return options.with_(max_tokens=room)

    def stream(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
               options: GenerateOptions) -> AsyncIterator[ModelChunk]:
        """As the base, but a turn the API pauses (``pause_turn``: its server
        tool loop ran long) is sent back as it is until it ends
        (``_anthropic_pause``): the agent sees one reply."""
        def send(turn: list[dict[str, Any]]) -> AsyncIterator[ModelChunk]:
            if not turn:
                return super(AnthropicChatModel, self).stream(messages, tools, options)
            return self._continuation(messages, tools, options, turn)
        return continued(send)

    def continue_batch_reply(
        self, chunks: Sequence[ModelChunk], messages: Sequence[Msg],
        tools: Sequence[ToolSpec], options: GenerateOptions,
    ) -> AsyncIterator[ModelChunk] | None:
        """A batch reply's turn continued live when the API paused it
        (``pause_turn``: a Message Batches item runs server tools as a live
        request does, and pauses the same way), as ``stream`` continues a
        live one: ``chunks`` (the batch reply's, ``parse_batch_reply``)
        first, then each continuation's; ``None`` when it did not pause.
        Read as it was, the paused turn was the input's answer, cut short
        mid-work (its finish reason ``other``)."""
        return resumed(chunks, lambda turn: self._continuation(messages, tools, options, turn))

    def _continuation(self, messages: Sequence[Msg], tools: Sequence[ToolSpec],
                      options: GenerateOptions,
                      turn: list[dict[str, Any]]) -> AsyncIterator[ModelChunk]:
        """One request continuing a paused ``turn`` (its content so far)."""
        sent = self.build_request(messages, tools, options, stream=True)[1]["messages"]
        extra = {**options.extra, "messages": continuing_messages(sent, turn)}
        return super().stream(messages, tools, options.with_(extra=extra))

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
        elif declared := history_tools(turns):  # the API refuses tool blocks without tools
            body["tools"], body["tool_choice"] = declared, {"type": "none"}
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
                ``OverloadedError``...; a frame without the ``"type": "error"``
                discriminator too; data that is text: ``ServerError``).
            TruncatedStreamError: the stream ended before ``message_stop``, or
                reached it without a ``stop_reason`` (``partial=True``).
            ProviderConnectionError: an event is malformed, or the reply had
                neither content nor a ``stop_reason`` (``message_stop`` alone).
        """
        guard = ReplyGuard(VENDOR, stream=True)
        reader = StreamReader()
        finished = False
        async for event in iter_sse(response):
            if not event.data:
                continue
            if event.event == "error" and not event.data.lstrip().startswith("{"):
                # an ``event: error`` whose data is text (a proxy's "upstream request
                # timeout"): the stream failed, and its words say why
                raise ServerError(f"the stream failed: {event.data.strip()[:500]}",
                                  vendor=VENDOR)
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
        reader = StreamReader()
        reader.message = dict(data)
        yield UsageChunk(usage_of(data.get("usage") or {}))
        for index, block in enumerate(data.get("content") or []):
            yield from reader.block(index, block)
        yield from reader.finish(data.get("stop_reason"), data.get("stop_details"))


def create(model_name: str, **kwargs: Any) -> AnthropicChatModel:
    """Registry factory: ``AnthropicChatModel(model_name, **kwargs)``."""
    return AnthropicChatModel(model_name, **kwargs)
