"""What the model reads when a value fails a JSON Schema
(``agentflow.output.schema_errors``): a union's line names its branches and
the closest one's failing paths (``jsonschema`` said only "... is not valid
under any of the given schemas")."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentflow.client_tools import ClientTool, ClientTools
from agentflow.messages import ToolUseBlock
from agentflow.output.schema_errors import describe_schema_errors

SCHEMA: dict[str, Any] = {"type": "object", "$defs": {
    "Price": {"type": "object", "required": ["kind", "max"], "properties": {
        "kind": {"const": "price"}, "max": {"type": "number"}}},
    "Stock": {"type": "object", "required": ["kind", "only"], "properties": {
        "kind": {"const": "stock"}, "only": {"type": "boolean"},
        "where": {"anyOf": [{"type": "string"}, {"title": "Shelf", "type": "object",
                                                  "required": ["row"],
                                                  "properties": {"row": {"type": "integer"}}}]}}}},
    "properties": {
        "sort": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "filter": {"oneOf": [{"$ref": "#/$defs/Price"}, {"$ref": "#/$defs/Stock"}]},
        "tag": {"anyOf": [{"const": "a"}, {"const": "b"}]}}}


def lines(value: Any) -> list[str]:
    return describe_schema_errors(Draft202012Validator(SCHEMA).iter_errors(value))


@pytest.mark.parametrize(("value", "expected"), [
    # the tag names the branch: only its failures, with their paths
    ({"filter": {"kind": "price", "max": "cheap"}},
     "filter: fits no branch of oneOf (Price | Stock); closest, Price: filter.max: 'cheap' "
     "is not of type 'number'"),
    ({"filter": {"kind": "stock"}},
     "filter: fits no branch of oneOf (Price | Stock); closest, Stock: filter: 'only' is a "
     "required property"),
    # a tag no branch has: each branch with what sets it apart
    ({"filter": {"kind": "other"}},
     "filter: fits no branch of oneOf (Price | Stock): Price: filter.kind: 'price' was "
     "expected; Stock: filter.kind: 'stock' was expected"),
    # a value of none of the branches' types
    ({"sort": {"a": 1}}, "sort: fits no branch of anyOf (integer | string): got an object"),
    ({"sort": [1]}, "sort: fits no branch of anyOf (integer | string): got an array"),
    # branches with neither title, $ref nor type: their const, then their place
    ({"tag": "c"}, "tag: fits no branch of anyOf ('a' | 'b'): 'a': tag: 'a' was expected; "
                   "'b': tag: 'b' was expected"),
    # a union inside the closest branch, described the same way
    ({"filter": {"kind": "stock", "only": True, "where": {"row": "x"}}},
     "filter: fits no branch of oneOf (Price | Stock); closest, Stock: filter.where: fits no "
     "branch of anyOf (string | Shelf); closest, Shelf: filter.where.row: 'x' is not of "
     "type 'integer'"),
])
def test_a_union_names_its_branches_and_the_closest_failure(value: Any, expected: str) -> None:
    assert lines(value) == [expected]


def test_other_errors_are_path_and_message_in_path_order() -> None:
    assert lines({"sort": 1.5, "filter": {"kind": "price", "max": 1}, "tag": "a"}) == [
        "sort: fits no branch of anyOf (integer | string): got a number"]
    assert describe_schema_errors(Draft202012Validator(
        {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}}
    ).iter_errors({"a": "x", "b": 1})) == ["a: 'x' is not of type 'integer'",
                                           "b: 1 is not of type 'string'"]


def test_a_client_tools_union_error_names_the_branch() -> None:
    """The frontend tools' arguments are checked by the same function."""
    tools = ClientTools([ClientTool("find", "Find.", SCHEMA)])
    _, problem = tools._read(ToolUseBlock("c1", "find", {"filter": {"kind": "price",
                                                                      "max": "cheap"}}))
    assert problem == ("Invalid arguments for tool 'find':\n- filter: fits no branch of oneOf "
                       "(Price | Stock); closest, Price: filter.max: 'cheap' is not of type "
                       "'number'")
