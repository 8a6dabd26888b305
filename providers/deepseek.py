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
* ``strict`` tools are honoured only on the beta base URL
  (``https://api.deepseek.com/beta``); elsewhere the flag is not sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from agentflow.model import GenerateOptions, ModelProfile
from agentflow.providers._openai_compat import OpenAICompatibleModel
from agentflow.providers._openai_wire import ReasoningHistory
from agentflow.providers._profiles import ProfileRule

__all__ = ["DEFAULT_PROFILE", "PROFILES", "DeepSeekChatModel", "create"]

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
length 128K"; maximum output 8K in non-thinking mode, 64K in thinking mode)."""


class DeepSeekChatModel(OpenAICompatibleModel):
    """DeepSeek (``DEEPSEEK_API_KEY``, ``https://api.deepseek.com``).

    Takes ``OpenAICompatibleModel``'s arguments. Unknown model names get the
    thinking-by-default V4 profile.
    """

    vendor: ClassVar[str] = "deepseek"
    env_var: ClassVar[str | None] = "DEEPSEEK_API_KEY"
    default_base_url: ClassVar[str] = "https://api.deepseek.com"
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = DEFAULT_PROFILE
    reasoning_history: ClassVar[ReasoningHistory] = "field"

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
