"""Alibaba DashScope / Model Studio (Qwen), OpenAI-compatible mode, with its quirks.

Everything special about DashScope compatible mode (shared/providers.md section 5):

* **tool_choice:** ``auto``, ``none`` and a named function are enforced;
  ``required`` is not relied on (older docs list only auto/none/object) and
  is never sent. While thinking, a forced choice is refused (400 "...does not
  support being set to required or object in thinking mode" ->
  ``UnsupportedFeatureError(feature="tool_choice")``).
* **Native output is off by default** (the tool path is used); opt in per
  model with ``profile=...with_(native_output="json_object")`` (or
  ``"json_schema"`` on the qwen-plus models that have it). It is **never
  sent in thinking mode**, which refuses it: such a request raises
  ``UnsupportedFeatureError(feature="native_output")`` before sending, and
  the engine steps down to the tool path. JSON mode needs the word "JSON" in
  the messages (added when missing).
* **Thinking:** ``enable_thinking`` (top-level body field) follows
  ``GenerateOptions.thinking``. Commercial hybrid models (qwen-plus, -flash,
  -turbo, qwen3-max) default to off, open-source Qwen3 to on, QwQ and
  ``*-thinking`` always think. Open-source Qwen3 refuses non-streaming calls
  while thinking, so a non-streaming request to a thinking-by-default model
  sends ``enable_thinking: false`` unless the caller asked for thinking.
* ``parallel_tool_calls`` is accepted; errors carry ``request_id``; an
  account in arrears (``Arrearage``) and a spent free quota with "use free
  tier only" on (``AllocationQuota.FreeTierOnly``, a 403 or a 400: "The free
  quota has been exhausted", axoviq-ai/synthadoc#215, APIParkLab/APIPark#394)
  map to ``QuotaExceededError`` (``_SPENT_CODES``), never retried.
* **Content moderation:** ``DataInspectionFailed`` / ``data_inspection_failed``
  ("Input or output data may contain inappropriate content": blocked by
  content moderation; alibabacloud.com/help/en/model-studio/developer-reference/error-code,
  help.aliyun.com/zh/model-studio/error-code#inappropriate-content). Output
  moderation can stop a reply after its 200, as an error data line in the
  stream (or a 200 body): ``ContentFilteredError``, never retried
  (``moderation_codes``). Before the reply it is an HTTP 400:
  ``ModeratedRequestError``, a ``ContentFilteredError`` that is also a ``BadRequestError``.
* **In-band tool calls:** Qwen served without a tool parser writes the
  Hermes format ``<tool_call>{"name": …, "arguments": {…}}</tool_call>``
  (``HERMES_MARKUP``; Qwen2.5/3, and Hermes/NousResearch models) or, for
  Qwen3-Coder, ``<tool_call><function=name><parameter=k>v</parameter>
  </function></tool_call>`` (``QWEN_XML_MARKUP``) into the text; both become
  tool calls. Qwen3-Coder also drops the ``<tool_call>`` wrapper, leaving a
  bare ``<function=name>…</function>`` (``QWEN_FUNCTION_MARKUP``, which also
  reads a JSON body there, Llama 3.1's custom tool-call form). On by default
  here; any OpenAI-compatible adapter takes them with
  ``tool_markups=["hermes", "qwen-xml", "qwen-function"]``.

Vendor extensions sent (outside the openai SDK's request types, which
DashScope documents for compatible mode; checked by tests/test_sdk_conformance.py):
``enable_thinking`` (alibabacloud.com/help/en/model-studio/deep-thinking).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from agentflow.errors import ProviderError, QuotaExceededError, UnsupportedFeatureError
from agentflow.model import GenerateOptions, ModelProfile, ResponseFormat
from agentflow.output.decoding import decode_value
from agentflow.providers._context_errors import context_length_error
from agentflow.providers._http import error_message
from agentflow.providers._markup import (
    MarkupCall,
    ToolMarkup,
    call_object,
    json_calls,
    only_matches,
    register_markup,
)
from agentflow.providers._openai_compat import OpenAICompatibleModel
from agentflow.providers._profiles import ProfileRule

__all__ = ["DEFAULT_PROFILE", "HERMES_MARKUP", "PROFILES", "QWEN_FUNCTION_MARKUP",
           "QWEN_XML_MARKUP", "DashScopeChatModel", "create", "parse_bare_function_call",
           "parse_hermes_call", "parse_qwen_xml_call"]

_HYBRID = ModelProfile(
    tool_choice_modes=frozenset({"auto", "none", "specific"}),
    native_output=None,
    schema_dialect="plain",
    supports_thinking=True,
    thinking_default=False,
    forced_tool_choice_with_thinking=False,
    parallel_tool_calls_flag=True,
)
_THINKS = _HYBRID.with_(thinking_default=True)
_NO_THINKING = _HYBRID.with_(supports_thinking=False)
_IMAGES = {
    "input_modalities": {"text", "image"}, "url_input_modalities": {"image"},
    "image_media_types": {"image/bmp", "image/jpeg", "image/png", "image/tiff", "image/webp",
                          "image/heic"},
    "max_image_bytes": 10_000_000,
}
"""Vision models (Qwen-VL, QVQ, Qwen3-VL, Qwen3.5+): ``image_url`` parts with an
http(s) or ``data:`` URL; BMP, JPEG, PNG, TIFF, WEBP, HEIC up to 10 MB an image
(alibabacloud.com/help/en/model-studio/vision, "Image limits";
docs.qwencloud.com/developer-guides/multimodal/vision). No PDF input in chat."""

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("qwq*", _THINKS.with_(context_window=131_072, max_output_tokens=8_192),
                "thinking-only"),
    ProfileRule("qvq*", _THINKS.with_(context_window=131_072, max_output_tokens=8_192,
                                      **_IMAGES),
                "thinking-only; vision"),
    ProfileRule("qwen3-vl*-thinking*", _THINKS.with_(**_IMAGES), "thinking-only; vision"),
    ProfileRule("qwen3-vl*", _HYBRID.with_(**_IMAGES), "hybrid; vision"),
    ProfileRule("qwen2.5-vl*", _NO_THINKING.with_(**_IMAGES), "vision"),
    ProfileRule("qwen-vl*", _NO_THINKING.with_(**_IMAGES), "vision"),
    ProfileRule("qwen3.[5-9]*", _THINKS.with_(context_window=131_072, max_output_tokens=16_384,
                                              **_IMAGES),
                "Qwen3.5+: natively multimodal, thinking on by default"),
    ProfileRule("*-thinking*", _THINKS, "thinking-only"),
    ProfileRule("*-instruct*", _NO_THINKING, "non-thinking variant"),
    ProfileRule("qwen3-coder*", _NO_THINKING.with_(
        context_window=262_144, max_output_tokens=65_536),
                "non-thinking"),
    ProfileRule("qwen-v1", _NO_THINKING, "deprecated (dashscope SDK Generation.Models)"),
    ProfileRule("qwen-plus-v1", _NO_THINKING, "deprecated (dashscope SDK Generation.Models)"),
    ProfileRule("bailian-v1", _NO_THINKING, "deprecated (dashscope SDK Generation.Models)"),
    ProfileRule("dolly-*", _NO_THINKING.with_(supports_tools=False),
                "open model served by DashScope (dashscope SDK Generation.Models)"),
    ProfileRule("qwen3-max*", _HYBRID.with_(context_window=262_144, max_output_tokens=65_536),
                "hybrid, thinking off by default"),
    ProfileRule("qwen-plus*", _HYBRID.with_(context_window=131_072, max_output_tokens=8_192),
                "hybrid, thinking off by default"),
    ProfileRule("qwen-flash*", _HYBRID.with_(context_window=1_000_000, max_output_tokens=32_768),
                "hybrid, thinking off by default"),
    ProfileRule("qwen-turbo*", _HYBRID.with_(context_window=131_072, max_output_tokens=8_192),
                "hybrid, thinking off by default"),
    ProfileRule("qwen3*", _THINKS.with_(context_window=131_072, max_output_tokens=16_384),
                "open-source Qwen3 (and 3.5+): thinking on by default"),
    ProfileRule("qwen-max*", _NO_THINKING.with_(context_window=32_768, max_output_tokens=8_192),
                "no thinking"),
    ProfileRule("qwen-long*", _NO_THINKING.with_(
        context_window=10_000_000, max_output_tokens=8_192),
                "no thinking"),
    ProfileRule("qwen2*", _NO_THINKING.with_(context_window=131_072, max_output_tokens=8_192),
                "no thinking"),
)
DEFAULT_PROFILE = _HYBRID
"""The profile of model names no pattern matches (hybrid, thinking off by default).

Windows and output caps (tokens) from help.aliyun.com/zh/model-studio/models,
the smallest of a family's dated versions where they differ (qwen-plus and
qwen-turbo: 131,072 / 8,192, newer snapshots have 1,000,000); ``*-instruct``
and ``*-thinking`` names span families: unknown (the conservative default)."""


def parse_hermes_call(body: str) -> list[MarkupCall] | None:
    """The calls of one Hermes ``<tool_call>`` block: a JSON object
    ``{"name": str, "arguments": object | JSON string}`` (``parameters`` is
    read too), or several glued or a line each (``json_calls``: a model putting
    parallel calls in one block), or one Python-literal object. ``None`` when
    the block is not this format."""
    try:
        return json_calls(body)
    except ValueError:
        pass
    try:
        data = decode_value(body.strip())
    except ValueError:
        return None
    call = call_object(data)
    return None if call is None else [call]


HERMES_MARKUP = register_markup(
    ToolMarkup("hermes", "<tool_call>", "</tool_call>", parse_hermes_call), "qwen")
"""The Hermes/Qwen in-band tool-call format (``<tool_call>{json}</tool_call>``)."""

_TOO_LONG = re.compile(r"range of input length should be", re.I)
"""DashScope's words for an input over the model's window ("Range of input length
should be [1, 30720]", code ``InvalidParameter``)."""

_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)</function>", re.DOTALL)
_XML_PARAMETER = re.compile(
    r"<parameter=([^>\s]+)>(.*?)(?:</parameter>|(?=\s*<parameter=)|\s*$)", re.DOTALL)
"""One ``<parameter=key>value</parameter>``; a missing ``</parameter>`` (a known
Qwen3-Coder slip, which vLLM's qwen3_coder parser tolerates too) ends the value
at the next ``<parameter=`` or at the end of the function."""


def parse_qwen_xml_call(body: str) -> list[MarkupCall] | None:
    """The calls of one Qwen3-Coder ``<tool_call>`` block:
    ``<function=name><parameter=key>value</parameter></function>`` (values
    are text, typed later from the tool's schema; ``_XML_PARAMETER``).
    ``None`` when the block holds anything but functions, or a function
    anything but parameters: a parameter tag the model broke
    (``<parameter enabled>``) was dropped, and the call ran without that
    argument, its default used (the kind of sgl-project/sglang#39435)."""
    functions = only_matches(_FUNCTION, body)
    if not functions:
        return None
    calls = []
    for function in functions:
        params = only_matches(_XML_PARAMETER, function.group(2))
        if params is None:
            return None
        calls.append(MarkupCall(function.group(1), _xml_arguments(params), raw_values=True))
    return calls


def _xml_arguments(params: list[re.Match[str]]) -> dict[str, str]:
    """The arguments of ``<parameter=key>value</parameter>`` elements, each
    value without its leading and trailing line breaks."""
    return {p.group(1): p.group(2).strip("\n") for p in params}


QWEN_XML_MARKUP = register_markup(
    ToolMarkup("qwen-xml", "<tool_call>", "</tool_call>", parse_qwen_xml_call))
"""Qwen3-Coder's XML in-band tool-call format."""


def parse_bare_function_call(body: str) -> list[MarkupCall] | None:
    """The call of one bare ``<function=name>…</function>`` block (``body``:
    what follows ``<function=``): Qwen3-Coder's ``<parameter=k>v</parameter>``
    elements without their ``<tool_call>`` wrapper, or a JSON object (Llama
    3.1's ``<function=name>{json}</function>``), or nothing. ``None`` when
    the block is not one of those."""
    name, sep, inner = body.partition(">")
    if not sep or not _BARE_NAME.fullmatch(name):
        return None
    if "<parameter=" in inner:
        params = only_matches(_XML_PARAMETER, inner)
        if not params:
            return None
        return [MarkupCall(name, _xml_arguments(params), raw_values=True)]
    text = inner.strip()
    if not text:
        return [MarkupCall(name, {})]
    args = decode_value(text)  # ValueError: not this format
    return [MarkupCall(name, args)] if isinstance(args, dict) else None


_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")
QWEN_FUNCTION_MARKUP = register_markup(
    ToolMarkup("qwen-function", "<function=", "</function>", parse_bare_function_call))
"""A bare ``<function=name>…</function>`` block (Qwen3-Coder without its
``<tool_call>`` wrapper; Llama 3.1's custom tool-call form)."""

API_KEY_VARIABLES = ("DASHSCOPE_API_KEY",)
"""Environment variables the API key is read from, in order (``agentflow models`` lists them)."""


class DashScopeChatModel(OpenAICompatibleModel):
    """DashScope compatible mode (``DASHSCOPE_API_KEY``; Beijing host by
    default, pass ``base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1"``
    for Singapore; keys are region-specific). Takes ``OpenAICompatibleModel``'s
    arguments; unknown models get the hybrid (thinking off) profile."""

    vendor: ClassVar[str] = "dashscope"
    env_var: ClassVar[str | None] = "DASHSCOPE_API_KEY"
    default_base_url: ClassVar[str] = "https://dashscope.aliyuncs.com/compatible-mode/v1"
    own_hosts: ClassVar[tuple[str, ...]] = ("dashscope-intl.aliyuncs.com",)
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = DEFAULT_PROFILE
    default_markups: ClassVar[tuple[str, ...]] = ("hermes", "qwen-xml", "qwen-function")
    moderation_codes: ClassVar[frozenset[str]] = frozenset(
        {"data_inspection_failed", "DataInspectionFailed"})
    """Model Studio's content-moderation code, as compatible mode (snake case)
    and the native API (``DataInspectionFailed``) write it (module docstring)."""

    def streams(self, options: GenerateOptions) -> bool:
        """As the base, but a request that would think keeps streaming when it
        only hints that nobody reads the deltas (``options.stream=False``):
        open-source Qwen3 refuses to think without streaming, and turning
        thinking off would change the reply."""
        if options.stream is False and self.profile.supports_thinking and (
                options.thinking or (options.thinking is None and self.profile.thinking_default)):
            return True
        return super().streams(options)

    def thinking_on(self, options: GenerateOptions) -> bool:
        """Whether the request will run with thinking (after the non-streaming rule)."""
        if not self.profile.supports_thinking:
            return False
        if options.thinking is not None:
            return options.thinking
        return self.profile.thinking_default and self.streams(options)

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """``enable_thinking`` per ``options.thinking``; ``false`` for a
        non-streaming call to a thinking-by-default model."""
        if not self.profile.supports_thinking:
            return
        if options.thinking is not None:
            body["enable_thinking"] = options.thinking
        elif self.profile.thinking_default and not self.streams(options):
            body["enable_thinking"] = False

    def apply_response_format(
        self, body: dict[str, Any], rf: ResponseFormat, options: GenerateOptions
    ) -> None:
        """As the base, but refused before sending while thinking.

        Raises:
            UnsupportedFeatureError: thinking is on (feature ``native_output``).
        """
        if self.thinking_on(options):
            raise UnsupportedFeatureError(
                f"{self.model_name}: DashScope refuses response_format in thinking mode; it "
                "was not sent (turn thinking off or use the tool path)",
                feature="native_output", status=None, vendor=self.vendor)
        super().apply_response_format(body, rf, options)

    def map_error(self, status: int, headers: Mapping[str, str], body: bytes) -> ProviderError:
        """``Arrearage``, ``AllocationQuota.FreeTierOnly`` (``_SPENT_CODES``) ->
        ``QuotaExceededError``; "Range of input length should be [1, N]" ->
        ``ContextLengthError``; otherwise OpenAI-style."""
        message, code, _ = error_message(body)
        if code in _SPENT_CODES or message.startswith("Arrearage") or (
                "free quota has been exhausted" in message
                or "free tier of the model has been exhausted" in message):
            return QuotaExceededError(message, status=status, code=code, vendor=self.vendor)
        too_long = context_length_error(self.vendor, status, message, code, extra=_TOO_LONG)
        if too_long is not None:
            return too_long
        return super().map_error(status, headers, body)


_SPENT_CODES = frozenset({"Arrearage", "AllocationQuota.FreeTierOnly"})
"""DashScope error codes of a spent balance or free quota (not a rate limit:
``Throttling.AllocationQuota`` is retried)."""


def create(model_name: str, **kwargs: Any) -> DashScopeChatModel:
    """Registry factory: ``DashScopeChatModel(model_name, **kwargs)``."""
    return DashScopeChatModel(model_name, **kwargs)
