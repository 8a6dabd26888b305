"""The machinery every OpenAI-style adapter shares: ``OpenAICompatibleModel``
(its set-up and identity; sending a request, again after a refusal a remedy
fixes, is in ``_openai_sending``, the request-building hooks in
``_openai_request``, the reply-reading hooks, whole and streamed replies, and
the error hooks in ``_openai_reply``).
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

from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal, Self

from agentflow._secrets import redact_urls
from agentflow.errors import (
    InvalidModelError,
)
from agentflow.model import ModelProfile
from agentflow.providers._gemini_reply import validates_signatures
from agentflow.providers._gemini_request import FOREIGN_SIGNATURE
from agentflow.providers._http import (
    HttpClient,
    HttpSettings,
    RateHeaders,
    api_key_from,
    own_host,
    shared_governor,
)
from agentflow.providers._http_settings import checked_base_url
from agentflow.providers._markup import (
    AnyMarkup,
    markups_for_model,
    resolve_markups,
)
from agentflow.providers._media import ImageUrlStyle
from agentflow.providers._openai_chunks import ChunkParser
from agentflow.providers._openai_errors import (
    openai_error,
    payload_error,
    unsupported_feature,
)
from agentflow.providers._openai_remedies import (
    OPTIONAL_FIELDS,
    refused_optional_fields,
)
from agentflow.providers._openai_request import (
    FORCE_NAMED_TOOL,
    WireFormat,
)
from agentflow.providers._openai_sending import OpenAISending
from agentflow.providers._openai_wire import ReasoningHistory
from agentflow.providers._profiles import ProfileRule, match_profile
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


class OpenAICompatibleModel(OpenAISending):
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
    own_stream_deltas: ClassVar[bool | None] = None
    """How the vendor's own hosts stream a reply's text, as its docs say
    (``ModelProfile.cumulative_stream_deltas``): put in the looked-up profile
    of a model at one of them; elsewhere (a proxy, a server of another kind
    under this adapter) it stays unknown unless the profile says."""
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
        if not (base_url or self.default_base_url).rstrip("/"):
            raise InvalidModelError(f"{self.vendor}: base_url is required")
        url = checked_base_url(self.vendor, base_url or self.default_base_url)  # before any use
        self.own_host = own_host(url, self.default_base_url, *self.own_hosts)
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
            all_headers.update(self.key_headers(key, url))
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
            if (self.own_host and self.own_stream_deltas is not None
                    and profile.cumulative_stream_deltas is None):
                profile = profile.with_(cumulative_stream_deltas=self.own_stream_deltas)
        self._profile = profile
        self._parser_type = think_tag_parser(self.parser_class, profile.inline_thinking)
        if tool_markups is None:
            tool_markups = (*self.default_markups,
                            *(() if self.own_host else markups_for_model(model)))
        self._markups = resolve_markups(tool_markups)

    # -- identity -------------------------------------------------------------
    def key_headers(self, key: str, base_url: str) -> dict[str, str]:
        """The headers carrying the API ``key`` to ``base_url`` (default:
        ``Authorization: Bearer``). Each is a credential header
        (``CREDENTIAL_HEADERS``): never in a repr, an error or a log."""
        return {"authorization": f"Bearer {key}"}

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
