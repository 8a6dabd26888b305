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
* Token log-probabilities: ``generationConfig.responseLogprobs: true`` (+
  ``logprobs``: alternatives per step, 1-20) returns each candidate's
  ``logprobsResult.chosenCandidates[]`` (``token``, ``logProbability``), in
  every stream event as in a whole reply (google-genai ``types.LogprobsResult``,
  ``GenerationConfig.response_logprobs``; read in ``_gemini_reply``). Many
  models refuse the field (400 "Logprobs is not enabled for models/..." on
  gemini-2.5-pro and 2.5-flash-lite, "Logprobs is not supported for this
  model" on 3.x: mscraftsman/generative-ai#135, Vela-Research/think-reason-learn#34,
  GoogleCloudPlatform/generative-ai#2947); the SDK's own test asks it of
  gemini-2.0-flash (google/genai/tests/models/test_generate_content.py
  ``test_log_probs``). So only the 1.5/2.0 Flash rows ask, and a model that
  refuses it anyway gets the request again without it (``LOGPROBS_REFUSAL``).
* Errors: Google RPC shape, sometimes in a one-element list; an invalid key
  is 400 ``API_KEY_INVALID``; 429 carries ``google.rpc.RetryInfo.retryDelay``.
  The same object inside a 200 is mapped as its HTTP twin (by ``code``, else
  by its ``status`` name): a whole body's is retried by the HTTP layer when
  transient (``body_error``); a stream's (a ``data:`` event, or bare JSON
  lines) is ``partial``, sent again under ``stream_retries``.

Replies are read in ``_gemini_reply``, errors mapped in ``_gemini_errors``,
request bodies built in ``_gemini_request``; this module holds the profiles
and the model.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import aiohttp

from agentflow._logging import get_logger
from agentflow.batch_api.protocol import BatchRequest
from agentflow.errors import BadRequestError, UnsupportedFeatureError
from agentflow.media.tokens import GridImages, MediaTokens
from agentflow.messages import Msg
from agentflow.model import (
    GenerateOptions,
    ModelChunk,
    ModelProfile,
    ToolSpec,
    UsageChunk,
)
from agentflow.providers._batch_wire import WholeReplyBatches
from agentflow.providers._gemini_batch import GeminiBatchAPI
from agentflow.providers._gemini_errors import (
    MISSING_SIGNATURE,
    TOO_MANY_STATES,
    VENDOR,
    body_error,
    map_error,
)
from agentflow.providers._gemini_reply import ReplyReader, validates_signatures
from agentflow.providers._gemini_request import (
    calling_config,
    contents,
    declaration,
    response_config,
)
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
from agentflow.ratelimit import model_family

__all__ = ["DEFAULT_PROFILE", "LOGPROBS_REFUSAL", "PROFILES", "GeminiChatModel", "create",
           "map_error", "validates_signatures"]

_log = get_logger("agentflow.providers")

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

_PRE3_FLASH = _PRE3.with_(context_window=1_048_576, max_output_tokens=8_192,
                          token_logprobs=True)

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("gemini-[3-9]*", _THINKING.with_(native_output_with_tools=True,
                                                 context_window=1_048_576,
                                                 max_output_tokens=65_536),
                "responseSchema together with function calling"),
    ProfileRule("gemini-2.5*", _THINKING.with_(
        context_window=1_048_576, max_output_tokens=65_536), "thinking on by default"),
    ProfileRule("gemini-2.0-flash*", _PRE3_FLASH,
                "responseSchema never with function calling; token log-probabilities"),
    ProfileRule("gemini-1.5-flash*", _PRE3_FLASH,
                "responseSchema never with function calling; token log-probabilities"),
    ProfileRule("gemini-*", _PRE3.with_(context_window=1_048_576, max_output_tokens=8_192),
                "responseSchema never with function calling"),
)
"""Model-name globs -> profile: native output everywhere, combined with tools
from Gemini 3 on; thinking (on by default) from 2.5. Windows and output caps
(tokens) from ai.google.dev/gemini-api/docs/models: 1,048,576 input for every
family (1.5 Pro's 2,097,152 shares the ``gemini-*`` row, so the lower
figure); 65,536 output from 2.5 on, 8,192 before. Token log-probabilities
(``responseLogprobs``) on the 1.5 and 2.0 Flash models only (see the module
docstring); any other refuses them or is not known to give them."""
LOGPROB_ALTERNATIVES = 1
"""``generationConfig.logprobs`` sent with ``responseLogprobs``: alternatives per
step (the API takes 1-20); only the chosen token is read, 1 keeps the reply small."""
LOGPROBS_REFUSAL = re.compile(r"\blogprobs\b.*\bnot (?:supported|enabled)\b", re.I | re.S)
"""A 400 refusing ``responseLogprobs`` for the model: "Logprobs is not enabled for
models/gemini-2.5-pro", "Logprobs is not supported for the current model." (see
the module docstring)."""
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
        base_url = checked_base_url(VENDOR, base_url)  # before anything reads it
        own = own_host(base_url, DEFAULT_BASE_URL)
        key = api_key_from(api_key, "GEMINI_API_KEY" if own else "") or api_key_from(
            None, "GOOGLE_API_KEY" if own else "")
        client = HttpClient(base_url, headers={"x-goog-api-key": key} if key else {},
                            vendor=VENDOR, error_mapper=map_error, settings=settings,
                            model=model, body_error=body_error,
                            governor=shared_governor(VENDOR, base_url, key, model_family(model),
                                                     settings))
        resolved = profile or match_profile(PROFILES, model, DEFAULT_PROFILE)
        super().__init__(model, client=client, profile=resolved, stream=stream)
        self.thinking_budget = thinking_budget
        self.include_thoughts = include_thoughts
        self._sign_foreign = validates_signatures(model)

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Send one request; yield its reply as ``ModelChunk``s (see
        ``HttpChatModel.stream``). A request that asked for token
        log-probabilities and is refused for them (``LOGPROBS_REFUSAL``, before
        any chunk) is sent again without them, and this model instance asks
        no more (its ``profile`` then says ``token_logprobs=False``).

        A schema Gemini finds too big to serve (``TOO_MANY_STATES``) is an
        ``UnsupportedFeatureError`` of the part that carried it: the response
        schema when the request had one, else a function's parameters
        (``tool_schema``).

        A request refused for a function call without its thought signature
        (code ``MISSING_SIGNATURE``: a 400, or finish reason
        ``MISSING_THOUGHT_SIGNATURE``, before any output) from a model whose
        name did not say it validates them (``validates_signatures``) is sent
        again with ``FOREIGN_SIGNATURE`` on such calls, and this instance signs
        them from then on; refused once signed, it is raised (not retried).

        Raises:
            ProviderError: as ``HttpChatModel.stream``.
        """
        try:
            async for chunk in self._signed(messages, tools, options):
                yield chunk
        except UnsupportedFeatureError as exc:
            if (exc.feature != "native_output" or options.response_format is not None
                    or TOO_MANY_STATES not in exc.message.lower()):
                raise
            raise UnsupportedFeatureError(exc.message, feature="tool_schema", status=exc.status,
                                          code=exc.code, vendor=VENDOR) from exc

    async def _signed(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """``_stream``, sent again with foreign calls signed when a signature was missing."""
        started = False
        try:
            async for chunk in self._stream(messages, tools, options):
                started = started or not isinstance(chunk, UsageChunk)
                yield chunk
            return
        except BadRequestError as exc:
            if started or exc.code != MISSING_SIGNATURE or self._sign_foreign:
                raise
            self._sign_foreign = True  # this instance only
            _log.warning("gemini.signature_missing", vendor=VENDOR,
                         model=self.model_name, error=str(exc)[:200])
        async for chunk in self._stream(messages, tools, options):
            yield chunk

    async def _stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """``stream``, asking again without token log-probabilities when they are refused."""
        if not (options.logprobs and self._profile.token_logprobs):
            async for chunk in super().stream(messages, tools, options):
                yield chunk
            return
        started = False
        try:
            async for chunk in super().stream(messages, tools, options):
                started = True
                yield chunk
            return
        except BadRequestError as exc:
            if started or not LOGPROBS_REFUSAL.search(str(exc)):
                raise
            self._profile = self._profile.with_(token_logprobs=False)  # this instance only
            _log.warning("gemini.logprobs_refused", vendor=VENDOR,
                         model=self.model_name, error=str(exc)[:200])
        async for chunk in super().stream(messages, tools, options):
            yield chunk

    def batch_request(
        self,
        custom_id: str,
        messages: Sequence[Msg],
        tools: Sequence[ToolSpec],
        options: GenerateOptions,
    ) -> BatchRequest:
        """As ``WholeReplyBatches.batch_request``, never asking for token
        log-probabilities: a model that refuses them would fail every item of
        the batch, which cannot be sent again item by item as a live request is
        (``stream``).

        Raises:
            UsageError / UnsupportedFeatureError: as ``build_request``.
        """
        return super().batch_request(custom_id, messages, tools, options.with_(logprobs=None))

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
                                 sign_foreign=self._sign_foreign)
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
        if options.logprobs and self.profile.token_logprobs:
            # each reply token's log-probability, in candidates[].logprobsResult
            config["responseLogprobs"] = True
            config["logprobs"] = LOGPROB_ALTERNATIVES
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
        reader = ReplyReader()
        async for event in iter_sse(response, bare_json=True):
            if event.data:
                for chunk in guard.fold(reader.feed, guard.load(event.data)):
                    yield chunk
        for chunk in guard.fold(lambda _: reader.end(), None):
            yield chunk
        guard.end()

    def parse_reply(self, data: Any) -> Iterable[ModelChunk]:
        """Chunks of a whole ``GenerateContentResponse``."""
        reader = ReplyReader()
        yield from reader.feed(data)
        yield from reader.end(cut_if_unfinished=False)


def create(model_name: str, **kwargs: Any) -> GeminiChatModel:
    """Registry factory: ``GeminiChatModel(model_name, **kwargs)``."""
    return GeminiChatModel(model_name, **kwargs)
