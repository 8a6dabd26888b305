"""Output types from JSON Schema documents, used as given."""

from __future__ import annotations

import orjson
import pytest

from agentflow import ReActAgent
from agentflow.errors import SchemaError
from agentflow.output.json_schema import coerce_scalars, field_path, json_schema_output
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


TREE = {"type": "object", "title": "Node", "required": ["name", "children"], "properties": {
    "name": {"type": "string"},
    "children": {"type": "array", "items": {"$ref": "#"}}}}
DEEP = {"name": "root", "children": [{"name": "a", "children": [
    {"name": "b", "children": []}]}]}


def _objects(node: object) -> list[dict[str, object]]:
    if isinstance(node, dict):
        own = [node] if node.get("type") == "object" else []
        return own + [o for v in node.values() for o in _objects(v)]
    if isinstance(node, list):
        return [o for v in node for o in _objects(v)]
    return []


@pytest.mark.parametrize("dialect", ["plain", "openai_strict", "gemini", "local"])
def test_a_root_recursive_schema_builds_in_every_dialect(dialect: str) -> None:
    """``{"$ref": "#"}`` (a tree node whose children are nodes) used to fail
    in pydantic's schema generator (``cannot build a JSON Schema: '#'``)."""
    from jsonschema import Draft202012Validator

    from agentflow.output.schema import OutputSpec

    tree = json_schema_output(TREE)
    sent = OutputSpec.of(tree).schema_for(dialect).schema  # type: ignore[arg-type]
    assert '"#"' not in orjson.dumps(sent).decode()
    assert all(str(ref).startswith("#/$defs/") for ref in _refs_of(sent))
    Draft202012Validator.check_schema(sent)
    Draft202012Validator(sent).validate(DEEP)  # the references resolve, at any depth
    assert not Draft202012Validator(sent).is_valid(
        {"name": "r", "children": [{"name": "a", "children": [{"name": 3, "children": []}]}]})
    if dialect == "openai_strict":
        assert all(o.get("additionalProperties") is False for o in _objects(sent))


def _refs_of(node: object) -> list[object]:
    if isinstance(node, dict):
        return ([node["$ref"]] if "$ref" in node else []) + [
            r for v in node.values() for r in _refs_of(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs_of(v)]
    return []


@pytest.mark.parametrize("profile", [
    {}, {"native_output": "json_schema", "schema_dialect": "openai_strict"},
    {"schema_dialect": "gemini"}, {"native_output": "json_schema", "schema_dialect": "gemini"},
], ids=["tool", "openai-native", "gemini-tool", "gemini-native"])
async def test_a_root_recursive_schema_is_asked_and_validated_at_depth(
    profile: dict[str, str],
) -> None:
    from agentflow import ModelProfile

    tree = json_schema_output(TREE)
    bad = {"name": "root", "children": [{"name": "a", "children": [{"children": []}]}]}
    native = "native_output" in profile
    replies = [orjson.dumps(v).decode() if native else
               Reply(tool_calls=[Call("generate_response", v)]) for v in (bad, DEEP)]
    model = ScriptedModel(replies, profile=ModelProfile(**profile))  # type: ignore[arg-type]
    reply = await ReActAgent("t", model).call("the tree: root > a > b", tree, ground=True)
    assert reply.output.model_dump() == DEEP
    assert "children[0].children[0]" in str(model.requests[1].messages)


def test_draft7_definitions_recursion_builds() -> None:
    from agentflow.output.schema import OutputSpec

    schema = {"type": "object", "required": ["root"], "properties": {
        "root": {"$ref": "#/definitions/node"}}, "definitions": {"node": {
            "type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"},
                "kids": {"type": "array", "items": {"$ref": "#/definitions/node"}}}}}}
    doc = json_schema_output(schema)
    sent = OutputSpec.of(doc).schema_for("openai_strict").schema
    assert "definitions" not in sent and set(map(str, _refs_of(sent))) == {"#/$defs/node"}
    value = {"root": {"name": "a", "kids": [{"name": "b", "kids": []}]}}
    assert doc.model_validate(value).model_dump() == value


def test_unsupported_references_are_a_schema_error_naming_the_field() -> None:
    to_nothing = {"type": "object", "properties": {"a": {"$ref": "#/properties/gone"}}}
    with pytest.raises(SchemaError, match=r"^a: the \$ref '#/properties/gone' points to no"):
        json_schema_output(to_nothing)
    anchor = {"type": "object", "$defs": {"x": {"$anchor": "xx", "type": "string"}},
              "properties": {"a": {"$ref": "#xx"}}}
    with pytest.raises(SchemaError, match=r"^a: the \$ref '#xx' points to no sub-schema"):
        json_schema_output(anchor)
    remote = {"type": "object", "properties": {"addr": {"$ref": "https://x.test/addr.json"}}}
    with pytest.raises(SchemaError, match=r"addr.*not local"):
        json_schema_output(remote)


LAX = {"type": "object", "$defs": {
    "Price": {"type": "object", "required": ["kind", "max"], "properties": {
        "kind": {"const": "price"}, "max": {"type": "number"}}},
    "Stock": {"type": "object", "required": ["kind", "only"], "properties": {
        "kind": {"const": "stock"}, "only": {"type": "boolean"}}},
    "Node": {"type": "object", "properties": {
        "n": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
    "properties": {
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "sort": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "mode": {"anyOf": [{"type": "integer"}, {"enum": ["7", "fast"]}]},
        "filter": {"oneOf": [{"$ref": "#/$defs/Price"}, {"$ref": "#/$defs/Stock"}]},
        "both": {"allOf": [{"type": "object", "properties": {"n": {"type": "number"}}}]},
        "tree": {"$ref": "#/$defs/Node"},
        "rows": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]}}}


@pytest.mark.parametrize(("given", "read"), [
    ({"limit": "5"}, {"limit": 5}),                  # int | None: "5" is 5
    ({"limit": None}, {"limit": None}),
    ({"sort": "7"}, {"sort": "7"}),                  # int | str: a branch takes the string
    ({"mode": "7"}, {"mode": "7"}),                  # an enum branch holds it
    ({"mode": "8"}, {"mode": 8}),
    ({"filter": {"kind": "price", "max": "9.5"}}, {"filter": {"kind": "price", "max": 9.5}}),
    ({"filter": {"kind": "stock", "only": "yes"}}, {"filter": {"kind": "stock", "only": True}}),
    ({"both": {"n": "1.5"}}, {"both": {"n": 1.5}}),
    ({"tree": {"n": "1", "kids": [{"n": "2", "kids": [{"n": "3"}]}]}},  # a recursion kept
     {"tree": {"n": 1, "kids": [{"n": 2, "kids": [{"n": 3}]}]}}),
    ({"rows": ["1", 2]}, {"rows": [1, 2]}),
])
def test_c27_strings_are_read_inside_unions_allof_and_refs(given: dict[str, object],
                                                           read: dict[str, object]) -> None:
    """The lax reading follows the schema into ``anyOf``/``oneOf`` (the branch
    the value is for), ``allOf`` and a ``$ref`` kept for a recursion, as
    pydantic reads ``int | None`` and a discriminated union; it stopped at
    them (``'5' is not valid under any of the given schemas``: a retry)."""
    assert json_schema_output(LAX).model_validate(given).model_dump() == read


def test_c27_a_string_no_branch_reads_is_still_an_error() -> None:
    with pytest.raises(ValueError, match=r"limit: fits no branch of anyOf \(integer \| null\)"):
        json_schema_output(LAX).model_validate({"limit": "five"})
    with pytest.raises(ValueError, match="filter"):
        json_schema_output(LAX).model_validate({"filter": {"kind": "price", "max": "cheap"}})


POINT = {"type": "object", "properties": {"lat": {"type": "number"}, "lng": {"type": "number"}},
         "required": ["lat", "lng"], "additionalProperties": False}
POINTER_REFS = {  # a local $ref is a JSON pointer: into properties and items, escaped, encoded
    "properties": {"type": "object", "required": ["from", "to"], "properties": {
        "from": POINT, "to": {"$ref": "#/properties/from"}}},
    "items": {"type": "object", "required": ["from", "to"], "properties": {
        "from": {"type": "array", "items": POINT}, "to": {"$ref": "#/properties/from/items"}}},
    "escaped": {"type": "object", "required": ["from", "to"], "$defs": {"geo/point": POINT},
                "properties": {"from": {"$ref": "#/$defs/geo~1point"},
                               "to": {"$ref": "#/$defs/geo~1point"}}},
    "encoded": {"type": "object", "required": ["from", "to"], "definitions": {"a point": POINT},
                "properties": {"from": {"$ref": "#/definitions/a%20point"},
                               "to": {"$ref": "#/definitions/a%20point"}}},
    "nested": {"type": "object", "required": ["from", "to"], "$defs": {"trip": {
        "type": "object", "properties": {"start": POINT}}}, "properties": {
        "from": {"$ref": "#/$defs/trip/properties/start"},
        "to": {"$ref": "#/$defs/trip/properties/start"}}},
}


@pytest.mark.parametrize("shape", list(POINTER_REFS))
@pytest.mark.parametrize("dialect", ["plain", "openai_strict", "gemini", "local"])
def test_every_local_json_pointer_ref_is_followed(shape: str, dialect: str) -> None:
    """zod-to-json-schema (TypeScript MCP servers, frontends) writes a
    sub-schema used twice as ``{"$ref": "#/properties/from"}``; a ``$ref`` is
    a JSON pointer (RFC 6901 escapes, percent-encoded). Each was refused as
    'recursive or points to nothing' (an MCP server with such a tool did not
    start); now the sent schema describes ``to`` as the point, in every
    dialect, and validation reads it so."""
    from jsonschema import Draft202012Validator

    from agentflow.output.schema import OutputSpec

    trip = json_schema_output(POINTER_REFS[shape])
    sent = OutputSpec.of(trip).schema_for(dialect).schema  # type: ignore[arg-type]
    Draft202012Validator.check_schema(sent)
    assert _refs_of(sent) == []  # no recursion: every reference inlined
    value = ({"from": [{"lat": 1, "lng": 2}], "to": {"lat": 3, "lng": 4}} if shape == "items"
             else {"from": {"lat": 1, "lng": 2}, "to": {"lat": 3, "lng": 4}})
    Draft202012Validator(sent).validate(value)
    assert not Draft202012Validator(sent).is_valid({**value, "to": {"lat": "north"}})
    assert trip.model_validate(value).model_dump() == value
    with pytest.raises(ValueError, match=r"to: 'lng' is a required property"):
        trip.model_validate({**value, "to": {"lat": 3}})


@pytest.mark.parametrize("dialect", ["plain", "openai_strict", "gemini", "local"])
def test_a_recursion_through_a_pointer_builds_and_validates_at_depth(dialect: str) -> None:
    """A recursion through a pointer that is not a definition (zod's
    ``z.lazy`` in a property: ``{"$ref": "#/properties/a"}``) becomes one
    through ``$defs``, the form every dialect takes."""
    from jsonschema import Draft202012Validator

    from agentflow.output.schema import OutputSpec

    schema = {"type": "object", "required": ["a"], "properties": {"a": {
        "type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "again": {"type": "array", "items": {"$ref": "#/properties/a"}}}}}}
    nested = json_schema_output(schema)
    sent = OutputSpec.of(nested).schema_for(dialect).schema  # type: ignore[arg-type]
    assert all(str(ref).startswith("#/$defs/") for ref in _refs_of(sent))
    deep = {"a": {"name": "x", "again": [{"name": "y", "again": [{"name": "z", "again": []}]}]}}
    Draft202012Validator(sent).validate(deep)
    assert not Draft202012Validator(sent).is_valid(
        {"a": {"name": "x", "again": [{"name": "y", "again": [{"name": 3, "again": []}]}]}})
    assert nested.model_validate(deep).model_dump() == deep


def test_c16_a_root_ref_into_defs_is_the_object_it_names() -> None:
    """Case C16's schema (what pydantic's ``model_json_schema()`` writes for a
    recursive model: ``{"$defs": {"Node": ...}, "$ref": "#/$defs/Node"}``, no
    root ``type``) was refused as 'not an object'."""
    import json
    from pathlib import Path

    from jsonschema import Draft202012Validator

    from agentflow.output.schema import OutputSpec

    cases = json.loads(Path(__file__).with_name("data").joinpath("cases.json").read_text())
    schema = next(c for c in cases if c["id"] == "C16")["json_schema"]
    node = json_schema_output(schema, name="Node")
    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": []}]}]}
    assert node.model_validate(tree).model_dump() == tree
    for dialect in ("plain", "openai_strict", "gemini", "local"):
        sent = OutputSpec.of(node).schema_for(dialect).schema  # type: ignore[arg-type]
        assert sent["type"] == "object" and "name" in sent["properties"]
        Draft202012Validator(sent).validate(tree)
    with pytest.raises(SchemaError, match="must describe an object"):
        json_schema_output({"$defs": {"N": {"type": "array"}}, "$ref": "#/$defs/N"})


def test_c27_unions_that_refer_to_each_other_are_read_once_round() -> None:
    """``N = null | M``, ``M = int | N``: each union's branches were read
    with a fresh ``$ref`` guard, so the lax reading went round the two for
    ever (RecursionError) instead of reading ``"5"`` as 5."""
    schema = {"type": "object", "$defs": {
        "N": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/M"}]},
        "M": {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/N"}]}},
        "properties": {"v": {"$ref": "#/$defs/N"}}}
    model = json_schema_output(schema)
    assert [model.model_validate({"v": v}).model_dump() for v in ("5", None, 3)] == [
        {"v": 5}, {"v": None}, {"v": 3}]
    backwards = {"$defs": {"N": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/M"}]},
                           "M": {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "integer"}]}},
                 "$ref": "#/$defs/N"}
    assert [coerce_scalars(v, backwards) for v in ("5", "x", [1])] == [5, "x", [1]]
