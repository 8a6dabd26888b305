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


def _imports_table(code: str) -> bool:
    """Whether running ``code`` in a fresh interpreter imports genai_prices."""
    import subprocess

    probe = code + "\nimport sys\nprint('genai_prices' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.strip().splitlines()[-1] == "True"


def test_the_price_table_is_imported_only_when_a_cost_is_printed() -> None:
    """genai-prices takes seconds to import: the CLI, a summary without a
    price key (a compatible server, the embedded model) and one without
    tokens never import it; a summary that prints a cost does."""
    pytest.importorskip("genai_prices")
    setup = ("import agentflow, agentflow.cli\n"
             "from agentflow.batch_api.cost import usage_summary\n"
             "from agentflow.model import Usage\n"
             "from agentflow.providers.openai import OpenAIChatModel\n")
    assert not _imports_table(
        setup
        + "usage_summary(OpenAIChatModel('gpt-4o-mini', api_key='k',"
          " base_url='http://127.0.0.1:9/v1'), Usage(10, 10))\n"  # no price key
        + "usage_summary(OpenAIChatModel('gpt-4o-mini', api_key='k'), Usage())\n"
        + "from agentflow.batch_api.cost import estimate_cost\n"
        + "assert estimate_cost('gpt-4o-mini', Usage()) is None\n")  # no tokens
    assert _imports_table(setup + "assert 'est. $' in usage_summary(OpenAIChatModel("
                          "'gpt-4o-mini', api_key='k'), Usage(10, 10))")
