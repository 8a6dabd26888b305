"""A list field's length bound (agentflow.output.list_bounds), and the
extraction steps that read it, for every way pydantic lets a list be bounded."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from annotated_types import Len, MaxLen
from pydantic import BaseModel, Field, conlist

from agentflow.extraction.chunk_schema import partial_model
from agentflow.extraction.merge_order import document_order
from agentflow.output.dialects import LOCAL_MAX_ITEMS, transform_schema
from agentflow.output.list_bounds import field_max_items, schema_max_items, without_min_items


class Bounded(BaseModel):
    field: list[str] = Field(max_length=2)
    annotated: Annotated[list[str], MaxLen(2)]
    grouped: Annotated[list[str], Len(1, 2)]
    constrained: conlist(str, min_length=1, max_length=2)  # type: ignore[valid-type]
    twice: Annotated[list[str], MaxLen(5), Field(max_length=2)]
    free: list[str]
    at_least: conlist(str, min_length=1)  # type: ignore[valid-type]


BOUNDED = ("field", "annotated", "grouped", "constrained", "twice")


@pytest.mark.parametrize("name", BOUNDED)
def test_every_declared_bound_is_read_and_the_lowest_wins(name: str) -> None:
    assert field_max_items(Bounded.model_fields[name]) == 2


def test_an_unbounded_list_or_no_field_has_no_bound() -> None:
    assert field_max_items(Bounded.model_fields["free"]) is None
    assert field_max_items(Bounded.model_fields["at_least"]) is None
    assert field_max_items(None) is None


def test_the_local_dialects_own_bound_is_not_the_schemas() -> None:
    schema = transform_schema(Bounded.model_json_schema(), "local").schema
    properties = schema["properties"]
    assert properties["free"]["maxItems"] == LOCAL_MAX_ITEMS
    assert schema_max_items(properties["free"]) is None
    assert schema_max_items(properties["constrained"]) == 2
    assert schema_max_items({"type": "array"}) is None


def test_without_min_items_keeps_every_other_constraint() -> None:
    assert without_min_items(Bounded.model_fields["grouped"].metadata) == [MaxLen(2)]
    assert without_min_items(Bounded.model_fields["at_least"].metadata) == []
    assert without_min_items(Bounded.model_fields["field"].metadata) == [MaxLen(2)]


@pytest.mark.parametrize("name", BOUNDED)
def test_merged_items_past_the_bound_are_cut_in_document_order(name: str) -> None:
    data: dict[str, Any] = {name: ["c", "a", "b"]}
    spans = {f"{name}[0]": [(20, 21)], f"{name}[1]": [(0, 1)], f"{name}[2]": [(10, 11)]}
    document_order(Bounded, data, spans, [name])
    assert data[name] == ["a", "b"]
    assert spans == {f"{name}[0]": [(0, 1)], f"{name}[1]": [(10, 11)]}


@pytest.mark.parametrize("name", ["grouped", "constrained", "at_least"])
def test_a_chunk_may_hold_none_of_a_lists_items(name: str) -> None:
    """A chunk's partial model drops the list's least number of items, however
    declared (a ``conlist(min_length=1)`` chunk with no items is valid), and
    keeps its most."""
    part = partial_model(Bounded)
    assert part.model_validate({name: []}).model_dump()[name] == []
    node = part.model_json_schema()["properties"][name]
    assert "minItems" not in node
    assert node.get("maxItems") == (None if name == "at_least" else 2)


@pytest.mark.parametrize("name", BOUNDED)
def test_a_mapped_lists_own_lower_bound_stays(name: str) -> None:
    node = partial_model(Bounded, name, 5).model_json_schema()["properties"][name]
    assert node["maxItems"] == 2
    assert partial_model(Bounded, "free", 5).model_json_schema()["properties"]["free"][
        "maxItems"] == 5
