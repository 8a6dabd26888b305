"""Output types from JSON Schema documents, used as given."""

from __future__ import annotations

import pytest

from agentflow import ReActAgent
from agentflow.errors import SchemaError
from agentflow.output.json_schema import field_path, json_schema_output
from agentflow.testing import Call, Reply, ScriptedModel

SCHEMA = {
    "title": "Order", "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["new", "paid"]},
        "lines": {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"},
            "qty": {"type": "integer", "minimum": 1}}, "required": ["sku", "qty"]}},
    },
    "required": ["status", "lines"],
}


def test_field_paths() -> None:
    assert field_path(["lines", 2, "qty"]) == "lines[2].qty"
    assert field_path([]) == ""


def test_invalid_schemas_are_refused() -> None:
    with pytest.raises(SchemaError, match="not a valid JSON Schema"):
        json_schema_output({"type": "object", "properties": {"a": {"type": "strin"}}})
    with pytest.raises(SchemaError, match="must describe an object"):
        json_schema_output({"type": "array"})


async def test_the_model_is_asked_again_with_the_failing_fields_named() -> None:
    order = json_schema_output(SCHEMA)
    model = ScriptedModel([
        Reply(tool_calls=[Call("generate_response", {
            "status": "whatever", "lines": [{"sku": "ABC-1", "qty": 0}]})]),
        Reply(tool_calls=[Call("generate_response", {
            "status": "paid", "lines": [{"sku": "ABC-1", "qty": 2}]})]),
    ])
    reply = await ReActAgent("t", model).call("order", order)
    assert reply.output.model_dump() == {"status": "paid",
                                         "lines": [{"sku": "ABC-1", "qty": 2}]}
    retry = str(model.requests[1].messages)
    assert "status: 'whatever' is not one of" in retry and "lines[0].qty" in retry
    [tool] = [t for t in model.requests[0].tools if t.name == "generate_response"]
    assert tool.parameters["properties"]["lines"]["items"]["properties"]["sku"]["pattern"]


def test_local_refs_are_inlined_so_the_schema_builds() -> None:
    """A schema with ``$defs`` and ``$ref`` (what most generators write) builds
    and validates; the schema sent has the definitions inlined."""
    from agentflow.output.schema import OutputSpec

    schema = {"type": "object", "required": ["lines"], "properties": {
        "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}}},
        "$defs": {"line": {"type": "object", "required": ["qty"],
                           "properties": {"qty": {"type": "integer", "minimum": 1}}}}}
    Order = json_schema_output(schema)
    sent = OutputSpec.of(Order).schema_for("plain").schema
    assert "$ref" not in str(sent) and sent["properties"]["lines"]["items"]["required"] == ["qty"]
    assert Order.model_validate({"lines": [{"qty": 2}]}).model_dump() == {"lines": [{"qty": 2}]}
    with pytest.raises(ValueError, match=r"lines\[0\]\.qty"):
        Order.model_validate({"lines": [{"qty": 0}]})


async def test_c27_numbers_given_as_strings_are_read_without_a_retry() -> None:
    """C27 kind on a JSON Schema output: "30" for an integer is 30 (as a pydantic
    model's field reads it), in nested objects and list items too; only a value
    that means no number ("thirty") costs a retry, and a string field stays a string."""
    schema = {"type": "object", "required": ["a", "b", "flag", "parts", "note"], "properties": {
        "a": {"type": "integer"}, "b": {"type": ["number", "null"]},
        "flag": {"type": "boolean"}, "note": {"type": "string"},
        "parts": {"type": "array", "items": {"$ref": "#/$defs/part"}}},
        "$defs": {"part": {"type": "object", "properties": {"qty": {"type": "integer"}}}}}
    sums = json_schema_output(schema)
    model = ScriptedModel([
        Reply(tool_calls=[Call("generate_response", {
            "a": "30", "b": " 1.5", "flag": "True", "parts": [{"qty": "+2"}], "note": "12"})]),
    ])
    reply = await ReActAgent("t", model).call("add", sums)
    assert reply.output.model_dump() == {"a": 30, "b": 1.5, "flag": True,
                                         "parts": [{"qty": 2}], "note": "12"}
    assert len(model.requests) == 1
    for bad, path in (({"a": "thirty"}, "a"), ({"a": "1.5"}, "a"), ({"flag": "maybe"}, "flag"),
                      ({"parts": [{"qty": "two"}]}, r"parts\[0\]\.qty")):
        with pytest.raises(ValueError, match=path + ":"):
            sums.model_validate({"a": 1, "b": None, "flag": False, "parts": [], "note": "",
                                 **bad})
