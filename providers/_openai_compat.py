"""The machinery every OpenAI-style adapter shares: ``OpenAICompatibleModel``
(request building, streaming, errors) and the error classification that
makes a vendor's "feature unsupported" 400 an ``UnsupportedFeatureError``.

A vendor module (openai, deepseek, dashscope, glm, minimax) subclasses
``OpenAICompatibleModel`` and overrides small hooks (``apply_tools``,
``apply_response_format``, ``apply_thinking``, ``map_error``,
``payload_error``, ``parser_class``...), so its quirks live in its own module.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

import orjson

from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    InvalidModelError,
    OverloadedError,
    ProviderConnectionError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    UnsupportedFeature,
    UnsupportedFeatureError,
)
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ModelProfile, ResponseFormat, ToolSpec
from agentflow.providers._http import (
    HttpClient,
    HttpSettings,
    api_key_from,
    default_error,
    error_message,
    iter_sse,
)
from agentflow.providers._openai_wire import (
    JSON_INSTRUCTION,
    SCHEMA_INSTRUCTION,
    ChunkParser,
    ReasoningHistory,
    format_messages,
    format_response_format,
    format_tool_choice,
    format_tools,
    insert_instruction,
    mentions_json,
)
from agentflow.providers._profiles import ProfileRule, match_profile

__all__ = [
    "GENERIC_PROFILE",
    "OpenAICompatibleModel",
    "openai_error",
    "payload_error",
    "unsupported_feature",
]

GENERIC_PROFILE = ModelProfile(
    tool_choice_modes=frozenset({"auto", "none", "required"}), native_output="json_schema",
    schema_dialect="plain",
)
"""An unknown model behind an OpenAI-compatible server: llama.cpp, vLLM and LM
Studio take ``response_format`` json_schema and auto/none/required, but not all
take a named ``tool_choice``; override with ``profile=`` (vLLM does)."""

# ----------------------------------------------------------------------------- errors

_REFUSAL = re.compile(
    r"not support|unsupported|unavailable|not available|not allowed|must be auto|"
    r"isn't supported|is not enabled|must be set to false", re.I)
_FEATURE_WORDS: tuple[tuple[UnsupportedFeature, re.Pattern[str]], ...] = (
    ("tool_choice", re.compile(r"tool[_ ]choice", re.I)),
    ("native_output", re.compile(r"response_format|json[_ ]schema|json output|json mode|"
                                 r"structured output", re.I)),
    ("tools", re.compile(r"function call|tool use|\btools\b|\btool\b", re.I)),
    ("thinking", re.compile(r"thinking|reasoning", re.I)),
)
_PARAM_FEATURE: dict[str, UnsupportedFeature] = {
    "tool_choice": "tool_choice", "response_format": "native_output", "tools": "tools",
}


def unsupported_feature(message: str, param: str | None = None) -> UnsupportedFeature | None:
    """Which feature a 400 refuses as unsupported, or ``None`` for any other 400.

    The message must say the thing is unsupported/unavailable/not allowed;
    the feature is then read from ``param`` (OpenAI's ``error.param``) or from
    the words of the message, tool_choice first ("Thinking mode does not
    support this tool_choice" is about tool_choice, not thinking).
    """
    if not _REFUSAL.search(message):
        return None
    if param in _PARAM_FEATURE:
        return _PARAM_FEATURE[param]
    for feature, words in _FEATURE_WORDS:
        if words.search(message):
            return feature
    return None


def _param(data: Any) -> str | None:
    err = data.get("error") if isinstance(data, dict) else None
    param = err.get("param") if isinstance(err, dict) else None
    return param if isinstance(param, str) else None


def openai_error(
    vendor: str, status: int, headers: Mapping[str, str], body: bytes
) -> ProviderError:
    """Map an OpenAI-style HTTP error: ``UnsupportedFeatureError`` for a 400/422
    that refuses a feature (``unsupported_feature``), else by status
    (``default_error``: 429 ``insufficient_quota`` -> ``QuotaExceededError``)."""
    if status in (400, 422):
        message, code, data = error_message(body)
        feature = unsupported_feature(message, _param(data))
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, status=status, code=code,
                                           vendor=vendor)
    return default_error(vendor, status, headers, body)


def payload_error(vendor: str, payload: Mapping[str, Any]) -> ProviderError | None:
    """The typed error of a payload carrying ``{"error": ...}`` (a mid-stream
    error data line, or an error inside a 200 body), else ``None``."""
    err = payload.get("error")
    if not err:
        return None
    if not isinstance(err, Mapping):
        return ServerError(str(err), vendor=vendor)
    code = err.get("code")
    if isinstance(code, int) and 400 <= code < 600:
        return openai_error(vendor, code, {}, orjson.dumps({"error": dict(err)}))
    message = str(err.get("message") or err)
    label = str(code or err.get("type") or "") or None
    kind = f"{err.get('type')} {code}".lower()
    kw: dict[str, Any] = {"code": label, "vendor": vendor}
    if "insufficient_quota" in kind:
        return QuotaExceededError(message, **kw)
    if "rate_limit" in kind:
        return RateLimitedError(message, **kw)
    if "overloaded" in kind:
        return OverloadedError(message, **kw)
    if "auth" in kind or "api_key" in kind:
        return AuthenticationError(message, **kw)
    if "invalid_request" in kind:
        feature = unsupported_feature(message, err.get("param"))
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, **kw)
        return BadRequestError(message, **kw)
    return ServerError(message, **kw)


# ----------------------------------------------------------------------------- models


class OpenAICompatibleModel:
    """A ``ChatModel`` over ``POST {base_url}/chat/completions``.

    Args:
        model: the vendor's model id.
        api_key: the key; default: the vendor's environment variable, read
            only when ``base_url`` is on the vendor's own host (a key is never
            sent to a third-party host unless passed explicitly).
        base_url: API root (default: the vendor's).
        profile: overrides the profile looked up from the model name.
        settings: timeouts, retries, connection limit.
        stream: stream replies (SSE) or ask for whole replies.
        headers: extra request headers.
        late_system: ``"user"`` sends system messages after the first turn as
            user messages (for servers whose chat template refuses them).

    ``stream()`` raises ``ProviderError`` subclasses: ``AuthenticationError``
    without a key for the vendor's host, the mapped HTTP errors after retries,
    a typed error for a mid-stream ``{"error": ...}`` line, and
    ``ProviderConnectionError(partial=True)`` for a stream cut before ``[DONE]``.
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
    send_stream_options: ClassVar[bool] = True
    reasoning_history: ClassVar[ReasoningHistory] = "drop"
    parser_class: ClassVar[type[ChunkParser]] = ChunkParser

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
    ) -> None:
        if not model or not isinstance(model, str):
            raise InvalidModelError(f"{self.vendor}: the model name must be a non-empty string")
        url = (base_url or self.default_base_url).rstrip("/")
        if not url:
            raise InvalidModelError(f"{self.vendor}: base_url is required")
        hosts = {urlsplit(self.default_base_url).netloc, *self.own_hosts} - {""}
        self.own_host = urlsplit(url).netloc in hosts
        key = api_key
        if not key and self.own_host:
            for var in (self.env_var, *self.env_aliases):
                key = api_key_from(None, var) if var else None
                if key:
                    break
        self._model = model
        self._stream = stream
        self._late_system: Literal["system", "user"] = late_system
        self._key_missing = not key and self.own_host
        self._secret = key.encode() if key else b""
        all_headers = dict(headers or {})
        if key:
            all_headers["authorization"] = f"Bearer {key}"
        overridden = type(self).ok_body_error is not OpenAICompatibleModel.ok_body_error
        self._http = HttpClient(url, headers=all_headers, vendor=self.vendor,
                                error_mapper=self._map_error, settings=settings,
                                body_error=self.ok_body_error if overridden else None)
        self._profile = profile or self.lookup_profile(model)

    # -- identity -------------------------------------------------------------
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

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self._model!r}, base_url={self._http.base_url!r})"

    async def aclose(self) -> None:
        """Close the HTTP session (idempotent)."""
        await self._http.aclose()

    async def __aenter__(self) -> OpenAICompatibleModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- request building (hooks) -------------------------------------------
    def build_body(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> dict[str, Any]:
        """The JSON request body.

        Raises:
            UnsupportedFeatureError: a ``tool_choice`` the profile says the
                vendor refuses (never sent), or a vendor hook's refusal.
        """
        wire = format_messages(messages, reasoning=self.reasoning_history,
                               late_system=self._late_system)
        body: dict[str, Any] = {"model": self._model, "messages": wire}
        if self._stream:
            body["stream"] = True
            if self.send_stream_options:
                body["stream_options"] = {"include_usage": True}
        self.apply_tools(body, tools, options)
        if options.response_format is not None:
            self.apply_response_format(body, options.response_format, options)
        self.apply_thinking(body, options)
        if options.max_tokens is not None:
            body[self.max_tokens_field] = options.max_tokens
        if options.temperature is not None:
            body["temperature"] = self.temperature(options.temperature)
        if options.extra:
            body.update(options.extra)
        return body

    def apply_tools(
        self, body: dict[str, Any], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> None:
        """Set ``tools``, ``tool_choice`` (only modes the profile allows; dropped
        without tools, which OpenAI refuses) and ``parallel_tool_calls``."""
        choice = options.tool_choice
        if not tools:
            return
        if choice is not None and not self._profile.allows_tool_choice(choice, options):
            thinking = self._profile.thinking_active(options)
            raise UnsupportedFeatureError(
                f"{self._model} does not accept tool_choice={choice.mode!r}"
                f"{' while thinking' if thinking else ''} (profile.tool_choice_modes="
                f"{sorted(self._profile.tool_choice_modes)}); it was not sent",
                feature="tool_choice", status=None, vendor=self.vendor,
            )
        body["tools"] = format_tools(tools, strict=self.send_strict)
        if choice is not None:
            body["tool_choice"] = format_tool_choice(choice)
        if options.parallel_tool_calls is not None and self._profile.parallel_tool_calls_flag:
            body["parallel_tool_calls"] = options.parallel_tool_calls

    def apply_response_format(
        self, body: dict[str, Any], rf: ResponseFormat, options: GenerateOptions
    ) -> None:
        """Set ``response_format``. json_schema is sent only when the profile
        says the model has it; otherwise JSON mode with the schema in a system
        instruction. JSON mode gets an instruction naming JSON when no message
        does (vendors refuse JSON mode without the word)."""
        if rf.type == "json_schema" and rf.schema is not None:
            if self.json_schema_ok(options):
                body["response_format"] = format_response_format(rf)
                return
            schema = orjson.dumps(dict(rf.schema)).decode()
            insert_instruction(body["messages"], SCHEMA_INSTRUCTION.format(schema=schema))
        elif not mentions_json(body["messages"]):
            insert_instruction(body["messages"], JSON_INSTRUCTION)
        body["response_format"] = {"type": "json_object"}

    def json_schema_ok(self, options: GenerateOptions) -> bool:
        """Whether ``response_format`` json_schema may be sent (the profile says so)."""
        return self._profile.native_output == "json_schema"

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """Turn reasoning on/off per ``options.thinking`` (no standard field here)."""

    def temperature(self, value: float) -> float:
        """The temperature to send (vendors with a narrower range clamp it)."""
        return value

    # -- errors (hooks) -----------------------------------------------------
    def map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
        """Map an HTTP error reply (``openai_error``)."""
        return openai_error(self.vendor, status, headers, body)

    def _map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
        if self._secret:
            body = body.replace(self._secret, b"***")
        return self.map_error(status, headers, body)

    def payload_error(self, payload: Mapping[str, Any]) -> ProviderError | None:
        """The error a 200 payload or stream event carries, if any."""
        return payload_error(self.vendor, payload)

    def ok_body_error(self, headers: Mapping[str, str], body: bytes) -> ProviderError | None:
        """Vendors reporting errors in 2xx JSON bodies override this; the HTTP
        layer then retries such errors like HTTP ones (before any byte streams)."""
        return None

    # -- the request ----------------------------------------------------------
    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> AsyncIterator[ModelChunk]:
        """Send one request and yield its chunks (see the class docstring for errors)."""
        body = self.build_body(messages, tools, options)
        if self._key_missing:
            raise AuthenticationError(
                f"no API key: pass api_key=... or set {self.env_var}", vendor=self.vendor)
        async with self._http.open(self.chat_path, body) as response:
            if not self._stream or "json" in response.content_type:
                raw = await response.read()
                try:
                    data = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    raise ServerError(f"malformed JSON reply: {raw[:200]!r}",
                                      vendor=self.vendor) from exc
                if isinstance(data, dict) and (error := self.payload_error(data)):
                    raise error
                parser = self.parser_class()
                for chunk in parser.feed(data) + parser.close():
                    yield chunk
                return
            parser = self.parser_class()
            done = received = False
            async for event in iter_sse(response):
                if event.data.strip() == "[DONE]":
                    done = True
                    continue
                try:
                    payload = orjson.loads(event.data)
                except orjson.JSONDecodeError as exc:
                    if event.event == "error":
                        raise ServerError(event.data[:500], vendor=self.vendor) from exc
                    raise ProviderConnectionError(
                        f"malformed stream event: {event.data[:200]!r}", partial=True,
                        vendor=self.vendor) from exc
                if not isinstance(payload, dict):
                    continue
                if event.event == "error" and "error" not in payload:
                    payload = {"error": payload}
                if error := self.payload_error(payload):
                    raise error
                received = True
                for chunk in parser.feed(payload):
                    yield chunk
                done = done or parser.terminal
            for chunk in parser.close():
                yield chunk
            if not done:
                raise ProviderConnectionError(
                    "the stream ended before its terminal marker ([DONE]); the reply is "
                    "incomplete", partial=received, vendor=self.vendor)
