"""Google Gemini API adapter (``models/{model}:generateContent`` and
``:streamGenerateContent?alt=sse``, v1beta).

Wire facts (shared/providers.md §4; ai.google.dev/gemini-api/docs/
{function-calling,structured-output,thought-signatures}, googleapis/python-genai types.py):

* Auth: ``x-goog-api-key``. Contents have roles ``user``/``model`` only:
  leading system messages are ``systemInstruction``; later ones travel as
  ``<system-reminder>`` user text. Tool results are ``functionResponse``
  parts (``response`` must be an object) in a user turn, echoing the call's
  ``id`` when the vendor gave one.
* Tools: ``functionDeclarations``; ``parameters`` takes an OpenAPI subset
  (no ``$ref``/``$defs``, ``additionalProperties``...; an OBJECT needs
  properties), ``parametersJsonSchema`` takes JSON Schema: a schema outside
  the subset is sent there. ``toolConfig.functionCallingConfig.mode``:
  ``AUTO`` / ``ANY`` (+ ``allowedFunctionNames`` for one tool) / ``NONE``.
* Native output: ``responseMimeType: application/json`` + ``responseSchema``
  (or ``responseJsonSchema``). Before Gemini 3 it cannot be combined with
  function calling (400 "Function calling with a response mime type...").
* Replies: function calls arrive whole (args objects; a JSON string, as some
  compatible gateways send, is decoded too) and end with ``STOP``:
  detected by ``functionCall`` parts. ``thoughtSignature`` on parts is kept
  (``provider_data``) and sent back; Gemini 3 requires it on calls, so a call
  in history that no Gemini 3 made (another vendor's, a switched model's) is
  sent with Google's documented ``skip_thought_signature_validator``. A
  blocked prompt has no candidates, only ``promptFeedback.blockReason``.
  Streams have no terminal marker: the last event carries ``finishReason``,
  so a stream that ends without one was cut.
* Errors: Google RPC shape, sometimes in a one-element list; an invalid key
  is 400 ``API_KEY_INVALID``; 429 carries ``google.rpc.RetryInfo.retryDelay``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import aiohttp
import orjson

from agentflow.errors import (
    AuthenticationError,
    ProviderError,
    RateLimitedError,
    TruncatedStreamError,
    UnsupportedFeatureError,
)
from agentflow.media_tokens import GridImages, MediaTokens
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
from agentflow.providers._batch_wire import WholeReplyBatches
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._gemini_batch import GeminiBatchAPI
from agentflow.providers._gemini_request import (
    CALL_ID,
    SIGNATURE,
    calling_config,
    contents,
    declaration,
    response_config,
)
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
from agentflow.ratelimit import model_family

__all__ = ["DEFAULT_PROFILE", "PROFILES", "GeminiChatModel", "create", "map_error",
           "validates_signatures"]

VENDOR = "gemini"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
API_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
"""Environment variables the API key is read from, in order (``agentflow models`` lists them)."""

_PRE3 = ModelProfile(native_output="json_schema", native_output_with_tools=False,
                     schema_dialect="gemini",
                     input_modalities=frozenset({"text", "image", "pdf"}),
                     url_input_modalities=frozenset({"image", "pdf"}),
                     image_media_types=frozenset({"image/png", "image/jpeg", "image/webp",
                                                  "image/heic", "image/heif"}),
                     max_inline_bytes=20_000_000, max_document_pages=1000,
                     media_tokens=MediaTokens(GridImages(), pdf_page=258))
"""Every Gemini model takes images (PNG, JPEG, WEBP, HEIC, HEIF) and PDFs, inline
("when the total request size is less than 20MB") or as ``fileData`` URIs (Files
API, ``gs://``, public URLs): ai.google.dev/gemini-api/docs/image-understanding,
ai.google.dev/gemini-api/docs/document-processing (up to 1000 pages). Tokens: "images
with both dimensions <= 384 pixels are counted as 258 tokens; larger images are
cropped and scaled as needed into tiles of 768x768 pixels, each counted as 258
tokens" (ai.google.dev/gemini-api/docs/tokens); "each document page is equivalent to
258 tokens" (ai.google.dev/gemini-api/docs/document-processing)."""
_THINKING = _PRE3.with_(supports_thinking=True, thinking_default=True)

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("gemini-[3-9]*", _THINKING.with_(native_output_with_tools=True,
                                                 context_window=1_048_576,
                                                 max_output_tokens=65_536),
                "responseSchema together with function calling"),
    ProfileRule("gemini-2.5*", _THINKING.with_(
        context_window=1_048_576, max_output_tokens=65_536), "thinking on by default"),
    ProfileRule("gemini-*", _PRE3.with_(context_window=1_048_576, max_output_tokens=8_192),
                "responseSchema never with function calling"),
)
"""Model-name globs -> profile: native output everywhere, combined with tools
from Gemini 3 on; thinking (on by default) from 2.5. Windows and output caps
(tokens) from ai.google.dev/gemini-api/docs/models: 1,048,576 input for every
family (1.5 Pro's 2,097,152 shares the ``gemini-*`` row, so the lower
figure); 65,536 output from 2.5 on, 8,192 before."""
DEFAULT_PROFILE = _PRE3
"""The profile of model names no pattern matches: native output never with tools."""


class GeminiChatModel(WholeReplyBatches):
    """A Gemini model over the Gemini API.

    Args:
        model: e.g. ``"gemini-2.5-flash"``.
        api_key: defaults to ``$GEMINI_API_KEY``, then ``$GOOGLE_API_KEY``.
        base_url: API root including the version (``.../v1beta``).
        profile: overrides the ``PROFILES`` entry.
        settings: HTTP timeouts and retries.
        thinking_budget: ``thinkingConfig.thinkingBudget`` in tokens (-1: dynamic).
        include_thoughts: ask for thought summaries (``ThinkingDelta`` chunks).
        stream: stream replies (SSE) or ask for whole ones.
    """

    batch_api_type = GeminiBatchAPI
    """Batches (``BatchCapable``) go through ``GeminiBatchAPI``."""

    vendor = VENDOR
    otel_provider = "gcp.gemini"
    """``gen_ai.provider.name`` of the Gemini API (OpenTelemetry GenAI conventions)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str = DEFAULT_BASE_URL,
        profile: ModelProfile | None = None,
        settings: HttpSettings | None = None,
        thinking_budget: int | None = None,
        include_thoughts: bool = False,
        stream: bool = True,
    ) -> None:
        own = own_host(base_url, DEFAULT_BASE_URL)
        key = api_key_from(api_key, "GEMINI_API_KEY" if own else "") or api_key_from(
            None, "GOOGLE_API_KEY" if own else "")
        client = HttpClient(base_url, headers={"x-goog-api-key": key} if key else {},
                            vendor=VENDOR, error_mapper=map_error, settings=settings,
                            governor=shared_governor(VENDOR, base_url, key, model_family(model),
                                                     settings))
        resolved = profile or match_profile(PROFILES, model, DEFAULT_PROFILE)
        super().__init__(model, client=client, profile=resolved, stream=stream)
        self.thinking_budget = thinking_budget
        self.include_thoughts = include_thoughts

    def build_request(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
        *,
        stream: bool,
    ) -> tuple[str, dict[str, Any]]:
        """The ``generateContent`` body and path."""
        system, turns = contents(messages, options.tool_choice,
                                 sign_foreign=validates_signatures(self.model_name))
        body: dict[str, Any] = {"contents": turns}
        if system:
            body["systemInstruction"] = {"parts": system}
        if tools:
            body["tools"] = [{"functionDeclarations": [declaration(t) for t in tools]}]
            if options.tool_choice is not None:
                body["toolConfig"] = {
                    "functionCallingConfig": calling_config(options.tool_choice)
                }
        config = self._generation_config(options)
        if config:
            body["generationConfig"] = config
        body.update(options.extra)
        action = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"/models/{self.model_name}:{action}", body

    def _generation_config(self, options: GenerateOptions) -> dict[str, Any]:
        config: dict[str, Any] = {}
        if options.max_tokens is not None:
            config["maxOutputTokens"] = options.max_tokens
        if options.temperature is not None:
            config["temperature"] = options.temperature
        if options.response_format is not None:
            config.update(response_config(options.response_format))
        if self.profile.supports_thinking:
            if options.thinking is False:
                config["thinkingConfig"] = {"thinkingBudget": 0}
            elif self.profile.thinking_active(options):
                thinking: dict[str, Any] = {}
                if self.thinking_budget is not None:
                    thinking["thinkingBudget"] = self.thinking_budget
                if self.include_thoughts:
                    thinking["includeThoughts"] = True
                if thinking:
                    config["thinkingConfig"] = thinking
        return config

    async def parse_stream(self, response: aiohttp.ClientResponse) -> AsyncIterator[ModelChunk]:
        """Chunks of the SSE stream (each event a partial ``GenerateContentResponse``).

        Raises:
            ProviderError: an error object inside the stream.
            TruncatedStreamError / ProviderConnectionError: the stream ended
                without a ``finishReason`` (``partial=True``),
                or an event is malformed.
        """
        guard = ReplyGuard(VENDOR, stream=True)
        reader = _Reader()
        async for event in iter_sse(response):
            if event.data:
                for chunk in guard.fold(reader.feed, guard.load(event.data)):
                    yield chunk
        for chunk in guard.fold(lambda _: reader.end(), None):
            yield chunk
        guard.end()

    def parse_reply(self, data: Any) -> Iterable[ModelChunk]:
        """Chunks of a whole ``GenerateContentResponse``."""
        reader = _Reader()
        yield from reader.feed(data)
        yield from reader.end(cut_if_unfinished=False)


def create(model_name: str, **kwargs: Any) -> GeminiChatModel:
    """Registry factory: ``GeminiChatModel(model_name, **kwargs)``."""
    return GeminiChatModel(model_name, **kwargs)


# ----------------------------------------------------------------------------- reply

_FINISH: dict[str, FinishReason] = {
    "STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
    "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter", "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error", "TOO_MANY_TOOL_CALLS": "error",
}


_GENERATION = re.compile(r"gemini-(\d+)")


def validates_signatures(model: str) -> bool:
    """Whether ``model`` refuses function calls in history without a thought
    signature (Gemini 3 and later; ai.google.dev/gemini-api/docs/thought-signatures)."""
    match = _GENERATION.search(model.lower())
    return match is not None and int(match.group(1)) >= 3


def _usage(raw: Mapping[str, Any]) -> Usage:
    """Gemini counts thinking apart from candidates; our output includes it."""
    thoughts = int(raw.get("thoughtsTokenCount") or 0)
    return Usage(
        input_tokens=int(raw.get("promptTokenCount") or 0)
        + int(raw.get("toolUsePromptTokenCount") or 0),
        output_tokens=int(raw.get("candidatesTokenCount") or 0) + thoughts,
        cached_tokens=int(raw.get("cachedContentTokenCount") or 0),
        reasoning_tokens=thoughts,
    )


def _call_delta(index: int, call: Mapping[str, Any],
                data: Mapping[str, Any] | None) -> ToolCallDelta:
    """A ``functionCall`` as a tool-call delta. ``args`` is a ``Struct`` (an
    object) on the wire, but Gemini-compatible gateways and proxies have
    been seen to hand it over as a JSON *string* (the form OpenAI uses for
    ``arguments``): a string is argument text for the tolerant decoder (a
    bad one goes back to the model as invalid); absent or ``null`` is ``{}``;
    anything else its JSON text, refused by validation."""
    args = call.get("args")
    if isinstance(args, Mapping) or args is None:
        return ToolCallDelta(index, id=call.get("id"), name=call["name"],
                             arguments_obj=args or {}, provider_data=data)
    text = args if isinstance(args, str) else orjson.dumps(args).decode()
    return ToolCallDelta(index, id=call.get("id"), name=call["name"], arguments=text,
                         provider_data=data)


class _Reader:
    """Folds ``GenerateContentResponse`` objects (stream events or a whole
    reply) into chunks."""

    def __init__(self) -> None:
        self.calls = 0
        self.finish: str | None = None
        self.model: str | None = None
        self.reply_id: str | None = None

    def feed(self, data: Any) -> Iterable[ModelChunk]:
        if isinstance(data, list):  # an error (or reply) wrapped in a one-element list
            data = data[0] if data else {}
        if "error" in data:
            code = data["error"].get("code") if isinstance(data["error"], Mapping) else None
            raise map_error(code if isinstance(code, int) else 500, {}, orjson.dumps(data))
        if isinstance(data.get("modelVersion"), str):  # for tracing
            self.model = data["modelVersion"]
        if isinstance(data.get("responseId"), str):
            self.reply_id = data["responseId"]
        if data.get("usageMetadata"):
            yield UsageChunk(_usage(data["usageMetadata"]))
        candidates = data.get("candidates") or []
        if not candidates:
            blocked = (data.get("promptFeedback") or {}).get("blockReason")
            if blocked:
                self.finish = f"BLOCKED:{blocked}"
            return
        candidate = candidates[0]
        for part in (candidate.get("content") or {}).get("parts") or []:
            yield from self._part(part)
        if candidate.get("finishReason"):
            self.finish = candidate["finishReason"]

    def _part(self, part: Mapping[str, Any]) -> Iterable[ModelChunk]:
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            call = part["functionCall"]
            data = {k: v for k, v in ((SIGNATURE, signature), (CALL_ID, call.get("id"))) if v}
            yield _call_delta(self.calls, call, data or None)
            self.calls += 1
            return
        if part.get("thought"):
            if part.get("text"):
                yield ThinkingDelta(part["text"])
        elif part.get("text"):
            yield TextDelta(part["text"])
        if signature:
            yield ThinkingDelta(provider_data={SIGNATURE: signature})

    def end(self, *, cut_if_unfinished: bool = True) -> Iterable[ModelChunk]:
        """The finish chunk (a whole reply without ``finishReason`` counts as
        ``STOP``, with ``raw=""``: the vendor gave no reason).

        Raises:
            TruncatedStreamError: a stream ended without ``finishReason``
                (nor a block reason): it was cut.
        """
        if self.finish is None and cut_if_unfinished:
            raise TruncatedStreamError("the stream ended without a finishReason; the reply "
                                       "is incomplete", vendor=VENDOR)
        raw = self.finish or ""
        if raw.startswith("BLOCKED:"):
            reason: FinishReason = "content_filter"
        elif raw in ("STOP", "") and self.calls:
            reason = "tool_calls"
        else:
            reason = _FINISH.get(raw or "STOP", "other")
        yield FinishChunk(reason, raw, self.model, self.reply_id)


# ----------------------------------------------------------------------------- errors


def _retry_delay(details: Iterable[Any]) -> float | None:
    """Seconds from a ``google.rpc.RetryInfo`` detail (``"37s"``, ``"1.5s"``)."""
    for detail in details:
        if isinstance(detail, Mapping) and str(detail.get("@type", "")).endswith("RetryInfo"):
            try:
                return float(str(detail.get("retryDelay", "")).rstrip("s"))
            except ValueError:
                return None
    return None


def _refuses_response_schema(message: str) -> bool:
    """Whether a 400 refuses the native-output schema ("Invalid JSON payload
    received. Unknown name "x" at 'generation_config.response_schema'", "...
    response_schema.properties: should be non-empty for OBJECT type"): the
    engine then takes the tool path."""
    return any(name in message for name in ("response_schema", "responseschema",
                                            "response_json_schema", "responsejsonschema"))


def map_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
    """A Google RPC error (``{"error":{code,message,status,details}}``, maybe
    in a one-element list) as a ``ProviderError``: 400 ``API_KEY_INVALID`` ->
    ``AuthenticationError``; 400 "Function calling with a response mime type"
    or a refused response schema -> ``UnsupportedFeatureError("native_output")``; 429 ->
    ``RateLimitedError`` with ``RetryInfo.retryDelay`` (else ``Retry-After``);
    400 "The input token count (N) exceeds the maximum number of tokens allowed
    (M)" -> ``ContextLengthError``; other statuses as usual (503 -> ``OverloadedError``)."""
    message, _, data = error_message(body)
    node = data[0] if isinstance(data, list) and data else data
    error = node.get("error") if isinstance(node, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    details = error.get("details") or []
    code = error.get("status")
    reasons = {d.get("reason") for d in details if isinstance(d, Mapping)}
    kw: dict[str, Any] = {"status": status, "code": code, "vendor": VENDOR}
    if "API_KEY_INVALID" in reasons or status == 401:
        return AuthenticationError(message, **kw)
    too_long = context_length_error(VENDOR, status, message, code, data)
    if too_long is not None:
        return too_long
    lowered = message.lower()
    if status == 400 and "function calling with a response mime type" in lowered:
        return UnsupportedFeatureError(message, feature="native_output", **kw)
    if status == 400 and _refuses_response_schema(lowered):
        return UnsupportedFeatureError(message, feature="native_output", **kw)
    if status == 400 and "function calling is not enabled" in lowered:
        return UnsupportedFeatureError(message, feature="tools", **kw)
    if status == 429:
        delay = _retry_delay(details)
        return RateLimitedError(message, retry_after=delay if delay is not None
                                else parse_retry_after(headers), **kw)
    normalized = orjson.dumps({"error": {"message": message, "code": code}})  # code: status name
    return default_error(VENDOR, status, headers, normalized)
