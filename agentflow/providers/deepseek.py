"""DeepSeek chat completions (OpenAI-compatible), with its quirks.

Everything special about DeepSeek (shared/providers.md section 2):

* **JSON output is json_object only.** ``json_schema`` is refused (400 "This
  response_format type is unavailable now"), so it is never sent: a
  json_schema request goes out as JSON mode with the schema in a system
  instruction, and the profile keeps native output off by default (the tool
  path is used; opt in with ``profile=...with_(native_output="json_object")``).
* **Thinking.** V4 models and ``deepseek-reasoner`` think by default;
  ``deepseek-chat`` does not. ``GenerateOptions.thinking`` sends
  ``thinking: {"type": "enabled"|"disabled"}``. While thinking, a forced
  ``tool_choice`` (required / a named function) is refused with 400
  "Thinking mode does not support this tool_choice": profiles say
  ``forced_tool_choice_with_thinking=False`` and that 400 maps to
  ``UnsupportedFeatureError(feature="tool_choice")``.
* ``reasoning_content`` streams before the content (as ``ThinkingDelta``) and
  must be sent back on every assistant turn that made tool calls (400
  "Missing `reasoning_content` field" otherwise).
* Usage rides on the last content chunk; ``: keep-alive`` comments arrive
  while queued (the SSE reader ignores them); error bodies may be
  ``application/octet-stream`` (parsed as JSON anyway).
* **In-band tool calls:** V3/R1 served without a tool parser write their
  special tokens into the text: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>
  function<｜tool▁sep｜>name`` and a fenced JSON block (V3), or
  ``name<｜tool▁sep｜>{json}`` (V3.1+), ``<｜tool▁call▁end｜><｜tool▁calls▁end｜>``;
  ``DEEPSEEK_MARKUP`` turns them into tool calls. V3.2 and V4 write DSML
  instead: ``<｜DSML｜function_calls>`` (V4: ``<｜DSML｜tool_calls>``) around
  ``<｜DSML｜invoke name="f">`` blocks of ``<｜DSML｜parameter name="k"
  string="true|false">v</｜DSML｜parameter>`` (``string="true"``: the text
  itself, else a JSON value), also with ASCII ``|`` (``DSML_MARKUPS``); V4 at
  long context may leave out the section's opening tag, writing the invokes
  bare, up to the reply's end (``BARE_DSML_MARKUPS``). On by default here;
  any OpenAI-compatible adapter takes them with
  ``tool_markups=["deepseek", "deepseek-dsml", ...]``.
* ``strict`` tools are honoured only on the beta base URL
  (``https://api.deepseek.com/beta``); elsewhere the flag is not sent.

Vendor extensions sent (outside the openai SDK's request types; checked by
tests/test_sdk_conformance.py): ``thinking`` and ``messages[].reasoning_content``
(api-docs.deepseek.com/guides/thinking_mode).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import orjson

from agentflow.model import GenerateOptions, ModelProfile
from agentflow.output.decoding import decode_value
from agentflow.providers._markup import MarkupCall, ToolMarkup, only_matches, register_markup
from agentflow.providers._openai_compat import OpenAICompatibleModel
from agentflow.providers._openai_wire import ReasoningHistory
from agentflow.providers._profiles import ProfileRule

__all__ = ["BARE_DSML_MARKUPS", "DEEPSEEK_MARKUP", "DEFAULT_PROFILE", "DSML_MARKUPS", "PROFILES",
           "DeepSeekChatModel", "bare_dsml_parser", "create", "parse_deepseek_calls",
           "parse_dsml_calls"]

_THINKING = ModelProfile(
    tool_choice_modes=frozenset({"auto", "none", "required", "specific"}),
    native_output=None,
    schema_dialect="plain",
    supports_thinking=True,
    thinking_default=True,
    forced_tool_choice_with_thinking=False,
)
_NON_THINKING = _THINKING.with_(thinking_default=False)

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("deepseek-chat", _NON_THINKING.with_(
        context_window=128_000, max_output_tokens=8_000),
                "V4-Flash alias, thinking off"),
    ProfileRule("deepseek-reasoner", _THINKING.with_(
        context_window=128_000, max_output_tokens=64_000),
                "V4-Flash alias, thinking on"),
    ProfileRule("deepseek-v4*", _THINKING.with_(context_window=128_000, max_output_tokens=64_000),
                "thinking on by default"),
    ProfileRule("deepseek-flash*", _THINKING.with_(
        context_window=128_000, max_output_tokens=64_000),
                "thinking on by default"),
    ProfileRule("deepseek-pro*", _THINKING.with_(context_window=128_000, max_output_tokens=64_000),
                "thinking on by default"),
)
DEFAULT_PROFILE = _THINKING
"""The profile of model names no pattern matches (thinking on by default (V4)).

Windows and output caps: api-docs.deepseek.com/quick_start/pricing ("context
length 128K"; maximum output 8K in non-thinking mode, 64K in thinking mode).
Input: text only (``ModelProfile`` default): the DeepSeek API's messages take
string content only (api-docs.deepseek.com, "Create Chat Completion")."""


CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
_CALL = re.compile(re.escape(CALL_BEGIN) + "(.*?)" + re.escape(CALL_END), re.DOTALL)
_FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def parse_deepseek_calls(body: str) -> list[MarkupCall] | None:
    """The calls between ``<｜tool▁calls▁begin｜>`` and ``<｜tool▁calls▁end｜>``:
    each ``<｜tool▁call▁begin｜>type<｜tool▁sep｜>name`` + a fenced JSON block
    (V3), or ``name<｜tool▁sep｜>{json}`` (V3.1+). ``None`` when a call cannot
    be read."""
    calls: list[MarkupCall] = []
    for inner in _CALL.findall(body):
        left, sep, right = inner.partition(SEP)
        if not sep:
            return None
        if left.strip() == "function":
            name, _, rest = right.strip().partition("\n")
            fenced = _FENCED.search(rest)
            args_text = fenced.group(1) if fenced else rest
        else:
            name, args_text = left, right
        args = decode_value(args_text.strip()) if args_text.strip() else {}
        if not isinstance(args, dict) or not name.strip():
            return None
        calls.append(MarkupCall(name.strip(), args))
    return calls or None


DEEPSEEK_MARKUP = register_markup(ToolMarkup(
    "deepseek", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", parse_deepseek_calls))
"""DeepSeek V3/R1's in-band tool-call tokens."""

_BAR = "[｜|]"
_INVOKE = re.compile(rf'<{_BAR}DSML{_BAR}invoke\s+name="([^"]+)"\s*>(.*?)</{_BAR}DSML{_BAR}invoke>',
                     re.DOTALL)
_PARAMETER = re.compile(
    rf'<{_BAR}DSML{_BAR}parameter\s+name="([^"]+)"(?:\s+string="(true|false)")?\s*>(.*?)'
    rf"</{_BAR}DSML{_BAR}parameter>", re.DOTALL)


def parse_dsml_calls(body: str) -> list[MarkupCall] | None:
    """The calls of a DSML block (DeepSeek V3.2 / V4, between
    ``<｜DSML｜function_calls>`` or ``<｜DSML｜tool_calls>`` and their closing
    tags): each ``<｜DSML｜invoke name="f">`` with its ``<｜DSML｜parameter
    name="k" string="true|false">v</｜DSML｜parameter>`` (DeepSeek-V3.2's
    encoding_dsv32.py: ``string="true"`` marks the raw text of a string, else
    the value is JSON). Values without the attribute are typed from the tool's
    schema. ``None`` when anything but invokes is in the block, anything but
    parameters in an invoke (a parameter tag the model broke, as
    ``<parameter name="enabled">true</｜DSML｜parameter>``: read as a call
    without that argument, its default then used, sgl-project/sglang#39435),
    or one is broken."""
    invokes = only_matches(_INVOKE, body)
    if not invokes:
        return None
    calls: list[MarkupCall] = []
    for match in invokes:
        params = only_matches(_PARAMETER, match.group(2))
        if params is None:
            return None  # a tag the model broke: never a call without that argument
        args: dict[str, Any] = {}
        for param in params:
            key, string, value = param.groups()
            value = value.strip("\n")
            if string == "false":
                try:
                    value = decode_value(value.strip())
                except ValueError:
                    return None
                if not isinstance(value, str):
                    value = orjson.dumps(value).decode()  # typed again from the schema
            args[key] = value
        calls.append(MarkupCall(match.group(1).strip(), args, raw_values=True))
    return calls


DSML_MARKUPS = tuple(
    register_markup(ToolMarkup(name, f"<{bar}DSML{bar}{tag}>", f"</{bar}DSML{bar}{tag}>",
                               parse_dsml_calls))
    for name, bar, tag in (("deepseek-dsml", "｜", "function_calls"),
                           ("deepseek-dsml-v4", "｜", "tool_calls"),
                           ("deepseek-dsml-ascii", "|", "function_calls"),
                           ("deepseek-dsml-v4-ascii", "|", "tool_calls")))
"""DeepSeek V3.2's and V4's DSML in-band tool-call blocks (fullwidth bars, as the
tokenizer writes them, and the ASCII look-alikes servers and gateways pass on)."""
_SECTION_END = re.compile(rf"</{_BAR}DSML{_BAR}(?:tool_calls|function_calls)>\s*\Z")


def bare_dsml_parser(start: str) -> Callable[[str], list[MarkupCall] | None]:
    """The ``parse`` of DSML invokes written without their section's opening
    tag, for a block opened by ``start`` (``<｜DSML｜invoke``) and running to
    the reply's end: DeepSeek V4 at long context leaves the
    ``<｜DSML｜tool_calls>`` token out, and servers then return the invokes as
    text with finish reason ``stop``, the tools never run
    (vllm-project/vllm#48931, sgl-project/sglang#40236). The block, its
    section's closing tag at the end dropped when there, is read as
    ``parse_dsml_calls`` reads a section: anything but invokes after the
    first (prose that only mentions the tag) leaves it all text."""
    def parse(body: str) -> list[MarkupCall] | None:
        return parse_dsml_calls(_SECTION_END.sub("", start + body))
    return parse


BARE_DSML_MARKUPS = (
    *(register_markup(ToolMarkup(name, start, "", bare_dsml_parser(start)))
      for name, start in (("deepseek-dsml-bare", "<｜DSML｜invoke"),
                          ("deepseek-dsml-bare-ascii", "<|DSML|invoke"))),
    *(register_markup(ToolMarkup(f"{m.name}-unclosed", m.start, "", parse_dsml_calls))
      for m in DSML_MARKUPS))
"""DSML invokes without their section's opening tag (``bare_dsml_parser``), and
sections never closed (sgl-project/sglang#40236, "Section opened but never
closed"), each read up to the reply's end."""
DSML_NAMES = tuple(m.name for m in (*DSML_MARKUPS, *BARE_DSML_MARKUPS))

API_KEY_VARIABLES = ("DEEPSEEK_API_KEY",)
"""Environment variables the API key is read from, in order (``agentflow models`` lists them)."""


class DeepSeekChatModel(OpenAICompatibleModel):
    """DeepSeek (``DEEPSEEK_API_KEY``, ``https://api.deepseek.com``).

    Takes ``OpenAICompatibleModel``'s arguments. Unknown model names get the
    thinking-by-default V4 profile.
    """

    vendor: ClassVar[str] = "deepseek"
    env_var: ClassVar[str | None] = "DEEPSEEK_API_KEY"
    default_base_url: ClassVar[str] = "https://api.deepseek.com"
    own_stream_deltas: ClassVar[bool | None] = False
    """``delta.reasoning_content`` and ``delta.content`` are new text
    (api-docs.deepseek.com, "Create Chat Completion", ``stream``: "partial
    message deltas will be sent"; shared/providers.md, DeepSeek "Streaming")."""
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = DEFAULT_PROFILE
    reasoning_history: ClassVar[ReasoningHistory] = "field"
    default_markups: ClassVar[tuple[str, ...]] = ("deepseek", *DSML_NAMES)

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.send_strict = self._http.base_url.endswith("/beta")

    def json_schema_ok(self, options: GenerateOptions) -> bool:
        """Never: DeepSeek refuses json_schema (JSON mode + schema instruction instead)."""
        return False

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """``thinking: {"type": "enabled"|"disabled"}`` when ``options.thinking`` is set."""
        if options.thinking is not None and self.profile.supports_thinking:
            body["thinking"] = {"type": "enabled" if options.thinking else "disabled"}


def create(model_name: str, **kwargs: Any) -> DeepSeekChatModel:
    """Registry factory: ``DeepSeekChatModel(model_name, **kwargs)``."""
    return DeepSeekChatModel(model_name, **kwargs)
