"""How long one request to the embedded model may take: as long as its
token budget says.

The default request deadline (``HttpSettings.deadline``, 600 s) suits a
vendor's API, whose replies come at tens of tokens per second or more. The
embedded model decodes on this machine's CPU, often on one thread shared by
several slots and other work: a long grounded extraction whose reply budget
grows with its input (``agentflow.output.reply_budget``) can need longer
than 600 s under load, and the deadline then failed a reading that was
going well. So its deadline follows the request: the time to evaluate a
whole window of prompt plus the time to decode every budgeted reply token,
both at conservative rates, never below the default.

Rates measured with ``LocalModel.stats`` (llama.cpp's own ``timings``): a
2,609-token prompt evaluated at 82 tokens/s and 47 tokens decoded at 13.2
tokens/s (1 thread, 1 slot, load 4.1-4.8 on 2 cores, 2026-12-06 11:18 UTC,
gemma3-270m); 21.6 tokens/s decoded on a quiet machine
(benchmarks/RESULTS.md, speed of set F); at load 3.3-4.8 two threads and
four slots ran 2.5 times slower than quiet (RESULTS.md, threads x slots).
The rates below are a fifth of the loaded figures and less (four slots
sharing one thread, and a heavier load): a deadline that passes means the
server is stuck, not slow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from agentflow.providers._http_settings import HttpSettings
from agentflow.usage import estimate_tokens

__all__ = ["PROMPT_TOKENS_PER_SECOND", "REPLY_TOKENS_PER_SECOND", "DeadlineRule",
           "reply_deadline"]

PROMPT_TOKENS_PER_SECOND = 16.0
"""Prompt tokens evaluated per second, conservatively (measured: 82 under load)."""
REPLY_TOKENS_PER_SECOND = 2.0
"""Reply tokens decoded per second, conservatively (measured: 13.2 under load)."""


def reply_deadline(reply_tokens: int, window: int, floor: float) -> float:
    """Seconds one embedded request may take: a whole ``window`` of prompt
    tokens evaluated at ``PROMPT_TOKENS_PER_SECOND`` plus ``reply_tokens``
    decoded at ``REPLY_TOKENS_PER_SECOND``, never below ``floor`` (the
    default deadline). With the defaults (a 4,096-token window, a 1,024-token
    reply) that is 768 s; a 6,000-token reply budget, 3,256 s.

    Raises:
        ValueError: a negative token count.
    """
    if reply_tokens < 0 or window < 0:
        raise ValueError(f"token counts must be >= 0, got reply_tokens={reply_tokens}, "
                         f"window={window}")
    need = window / PROMPT_TOKENS_PER_SECOND + reply_tokens / REPLY_TOKENS_PER_SECOND
    return max(floor, float(math.ceil(need)))


@dataclass(frozen=True, slots=True)
class DeadlineRule:
    """The deadline rule of one embedded model: ``fixed`` (the user's own
    ``settings.deadline``, anything but the default, ``None`` included),
    else ``reply_deadline`` per request above ``floor`` (the default)."""

    follows_budget: bool
    fixed: float | None
    floor: float

    @classmethod
    def of(cls, settings: HttpSettings | None) -> DeadlineRule:
        """The rule for a model made with ``settings`` (``None``: the defaults):
        a ``deadline`` left at ``HttpSettings``' default follows the budget."""
        default = HttpSettings().deadline
        given = settings.deadline if settings is not None else default
        return cls(given == default, given, default or 0.0)

    def seconds(self, body: Mapping[str, Any], budget_field: str, default_budget: int,
                window: int | None) -> float | None:
        """The deadline of the request ``body``: its reply budget is
        ``body[budget_field]`` (``default_budget`` when unset), its prompt a
        ``window`` of tokens (``None``: unknown, the prompt's own messages
        counted by ``estimate_tokens``)."""
        if not self.follows_budget:
            return self.fixed
        budget = body.get(budget_field)
        tokens = budget if isinstance(budget, int) and budget > 0 else default_budget
        prompt = window or estimate_tokens(orjson.dumps(body.get("messages"),
                                                        default=str).decode())
        return reply_deadline(tokens, prompt, self.floor)
