"""OpenAI chat completions.

``OpenAIChatModel("gpt-4o-mini")`` talks to OpenAI; with a ``base_url`` on
another host it is the generic adapter for any OpenAI-compatible server
(llama.cpp server, vLLM, LM Studio). The machinery lives in
``_openai_compat`` (``OpenAICompatibleModel``) and the wire format in
``_openai_wire``; both are reused by the DeepSeek, DashScope, GLM and MiniMax
adapters and the embedded llama.cpp model.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from typing import Any, ClassVar

from agentflow.model import GenerateOptions, ModelProfile, ToolChoiceMode
from agentflow.providers._openai_compat import (
    GENERIC_PROFILE,
    OpenAICompatibleModel,
    openai_error,
    payload_error,
    unsupported_feature,
)
from agentflow.providers._profiles import ProfileRule, match_profile

__all__ = [
    "DEFAULT_PROFILE",
    "GENERIC_PROFILE",
    "OPENAI_DEFAULT",
    "PROFILES",
    "OpenAIChatModel",
    "OpenAICompatibleModel",
    "create",
    "lowest_reasoning_effort",
    "openai_error",
    "payload_error",
    "unsupported_feature",
]

# ----------------------------------------------------------------------------- profiles

_ALL_MODES: frozenset[ToolChoiceMode] = frozenset({"auto", "none", "required", "specific"})
OPENAI_DEFAULT = ModelProfile(
    tool_choice_modes=_ALL_MODES, native_output="json_schema", schema_dialect="openai_strict",
    parallel_tool_calls_flag=True,
)
"""Current OpenAI models: json_schema output with tools, strict schemas, every tool_choice."""
_REASONING = OPENAI_DEFAULT.with_(supports_thinking=True, thinking_default=True,
                                  parallel_tool_calls_flag=False)
_LEGACY = OPENAI_DEFAULT.with_(native_output=None)

PROFILES: tuple[ProfileRule, ...] = (
    ProfileRule("o1-mini*", _REASONING.with_(supports_tools=False, native_output=None),
                "no tools, no response_format"),
    ProfileRule("o1-preview*", _REASONING.with_(supports_tools=False, native_output=None),
                "no tools, no response_format"),
    ProfileRule("gpt-4o-2024-05-13", _LEGACY, "json_schema came with gpt-4o-2024-08-06"),
    ProfileRule("o[1-9]*", _REASONING, "reasoning; no parallel_tool_calls flag"),
    ProfileRule("codex-mini*", _REASONING, "o4-mini based reasoning model"),
    ProfileRule("gpt-5*chat*", OPENAI_DEFAULT, "the ChatGPT snapshot: not a reasoning model"),
    ProfileRule("gpt-5*", _REASONING.with_(parallel_tool_calls_flag=True), "reasoning"),
    ProfileRule("gpt-[6-9]*", _REASONING.with_(parallel_tool_calls_flag=True),
                "reasoning (GPT-6 families, openai SDK ChatModel literal)"),
    ProfileRule("chatgpt-4o*", _LEGACY.with_(supports_tools=False),
                "the ChatGPT snapshot: no function calling"),
    ProfileRule("gpt-4o*search*", OPENAI_DEFAULT.with_(supports_tools=False),
                "web-search models: no function tools"),
    ProfileRule("gpt-audio*", OPENAI_DEFAULT, "audio in/out; chat features as gpt-4o"),
    ProfileRule("gpt-4o*", OPENAI_DEFAULT),
    ProfileRule("gpt-4.1*", OPENAI_DEFAULT),
    ProfileRule("gpt-4.5*", OPENAI_DEFAULT),
    ProfileRule("gpt-4*", _LEGACY, "no json_schema response_format: tool path"),
    ProfileRule("gpt-3.5*", _LEGACY, "no json_schema response_format: tool path"),
)
DEFAULT_PROFILE = OPENAI_DEFAULT
"""The profile of OpenAI model names no pattern matches."""


class OpenAIChatModel(OpenAICompatibleModel):
    """OpenAI chat completions (``OPENAI_API_KEY``); with a ``base_url`` on
    another host, the generic OpenAI-compatible adapter (profile
    ``GENERIC_PROFILE`` unless the model name is an OpenAI one, ``max_tokens``
    instead of ``max_completion_tokens``).

    Args (besides ``OpenAICompatibleModel``'s):
        organization / project: ``OpenAI-Organization`` / ``OpenAI-Project`` headers.
        max_tokens_field: the body field for ``options.max_tokens``.
    """

    vendor: ClassVar[str] = "openai"
    env_var: ClassVar[str | None] = "OPENAI_API_KEY"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    profile_rules: ClassVar[Sequence[ProfileRule]] = PROFILES
    default_profile: ClassVar[ModelProfile] = OPENAI_DEFAULT

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
        if organization:
            headers["OpenAI-Organization"] = organization
        if project:
            headers["OpenAI-Project"] = project
        super().__init__(model, headers=headers, **kwargs)
        self.max_tokens_field = max_tokens_field or (
            "max_completion_tokens" if self.own_host else "max_tokens")

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

    def lookup_profile(self, model: str) -> ModelProfile:
        """OpenAI's table; an unknown model on another host gets ``GENERIC_PROFILE``."""
        default = OPENAI_DEFAULT if self.own_host else GENERIC_PROFILE
        return match_profile(self.profile_rules, model, default)


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


def create(model_name: str, **kwargs: Any) -> OpenAIChatModel:
    """Registry factory: ``OpenAIChatModel(model_name, **kwargs)``."""
    return OpenAIChatModel(model_name, **kwargs)
