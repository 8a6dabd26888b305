"""What the embedded model can do (``ModelProfile``), and how it samples:
the profile every GGUF served by ``LocalModel`` starts from
(``agentflow.providers.local`` re-exports these names)."""

from __future__ import annotations

from typing import Any

from agentflow.model import ModelProfile
from agentflow.providers._profiles import ProfileRule

__all__ = ["DEFAULT_PROFILE", "PROFILES", "SAMPLING"]

SAMPLING: tuple[tuple[str, Any], ...] = (
    ("repeat_penalty", 1.1),
    ("dry_multiplier", 0.8),
    ("dry_base", 1.75),
    ("dry_allowed_length", 2),
    ("dry_penalty_last_n", 32),
    ("dry_sequence_breakers", ["\n"]),
)
"""Anti-repetition for greedy decoding (llama.cpp server's sampler fields,
tools/server README, "POST /completion"): a greedy small model held to the
document's words by the grammar otherwise fills a list with one token
(``"debian", "debian", ...``) until the record is refused as degenerate.
``repeat_penalty`` over the default ``repeat_last_n`` (64 tokens) lowers
tokens just written; DRY penalises extending a sequence that repeats one in
the last 32 tokens. The window is that short on purpose: the document sits
in the context, and copying it (what grounding asks) must not count as
repetition; only the newline breaks a sequence, so a repeated list item
(``", "debian``) is one sequence however short the item. Measured on the
main job's tune sample (benchmarks/RESULTS.md, #10)."""

DEFAULT_PROFILE = ModelProfile(
    supports_tools=False,
    tool_choice_modes=frozenset(),
    native_output="json_schema",
    schema_dialect="local",
    substring_grammar=True,
    token_logprobs=True,
    context_window=4096,
    max_output_tokens=1024,
    concurrent_requests=1,
    sampling=SAMPLING,
    items_per_chunk=1,
)
"""Grammar-constrained JSON output, no tools; the ``local`` dialect bounds
strings and arrays so a small model always finishes a document; grounded
strings are held to the source by the grammar (llguidance). The window and
reply cap are ``LocalModel``'s defaults; each model reports its own. Every
request carries ``SAMPLING`` unless it sets those fields itself. A long
document read item by item (``Chunking(items=...)``) gives the small model
one item per chunk (``items_per_chunk``): it copies one entry of a changelog
well and loses or repeats entries among several (benchmarks/RESULTS.md,
long documents)."""

PROFILES: tuple[ProfileRule, ...] = ()
"""Every GGUF gets ``DEFAULT_PROFILE`` (the registry lists it as ``*``)."""
