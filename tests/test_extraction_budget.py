"""Token counting and the chunk budget."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from agentflow import ModelProfile
from agentflow.errors import UsageError
from agentflow.extraction.budget import (
    ASSUMED_CONTEXT_WINDOW,
    Chunking,
    FitCheck,
    TokenCounter,
    count_tokens,
    estimate_tokens,
    plan_budget,
)
from agentflow.providers.openai import OpenAIChatModel
from agentflow.testing import FunctionModel, Reply


class Counted:
    """A model whose tokenizer says every character is a token."""

    def __init__(self, profile: ModelProfile, fail: bool = False) -> None:
        self.profile, self.fail, self.calls = profile, fail, 0

    async def count_tokens(self, text: str) -> int:
        self.calls += 1
        if self.fail:
            raise ConnectionError("tokenizer down")
        return len(text)


def test_estimate_is_conservative() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdef") == 2
    assert estimate_tokens("abcd") == 2  # rounded up
    assert estimate_tokens("日本語") == 3  # one per non-ASCII code point
    english = "The quick brown fox jumps over the lazy dog. " * 20
    assert estimate_tokens(english) >= len(english) / 4  # above the usual 4 chars a token


async def test_count_tokens_asks_the_model_and_falls_back() -> None:
    model = Counted(ModelProfile())
    assert isinstance(model, TokenCounter)
    assert await count_tokens(model, "hello") == 5
    assert await count_tokens(Counted(ModelProfile(), fail=True), "hello world!") == 4
    assert await count_tokens(object(), "abcdef") == 2


async def test_a_model_that_cannot_be_used_is_not_a_tokenizer_fallback() -> None:
    """A missing weights file is the set-up error it is, raised by the count,
    not logged as a fallback and raised again by the first request."""
    from agentflow.errors import InvalidModelError
    from agentflow.providers.local import LocalModel

    with pytest.raises(InvalidModelError, match="does not exist"):
        await count_tokens(LocalModel("/nonexistent/model.gguf"), "hello")


async def test_openai_counts_with_tiktoken_or_the_estimate() -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="k")
    n = await model.count_tokens("hello world, hello tokens")
    if importlib.util.find_spec("tiktoken") is None:
        assert n == estimate_tokens("hello world, hello tokens")
    else:
        assert 0 < n <= estimate_tokens("hello world, hello tokens")
    await model.aclose()


async def test_a_document_that_fits() -> None:
    model = Counted(ModelProfile(context_window=1000, max_output_tokens=200))
    budget = await plan_budget(model, "short text", overhead_tokens=100)
    assert budget.fits and model.calls == 0  # surely fits by the estimate: nothing counted
    assert budget.chunk_tokens == 1000 - 200 - 100 - 64


async def test_a_dense_document_the_estimate_fits_is_counted() -> None:
    """``estimate_tokens``' 3 characters a token is no bound (a mail's base64
    attachment takes 1.5): a text of more UTF-8 bytes than the budget's tokens
    is counted, and one that does not fit is chunked, never read whole into the
    reply's reserve (the probe's msg_07: 4,013 tokens in, 83 left to reply)."""
    model = Counted(ModelProfile(context_window=1000, max_output_tokens=200))
    dense = "R0lGODdhAAEAAfAAAP///wAAACwAAAAAAAEAAQAC" * 18  # 720 characters
    assert estimate_tokens(dense) <= 636 < len(dense)
    budget = await plan_budget(model, dense, overhead_tokens=100)
    assert not budget.fits and model.calls == 1
    fits = await plan_budget(model, "y" * 636, overhead_tokens=100)
    assert fits.fits and model.calls == 1  # at most a token a byte: surely fits


async def test_a_document_that_does_not_fit_gets_chunk_chars_from_the_measured_ratio() -> None:
    model = Counted(ModelProfile(context_window=1000, max_output_tokens=200))
    budget = await plan_budget(model, "x" * 5000, overhead_tokens=100)
    assert not budget.fits and model.calls == 1
    assert budget.chars_per_token == 1.0
    assert budget.chunk_chars == int(636 * 0.9)
    assert budget.overlap == budget.chunk_chars // 10


async def test_reply_reserve_is_at_most_half_the_window_and_unknown_windows_are_assumed() -> None:
    budget = await plan_budget(Counted(ModelProfile(context_window=1000,
                                                    max_output_tokens=1000)), "x" * 5000, 0)
    assert budget.chunk_tokens == 1000 - 500 - 64
    unknown = await plan_budget(Counted(ModelProfile()), "x" * 50_000, 0)
    assert unknown.chunk_tokens == ASSUMED_CONTEXT_WINDOW - 2048 - 64


async def test_caller_limits() -> None:
    model = Counted(ModelProfile(context_window=100_000, max_output_tokens=1000))
    by_tokens = await plan_budget(model, "y" * 5000, 0, Chunking(max_tokens=1000, overlap=7))
    assert not by_tokens.fits and by_tokens.chunk_tokens == 1000 and by_tokens.overlap == 7
    by_chars = await plan_budget(model, "y" * 5000, 0, Chunking(max_chars=300))
    assert not by_chars.fits and by_chars.chunk_chars == 300


async def test_no_room_for_text_is_a_usage_error() -> None:
    model = FunctionModel(lambda r: Reply(text="x"),
                          profile=ModelProfile(context_window=500, max_output_tokens=200))
    with pytest.raises(UsageError, match="no room for text"):
        await plan_budget(model, "text", overhead_tokens=400)


async def test_map_over_items_takes_the_units_per_chunk_from_the_profile_or_the_caller() -> None:
    weak = Counted(ModelProfile(context_window=1000, max_output_tokens=200, items_per_chunk=1))
    items = await plan_budget(weak, "short text", 100, Chunking(items="entries"))
    assert not items.fits and items.units_per_chunk == 1  # read item by item even when it fits
    whole = await plan_budget(weak, "short text", 100)
    assert whole.fits and whole.units_per_chunk is None  # not asked: the profile's cap is unused
    mine = await plan_budget(weak, "x" * 5000, 100, Chunking(items="entries", items_per_chunk=3))
    assert mine.units_per_chunk == 3
    strong = Counted(ModelProfile(context_window=1000, max_output_tokens=200))
    free = await plan_budget(strong, "short text", 100, Chunking(items="entries"))
    assert free.fits and free.units_per_chunk is None


@pytest.mark.parametrize("bad", [{"max_tokens": 0}, {"max_chars": 0}, {"overlap": -1},
                                 {"items_per_chunk": 0}, {"items": "not a name"},
                                 {"item_unit": "page"}])
def test_bad_chunking(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        Chunking(**bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("chunking", [
    Chunking(), Chunking(max_tokens=50), Chunking(max_chars=40), Chunking(items="entries"),
])
async def test_fit_check_says_fits_only_where_the_budget_surely_does(chunking: Chunking) -> None:
    """``FitCheck`` (a run's check before ``plan_budget``) is ``True`` only where
    ``plan_budget`` says ``fits`` without counting: at every length around the
    limits, multi-byte text included; never with items (always chunked) or with
    no room for text (``plan_budget`` raises); a new profile is read again."""
    model = Counted(ModelProfile(context_window=1000, max_output_tokens=200))
    check = FitCheck(chunking)
    for text in ("", "a", "é" * 30, "x" * 50, "x" * 51, "é" * 26, "y" * 640, "y" * 700):
        for overhead in (0, 100):
            fits = check.fits(model, text, overhead)
            calls = model.calls
            budget = await plan_budget(model, text, overhead, chunking)
            assert not fits or budget.fits, (text[:3], len(text), overhead)
            assert not fits or model.calls == calls  # a sure fit: plan_budget counts nothing
    assert not check.fits(model, "x", 800)  # no room for text: plan_budget says so
    with pytest.raises(UsageError):
        await plan_budget(model, "x", 800, chunking)
    model.profile = ModelProfile(context_window=100, max_output_tokens=20)
    assert not check.fits(model, "y" * 60, 0)  # the smaller window is read
    if chunking.items is None and chunking.max_chars is None:
        assert check.fits(model, "y" * 10, 0)
