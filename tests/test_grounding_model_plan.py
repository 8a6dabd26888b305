"""An output that is exactly its model is read by the model's plan (its text
fields' markers read once per type, ``values._model_plan``) and by
``check_degenerate``'s walk of the model's own fields: both give what the
general walk gives, read on a subclass (which the plans never serve) or on
the output's dump."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from agentflow.grounding import Grounded, grounded_values
from agentflow.grounding.degenerate import check_degenerate
from agentflow.grounding.marker import Derived
from agentflow.grounding.typed_leaves import TypedValue


class Size(StrEnum):
    SMALL = "small"
    LARGE = "large"


class Inner(BaseModel):
    label: str
    note: Annotated[str | None, Grounded(whole_tokens=True)] = None


class Card(BaseModel):
    name: Annotated[str, Grounded(case_sensitive=False)]
    email: Annotated[str | None, Derived()] = None
    phone: Annotated[str | None, Grounded()] = None
    title: str | None = None
    plain: str = "x"
    code: Annotated[str, Grounded(longest=True), Field(pattern=r"[A-Z]+-\d+")] = "AB-1"
    either: str | int | None = None
    size: Annotated[Size, Grounded()] = Size.SMALL
    kind: Annotated[Literal["a", "b"], Grounded()] = "a"
    count: int | None = None
    tags: list[Annotated[str, Grounded()]] = []
    inner: Inner | None = None
    table: dict[str, str] = {}


class SubCard(Card):
    """The same fields: the general walk reads an instance of it."""


CARDS = [
    {"name": "Ann Lee", "email": "ann@x.org", "phone": "555", "title": "CTO", "plain": "p",
     "code": "XY-12", "either": "text", "size": "large", "kind": "b", "count": 3,
     "tags": ["a", "b", "a"], "inner": {"label": "L", "note": "N"}, "table": {"k": "v"}},
    {"name": "Bo", "either": 7, "inner": None},
    {"name": "ab" * 9, "title": "xyz" * 8, "tags": ["loop"] * 7},
]


@pytest.mark.parametrize("data", CARDS)
@pytest.mark.parametrize("default", [None, Grounded(), Grounded(whole_tokens=True)])
def test_the_plan_reads_what_the_walk_reads(data: dict[str, object],
                                           default: Grounded | None) -> None:
    planned: list[TypedValue] = []
    walked: list[TypedValue] = []
    by_plan = grounded_values(Card(**data), Card, default, planned)
    by_walk = grounded_values(SubCard(**data), Card, default, walked)
    assert by_plan == by_walk
    assert planned == walked


@pytest.mark.parametrize("data", CARDS)
def test_degeneracy_of_a_model_is_that_of_its_fields(data: dict[str, object]) -> None:
    card = Card(**data)
    source = "Bo " + "ab" * 3
    assert check_degenerate(card, source) == check_degenerate(card.model_dump(), source)
    assert check_degenerate(SubCard(**data), source) == check_degenerate(card, source)


def test_a_loop_and_a_runaway_list_are_still_found() -> None:
    card = Card(**CARDS[2])
    found = dict(check_degenerate(card, "nothing"))
    assert set(found) == {"name", "title", "tags"}
