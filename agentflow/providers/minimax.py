"""MiniMax chat completions (OpenAI-compatible endpoint), with its quirks.

Everything special about MiniMax (shared/providers.md section 8):

* **tool_choice is never sent** (undocumented on this endpoint; ignored or
  refused). The profile lists ``auto``, ``none`` and ``specific``, the last
  two emulated: ``none`` leaves the tools out; ``specific`` offers only the
  named tool with a closing system reminder (``offer_named_tool``, C21).
* **Errors arrive as HTTP 200** with ``base_resp.status_code != 0``, typed
  by ``BASE_RESP_ERRORS`` (platform.minimax.io/docs/api-reference/errorcode):
  rate limits (1002 RPM, 1039 TPM, 1041 connections, 2045 growth) ->
  ``RateLimitedError`` (retried); 1004 and 2049 (invalid API key) ->
  ``AuthenticationError``; 1008 (balance) and 2056 (a plan's usage window
  spent) -> ``QuotaExceededError``; 1026/1027 (its content moderation) ->
  ``ContentFilteredError`` (none of these retried); 2013 and 1042 ->
  ``BadRequestError``; 1001 -> ``ProviderTimeoutError``; others (1000, 1024,
  1033) -> ``ServerError``. Checked on whole replies (before any byte is
  handed on, so rate limits are retried), on every stream frame, and on HTTP
  error bodies.
* **Thinking inline:** M2.x put their reasoning in ``content`` as
  ``<think>...</think>``; it is split out as ``ThinkingDelta``, streamed and
  whole (a tag may be cut across chunks; ``_think_tags.ThinkTagParser``) and wrapped back into
  ``content`` on later turns, as MiniMax requires for tool loops.
  ``reasoning_content`` / ``reasoning_details`` are read too.
* **Stream shape:** intermediate chunks carry zero ``usage`` placeholders
  (skipped); the last frame is a whole ``chat.completion`` whose message
  repeats the streamed content: only its usage and finish reason are kept,
  and it ends the reply even without ``[DONE]``.
* **In-band tool calls:** served without a tool parser (vLLM, llama.cpp,
  some gateways), M2 models write ``<minimax:tool_call><invoke name="…">
  <parameter name="…">value</parameter></invoke></minimax:tool_call>`` into
  the text; ``MINIMAX_MARKUP`` turns it into tool calls (values typed from
  the tool's schema), streamed and whole; the name may be unquoted or in
  single quotes (``<invoke name=get_weather>``). M1 writes
  ``<tool_calls>`` around one ``{"name": …, "arguments": …}`` JSON object per
  line (``MINIMAX_M1_MARKUP``; vLLM's ``minimax`` tool parser). On by default
  here; any OpenAI-compatible adapter takes them with
  ``tool_markups=["minimax", "minimax-m1"]``.
* ``temperature`` must lie in (0, 1]: it is clamped. ``max_completion_tokens``;
  no ``response_format``, ``stream_options`` or ``strict``.

Vendor extensions sent (outside the openai SDK's request types, which MiniMax
documents for this endpoint; checked by tests/test_sdk_conformance.py):
``thinking`` (platform.minimax.io/docs/api-reference/text-openai-api; M2.x
ignore it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import orjson

from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    ContentFilteredError,
    ProviderError,
    ProviderTimeoutError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    UnsupportedFeatureError,
)
from agentflow.model import (
    GenerateOptions,
    ModelChunk,
    ModelProfile,
    ResponseFormat,
    ThinkingDelta,
    ToolSpec,
)
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import NOT_JSON
from agentflow.providers._markup import (
    MarkupCall,
    ToolMarkup,
    json_calls,
    only_matches,
    register_markup,
)
from agentflow.providers._openai_chunks import ChunkParser
from agentflow.providers._openai_compat import OpenAICompatibleModel, unsupported_feature
from agentflow.providers._openai_wire import ReasoningHistory
from agentflow.providers._profiles import ProfileRule
from agentflow.providers._think_tags import ThinkTagParser

__all__ = [
    "BASE_RESP_ERRORS",
    "DEFAULT_PROFILE",
    "MINIMAX_M1_MARKUP",
    "MINIMAX_MARKUP",
    "PROFILES",
    "MiniMaxChatModel",
    "MiniMaxParser",
    "base_resp_error",
    "create",
]

_M = ModelProfile(
    tool_choice_modes=frozenset({"auto", "none", "specific"}),
    native_output=None,
    schema_dialect="plain",
    supports_thinking=True,
    thinking_default=True,
)

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("minimax-text-01*", _M.with_(supports_thinking=False, thinking_default=False,
                                            context_window=1_000_192),
                "no reasoning; json_schema only on the native endpoint"),
    ProfileRule("minimax-m1*", _M.with_(context_window=1_000_000, max_output_tokens=80_000),
                "reasoning_content"),
    ProfileRule("minimax-m2*", _M.with_(context_window=204_800, max_output_tokens=128_000),
                "always thinks, inline <think>"),
    ProfileRule("minimax-m3*", _M, "adaptive thinking"),
)
DEFAULT_PROFILE = _M
"""The profile of model names no pattern matches (always thinks).

Windows and output caps (tokens) from platform.minimax.io/docs (models):
MiniMax-Text-01 1,000,192; MiniMax-M1 1,000,000 / 80,000; MiniMax-M2
204,800 / 128,000; M3 unknown (the conservative default).

Input: text only (``ModelProfile`` default): the text models' chat completion
API documents no image or document content parts."""


BASE_RESP_ERRORS: Mapping[int, str] = {
    1001: "timeout",
    1002: "rate", 1039: "rate", 1041: "rate", 2045: "rate",
    1004: "auth", 2049: "auth",
    1008: "quota", 2056: "quota",
    1026: "filtered", 1027: "filtered",
    1042: "bad", 2013: "bad",
}
"""MiniMax ``base_resp.status_code`` -> the kind of error it reports
(platform.minimax.io/docs/api-reference/errorcode); a code not listed is a
``ServerError`` (retried). 2049 ("invalid api key",
MiniMax-AI/MiniMax-01#37) and 2056 ("usage limit exceeded, 5-hour usage
limit reached", MiniMax-AI/MiniMax-M2.7#36) were retried as server errors."""


def base_resp_error(vendor: str, data: Any) -> ProviderError | None:
    """The error a ``base_resp`` with a non-zero ``status_code`` reports, else ``None``."""
    resp = data.get("base_resp") if isinstance(data, Mapping) else None
    if not isinstance(resp, Mapping):
        return None
    status_code = resp.get("status_code") or 0
    if not status_code:
        return None
    try:
        code = int(status_code)
    except (TypeError, ValueError):
        code = 0  # not a number: an unknown error
    message = str(resp.get("status_msg") or f"MiniMax error {code}")
    kw: dict[str, Any] = {"code": str(code), "vendor": vendor}
    kind = BASE_RESP_ERRORS.get(code, "server")
    if kind == "rate":
        return RateLimitedError(message, status=429, **kw)
    if kind == "auth":
        return AuthenticationError(message, status=401, **kw)
    if kind == "quota":
        return QuotaExceededError(message, status=402, **kw)
    if kind == "filtered":  # sensitive input / output: its moderation, never retried
        return ContentFilteredError(message, code=str(code), vendor=vendor)
    if kind == "bad":
        too_long = context_length_error(vendor, 400, message, str(code))
        if too_long is not None:
            return too_long
        feature = unsupported_feature(message)
        if feature is not None:
            return UnsupportedFeatureError(message, feature=feature, status=400, **kw)
        return BadRequestError(message, status=400, **kw)
    if kind == "timeout":
        return ProviderTimeoutError(message, **kw)
    return ServerError(message, status=500, **kw)


_NAME_ATTR = r"""name\s*=\s*(?:"([^"]+)"|'([^']+)'|([^\s"'>]+))\s*"""
_INVOKE = re.compile(rf"<invoke\s+{_NAME_ATTR}>(.*?)</invoke>", re.DOTALL)
_PARAMETER = re.compile(rf"<parameter\s+{_NAME_ATTR}>(.*?)</parameter>", re.DOTALL)


def parse_minimax_calls(body: str) -> list[MarkupCall] | None:
    """The calls of one ``<minimax:tool_call>`` block: ``<invoke name="tool">``
    elements holding ``<parameter name="key">value</parameter>`` (values are
    text, typed later from the tool's schema). ``None`` when there is none,
    or when the block holds anything but invokes, or an invoke anything but
    parameters (a parameter tag the model broke was dropped, and the call ran
    without that argument: the kind of sgl-project/sglang#39435)."""
    invokes = only_matches(_INVOKE, body)
    if not invokes:
        return None
    calls = []
    for invoke in invokes:
        q2, q1, bare, inner = invoke.groups("")
        params = only_matches(_PARAMETER, inner)
        if params is None:
            return None
        calls.append(MarkupCall((q2 or q1 or bare).strip(),
                                {(k2 or k1 or kb).strip(): v
                                 for k2, k1, kb, v in (p.groups("") for p in params)},
                                raw_values=True))
    return calls


MINIMAX_MARKUP = register_markup(ToolMarkup(
    "minimax", "<minimax:tool_call>", "</minimax:tool_call>", parse_minimax_calls))
"""MiniMax M2's in-band tool-call format (its chat template's ``<minimax:tool_call>``)."""


def parse_minimax_m1_calls(body: str) -> list[MarkupCall] | None:
    """The calls of one MiniMax-M1 ``<tool_calls>`` block: JSON objects
    ``{"name": str, "arguments": object | JSON string}``, one per line (or
    glued; ``json_calls``). ``None`` when anything else is in the block."""
    return json_calls(body)


MINIMAX_M1_MARKUP = register_markup(ToolMarkup(
    "minimax-m1", "<tool_calls>", "</tool_calls>", parse_minimax_m1_calls))
"""MiniMax-M1's in-band tool-call format (``<tool_calls>`` of JSON lines)."""


class MiniMaxParser(ThinkTagParser):
    """``ThinkTagParser`` (``<think>`` splitting, mode ``"tags"``) plus
    ``reasoning_details`` and final-frame dedup."""

    __slots__ = ("_finished", "_streamed")

    yields_to_field: ClassVar[bool] = False  # M2 writes inline <think> whatever else comes
    recovers_unclosed: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self._streamed = False
        self._finished = False

    def feed(self, payload: Mapping[str, Any]) -> list[ModelChunk]:
        """As ``ChunkParser.feed``; a whole ``chat.completion`` after streamed
        deltas contributes only its usage and finish reason, and ends the reply."""
        if payload.get("object") == "chat.completion":
            self.terminal = True
            if self._streamed:
                choices = payload.get("choices") or [{}]
                payload = {"usage": payload.get("usage"),
                           "choices": [{"finish_reason": choices[0].get("finish_reason")}]}
        out = super().feed(payload)
        if any(c.type == "finish" for c in out):
            if self._finished:
                out = [c for c in out if c.type != "finish"]
            self._finished = True
        return out

    def delta(self, delta: Mapping[str, Any], out: list[ModelChunk]) -> None:
        """Also reads ``reasoning_details`` (``reasoning_split`` mode)."""
        if any(delta.get(k) for k in ("content", "tool_calls", "reasoning_content",
                                      "reasoning_details")):
            self._streamed = True  # a final frame after this only repeats it
        for item in delta.get("reasoning_details") or ():
            if isinstance(item, Mapping) and item.get("text"):
                out.append(ThinkingDelta(str(item["text"])))
        super().delta(delta, out)


API_KEY_VARIABLES = ("MINIMAX_API_KEY",)
"""Environment variables the API key is read from, in order (``agentflow models`` lists them)."""


class MiniMaxChatModel(OpenAICompatibleModel):
    """MiniMax (``MINIMAX_API_KEY``, ``https://api.minimax.io/v1``; China:
    ``https://api.minimaxi.com/v1``). Takes ``OpenAICompatibleModel``'s arguments."""

    vendor: ClassVar[str] = "minimax"
    env_var: ClassVar[str | None] = "MINIMAX_API_KEY"
    default_base_url: ClassVar[str] = "https://api.minimax.io/v1"
    own_hosts: ClassVar[tuple[str, ...]] = ("api.minimaxi.com", "api.minimax.chat")
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = DEFAULT_PROFILE
    max_tokens_field = "max_completion_tokens"
    send_strict = False
    send_stream_options: ClassVar[bool] = False
    reasoning_history: ClassVar[ReasoningHistory] = "tags"
    parser_class: ClassVar[type[ChunkParser]] = MiniMaxParser
    default_markups: ClassVar[tuple[str, ...]] = ("minimax", "minimax-m1")

    def apply_tools(
        self, body: dict[str, Any], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> None:
        """Tools without ``tool_choice`` (checked against the profile, never
        sent); ``none`` leaves the tools out; ``specific`` offers only the named
        tool (``offer_named_tool``)."""
        choice = options.tool_choice
        if choice is not None and choice.mode == "none":
            return
        tools, options = self.offer_named_tool(body, tools, options)
        super().apply_tools(body, tools, options)
        body.pop("tool_choice", None)

    def apply_response_format(
        self, body: dict[str, Any], rf: ResponseFormat, options: GenerateOptions
    ) -> None:
        """Refused before sending: this endpoint has no ``response_format``.

        Raises:
            UnsupportedFeatureError: always (feature ``native_output``).
        """
        raise UnsupportedFeatureError(
            "MiniMax's OpenAI-compatible endpoint has no response_format; it was not sent",
            feature="native_output", status=None, vendor=self.vendor)

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """``thinking: {"type": "adaptive"|"disabled"}`` (M3; M2.x always think)."""
        if options.thinking is not None and self.profile.supports_thinking:
            body["thinking"] = {"type": "adaptive" if options.thinking else "disabled"}

    def temperature(self, value: float) -> float:
        """Clamped into MiniMax's (0, 1]."""
        return min(1.0, max(0.01, value))

    def payload_error(self, payload: Mapping[str, Any]) -> ProviderError | None:
        """``{"error": ...}`` or a non-zero ``base_resp``."""
        return super().payload_error(payload) or base_resp_error(self.vendor, payload)

    def ok_body_error(self, headers: Mapping[str, str], body: bytes, data: Any
                      ) -> ProviderError | None:
        """A non-zero ``base_resp`` in a 200 JSON body (retried when retryable;
        ``data``: the body as the HTTP layer parsed it)."""
        if data is NOT_JSON:
            return None
        return base_resp_error(self.vendor, data)

    def map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
        """``base_resp`` in an HTTP error body first, then the OpenAI-style mapping."""
        try:
            found = base_resp_error(self.vendor, orjson.loads(body))
        except orjson.JSONDecodeError:
            found = None
        return found or super().map_error(status, headers, body)


def create(model_name: str, **kwargs: Any) -> MiniMaxChatModel:
    """Registry factory: ``MiniMaxChatModel(model_name, **kwargs)``."""
    return MiniMaxChatModel(model_name, **kwargs)
