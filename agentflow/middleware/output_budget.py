"""The reply budget of a grounded request (``agentflow.output.reply_budget``):
the structured-output middleware's ``pre_reasoning`` sets ``max_tokens`` from
the source's size when the request sets none and its schema copies lists."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentflow.execution import CallExecution
from agentflow.messages import Msg
from agentflow.model import GenerateOptions
from agentflow.output.reply_budget import reply_budget, reply_tokens
from agentflow.usage import estimate_tokens

__all__ = ["budgeted"]


async def budgeted(ex: CallExecution, messages: Sequence[Msg], options: GenerateOptions,
                    schema: Any, source: str) -> GenerateOptions:
    """``options`` with the reply budget of a grounded request whose schema
    copies lists out of ``source`` (``agentflow.output.reply_budget``): tokens
    counted by the model's own ``count_tokens`` when it has one; ``options``
    as given when the schema copies no list, or when even the conservative
    estimate of the source (``estimate_tokens``) needs no more than the
    model's default cap (nothing counted then)."""
    profile = ex.model.profile
    need = reply_tokens(schema, estimate_tokens(source))
    if need is None or (profile.max_output_tokens is not None
                        and need <= profile.max_output_tokens):
        return options
    count = getattr(ex.model, "count_tokens", None)

    async def tokens(text: str) -> int:
        if count is not None:
            try:
                return int(await count(text))
            except Exception:  # a tokenizer that fails: the conservative estimate
                pass
        return estimate_tokens(text)

    budget = reply_budget(schema, await tokens(source),
                          await tokens("\n".join(m.text for m in messages)),
                          default=profile.max_output_tokens, window=profile.context_window)
    return options if budget is None else options.with_(max_tokens=budget)
