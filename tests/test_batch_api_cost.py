"""Cost from the maintained price table (genai-prices): live price, the
table's batch price or half of live, and no estimate (never a guess) without
the package, for an unknown model or for a model off its vendor's host."""

from __future__ import annotations

import sys
from decimal import Decimal
from typing import Any

import pytest

from agentflow.batch_api.cost import BATCH_DISCOUNT, estimate_cost, price_key, usage_summary
from agentflow.model import Usage
from agentflow.providers.openai import OpenAIChatModel

MTOK = Usage(1_000_000, 1_000_000)


def table_price(model: str, provider: str, usage: Usage, batch: bool) -> Decimal:
    genai_prices = pytest.importorskip("genai_prices")
    calc = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
        model, provider_id=provider, price_context={"processing": "batch"} if batch else None)
    return Decimal(calc.total_price)


def test_the_tables_batch_price_is_used_where_it_has_one() -> None:
    cost = estimate_cost("gpt-4o-mini", Usage(1000, 100), MTOK, provider="openai")
    assert cost is not None and cost.batch_price == "table"
    assert cost.live_usd == table_price("gpt-4o-mini", "openai", Usage(1000, 100), False)
    assert cost.batch_usd == table_price("gpt-4o-mini", "openai", MTOK, True)
    assert cost.batch_usd < table_price("gpt-4o-mini", "openai", MTOK, False)
    assert cost.saved_usd == table_price("gpt-4o-mini", "openai", MTOK, False) - cost.batch_usd
    assert cost.total_usd == cost.live_usd + cost.batch_usd


def test_half_of_live_where_the_table_has_no_batch_price() -> None:
    cost = estimate_cost("claude-2", Usage(), MTOK, provider="anthropic")  # no batch variant
    assert cost is not None and cost.batch_price == "half of live"
    assert cost.batch_usd == table_price("claude-2", "anthropic", MTOK, False) * BATCH_DISCOUNT
    assert "half the live price" in cost.line()


def test_no_estimate_for_unknown_models_or_without_the_table(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert estimate_cost("no-such-model-xyz", MTOK) is None
    assert estimate_cost("gpt-4o-mini", MTOK, provider="no-such-provider") is None
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # not installed
    assert estimate_cost("gpt-4o-mini", MTOK, provider="openai") is None
    model: Any = OpenAIChatModel("gpt-4o-mini", api_key="k")
    assert usage_summary(model, Usage(700, 500), Usage(500, 500)) == (
        "1200 tokens (1000 in batches)")


def test_price_key_only_for_models_on_their_vendors_host() -> None:
    own: Any = OpenAIChatModel("gpt-4o-mini", api_key="k")
    assert price_key(own) == ("gpt-4o-mini", "openai")
    elsewhere: Any = OpenAIChatModel("gpt-4o-mini", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert price_key(elsewhere) is None
    assert price_key(object()) is None


def test_summary_shows_tokens_and_cost() -> None:
    pytest.importorskip("genai_prices")
    model: Any = OpenAIChatModel("gpt-4o-mini", api_key="k")
    text = usage_summary(model, Usage(700, 500), Usage(500, 500))
    assert text.startswith("1200 tokens (1000 in batches); est. $")
    assert "at the table's batch price, saved $" in text
    assert usage_summary(model, Usage()) == "0 tokens"
