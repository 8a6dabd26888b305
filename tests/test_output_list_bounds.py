"""A list field's length bound (agentflow.output.list_bounds), and the
extraction steps that read it, for every way pydantic lets a list be bounded;
a dict field's number of keys, bounded the same way on the ``local`` dialect."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from annotated_types import Len, MaxLen
from pydantic import BaseModel, Field, conlist

from agentflow.extraction.chunk_schema import partial_model
from agentflow.extraction.merge_order import document_order
from agentflow.output.dialects import (
    LOCAL_CAP_KEY,
    LOCAL_MAX_ITEMS,
    LOCAL_MAX_PROPERTIES,
    LOCAL_MAX_STRING,
    transform_schema,
    without_local_caps,
)
from agentflow.output.list_bounds import (
    field_max_items,
    schema_max_items,
    schema_max_properties,
    without_min_items,
)


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


class AtTheCap(BaseModel):
    """Lists whose own bound equals the local dialect's default cap."""

    own: list[str] = Field(max_length=LOCAL_MAX_ITEMS)
    maybe: list[str] | None = Field(default=None, max_length=LOCAL_MAX_ITEMS)
    free: list[str]
    maybe_free: list[str] | None = None
    word: str = Field(max_length=LOCAL_MAX_STRING)


def test_a_types_own_bound_equal_to_the_local_cap_is_the_types() -> None:
    """The ``local`` dialect marks the bounds it adds; a ``max_length`` equal
    to ``LOCAL_MAX_ITEMS`` is the type's own and is read as such."""
    properties = transform_schema(AtTheCap.model_json_schema(), "local").schema["properties"]
    assert schema_max_items(properties["own"]) == LOCAL_MAX_ITEMS
    assert LOCAL_CAP_KEY not in properties["own"]
    assert schema_max_items(properties["maybe"]["anyOf"][0]) == LOCAL_MAX_ITEMS
    assert schema_max_items(properties["free"]) is None
    assert properties["free"][LOCAL_CAP_KEY] == ["maxItems"]
    assert schema_max_items(properties["maybe_free"]["anyOf"][0]) is None
    assert properties["free"]["items"][LOCAL_CAP_KEY] == ["maxLength"]
    assert LOCAL_CAP_KEY not in properties["word"]  # its own maxLength


def test_the_local_caps_marks_are_stripped_and_the_bounds_kept() -> None:
    schema = transform_schema(AtTheCap.model_json_schema(), "local").schema
    sent = without_local_caps(schema)
    assert LOCAL_CAP_KEY not in repr(sent) and LOCAL_CAP_KEY in repr(schema)  # not changed
    assert sent["properties"]["free"]["maxItems"] == LOCAL_MAX_ITEMS
    assert sent["properties"]["free"]["items"]["maxLength"] == LOCAL_MAX_STRING
    plain = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert without_local_caps(plain) is plain  # nothing to strip: not copied


def test_the_local_model_sends_no_caps_marks() -> None:
    pytest.importorskip("xllamacpp")
    from agentflow.messages import Msg
    from agentflow.model import GenerateOptions, ResponseFormat
    from agentflow.providers.local import LocalModel

    schema = transform_schema(AtTheCap.model_json_schema(), "local").schema
    options = GenerateOptions(response_format=ResponseFormat("json_schema", schema))
    body = LocalModel().build_body([Msg.user("x")], (), options)
    assert LOCAL_CAP_KEY not in body["grammar"] and '"maxItems":12' in body["grammar"]


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


def test_located_list_items_stop_at_the_types_own_bound_equal_to_the_cap() -> None:
    """A learned items locator offers a list's items in document order, at
    most the type's own ``max_length``, also when that equals the local
    dialect's default cap (else the grammar writes them all and the output
    fails validation)."""
    from agentflow import Example
    from agentflow.grounding import Grounded
    from agentflow.grounding.locators import apply_locators, learn_locators
    from agentflow.grounding.marker import mark_all_strings
    from agentflow.output.examples import check_examples
    from agentflow.output.schema import OutputSpec

    item = Annotated[str, Grounded(whole_items=True)]

    class Notes(BaseModel):
        title: str
        items: list[item] = Field(max_length=LOCAL_MAX_ITEMS)  # type: ignore[valid-type]

    examples = [
        Example("Release one\n\n  * Fix the parser.\n  * Drop a patch.\n",
                Notes(title="Release one", items=["Fix the parser.", "Drop a patch."])),
        Example("Release two\n\n  - Add a test.\n  - Bump the version.\n",
                Notes(title="Release two", items=["Add a test.", "Bump the version."])),
    ]
    own = [f"Change number {n}." for n in range(LOCAL_MAX_ITEMS + 3)]
    doc = "Release three\n\n" + "".join(f"  * {text}\n" for text in own)
    locators = learn_locators(check_examples(examples, Notes), Notes)
    schema = mark_all_strings(OutputSpec.of(Notes).schema_for("local").schema, None)
    located = apply_locators(schema, locators, doc)
    assert located["properties"]["items"]["x-grounded-values"] == own[:LOCAL_MAX_ITEMS]


class Counts(BaseModel):
    """Dicts, bounded by the type and not."""

    free: dict[str, int]
    own: Annotated[dict[str, int], Field(max_length=3)]
    maybe: dict[str, int] | None = None
    anything: dict[str, Any]
    extra: dict[str, int] = Field(json_schema_extra={"maxProperties": 4})
    nested: dict[str, list[str]]


def test_the_local_dialect_bounds_a_dicts_keys_unless_the_type_does() -> None:
    """Like a list's items: ``LOCAL_MAX_PROPERTIES`` where the schema sets no
    ``maxProperties``, marked as the dialect's; a type's own kept and read."""
    properties = transform_schema(Counts.model_json_schema(), "local").schema["properties"]
    for node in (properties["free"], properties["maybe"]["anyOf"][0], properties["anything"]):
        assert node["maxProperties"] == LOCAL_MAX_PROPERTIES
        assert node[LOCAL_CAP_KEY] == ["maxProperties"]
        assert schema_max_properties(node) is None
    assert schema_max_properties(properties["own"]) == 3 and LOCAL_CAP_KEY not in properties["own"]
    assert schema_max_properties(properties["extra"]) == 4
    assert LOCAL_CAP_KEY not in properties["extra"]
    values = properties["nested"]["additionalProperties"]  # a dict's values are bounded too
    assert values["maxItems"] == LOCAL_MAX_ITEMS
    assert values["items"]["maxLength"] == LOCAL_MAX_STRING
    assert "maxProperties" not in transform_schema(Counts.model_json_schema(), "plain").schema[
        "properties"]["free"]  # only the local dialect adds it


def test_a_closed_object_gets_no_key_bound_and_an_open_one_its_properties_more() -> None:
    from pydantic import ConfigDict

    class Closed(BaseModel):
        a: int

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        a: int
        b: int

    closed = transform_schema(Closed.model_json_schema(), "local").schema
    assert "maxProperties" not in closed and closed["additionalProperties"] is False
    opened = transform_schema(Open.model_json_schema(), "local").schema
    assert opened["maxProperties"] == 2 + LOCAL_MAX_PROPERTIES
    assert opened[LOCAL_CAP_KEY] == ["maxProperties"]


def test_a_dicts_key_bound_is_sent_and_its_mark_is_not() -> None:
    schema = transform_schema(Counts.model_json_schema(), "local").schema
    sent = without_local_caps(schema)
    assert sent["properties"]["free"]["maxProperties"] == LOCAL_MAX_PROPERTIES
    assert LOCAL_CAP_KEY not in repr(sent)
    pytest.importorskip("xllamacpp")
    from agentflow.messages import Msg
    from agentflow.model import GenerateOptions, ResponseFormat
    from agentflow.providers.local import LocalModel

    options = GenerateOptions(response_format=ResponseFormat("json_schema", schema))
    body = LocalModel().build_body([Msg.user("x")], (), options)
    assert f'"maxProperties":{LOCAL_MAX_PROPERTIES}' in body["grammar"]
    assert '"maxProperties":3' in body["grammar"] and LOCAL_CAP_KEY not in body["grammar"]


def test_the_substring_grammar_keeps_a_dicts_key_bound() -> None:
    """A dict beside grounded fields is inlined as JSON Schema in the
    substring grammar (``%json``), its ``maxProperties`` with it: llguidance
    enforces it there as in the plain schema grammar."""
    from agentflow.grounding import Grounded
    from agentflow.output.grammar import substring_grammar
    from agentflow.output.schema import OutputSpec

    class Stock(BaseModel):
        shop: Annotated[str, Grounded()]
        counts: dict[str, int]
        top: Annotated[dict[str, int], Field(max_length=3)]

    schema = without_local_caps(OutputSpec.of(Stock).schema_for("local").schema)
    text = substring_grammar(schema, "Corner shop: apples 3, pears 5", {
        "key_separator": ": ", "item_separator": ", "})
    assert text is not None
    inlined = [line for line in text.splitlines() if "%json" in line]
    assert any(f'"maxProperties": {LOCAL_MAX_PROPERTIES}' in line for line in inlined)
    assert any('"maxProperties": 3' in line for line in inlined)
    assert LOCAL_CAP_KEY not in text
