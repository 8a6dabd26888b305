"""``after_by_key``: ``Grounded(after=...)`` names rewritten into the
property keys of a pydantic schema written by alias."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, TypeAdapter

from agentflow.grounding import Grounded
from agentflow.grounding.after_keys import after_by_key
from agentflow.grounding.marker import AFTER_KEY


class Line(BaseModel):
    item_name: Annotated[str, Grounded()] = Field(alias="Item")
    price: Annotated[str, Grounded(after="item_name")] = Field(alias="Price")
    note: Annotated[list[str], Grounded(after="price")] = Field(default=[], alias="Notes")


class Plain(BaseModel):
    item_name: Annotated[str, Grounded()]
    price: Annotated[str, Grounded(after="item_name")]


class Invoice(BaseModel):
    lines: list[Line]
    total: Line | None = None
    plain: Plain


def test_after_names_become_the_keys_of_aliased_fields_at_any_depth() -> None:
    schema = TypeAdapter(Invoice).json_schema()
    after_by_key(schema, Invoice)
    line = schema["$defs"]["Line"]["properties"]
    assert line["Price"][AFTER_KEY] == "Item"
    assert line["Notes"]["items"][AFTER_KEY] == "Price"  # a list's items carry the rule
    # a model without aliases keeps python names, which are its keys
    assert schema["$defs"]["Plain"]["properties"]["price"][AFTER_KEY] == "item_name"


def test_a_node_that_is_not_the_models_is_left_alone() -> None:
    schema = TypeAdapter(Line).json_schema()
    schema["properties"]["Extra"] = {"type": "string"}  # not the model's keys any more
    after_by_key(schema, Line)
    assert schema["properties"]["Price"][AFTER_KEY] == "item_name"
