"""``VarScope`` (agentflow/_scopes.py): a context variable set for a block,
as ``request_priority`` and ``input_scope`` use it."""

from __future__ import annotations

import contextvars

import pytest

from agentflow._scopes import VarScope
from agentflow.batch_api.model import _current_input, input_scope
from agentflow.ratelimit import current_priority, request_priority

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("test_scopes", default="outer")


def test_set_for_the_block_and_restored_after_nesting_and_errors() -> None:
    with VarScope(VAR, "a"):
        assert VAR.get() == "a"
        with VarScope(VAR, "b"):
            assert VAR.get() == "b"
        assert VAR.get() == "a"
        with pytest.raises(KeyError), VarScope(VAR, "c"):
            raise KeyError("x")
        assert VAR.get() == "a"
    assert VAR.get() == "outer"


def test_as_a_decorator_each_call_its_own_scope() -> None:
    @VarScope(VAR, "deco")
    def inner(depth: int) -> list[str]:
        seen = [VAR.get()]
        return seen + (inner(depth - 1) if depth else [])

    assert inner(2) == ["deco", "deco", "deco"]  # re-entered: a fresh scope per call
    assert VAR.get() == "outer"

    @request_priority("batch")
    def priority() -> str:
        return current_priority()

    assert priority() == "batch" and current_priority() == "live"


def test_the_stock_scopes() -> None:
    with request_priority("batch"):
        assert current_priority() == "batch"
    assert current_priority() == "live"
    before = _current_input.get()
    with input_scope("doc-1"):
        assert _current_input.get() == "doc-1"
    assert _current_input.get() == before
