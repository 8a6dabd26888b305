"""A call's ``Usage`` as AG-UI 1.0's own ``usage`` of a run's last event
(``RUN_FINISHED``, ``RUN_ERROR``: a list of ``TokenUsage``, one entry per
provider and model; a consumer sums the entries).

The accounting is the same: ``inputTokens`` counts every prompt token,
cached ones included (``cachedInputTokens`` and ``cacheWriteInputTokens``
are parts of it), and
``reasoningTokens`` is part of ``outputTokens``. One entry: agentflow sums a
call's requests (``Complete.usage``) without telling providers apart. No
entry at all (``usage`` left out) when a request of the call did not report
its usage: the protocol's counts are totals, and a sum of the known part
only would read as the whole (``Usage.known``); nor when the call made no
model request.
"""

from __future__ import annotations

from ag_ui.core import TokenUsage

from agentflow.usage import Usage

__all__ = ["token_usage"]


def token_usage(usage: object) -> list[TokenUsage] | None:
    """``usage`` (a ``Usage``; anything else, such as an error's ``None``, is
    none) as the ``usage`` of ``RUN_FINISHED``/``RUN_ERROR`` (see the module
    docstring); ``None``: leave it out."""
    if not isinstance(usage, Usage) or not usage.requests or not usage.known:
        return None
    return [TokenUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                       total_tokens=usage.total_tokens,
                       reasoning_tokens=usage.reasoning_tokens or None,
                       cached_input_tokens=usage.cached_tokens or None,
                       cache_write_input_tokens=usage.cache_write_tokens or None)]
