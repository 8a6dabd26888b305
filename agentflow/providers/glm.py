"""Zhipu GLM (BigModel / Z.AI) chat completions v4, with its quirks.

Everything special about GLM (shared/providers.md section 7):

* **tool_choice: only ``"auto"`` is ever sent.** The API documents auto only
  and answers 400 "Tool choice must be auto" to ``required`` or a named
  function (mapped to ``UnsupportedFeatureError(feature="tool_choice")``).
  The profile lists ``auto``, ``none`` and ``specific``, the last two
  emulated: ``none`` leaves the tools out of the request; ``specific`` offers
  only the named tool with a closing system reminder to call it
  (``offer_named_tool``, C21: the forced turn of the output tool sees no other
  tool), and no ``tool_choice`` is sent.
* **Tool calls may arrive whole** in one stream delta (without
  ``tool_stream``); the shared parser handles whole and fragmented calls.
* ``temperature`` is clamped into the open interval (0, 1) as zai-sdk does:
  <= 0 becomes 0.01 with ``do_sample: false``, >= 1 becomes 0.99.
* **Images** (vision models): ``image_url.url`` holds an http(s) URL or the
  bare base64 text, no ``data:`` prefix (zai-sdk strips it before sending:
  ``zai.core._utils.drop_prefix_image_data``).
* Not sent: ``stream_options`` (usage is on the final chunk anyway) and
  ``strict`` on tools. ``max_tokens`` (not ``max_completion_tokens``).
* **Thinking:** ``thinking: {"type": "enabled"|"disabled"}`` follows
  ``GenerateOptions.thinking``; GLM-4.5+ think by default; ``reasoning_content``
  streams as thinking.
* **Errors** carry a numeric *string* code: 1000-1004 authentication,
  1113 (arrears), 1304 (daily limit), the Coding Plan's 1308/1310 (a 5-hour or
  weekly/monthly window spent) and 1309/1314 (its package expired) ->
  ``QuotaExceededError`` (never retried, although HTTP 429),
  1302/1303/1305 -> ``RateLimitedError``, 1211
  model not found, 1301 unsafe content -> ``ModeratedRequestError`` (a
  ``ContentFilteredError`` that is also a ``BadRequestError``) as an HTTP 400,
  ``ContentFilteredError`` inside a 200 body or a stream (``moderation_codes``;
  docs.z.ai/api-reference/api-code: "1301: the system detected that the input
  or generated content may be unsafe or sensitive"). Finish reason
  ``sensitive`` -> ``content_filter``.
* **In-band tool calls:** GLM-4.5+ served without a tool parser write
  ``<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``
  into the text; ``GLM_MARKUP`` turns it into tool calls (values typed from
  the tool's schema). On by default here; any OpenAI-compatible adapter
  takes it with ``tool_markups=["glm"]``.
* **GLM-4-0414's tool calls have no tags**: its chat template renders a call
  as ``<|assistant|>{name}\n{arguments JSON}`` (the name where a plain answer
  has an empty line), parallel calls as further ``<|assistant|>`` turns, and
  the model stops at ``<|observation|>`` (THUDM/GLM-4-32B-0414's template;
  ms-swift's ``GLM4_0414AgentTemplate`` parses it so). Served without a tool
  parser, the reply text is ``get_weather\n{"city": "Paris"}``.
  ``GLM4_0414_MARKUP`` (``"glm-4-0414"``) reads it, only when tools are
  offered, the name line is an offered tool's name and what follows is one
  JSON object (or several such calls, the special tokens between them kept or
  dropped), and nothing else is in the reply. Streamed, the reply's head is
  held while it can still be such a call (a prefix of an offered name, then
  the object) and parsed at the reply's end; anything else is passed on as
  text, losing nothing (``_reply_markup``). On by default here and for
  ``*glm*`` models on generic servers.

Vendor extensions sent: none; ``thinking`` and ``do_sample`` are keywords of
zai-sdk's ``chat.completions.create`` (checked by tests/test_sdk_conformance.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from agentflow.errors import (
    AuthenticationError,
    NotFoundError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
)
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelProfile, ToolSpec
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import error_message, parse_retry_after
from agentflow.providers._markup import (
    MarkupCall,
    ReplyMarkup,
    ToolMarkup,
    register_markup,
)
from agentflow.providers._media import ImageUrlStyle
from agentflow.providers._openai_compat import OpenAICompatibleModel
from agentflow.providers._profiles import ProfileRule
from agentflow.providers._reply_markup import Lead

__all__ = ["DEFAULT_PROFILE", "GLM4_0414_MARKUP", "GLM_MARKUP", "PROFILES", "GLMChatModel",
           "create", "glm4_0414_lead", "parse_glm4_0414_calls", "parse_glm_call"]

_GLM = ModelProfile(
    tool_choice_modes=frozenset({"auto", "none", "specific"}),
    native_output=None,
    schema_dialect="plain",
    supports_thinking=True,
    thinking_default=True,
)

_IMAGES = {"input_modalities": {"text", "image"}, "url_input_modalities": {"image"},
           "image_media_types": {"image/jpeg", "image/png"}, "max_image_bytes": 5_000_000}
"""Vision models (GLM-4V, GLM-4.1V/4.5V/4.6V): ``image_url`` with an http(s) URL or the
bare base64 text; JPG/PNG "under 5M per image" (docs.bigmodel.cn, GLM-4V API and
z.ai vision model guides). No PDF input in chat completions."""

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("glm-4v*", _GLM.with_(supports_thinking=False, thinking_default=False,
                                      **_IMAGES),
                "GLM-4V: vision, no thinking"),
    ProfileRule("glm-4.[1-9]v*", _GLM.with_(**_IMAGES),
                "GLM-4.1V/4.5V/4.6V: vision with thinking"),
    ProfileRule("glm-z1*", _GLM.with_(context_window=32_000, max_output_tokens=None),
                "reasoning model"),
    ProfileRule("glm-4.5*", _GLM.with_(context_window=128_000, max_output_tokens=96_000),
                "dynamic thinking, on by default"),
    ProfileRule("glm-4.6*", _GLM.with_(context_window=200_000, max_output_tokens=128_000),
                "thinking on by default"),
    ProfileRule("glm-4.7*", _GLM.with_(context_window=200_000, max_output_tokens=128_000),
                "thinking on by default"),
    ProfileRule("glm-5*", _GLM, "thinking on by default"),
    ProfileRule("glm-4*", _GLM.with_(supports_thinking=False, thinking_default=False,
                                     context_window=128_000, max_output_tokens=4_096),
                "GLM-4 (plus/air/flash): no thinking"),
)
DEFAULT_PROFILE = _GLM
"""The profile of model names no pattern matches (thinking on by default).

Windows and output caps (tokens) from docs.bigmodel.cn (model overview):
GLM-4.5 128K / 96K, GLM-4.6 and 4.7 200K / 128K, GLM-4-Plus/Air 128K / 4K,
GLM-Z1 32K; GLM-5 is not listed there yet (unknown: the conservative default)."""

_ARG = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.DOTALL)
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def parse_glm_call(body: str) -> list[MarkupCall] | None:
    """The call of one GLM ``<tool_call>`` block: the tool name, then
    ``<arg_key>``/``<arg_value>`` pairs (values are text, typed later from the
    tool's schema). ``None`` when the block is not this format (a JSON body
    is Hermes's)."""
    head, _, rest = body.partition("<arg_key>")
    name = head.strip()
    if not _NAME.fullmatch(name):
        return None
    pairs = _ARG.findall("<arg_key>" + rest) if rest else []
    if rest and not pairs:
        return None
    return [MarkupCall(name, {k.strip(): v for k, v in pairs}, raw_values=True)]


GLM_MARKUP = register_markup(ToolMarkup("glm", "<tool_call>", "</tool_call>", parse_glm_call))
"""GLM-4.5+'s in-band tool-call format (its chat template's ``<arg_key>`` pairs)."""

_TURN_TOKENS = ("<|assistant|>", "<|observation|>")
"""GLM-4's special tokens between and after calls, when a server leaves them in."""


def glm4_0414_lead(text: str, names: frozenset[str]) -> Lead:
    """What a reply beginning with ``text`` can be in GLM-4-0414's form:
    ``"maybe"`` while its first line is a prefix of an offered tool name (or
    that name with no object begun yet), ``"held"`` once that name's line is
    followed by ``{``, else ``"no"``."""
    body = text.lstrip()
    if body and _TURN_TOKENS[0].startswith(body):
        return "maybe"  # the turn token left in, not whole yet
    body = body.removeprefix(_TURN_TOKENS[0]).lstrip(" ")
    line, newline, rest = body.partition("\n")
    line = line.strip()
    if not newline:
        return "maybe" if any(name.startswith(line) for name in names) else "no"
    if line not in names:
        return "no"
    rest = rest.lstrip()
    if not rest:
        return "maybe"
    return "held" if rest.startswith("{") else "no"


def parse_glm4_0414_calls(text: str, names: frozenset[str]) -> list[MarkupCall] | None:
    """The calls of a whole reply in GLM-4-0414's form: one or more of an
    offered tool's name on its own line and one JSON object (raw control
    characters inside strings tolerated), GLM-4's ``<|assistant|>`` /
    ``<|observation|>`` tokens and whitespace between and around them;
    ``None`` when anything else is in the reply.

    Raises:
        ValueError: an object that is not valid JSON (the reply is then text).
    """
    decoder = json.JSONDecoder(strict=False)
    calls: list[MarkupCall] = []
    pos, end = 0, len(text)
    while True:
        pos = _skip_turns(text, pos)
        if pos >= end:
            return calls or None
        newline = text.find("\n", pos)
        if newline < 0 or text[pos:newline].strip() not in names:
            return None
        name = text[pos:newline].strip()
        pos = newline + 1
        while pos < end and text[pos].isspace():
            pos += 1
        if not text.startswith("{", pos):
            return None
        arguments, pos = decoder.raw_decode(text, pos)
        if not isinstance(arguments, dict):
            return None
        calls.append(MarkupCall(name, arguments))


def _skip_turns(text: str, pos: int) -> int:
    """``pos`` moved past whitespace and GLM-4's turn tokens."""
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        token = next((t for t in _TURN_TOKENS if text.startswith(t, pos)), None)
        if token is None:
            return pos
        pos += len(token)


GLM4_0414_MARKUP = register_markup(
    ReplyMarkup("glm-4-0414", glm4_0414_lead, parse_glm4_0414_calls))
"""GLM-4-0414's untagged tool-call form: the whole reply is ``name\n{JSON}``."""

_QUOTA = frozenset({"1113", "1304", "1308", "1309", "1310", "1314"})
"""Spent balances and usage windows, all HTTP 429: 1113 arrears, 1304 the daily
limit, the GLM Coding Plan's 1308 ("已达到 5 小时的使用上限。您的限额将在
2026-08-25 07:41:44 重置。", a 5-hour window; dirge-code/dirge#818), 1310
("Weekly/Monthly Limit Exhausted. Your limit will reset at ...";
openclaw/openclaw#33813) and 1309/1314 (the plan's package expired;
docs.z.ai/api-reference/api-code). Waiting seconds frees none of them."""
_RATE = frozenset({"1302", "1303", "1305"})
_AUTH = frozenset({"1000", "1001", "1002", "1003", "1004"})
_TOO_LONG = frozenset({"1261"})
"""GLM's "Prompt 超长" (the prompt is over the model's context window; its error-code table)."""


API_KEY_VARIABLES = ("ZHIPUAI_API_KEY", "ZAI_API_KEY")
"""Environment variables the API key is read from, in order (``agentflow models`` lists them)."""


class GLMChatModel(OpenAICompatibleModel):
    """GLM (``ZHIPUAI_API_KEY`` or ``ZAI_API_KEY``; China host by default, pass
    ``base_url="https://api.z.ai/api/paas/v4"`` for the international one).
    Takes ``OpenAICompatibleModel``'s arguments."""

    vendor: ClassVar[str] = "glm"
    env_var: ClassVar[str | None] = "ZHIPUAI_API_KEY"
    env_aliases: ClassVar[tuple[str, ...]] = ("ZAI_API_KEY",)
    default_base_url: ClassVar[str] = "https://open.bigmodel.cn/api/paas/v4"
    own_hosts: ClassVar[tuple[str, ...]] = ("api.z.ai",)
    own_stream_deltas: ClassVar[bool | None] = False
    """``delta.reasoning_content`` / ``delta.content`` are new text (docs.z.ai,
    "Chat Completion", streaming: ``choices[].delta``; shared/providers.md, GLM
    "Streaming")."""
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = DEFAULT_PROFILE
    send_strict = False
    send_stream_options: ClassVar[bool] = False
    image_urls: ClassVar[ImageUrlStyle] = "base64"
    default_markups: ClassVar[tuple[str, ...]] = ("glm", "glm-4-0414")
    moderation_codes: ClassVar[frozenset[str]] = frozenset({"1301"})
    """GLM's unsafe-content code (module docstring)."""

    def apply_tools(
        self, body: dict[str, Any], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> None:
        """``none`` leaves the tools out; ``specific`` is emulated
        (``offer_named_tool``); anything else is checked against the profile
        and sent as the base does (only ``auto`` reaches the wire)."""
        choice = options.tool_choice
        if choice is not None and choice.mode == "none":
            return
        tools, options = self.offer_named_tool(body, tools, options)
        super().apply_tools(body, tools, options)

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """``thinking: {"type": "enabled"|"disabled"}`` when ``options.thinking`` is set."""
        if options.thinking is not None and self.profile.supports_thinking:
            body["thinking"] = {"type": "enabled" if options.thinking else "disabled"}

    def build_body(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> dict[str, Any]:
        """As the base, with ``temperature`` moved into the open interval
        (0, 1) the API accepts, as zai-sdk's ``chat.completions.create``
        does: <= 0 -> 0.01 with ``do_sample: false`` (greedy), >= 1 -> 0.99."""
        body = super().build_body(messages, tools, options)
        temperature = body.get("temperature")
        if isinstance(temperature, int | float):
            if temperature <= 0:
                body["temperature"], body["do_sample"] = 0.01, False
            elif temperature >= 1:
                body["temperature"] = 0.99
        return body

    def map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
        """GLM's numeric string codes first, then the OpenAI-style mapping."""
        message, code, _ = error_message(body)
        kw: dict[str, Any] = {"status": status, "code": code, "vendor": self.vendor}
        if code in _QUOTA:
            return QuotaExceededError(message, **kw)
        if code in _RATE:
            return RateLimitedError(message, retry_after=parse_retry_after(headers), **kw)
        if code in _AUTH:
            return AuthenticationError(message, **kw)
        if code == "1211":
            return NotFoundError(message, **kw)
        too_long = context_length_error(self.vendor, status, message, code, codes=_TOO_LONG)
        if too_long is not None:
            return too_long
        return super().map_error(status, headers, body)


def create(model_name: str, **kwargs: Any) -> GLMChatModel:
    """Registry factory: ``GLMChatModel(model_name, **kwargs)``."""
    return GLMChatModel(model_name, **kwargs)
