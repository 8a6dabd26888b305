"""Profile tables: ``ModelProfile``s keyed by model-name patterns.

Each provider module holds one table, a tuple of ``ProfileRule``s, most
specific first. ``match_profile`` returns the first rule whose glob pattern
(``fnmatch``, case-insensitive) matches the model name; a routing prefix such
as ``"openai/"`` or ``"Qwen/"`` (OpenRouter, LiteLLM, vLLM model ids) is
ignored when the full name matches nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from agentflow.model import ModelProfile

__all__ = ["ProfileRule", "match_profile"]


@dataclass(frozen=True, slots=True)
class ProfileRule:
    """One row of a vendor's profile table.

    Attributes:
        pattern: a lower-case glob over model names (``"deepseek-v4*"``).
        profile: what models matching ``pattern`` can do.
        note: why the row exists (shown by ``agentflow models``).
    """

    pattern: str
    profile: ModelProfile
    note: str = ""


def match_profile(
    rules: Sequence[ProfileRule], model: str, default: ModelProfile
) -> ModelProfile:
    """The profile of the first rule matching ``model``, else ``default``."""
    name = model.lower()
    candidates = [name]
    if "/" in name:
        candidates.append(name.rsplit("/", 1)[1])
    for candidate in candidates:
        for rule in rules:
            if fnmatchcase(candidate, rule.pattern):
                return rule.profile
    return default
