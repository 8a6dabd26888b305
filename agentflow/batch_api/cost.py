"""What a run's tokens cost, live and at the batch price, from a maintained
price table: the ``genai-prices`` package (the ``prices`` extra; Pydantic's
table of vendors' list prices). Without the package, or for a model the table
does not know, there is no estimate (``None``), never a guess.

The batch price is the table's ``processing: batch`` price variant where it
has one; else half the live price, the discount every vendor documents for
its batch API: OpenAI "50% cost discount compared to synchronous APIs"
(platform.openai.com/docs/guides/batch), Anthropic "Batch processing costs
50% less" (docs.anthropic.com, Message Batches), Gemini batch mode "at 50% of
the standard cost" (ai.google.dev/gemini-api/docs/batch-mode).

Token counts map onto the table's usage as: ``input_tokens`` (every prompt
token, cached included) -> ``input_tokens``, ``cached_tokens`` ->
``cache_read_tokens``, ``cache_write_tokens`` -> ``cache_write_tokens`` (the
table prices prompt-cache writes above plain input: Anthropic's 5-minute
writes at 1.25x), ``output_tokens`` -> ``output_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from agentflow.model import Usage

__all__ = ["BATCH_DISCOUNT", "CostEstimate", "estimate_cost", "price_key", "usage_summary"]

BATCH_DISCOUNT = Decimal("0.5")
"""The batch price as a fraction of the live price where the table has no batch price."""
_NONE = Usage()


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """A run's cost in US dollars.

    ``live_usd``: the tokens of live requests at the live price;
    ``batch_usd``: the tokens of batch replies at the batch price;
    ``batch_price``: where that price came from (``"table"``: the table's
    batch price; ``"half of live"``: ``BATCH_DISCOUNT``); ``saved_usd``: what
    the batch tokens would have cost more live.
    """

    live_usd: Decimal
    batch_usd: Decimal
    saved_usd: Decimal
    batch_price: Literal["table", "half of live"]

    @property
    def total_usd(self) -> Decimal:
        """Live plus batch."""
        return self.live_usd + self.batch_usd

    def line(self) -> str:
        """``$0.0123 (batch $0.0040 at the table's batch price, saved $0.0040)``."""
        text = f"${self.total_usd:.4f}"
        if self.batch_usd or self.saved_usd:
            source = ("the table's batch price" if self.batch_price == "table"
                      else "half the live price")
            text += (f" (batch ${self.batch_usd:.4f} at {source}, "
                     f"saved ${self.saved_usd:.4f})")
        return text


def _table() -> Any:
    """The price table module, imported here and only here: it takes seconds
    to import (0.6 s warm, 2.6 s with a cold cache on a loaded machine;
    benchmarks/RESULTS.md), so only a summary that prints a cost pays it."""
    try:
        import genai_prices
    except ImportError:
        return None
    return genai_prices


def _price(table: Any, usage: Usage, model: str, provider: str | None,
           batch: bool) -> tuple[Decimal, bool]:
    """``(price, the table had a batch variant)``; raises ``LookupError``."""
    tokens = table.Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                         cache_read_tokens=usage.cached_tokens or None,
                         cache_write_tokens=usage.cache_write_tokens or None)
    context = {"processing": "batch"} if batch else None
    calc = table.calc_price(tokens, model, provider_id=provider, price_context=context)
    variants = getattr(calc.model, "price_variants", None) or ()
    has_batch = any(dict(v.when) == {"processing": "batch"} for v in variants)
    return Decimal(calc.total_price), has_batch


def estimate_cost(model: str, live: Usage, batch: Usage = _NONE, *,
                  provider: str | None = None) -> CostEstimate | None:
    """The cost of ``live`` tokens at the live price and ``batch`` tokens at
    the batch price for ``model`` (the vendor's model id) at ``provider``
    (the table's provider id; ``None``: the table's best match for the
    model), or ``None`` without ``genai-prices``, when its table does not
    know the pair, or when there are no tokens (then the table is not
    imported). Never raises."""
    if not (live.total_tokens or batch.total_tokens):
        return None  # nothing to price: the table is not even imported
    table = _table()
    if table is None:
        return None
    try:
        live_usd, _ = _price(table, live, model, provider, batch=False)
        batch_live = batch_usd = Decimal(0)
        has_batch = False
        if batch.total_tokens:
            batch_live, _ = _price(table, batch, model, provider, batch=False)
            batch_usd, has_batch = _price(table, batch, model, provider, batch=True)
    except Exception:  # an unknown model (LookupError) or a table that changed shape
        return None
    if not has_batch:
        batch_usd = batch_live * BATCH_DISCOUNT
    return CostEstimate(live_usd, batch_usd, batch_live - batch_usd,
                        "table" if has_batch else "half of live")


def price_key(model: Any) -> tuple[str, str] | None:
    """``(model id, provider id)`` to look ``model`` (a ``ChatModel``) up in the
    table: its ``price_provider`` or ``vendor`` name, or ``None`` for a model
    served elsewhere than its vendor's own host (``own_host`` false: a
    compatible server, a fake) whose price the table cannot know."""
    if getattr(model, "own_host", True) is False:
        return None
    provider = getattr(model, "price_provider", None) or getattr(model, "vendor", None)
    name = getattr(model, "model_name", None)
    if not isinstance(provider, str) or not provider or not isinstance(name, str):
        return None
    return name, provider


def usage_summary(model: Any, total: Usage, batch: Usage = _NONE) -> str:
    """The summary's tokens and cost for a run on ``model`` (a ``ChatModel``):
    ``"1200 tokens (1000 in batches); est. $0.0004 (...)"``, without the cost
    part when there is no estimate (``price_key``, ``estimate_cost``).
    ``total`` includes ``batch``. Requests whose usage the vendor did not
    report (``Usage.unreported``) are said to be unknown, never counted as 0
    tokens (``"tokens unknown (3 requests unreported)"``), and a cost over the
    known part only is a floor (``"est. at least $..."``)."""
    text = total.describe()
    if batch.total_tokens:
        text += f" ({batch.total_tokens} in batches)"
    live = Usage(max(0, total.input_tokens - batch.input_tokens),
                 max(0, total.output_tokens - batch.output_tokens),
                 max(0, total.cached_tokens - batch.cached_tokens),
                 cache_write_tokens=max(0, total.cache_write_tokens - batch.cache_write_tokens))
    key = price_key(model)
    cost = (estimate_cost(key[0], live, batch, provider=key[1])
            if key is not None and total.total_tokens else None)
    if cost is None:
        return text
    return text + (f"; est. {cost.line()}" if total.known else f"; est. at least {cost.line()}")
