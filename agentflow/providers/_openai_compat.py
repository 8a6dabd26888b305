"""The machinery every OpenAI-style adapter shares: ``OpenAICompatibleModel``
(sending; the request-building hooks are in ``_openai_request``, the
reply-reading hooks, whole and streamed replies, and the error hooks in
``_openai_reply``).
The error classification that makes a vendor's "feature unsupported" 400 an
``UnsupportedFeatureError`` lives in ``_openai_errors`` (re-exported here).

A vendor module (openai, deepseek, dashscope, glm, minimax) subclasses
``OpenAICompatibleModel`` and overrides small hooks (``apply_tools``,
``apply_response_format``, ``apply_thinking``, ``map_error``,
``payload_error``, ``parser_class``...), so its quirks live in its own module.

Every reply payload is read under a ``ReplyGuard``: a payload of the wrong
shape is a typed error, never a raw ``KeyError``/``TypeError``, and a reply
with neither content nor a finish reason is not taken for an answer.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar, Literal, Self
from urllib.parse import urlsplit

from agentflow._secrets import redact_urls
from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    InvalidModelError,
)
from agentflow.media.tokens import request_media_cost
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ModelProfile, ToolSpec
from agentflow.providers._context_cuts import cut_error, prompt_estimate, silent_cut
from agentflow.providers._gemini_reply import validates_signatures
from agentflow.providers._gemini_request import FOREIGN_SIGNATURE
from agentflow.providers._http import (
    HttpClient,
    HttpSettings,
    RateHeaders,
    api_key_from,
    shared_governor,
)
from agentflow.providers._http_errors import STREAM_TYPES
from agentflow.providers._markup import (
    AnyMarkup,
    filter_for,
    markups_for_model,
    resolve_markups,
)
from agentflow.providers._media import ImageUrlStyle
from agentflow.providers._openai_chunks import ChunkParser
from agentflow.providers._openai_errors import (
    failed_output,
    openai_error,
    payload_error,
    unsupported_feature,
)
from agentflow.providers._openai_remedies import (
    MAX_REMEDIES,
    OPTIONAL_FIELDS,
    apply_remedy,
    refused_optional_fields,
    remedy_for,
)
from agentflow.providers._openai_reply import OpenAIReplyHooks, failed_generation
from agentflow.providers._openai_request import (
    FORCE_NAMED_TOOL,
    OpenAIRequestHooks,
    WireFormat,
)
from agentflow.providers._openai_wire import ReasoningHistory
from agentflow.providers._payload import NOT_PARSED, ReplyGuard
from agentflow.providers._profiles import ProfileRule, match_profile
from agentflow.providers._streams import BufferedBody, ndjson_body, sse_body, sse_response
from agentflow.providers._think_tags import inline_thinking_for_model, think_tag_parser
from agentflow.ratelimit import model_family

__all__ = [
    "FORCE_NAMED_TOOL",
    "GENERIC_PROFILE",
    "OPTIONAL_FIELDS",
    "OpenAICompatibleModel",
    "openai_error",
    "payload_error",
    "refused_optional_fields",
    "unsupported_feature",
]


GENERIC_PROFILE = ModelProfile(
    tool_choice_modes=frozenset({"auto", "none", "required"}), native_output="json_schema",
    schema_dialect="plain", native_schema_in_prompt=True,
)
"""An unknown model behind an OpenAI-compatible server: llama.cpp, vLLM and LM
Studio take ``response_format`` json_schema and auto/none/required, but not all
take a named ``tool_choice``; override with ``profile=`` (vLLM does). Their
json_schema is a grammar over sampling only (llama.cpp's server README,
vLLM's structured outputs docs): the schema also goes in a system instruction
(``native_schema_in_prompt``)."""

# ----------------------------------------------------------------------------- models


class OpenAICompatibleModel(OpenAIRequestHooks, OpenAIReplyHooks):
    """A ``ChatModel`` over ``POST {base_url}/chat/completions``.

    Args:
        model: the vendor's model id.
        api_key: the key; default: the vendor's environment variable, read
            only when ``base_url`` is on the vendor's own host (a key is never
            sent to a third-party host unless passed explicitly).
        base_url: API root (default: the vendor's).
        profile: overrides the profile looked up from the model name (and the
            name rules' ``inline_thinking``; ``profile.inline_thinking`` says
            whether reply text carries ``<think>`` reasoning to split out).
        settings: timeouts, retries, connection limit.
        stream: stream replies (SSE) or ask for whole replies; a request's
            ``GenerateOptions.stream`` overrides it (``streams``).
        headers: extra request headers.
        late_system: ``"user"`` sends system messages after the first turn as
            user messages (for servers whose chat template refuses them).
        tool_markups: in-band tool-call formats to read out of reply text
            (names registered in ``_markup`` such as ``"minimax"``, ``"hermes"``,
            ``"qwen-xml"``, ``"deepseek"``, ``"glm"``, or ``ToolMarkup``/``ReplyMarkup``s);
            default: the vendor's own (``default_markups``), plus, on a host
            that is not the vendor's, those ``MODEL_MARKUPS`` gives the model
            name; ``()`` turns them off.

    ``stream()`` raises ``ProviderError`` subclasses: ``AuthenticationError``
    without a key for the vendor's host, the mapped HTTP errors after retries,
    a typed error for a mid-stream ``{"error": ...}`` line or ``event: error``,
    ``TruncatedStreamError`` (``partial=True``) for a stream cut before its
    ``finish_reason`` (one that ends cleanly after it, without ``[DONE]``, is
    whole, as the openai SDK reads it: servers such as ik_llama.cpp and
    text-generation-webui never send ``[DONE]``), ``ProviderConnectionError``
    (``partial=True``) for a malformed stream event, ``ServerError`` for a malformed whole reply,
    and either of the last two for a reply with neither content nor a finish
    reason (``[DONE]`` alone, ``{}``).
    """

    vendor: ClassVar[str] = "openai-compatible"
    env_var: ClassVar[str | None] = None
    env_aliases: ClassVar[tuple[str, ...]] = ()
    default_base_url: ClassVar[str] = ""
    own_hosts: ClassVar[tuple[str, ...]] = ()
    chat_path: ClassVar[str] = "chat/completions"
    profile_rules: ClassVar[Sequence[ProfileRule]] = ()
    default_profile: ClassVar[ModelProfile] = GENERIC_PROFILE
    max_tokens_field: str = "max_tokens"
    send_strict: bool = True
    nine_char_call_ids: bool = False
    """Send tool-call ids as nine letters and digits (Mistral's rule); set on
    an instance whose server refused the history's ids so (``call_ids_refused``)."""
    alternate_roles: bool = False
    """Send the conversation in strict turns (``providers._alternating``); set on
    an instance whose server's chat template refused it otherwise (``roles_refused``)."""
    string_content: bool = False
    """Send ``content: ""`` rather than ``null`` on an assistant turn of tool
    calls alone; set on an instance whose server refused null (``content_refused``)."""
    system_role: bool = True
    """With ``alternate_roles``, whether a leading system message may stay one
    (cleared where the server takes no system message at all)."""
    reasoning_required: bool = False
    """Send each tool-call turn's thinking back as a never-empty
    ``reasoning_content`` (``ReasoningHistory`` ``required``); set on an
    instance whose server refused a history without it (``reasoning_refused``)."""
    _dropped_fields: frozenset[str] = frozenset()
    """``OPTIONAL_FIELDS`` this model's server refused (set per instance on a refusal)."""
    _remedied: int = 0
    """How many times a remedy changed how this instance sends (``apply_remedy``):
    a request built before the latest change is sent again the new way."""
    _last_format: WireFormat | None = None
    """The last json_schema ``response_format`` sent, its wire form and that
    form as JSON (``WireFormat``; set per instance)."""
    foreign_signature: str | None = None
    """The ``thought_signature`` sent on a history's unsigned tool calls
    (``format_messages``): Google's stand-in, for Gemini 3 and later models
    on another host than the vendor's own (Gemini's OpenAI-compatible
    endpoints, gateways in front of them); set per instance."""
    send_stream_options: ClassVar[bool] = True
    reasoning_history: ClassVar[ReasoningHistory] = "drop"
    image_urls: ClassVar[ImageUrlStyle] = "data_url"
    """How inline image bytes go in ``image_url.url`` (``providers._media``)."""
    parser_class: ClassVar[type[ChunkParser]] = ChunkParser
    default_markups: ClassVar[tuple[str, ...]] = ()
    rate_headers: ClassVar[RateHeaders | None] = None
    """The vendor's rate-limit header reader (``None``: only 429s teach the governor)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        profile: ModelProfile | None = None,
        settings: HttpSettings | None = None,
        stream: bool = True,
        headers: Mapping[str, str] | None = None,
        late_system: Literal["system", "user"] = "system",
        tool_markups: Sequence[str | AnyMarkup] | None = None,
    ) -> None:
        if not model or not isinstance(model, str):
            raise InvalidModelError(f"{self.vendor}: the model name must be a non-empty string")
        url = (base_url or self.default_base_url).rstrip("/")
        if not url:
            raise InvalidModelError(f"{self.vendor}: base_url is required")
        hosts = {urlsplit(self.default_base_url).netloc, *self.own_hosts} - {""}
        self.own_host = urlsplit(url).netloc in hosts
        key = api_key_from(api_key, "")
        if not key and self.own_host:
            for var in (self.env_var, *self.env_aliases):
                key = api_key_from(None, var) if var else None
                if key:
                    break
        self._model = model
        if not self.own_host and validates_signatures(model):
            self.foreign_signature = FOREIGN_SIGNATURE
        self._stream = stream
        self._late_system: Literal["system", "user"] = late_system
        self._key_missing = not key and self.own_host
        all_headers = dict(headers or {})
        if key:
            all_headers["authorization"] = f"Bearer {key}"
        self._http = HttpClient(url, headers=all_headers, vendor=self.vendor,
                                error_mapper=self._map_error, settings=settings,
                                body_error=self.ok_body_error,
                                governor=shared_governor(self.vendor, url, key,
                                                         self.rate_family(model), settings),
                                rate_headers=type(self).rate_headers, model=model)
        if profile is None:
            profile = self.lookup_profile(model)
            if profile.inline_thinking is None and not self.own_host:
                inline = inline_thinking_for_model(model)  # a reasoning model, no parser
                if inline is not None:
                    profile = profile.with_(inline_thinking=inline)
        self._profile = profile
        self._parser_type = think_tag_parser(self.parser_class, profile.inline_thinking)
        if tool_markups is None:
            tool_markups = (*self.default_markups,
                            *(() if self.own_host else markups_for_model(model)))
        self._markups = resolve_markups(tool_markups)

    # -- identity -------------------------------------------------------------
    def rate_family(self, model: str) -> str:
        """The model family sharing one rate limit (default: the name without a date suffix)."""
        return model_family(model)

    def lookup_profile(self, model: str) -> ModelProfile:
        """The profile of ``model`` from this vendor's table."""
        return match_profile(self.profile_rules, model, self.default_profile)

    @property
    def profile(self) -> ModelProfile:
        """What this model can do (see ``ModelProfile``)."""
        return self._profile

    @property
    def model_name(self) -> str:
        """The vendor's model id."""
        return self._model

    @property
    def base_url(self) -> str:
        """The URL requests go to (as given: it may hold a query key, so
        show it through ``agentflow._secrets.redact_urls``)."""
        return self._http.base_url

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(model={self._model!r}, "
                f"base_url={redact_urls(self._http.base_url)!r})")

    async def aclose(self) -> None:
        """Close the HTTP session (idempotent)."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- the request ----------------------------------------------------------
    def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Send one request and yield its chunks (see the class docstring for errors).

        A strict tool the vendor refuses ("Invalid schema for function 'x': ...",
        code ``invalid_function_parameters``: a schema our strict transform kept
        but the vendor's limits refuse — nesting depth, a ``pattern`` it cannot
        compile) is sent again once without ``strict``, and this model sends no
        ``strict`` from then on (C13 kind: never a 400 for a schema that can go
        non-strict). Nothing was yielded before such a refusal.

        A self-hosted server's constrained-decoding engine refusing a schema
        (llama.cpp, vLLM: ``engine_refused``) is about the part of this request
        that carried one (``schema_carrier``): strict tools are sent again
        without ``strict`` as above; otherwise the ``UnsupportedFeatureError``
        names the response format, the forced ``tool_choice`` or the tools, so
        the engine drops that one (Native -> Tool -> Prompt, forcing by reminder).

        An optional field a server refuses as unknown (``OPTIONAL_FIELDS``:
        ``stream_options``, ``parallel_tool_calls``; "Unrecognized request
        argument supplied: stream_options", "Extra inputs are not permitted")
        is sent no more by this model and the request goes again; so is a
        sampling field a reasoning model takes at its default only
        (``DEFAULT_ONLY_FIELDS``: ``temperature``), and a refused token-limit
        field is sent under its other name (``TOKEN_FIELDS``: ``max_tokens``
        / ``max_completion_tokens``, Azure OpenAI's reasoning models and older
        API versions). A refusal of a request built before a concurrent
        request of this model applied a remedy is sent again the new way
        first (the refusal may be the one remedied: two users' conversations
        that both need it both go on). At most ``MAX_REMEDIES`` such resends
        per request.

        One async generator per request (``_send``): nothing is built or sent
        before the first iteration.
        """
        return self._send(messages, tools, options)

    def request_deadline(self, body: Mapping[str, Any]) -> float | Literal["settings"] | None:
        """Seconds the request ``body`` may take, all of it (``HttpClient.open``'s
        ``deadline``): ``"settings"``, the model's ``HttpSettings.deadline``.
        A model whose replies take as long as their token budget says
        (the embedded model: ``agentflow.providers.local``) overrides it."""
        return "settings"

    async def _send(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Build the body, send it (again after a remedied refusal, see
        ``stream``) and yield the reply's chunks."""
        markup = filter_for(self._markups, tools)
        media = request_media_cost(messages, self._profile.media_tokens)
        for remedies in range(MAX_REMEDIES + 1):
            remedied = self._remedied  # the way this request is built and sent
            body = self._body(messages, tools, options)
            if self._key_missing:
                raise AuthenticationError(
                    f"no API key: pass api_key=... or set {self.env_var}", vendor=self.vendor)
            streaming = body.get("stream") is True
            exchange = self._http.open(self.chat_path, body, raw=self.body_json(body),
                                       whole=not streaming, media=media,
                                       deadline=self.request_deadline(body))
            del body  # the exchange drops it once sent: not kept alive while the reply comes
            try:
                await exchange.start()
                break
            except BadRequestError as exc:
                if failed_output(exc):  # the model's output, not the request: sample again
                    yield failed_generation(self.vendor, exc)
                    return
                if self._remedied != remedied and remedies < MAX_REMEDIES:
                    continue  # a concurrent request remedied this model meanwhile: the new way
                # what the refused request carried is read only now (the same body
                # again): a request that is not refused pays nothing for it
                remedy = remedy_for(exc, self._body(messages, tools, options),
                                    remedies < MAX_REMEDIES)
                if remedy is exc:
                    raise
                if isinstance(remedy, BadRequestError):  # (the feature the refusal names)
                    raise remedy from exc
                options = apply_remedy(self, remedy, exc, options)  # or raises exc
        window = self._profile.context_window
        async with exchange as response:
            if sse_response(response) or (streaming and response.content_type in STREAM_TYPES):
                source: Any = response  # a stream, asked for or forced by a proxy
            else:  # (any other type was read whole by the transport's check: parsed)
                data = exchange.parsed  # the HTTP layer's parse of the body, when it made one
                raw = b"" if data is not NOT_PARSED else await response.read()
                if data is not NOT_PARSED or not (sse_body(raw) or ndjson_body(raw)):
                    guard = ReplyGuard(self.vendor, stream=False)
                    if data is NOT_PARSED:
                        data = guard.load(raw)
                    for chunk in self.whole_chunks(guard, data, markup):
                        if chunk.type == "usage" and window:
                            self._check_cut(messages, window, chunk.usage.input_tokens)
                        yield chunk
                    return
                # events under another content type (text/plain, application/json), or
                # chunks one a line without ``data:`` (xorbitsai/inference#523)
                source = BufferedBody(raw, response)
            async for chunk in self._read_stream(source, markup):
                if chunk.type == "usage" and window:
                    self._check_cut(messages, window, chunk.usage.input_tokens)
                yield chunk

    def _check_cut(self, messages: Sequence[Msg], window: int, evaluated: int) -> None:
        """Refuse a reply over a prompt the server cut to its ``window`` without
        saying so (a llama.cpp server with context shift: ``_context_cuts``).

        Raises:
            ContextLengthError: ``evaluated`` prompt tokens, no more than the
                window, while we sent clearly more.
        """
        if evaluated and evaluated <= window:  # our count only then: no cost per reply
            sent = prompt_estimate(messages)
            if silent_cut(sent, window, evaluated):
                raise cut_error(self.vendor, sent, window, evaluated)
