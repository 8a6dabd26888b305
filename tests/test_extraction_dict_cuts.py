"""A dict that holds the most keys its schema allows is flagged
(agentflow/extraction/dict_cuts.py): the grammar stopped it there, and the
document may hold more pairs, as a list kept at its max_length is
(tests/test_locator_items.py)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from agentflow.batch import extract_many
from agentflow.extraction.dict_cuts import dict_caps, dict_cuts
from agentflow.extraction.records import to_record
from agentflow.extraction.report import render_report
from agentflow.model import ModelProfile
from agentflow.output.dialects import LOCAL_MAX_PROPERTIES
from agentflow.testing import FunctionModel, RecordedRequest


class Stock(BaseModel):
    shop: str
    counts: dict[str, int]
    top: Annotated[dict[str, int], Field(max_length=3)]
    maybe: dict[str, int] | None = None
    extra: dict[str, int] = Field(default_factory=dict, json_schema_extra={"maxProperties": 2})


FRUIT = [f"fruit{n}" for n in range(LOCAL_MAX_PROPERTIES + 3)]
DOC = "Corner shop\n" + "".join(f"{name}: {n}\n" for n, name in enumerate(FRUIT))


def pairs(n: int) -> dict[str, int]:
    return {name: i for i, name in enumerate(FRUIT[:n])}


def test_each_dicts_bound_is_its_own_else_the_local_dialects() -> None:
    assert dict_caps(Stock, "local") == {"counts": LOCAL_MAX_PROPERTIES, "top": 3,
                                         "maybe": LOCAL_MAX_PROPERTIES, "extra": 2}
    assert dict_caps(Stock, "plain") == {"top": 3, "extra": 2}  # no grammar cap elsewhere
    assert dict_caps(Stock, None) == {"top": 3, "extra": 2}


def test_the_shared_caps_are_read_only() -> None:
    caps = dict_caps(Stock, "plain")  # cached: every caller gets this one
    with pytest.raises(TypeError):
        caps["top"] = 99  # type: ignore[index]
    assert dict_caps(Stock, "plain") == {"top": 3, "extra": 2}


def test_a_dict_at_its_bound_is_named_with_it_and_one_below_is_not() -> None:
    full = Stock(shop="Corner shop", counts=pairs(LOCAL_MAX_PROPERTIES), top=pairs(3),
                 maybe=pairs(LOCAL_MAX_PROPERTIES - 1), extra=pairs(2))
    assert dict_cuts(Stock, full, "local") == {"counts": LOCAL_MAX_PROPERTIES, "top": 3,
                                               "extra": 2}
    assert dict_cuts(Stock, full, "plain") == {"top": 3, "extra": 2}
    short = Stock(shop="Corner shop", counts=pairs(2), top=pairs(2))
    assert dict_cuts(Stock, short, "local") == {}
    merged = Stock.model_construct(shop="x", counts=pairs(LOCAL_MAX_PROPERTIES + 2), top={},
                                   maybe=None, extra={})  # pairs of several chunks, each capped
    assert dict_cuts(Stock, merged, "local") == {"counts": LOCAL_MAX_PROPERTIES}
    assert dict_cuts(dict, {"counts": pairs(20)}, "local") == {}  # not a pydantic output


def test_an_empty_bound_never_counts_as_cut() -> None:
    class Nothing(BaseModel):
        none: Annotated[dict[str, int], Field(max_length=0)]

    assert dict_cuts(Nothing, Nothing(none={}), "local") == {}


def answers(output: dict[str, Any]) -> FunctionModel:
    def answer(request: RecordedRequest) -> str:
        return json.dumps(output)

    return FunctionModel(answer, profile=ModelProfile(schema_dialect="local"))


async def test_the_record_of_a_dict_at_its_bound_says_so() -> None:
    model = answers({"shop": "Corner shop", "counts": pairs(LOCAL_MAX_PROPERTIES),
                     "top": pairs(3), "maybe": None, "extra": pairs(1)})
    (result,) = [r async for r in extract_many(model, [DOC], Stock, ground=False)]
    assert result.ok and result.cut_dicts == {"counts": LOCAL_MAX_PROPERTIES, "top": 3}
    record = to_record(result)
    assert record["cut_dicts"] == {"counts": LOCAL_MAX_PROPERTIES, "top": 3}
    page = render_report([record], {"0": DOC})
    assert f"holds {LOCAL_MAX_PROPERTIES} keys, the most its schema allows" in page
    assert "holds 3 keys, the most its schema allows" in page

    model = answers({"shop": "Corner shop", "counts": pairs(2), "top": pairs(1),
                     "maybe": None, "extra": {}})
    (result,) = [r async for r in extract_many(model, [DOC], Stock, ground=False)]
    assert result.ok and result.cut_dicts == {} and "cut_dicts" not in to_record(result)
