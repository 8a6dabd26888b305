"""OpenAI chat completions.

``OpenAIChatModel("gpt-4o-mini")`` talks to OpenAI; with a ``base_url`` on
another host it is the generic adapter for any OpenAI-compatible server
(llama.cpp server, vLLM, LM Studio). The machinery lives in
``_openai_compat`` (``OpenAICompatibleModel``) and the wire format in
``_openai_wire`` (replies: ``_openai_chunks``); both are reused by the DeepSeek,
DashScope, GLM and MiniMax adapters and the embedded llama.cpp model.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any, ClassVar
from urllib.parse import urlsplit

from agentflow.batch_api.protocol import BatchRequest
from agentflow.media.tokens import MediaTokens, TiledImages
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelChunk, ModelProfile, ToolChoiceMode, ToolSpec
from agentflow.providers._http import RateHeaders, api_key_from, own_host, parse_retry_after
from agentflow.providers._http_settings import checked_base_url
from agentflow.providers._markup import filter_for
from agentflow.providers._openai_batch import OpenAIBatchAPI
from agentflow.providers._openai_compat import (
    GENERIC_PROFILE,
    OpenAICompatibleModel,
    openai_error,
    payload_error,
    unsupported_feature,
)
from agentflow.providers._payload import ReplyGuard
from agentflow.providers._profiles import ProfileRule, match_profile
from agentflow.ratelimit import RateLimitSnapshot, parse_count, parse_duration
from agentflow.usage import estimate_tokens

__all__ = [
    "DEFAULT_PROFILE",
    "GENERIC_PROFILE",
    "OPENAI_DEFAULT",
    "PROFILES",
    "OpenAIChatModel",
    "OpenAICompatibleModel",
    "azure_deployment_route",
    "create",
    "lowest_reasoning_effort",
    "openai_error",
    "payload_error",
    "rate_limit_headers",
    "unsupported_feature",
]

# ----------------------------------------------------------------------------- profiles

_ALL_MODES: frozenset[ToolChoiceMode] = frozenset({"auto", "none", "required", "specific"})
OPENAI_DEFAULT = ModelProfile(
    tool_choice_modes=_ALL_MODES, native_output="json_schema", schema_dialect="openai_strict",
    parallel_tool_calls_flag=True, token_logprobs=True,
    input_modalities=frozenset({"text", "image", "pdf"}),
    url_input_modalities=frozenset({"image"}),
    image_media_types=frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"}),
    max_document_bytes=32_000_000,
    max_inline_bytes=50_000_000,
    max_document_pages=100,
    media_tokens=MediaTokens(TiledImages()),
)
"""Current OpenAI models: json_schema output with tools, strict schemas, every
tool_choice; images (PNG, JPEG, WEBP, non-animated GIF; https or data URLs,
"up to 50 MB total payload size per request":
platform.openai.com/docs/guides/images-vision) and PDFs (inline file data,
"up to 100 pages and 32MB of total content in a single request": "models that
support both text and image inputs ... can accept PDF files":
platform.openai.com/docs/guides/pdf-files). Image tokens: scaled to fit 2048 x 2048,
then the shortest side to 768, "85 base tokens" plus "170 tokens" per 512 px tile
(platform.openai.com/docs/guides/images-vision#calculating-costs, GPT-4o / GPT-4.1);
PDF pages (text plus an image of each page, no published figure) count the
conservative default. Token log-probabilities (``logprobs``, ``top_logprobs``:
platform.openai.com/docs/api-reference/chat/create) on every non-reasoning model."""
_TEXT_ONLY = {"input_modalities": {"text"}, "url_input_modalities": ()}
"""Models without image (hence PDF) input (their model pages list text input only)."""
_REASONING = OPENAI_DEFAULT.with_(supports_thinking=True, thinking_default=True,
                                  parallel_tool_calls_flag=False, token_logprobs=False)
"""Reasoning models refuse ``logprobs`` (the request fails), so none is asked."""
_LEGACY = OPENAI_DEFAULT.with_(native_output=None)

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("o1-mini*", _REASONING.with_(supports_tools=False, native_output=None,
                                             context_window=128_000, max_output_tokens=65_536,
                                             **_TEXT_ONLY),
                "no tools, no response_format, no images"),
    ProfileRule("o1-preview*", _REASONING.with_(supports_tools=False, native_output=None,
                                                context_window=128_000, max_output_tokens=32_768,
                                                **_TEXT_ONLY),
                "no tools, no response_format, no images"),
    ProfileRule("o3-mini*", _REASONING.with_(context_window=200_000, max_output_tokens=100_000,
                                             **_TEXT_ONLY),
                "reasoning; text input only"),
    ProfileRule("gpt-4o-2024-05-13", _LEGACY.with_(context_window=128_000, max_output_tokens=4_096),
                "json_schema came with gpt-4o-2024-08-06"),
    ProfileRule("o[1-9]*", _REASONING.with_(context_window=200_000, max_output_tokens=100_000),
                "reasoning; no parallel_tool_calls flag"),
    ProfileRule("codex-mini*", _REASONING.with_(context_window=200_000, max_output_tokens=100_000,
                                                **_TEXT_ONLY),
                "o4-mini based reasoning model (text in the Chat Completions API)"),
    ProfileRule("gpt-5*chat*", OPENAI_DEFAULT.with_(context_window=128_000,
                                                    max_output_tokens=16_384),
                "the ChatGPT snapshot: not a reasoning model"),
    ProfileRule("gpt-5*", _REASONING.with_(parallel_tool_calls_flag=True, context_window=400_000,
                                           max_output_tokens=128_000), "reasoning"),
    ProfileRule("gpt-[6-9]*", _REASONING.with_(parallel_tool_calls_flag=True,
                                               context_window=400_000, max_output_tokens=128_000),
                "reasoning (GPT-6 families, openai SDK ChatModel literal)"),
    ProfileRule("chatgpt-4o*", _LEGACY.with_(supports_tools=False, context_window=128_000,
                                             max_output_tokens=16_384),
                "the ChatGPT snapshot: no function calling"),
    ProfileRule("gpt-4o*search*", OPENAI_DEFAULT.with_(supports_tools=False,
                                                       context_window=128_000,
                                                       max_output_tokens=16_384, **_TEXT_ONLY),
                "web-search models: no function tools"),
    ProfileRule("gpt-audio*", OPENAI_DEFAULT.with_(context_window=128_000,
                                                   max_output_tokens=16_384, **_TEXT_ONLY),
                "audio in/out (no images); chat features as gpt-4o"),
    ProfileRule("gpt-4o*", OPENAI_DEFAULT.with_(context_window=128_000, max_output_tokens=16_384)),
    ProfileRule("gpt-4.1*", OPENAI_DEFAULT.with_(
        context_window=1_047_576, max_output_tokens=32_768)),
    ProfileRule("gpt-4.5*", OPENAI_DEFAULT.with_(context_window=128_000, max_output_tokens=16_384)),
    ProfileRule("gpt-4-turbo*", _LEGACY.with_(context_window=128_000, max_output_tokens=4_096),
                "no json_schema response_format: tool path"),
    ProfileRule("gpt-4*", _LEGACY.with_(context_window=8_192, max_output_tokens=8_192,
                                        **_TEXT_ONLY),
                "no json_schema response_format: tool path; text only"),
    ProfileRule("gpt-3.5*", _LEGACY.with_(context_window=16_385, max_output_tokens=4_096,
                                          **_TEXT_ONLY),
                "no json_schema response_format: tool path; text only"),
)
DEFAULT_PROFILE = OPENAI_DEFAULT
"""The profile of OpenAI model names no pattern matches (window unknown).

Context windows and output caps (tokens) per row are the model pages of
platform.openai.com/docs/models (gpt-4o: 128,000 / 16,384; gpt-4.1:
1,047,576 / 32,768; gpt-5: 400,000 / 128,000; o1/o3/o4-mini: 200,000 /
100,000; gpt-4: 8,192 / 8,192; gpt-3.5-turbo: 16,385 / 4,096)."""


API_KEY_VARIABLES = ("OPENAI_API_KEY",)
"""Environment variables the API key is read from, in order (``agentflow models`` lists them)."""


_RATE_HEADER_NAMES = (
    *(f"x-ratelimit-{kind}-{dim}" for kind in ("limit", "remaining", "reset")
      for dim in ("requests", "tokens")),
    "retry-after-ms", "Retry-After-Ms", "retry-after", "Retry-After",
)
_RATE_HEADER_KEYS = frozenset(name.lower() for name in _RATE_HEADER_NAMES)
"""The names above as a reply's header names, lower-cased, are compared."""


def rate_limit_headers(headers: Mapping[str, str]) -> RateLimitSnapshot | None:
    """OpenAI's rate-limit headers (platform.openai.com/docs/guides/rate-limits,
    "Rate limits in headers"; shared/providers.md §1): ``x-ratelimit-limit-requests``,
    ``x-ratelimit-remaining-requests``, ``x-ratelimit-reset-requests`` (a duration:
    ``1s``, ``6m0s``, ``12ms``), the same three for ``-tokens``, and ``retry-after-ms``
    / ``retry-after`` on 429. ``None`` when none is present (compatible servers
    that send none). OpenAI-compatible servers (vLLM, OpenRouter, Groq) use the same names.
    """
    if _RATE_HEADER_KEYS.isdisjoint(map(str.lower, headers)):  # one pass over what came
        return None  # most compatible servers send none: no snapshot to build

    def get(kind: str, dim: str) -> float | None:
        value = headers.get(f"x-ratelimit-{kind}-{dim}")
        return parse_duration(value) if kind == "reset" else parse_count(value)

    snap = RateLimitSnapshot(
        requests_limit=get("limit", "requests"), requests_remaining=get("remaining", "requests"),
        requests_reset=get("reset", "requests"), tokens_limit=get("limit", "tokens"),
        tokens_remaining=get("remaining", "tokens"), tokens_reset=get("reset", "tokens"),
        retry_after=parse_retry_after(headers),
    )
    return None if snap == RateLimitSnapshot() else snap


_AZURE_DEPLOYMENT = re.compile(r"/openai/deployments/[^/]+", re.I)


def azure_deployment_route(base_url: str) -> bool:
    """Whether ``base_url`` is an Azure OpenAI deployment route
    (``https://<resource>.openai.azure.com/openai/deployments/<name>``, on
    any host: an API gateway in front of one keeps the path)."""
    return _AZURE_DEPLOYMENT.search(urlsplit(base_url).path) is not None


class OpenAIChatModel(OpenAICompatibleModel):
    """OpenAI chat completions (``OPENAI_API_KEY``); with a ``base_url`` on
    another host, the generic OpenAI-compatible adapter (profile
    ``GENERIC_PROFILE`` unless the model name is an OpenAI one, ``max_tokens``
    instead of ``max_completion_tokens``).

    Args (besides ``OpenAICompatibleModel``'s):
        organization / project: ``OpenAI-Organization`` / ``OpenAI-Project``
            headers; on OpenAI's own host they default to ``$OPENAI_ORG_ID`` /
            ``$OPENAI_PROJECT_ID``, as the openai SDK's do (``OpenAI.__init__``:
            "``organization`` from ``OPENAI_ORG_ID``, ``project`` from
            ``OPENAI_PROJECT_ID``"): without them a key of several
            organizations or projects was billed to its default one. Never
            sent to another host unasked (they name the account).
        max_tokens_field: the body field for ``options.max_tokens``.
    """

    vendor: ClassVar[str] = "openai"
    env_var: ClassVar[str | None] = "OPENAI_API_KEY"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    own_stream_deltas: ClassVar[bool | None] = False
    """Each chunk's ``choices[].delta`` is new text (platform.openai.com API
    reference, "The chat completion chunk object": "A chat completion delta
    generated by streamed model responses"; shared/providers.md section 1)."""
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = OPENAI_DEFAULT
    rate_headers: ClassVar[RateHeaders | None] = rate_limit_headers
    moderation_codes: ClassVar[frozenset[str]] = frozenset({"content_filter", "invalid_prompt"})
    """The moderation refusals of a request: Azure OpenAI's 400 ``content_filter``
    ("The response was filtered due to the prompt triggering Azure OpenAI's content
    management policy", ``innererror.code`` ``ResponsibleAIPolicyViolation``;
    openai/openai-python#331, vibrantlabsai/ragas#649) and OpenAI's
    ``invalid_prompt`` ("Invalid prompt: your prompt was flagged as potentially
    violating our usage policy"; alan-turing-institute/t0-1#69). A
    ``ModeratedRequestError``, so ``except ContentFilteredError`` catches them."""

    def __init__(
        self,
        model: str,
        *,
        organization: str | None = None,
        project: str | None = None,
        max_tokens_field: str | None = None,
        **kwargs: Any,
    ) -> None:
        headers = dict(kwargs.pop("headers", None) or {})
        url = checked_base_url(self.vendor, kwargs.get("base_url") or self.default_base_url)
        kwargs["base_url"] = url  # a BaseUrl: not checked again
        if own_host(url, self.default_base_url):
            organization = organization or api_key_from(None, "OPENAI_ORG_ID")
            project = project or api_key_from(None, "OPENAI_PROJECT_ID")
        if organization:
            headers["OpenAI-Organization"] = organization
        if project:
            headers["OpenAI-Project"] = project
        super().__init__(model, headers=headers, **kwargs)
        self.max_tokens_field = max_tokens_field or (
            "max_completion_tokens" if self.own_host else "max_tokens")

    def key_headers(self, key: str, base_url: str) -> dict[str, str]:
        """``api-key: <key>`` on an Azure OpenAI deployment route
        (``.../openai/deployments/<name>``, ``azure_deployment_route``), as the
        official ``AzureOpenAI`` client sends a key (openai-python
        ``lib/azure.py``: ``_auth_headers`` / ``_prepare_options``); that
        route takes ``Authorization: Bearer`` for Entra ID tokens only, and
        answers a key sent so with 401 "Access denied due to invalid
        subscription key". ``Authorization: Bearer`` anywhere else (Azure's
        ``/openai/v1`` route takes it)."""
        if azure_deployment_route(base_url):
            return {"api-key": key}
        return super().key_headers(key, base_url)

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """``thinking=False`` on a reasoning model: the lowest ``reasoning_effort``
        it takes (``none`` from GPT-5.1 on, ``minimal`` on GPT-5; the o-series
        cannot stop reasoning, so nothing is sent). Values from the SDK's
        ``ReasoningEffort`` literal and platform.openai.com/docs/guides/reasoning."""
        if options.thinking is not False or not self.profile.supports_thinking:
            return
        effort = lowest_reasoning_effort(self.model_name)
        if effort is not None:
            body["reasoning_effort"] = effort

    async def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by OpenAI's tokenizer, ``tiktoken`` (the ``tokens``
        extra), when it knows the model name and its data loads; else the
        conservative ``agentflow.usage.estimate_tokens``.

        Raises:
            ModelClosedError: the model was closed (``aclose()``), as every
                other use of a closed model does.
        """
        self._http.check_open()
        encoding = _encoding(self.model_name)
        if encoding is None:
            return estimate_tokens(text)
        return len(encoding.encode(text, disallowed_special=()))

    def lookup_profile(self, model: str) -> ModelProfile:
        """OpenAI's table; an unknown model on another host gets ``GENERIC_PROFILE``."""
        default = OPENAI_DEFAULT if self.own_host else GENERIC_PROFILE
        return match_profile(self.profile_rules, model, default)

    # -- the Batch API (agentflow.batch_api.BatchCapable) -----------------------
    def batch_api(self) -> OpenAIBatchAPI:
        """OpenAI's Batch API (``_openai_batch``) on this model's base URL and
        key, outside the live rate governor (batch requests have their own queue)."""
        return OpenAIBatchAPI(self._http.sibling())

    def batch_request(
        self, custom_id: str, messages: Sequence[Msg], tools: Sequence[ToolSpec],
        options: GenerateOptions,
    ) -> BatchRequest:
        """The body ``stream()`` would send, without streaming, as a batch item
        for ``/chat/completions``.

        Raises:
            UnsupportedFeatureError: as ``build_body``.
        """
        body = self.build_body(messages, tools, options)
        body.pop("stream", None)
        body.pop("stream_options", None)
        return BatchRequest(custom_id, self.chat_path, body)

    def parse_batch_reply(self, reply: Any, tools: Sequence[ToolSpec] = ()
                          ) -> Iterable[ModelChunk]:
        """The chunks of one batch reply (a whole ``chat.completion``), read as
        ``stream()`` reads a whole reply to the same request: in-band tool-call
        markup in its text is read against ``tools`` (the request's), so
        string-only formats' values are typed from their schemas.

        Raises:
            ProviderError: a malformed reply or one carrying an error.
        """
        return list(self.whole_chunks(ReplyGuard(self.vendor, stream=False), reply,
                                      filter_for(self._markups, tools)))


_NO_REASONING: tuple[tuple[str, str], ...] = (
    ("gpt-5-*", "minimal"), ("gpt-5", "minimal"), ("gpt-5.*", "none"), ("gpt-[6-9]*", "none"),
)


def lowest_reasoning_effort(model: str) -> str | None:
    """The ``reasoning_effort`` that turns reasoning off (or lowest) for
    ``model``, or ``None`` where there is none to send (o-series, non-reasoning
    models). ``gpt-5-chat*`` are not reasoning models and never get here."""
    name = model.lower().rsplit("/", 1)[-1]
    for pattern, effort in _NO_REASONING:
        if fnmatchcase(name, pattern):
            return effort
    return None


@functools.cache
def _encoding(model: str) -> Any:
    """tiktoken's encoding for an OpenAI model name, or ``None`` (tiktoken not
    installed, a name it does not know, or its data file cannot be loaded)."""
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        return tiktoken.encoding_for_model(model)
    except Exception:  # unknown model name (KeyError), or the BPE file is not cached (offline)
        return None


def create(model_name: str, **kwargs: Any) -> OpenAIChatModel:
    """Registry factory: ``OpenAIChatModel(model_name, **kwargs)``."""
    return OpenAIChatModel(model_name, **kwargs)
