"""Zhipu GLM (BigModel / Z.AI) chat completions v4, with its quirks.

Everything special about GLM (shared/providers.md section 7):

* **tool_choice: only ``"auto"`` is ever sent.** The API documents auto only
  and answers 400 "Tool choice must be auto" to ``required`` or a named
  function (mapped to ``UnsupportedFeatureError(feature="tool_choice")``).
  The profile lists ``auto`` and ``none``; ``none`` is emulated by leaving
  the tools out of the request. Forcing the output tool therefore uses the
  engine's prompt reminder.
* **Tool calls may arrive whole** in one stream delta (without
  ``tool_stream``); the shared parser handles whole and fragmented calls.
* Not sent: ``stream_options`` (usage is on the final chunk anyway) and
  ``strict`` on tools. ``max_tokens`` (not ``max_completion_tokens``).
* **Thinking:** ``thinking: {"type": "enabled"|"disabled"}`` follows
  ``GenerateOptions.thinking``; GLM-4.5+ think by default; ``reasoning_content``
  streams as thinking.
* **Errors** carry a numeric *string* code: 1000-1004 authentication,
  1113 (arrears) and 1304 (daily limit) -> ``QuotaExceededError`` (never
  retried, although HTTP 429), 1302/1303/1305 -> ``RateLimitedError``, 1211
  model not found, 1301 unsafe content -> ``BadRequestError``. Finish reason
  ``sensitive`` -> ``content_filter``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from agentflow.errors import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    ProviderError,
    QuotaExceededError,
    RateLimitedError,
)
from agentflow.model import GenerateOptions, ModelProfile, ToolSpec
from agentflow.providers._http import error_message, parse_retry_after
from agentflow.providers._openai_compat import OpenAICompatibleModel
from agentflow.providers._profiles import ProfileRule

__all__ = ["DEFAULT_PROFILE", "PROFILES", "GLMChatModel", "create"]

_GLM = ModelProfile(
    tool_choice_modes=frozenset({"auto", "none"}),
    native_output=None,
    schema_dialect="plain",
    supports_thinking=True,
    thinking_default=True,
)

PROFILES: tuple[ProfileRule, ...] = (
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

_QUOTA = frozenset({"1113", "1304"})
_RATE = frozenset({"1302", "1303", "1305"})
_AUTH = frozenset({"1000", "1001", "1002", "1003", "1004"})


class GLMChatModel(OpenAICompatibleModel):
    """GLM (``ZHIPUAI_API_KEY`` or ``ZAI_API_KEY``; China host by default, pass
    ``base_url="https://api.z.ai/api/paas/v4"`` for the international one).
    Takes ``OpenAICompatibleModel``'s arguments."""

    vendor: ClassVar[str] = "glm"
    env_var: ClassVar[str | None] = "ZHIPUAI_API_KEY"
    env_aliases: ClassVar[tuple[str, ...]] = ("ZAI_API_KEY",)
    default_base_url: ClassVar[str] = "https://open.bigmodel.cn/api/paas/v4"
    own_hosts: ClassVar[tuple[str, ...]] = ("api.z.ai",)
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = DEFAULT_PROFILE
    send_strict = False
    send_stream_options: ClassVar[bool] = False

    def apply_tools(
        self, body: dict[str, Any], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> None:
        """``none`` leaves the tools out; anything else is checked against the
        profile (only ``auto`` passes by default) and sent as the base does."""
        choice = options.tool_choice
        if choice is not None and choice.mode == "none":
            return
        super().apply_tools(body, tools, options)

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """``thinking: {"type": "enabled"|"disabled"}`` when ``options.thinking`` is set."""
        if options.thinking is not None and self.profile.supports_thinking:
            body["thinking"] = {"type": "enabled" if options.thinking else "disabled"}

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
        if code == "1301":
            return BadRequestError(message, **kw)
        return super().map_error(status, headers, body)


def create(model_name: str, **kwargs: Any) -> GLMChatModel:
    """Registry factory: ``GLMChatModel(model_name, **kwargs)``."""
    return GLMChatModel(model_name, **kwargs)
