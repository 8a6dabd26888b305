"""Tests for agentflow.messages: Msg, blocks, metadata keys, JSON round trip."""

import dataclasses
import os
import re
from typing import Any

import orjson
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentflow.messages as messages_module
from agentflow.errors import InvalidInputError, StructuredOutputError
from agentflow.messages import (
    CACHE_CONTROL,
    STRUCTURED_OUTPUT,
    STRUCTURED_OUTPUT_ATTEMPT,
    STRUCTURED_OUTPUT_REMINDER,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    Msg,
    ReminderType,
    StructuredResult,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    msg_from_dict,
    msg_to_dict,
    new_id,
)

SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _all_keys(value):
    """Every dict key anywhere inside ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _all_keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _all_keys(v)


def _rich_msg() -> Msg:
    return Msg(
        "assistant",
        [
            ThinkingBlock("let me think… «ß»", signature="sig-1", provider_data={"redacted": "x"}),
            TextBlock("Hello — \"quoted\" \\ back\nslash 😀"),
            ToolUseBlock("call_1", "lookup", {"q": "zürich", "n": [1, 2.5, None, True]},
                         provider_data={"thought_signature": "abc"}),
        ],
        name="bot",
        metadata={STRUCTURED_OUTPUT: True, CACHE_CONTROL: False, "custom": {"k": [1, "v"]}},
    )


# ----------------------------------------------------------------------------- constants


def test_public_names_exist():
    for name in messages_module.__all__:
        assert hasattr(messages_module, name), name


def test_metadata_key_constants_are_distinct_snake_case_strings():
    keys = [
        STRUCTURED_OUTPUT_REMINDER,
        STRUCTURED_OUTPUT_REMINDER_TYPE,
        CACHE_CONTROL,
        STRUCTURED_OUTPUT,
        STRUCTURED_OUTPUT_ATTEMPT,
    ]
    assert all(isinstance(k, str) and SNAKE.match(k) for k in keys)
    assert len(set(keys)) == len(keys)
    assert STRUCTURED_OUTPUT_REMINDER == "structured_output_reminder"
    assert STRUCTURED_OUTPUT_REMINDER_TYPE == "structured_output_reminder_type"
    assert CACHE_CONTROL == "cache_control"
    assert STRUCTURED_OUTPUT == "structured_output"


def test_reminder_type_values():
    assert [r.value for r in ReminderType] == ["enter", "exit", "prompt"]
    assert ReminderType.PROMPT == "prompt"  # StrEnum: compares to its JSON form


# ----------------------------------------------------------------------------- Msg basics


def test_str_content_becomes_one_text_block():
    m = Msg("user", "hi")
    assert m.content == (TextBlock("hi"),)
    assert m.role == "user"
    assert m.name is None
    assert m.metadata == {}


def test_iterable_content_is_stored_as_tuple():
    blocks = [TextBlock("a"), TextBlock("b")]
    m = Msg("assistant", iter(blocks))
    assert m.content == tuple(blocks)
    assert isinstance(m.content, tuple)


def test_convenience_constructors():
    assert Msg.user("u").role == "user"
    assert Msg.system("s").role == "system"
    a = Msg.assistant("a", name="bob")
    assert (a.role, a.text, a.name) == ("assistant", "a", "bob")


def test_ids_are_unique_and_kept_when_given():
    assert Msg.user("x").id != Msg.user("x").id
    assert Msg.user("x", id="fixed").id == "fixed"


def test_msg_is_frozen_and_metadata_is_copied():
    meta = {"k": 1}
    m = Msg.user("x", metadata=meta)
    meta["k"] = 2
    assert m.metadata == {"k": 1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.role = "system"  # type: ignore[misc]


def test_blocks_are_frozen_with_type_discriminators():
    assert TextBlock("t").type == "text"
    assert ThinkingBlock("t").type == "thinking"
    assert ToolUseBlock("i", "n", {}).type == "tool_use"
    assert ToolResultBlock("i", "o").type == "tool_result"
    with pytest.raises(dataclasses.FrozenInstanceError):
        TextBlock("t").text = "u"  # type: ignore[misc]


def test_text_joins_text_blocks_and_skips_thinking_and_tools():
    m = Msg("assistant", [ThinkingBlock("hidden"), TextBlock("a"),
                          ToolUseBlock("1", "t", {}), TextBlock("b")])
    assert m.text == "ab"


def test_tool_uses_and_tool_results_in_order():
    u1, u2 = ToolUseBlock("1", "a", {"x": 1}), ToolUseBlock("2", "b", {})
    r1, r2 = ToolResultBlock("1", "one"), ToolResultBlock("2", "two", is_error=True)
    assert Msg("assistant", [TextBlock("t"), u1, u2]).tool_uses == [u1, u2]
    assert Msg("tool", [r1, r2]).tool_results == [r1, r2]
    assert Msg.user("no tools").tool_uses == []


def test_tool_uses_and_tool_results_of_one_block_messages():
    # the one-block fast paths answer as the general one: a new list each time
    u, r = ToolUseBlock("1", "a", {"x": 1}), ToolResultBlock("1", "one")
    call, result = Msg("assistant", [u]), Msg("tool", [r])
    assert call.tool_uses == [u] and call.tool_results == []
    assert result.tool_results == [r] and result.tool_uses == []
    assert Msg("assistant", [ThinkingBlock("t")]).tool_uses == []
    call.tool_uses.clear()
    result.tool_results.clear()
    assert call.tool_uses == [u] and result.tool_results == [r]
    assert call.tool_uses is not call.tool_uses


def test_equality_compares_content_and_id_but_not_result():
    a = Msg.user("x", id="same")
    b = Msg.user("x", id="same", result=StructuredResult(value=1))
    assert a == b
    assert a != Msg.user("x", id="other")
    assert a != Msg.user("y", id="same")
    assert a != Msg.user("x", id="same", metadata={"k": 1})


def test_replace_keeps_id_unless_given():
    m = Msg.user("x", metadata={"a": 1})
    r = m.replace(content="y")
    assert r.id == m.id
    assert r.text == "y"
    assert r.metadata == {"a": 1}
    assert m.text == "x"
    assert m.replace(id="new").id == "new"


def test_replace_of_metadata_or_result_copies_the_checked_message():
    m = Msg.assistant("x", metadata={"a": 1}, name="bot")
    r = m.replace(metadata={"b": 2})
    assert (r.role, r.content, r.name, r.id) == (m.role, m.content, m.name, m.id)
    assert r.metadata == {"b": 2} and m.metadata == {"a": 1}
    meta = {"c": 3}
    assert m.replace(metadata=meta).metadata is not meta  # a copy, as the constructor makes
    assert m.replace(metadata={}).metadata == {}
    assert m.replace(result=None) == m
    with pytest.raises(InvalidInputError):
        m.replace(role="robot")  # other changes are still checked


@pytest.mark.parametrize(("content", "named"), [
    ({"text": "what is 2+2?"}, "mapping"),  # iterated, it was its keys: the text was lost
    (b"what is 2+2?", "bytes"),              # iterated, it was ints: "item 0 is a int"
    (bytearray(b"hi"), "bytearray"),
    (None, "NoneType"),                      # was a bare "object is not iterable"
    (42, "int"),
])
def test_content_that_is_not_text_or_blocks_is_refused_by_kind(content: object,
                                                                named: str) -> None:
    with pytest.raises(InvalidInputError, match=named):
        Msg.user(content)  # type: ignore[arg-type]


def test_content_iterables_of_text_and_blocks_are_still_taken() -> None:
    assert Msg.user(iter(["a", TextBlock("b")])).content == (TextBlock("a"), TextBlock("b"))
    assert Msg.user(("a",)).content == (TextBlock("a"),)


# ----------------------------------------------------------------------------- output


def test_output_without_result_raises_with_raw_text():
    m = Msg.assistant("final words")
    with pytest.raises(StructuredOutputError) as info:
        _ = m.output
    assert info.value.raw_text == "final words"
    assert info.value.reason == "not_requested"
    assert "output type" in str(info.value)


def test_output_returns_value_or_raises_stored_error():
    ok = Msg.assistant("{}", result=StructuredResult(value={"a": 1}))
    assert ok.output == {"a": 1}
    err = StructuredOutputError("nope", raw_text="raw", attempts=3)
    bad = Msg.assistant("raw", result=StructuredResult(error=err))
    with pytest.raises(StructuredOutputError) as info:
        _ = bad.output
    assert info.value is err
    assert info.value.attempts == 3


class _Point(pydantic.BaseModel):
    x: int
    y: int


def test_structured_data_reads_json_of_flagged_message_even_after_round_trip():
    m = Msg.assistant('{"x": 1, "y": 2}', metadata={STRUCTURED_OUTPUT: True})
    restored = msg_from_dict(orjson.loads(orjson.dumps(msg_to_dict(m))))
    assert restored.structured_data(_Point) == _Point(x=1, y=2)


def test_structured_data_without_flag_raises():
    with pytest.raises(StructuredOutputError) as info:
        Msg.assistant('{"x": 1, "y": 2}').structured_data(_Point)
    assert info.value.raw_text == '{"x": 1, "y": 2}'


def test_structured_data_wrong_shape_raises_validation_error():
    m = Msg.assistant('{"x": "no"}', metadata={STRUCTURED_OUTPUT: True})
    with pytest.raises(pydantic.ValidationError):
        m.structured_data(_Point)


# ----------------------------------------------------------------------------- persistence


def test_msg_to_dict_exact_shape():
    m = Msg(
        "tool",
        [ToolResultBlock("call_1", "42", is_error=True, name="add")],
        name="n",
        metadata={"k": "v"},
        id="m1",
    )
    assert msg_to_dict(m) == {
        "id": "m1",
        "role": "tool",
        "name": "n",
        "content": [
            {"tool_use_id": "call_1", "output": "42", "is_error": True, "name": "add",
             "is_json": False, "type": "tool_result"},
        ],
        "metadata": {"k": "v"},
    }


def test_every_block_kind_dumps_with_snake_case_keys():
    d = msg_to_dict(_rich_msg())
    d["content"].append(msg_to_dict(Msg("tool", [ToolResultBlock("c", "o")]))["content"][0])
    keys = set(_all_keys(d))
    assert keys >= {"tool_use_id", "is_error", "provider_data", "signature", "thinking", "input"}
    assert all(SNAKE.match(k) for k in keys if k not in {"custom", "k"}), keys


def test_round_trip_through_json_is_exact():
    m = _rich_msg()
    blob = orjson.dumps(msg_to_dict(m))
    restored = msg_from_dict(orjson.loads(blob))
    assert restored == m
    assert restored.content == m.content
    assert restored.metadata == m.metadata
    assert restored.id == m.id
    assert restored.name == "bot"
    # and dumping again gives the same bytes
    assert orjson.dumps(msg_to_dict(restored)) == blob


def test_round_trip_drops_result():
    m = Msg.assistant("x", result=StructuredResult(value=5))
    assert msg_from_dict(msg_to_dict(m)).result is None


def test_msg_from_dict_errors():
    with pytest.raises(KeyError):
        msg_from_dict({"content": []})
    with pytest.raises(pydantic.ValidationError):
        msg_from_dict({"role": "user", "content": [{"type": "image", "url": "x"}]})


_json_scalars = (
    st.none() | st.booleans() | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=8,
)
_blocks = st.one_of(
    st.builds(TextBlock, st.text()),
    st.builds(ThinkingBlock, st.text(), st.none() | st.text(max_size=10),
              st.dictionaries(st.text(max_size=5), _json, max_size=2)),
    st.builds(ToolUseBlock, st.text(min_size=1, max_size=10), st.text(max_size=10),
              st.dictionaries(st.text(max_size=8), _json, max_size=3)),
    st.builds(ToolResultBlock, st.text(max_size=10), st.text(), st.booleans(),
              st.text(max_size=10)),
)
_msgs = st.builds(
    Msg,
    st.sampled_from(["system", "user", "assistant", "tool"]),
    st.lists(_blocks, max_size=4),
    st.none() | st.text(max_size=10),
    st.dictionaries(st.text(max_size=8), _json, max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(_msgs)
def test_round_trip_property(m):
    restored = msg_from_dict(orjson.loads(orjson.dumps(msg_to_dict(m))))
    assert restored == m


# ----------------------------------------------------------------------------- construction


def test_msg_fields_are_set_through_the_slots_and_stay_frozen() -> None:
    """``Msg`` and its text block are built without the dataclass ``__init__``
    (the slots' setters): the same values, equality, hash and immutability."""
    msg = Msg.user("hi", name="n", metadata={"k": 1}, id="m1")
    assert (msg.role, msg.name, msg.metadata, msg.id, msg.result) == ("user", "n", {"k": 1},
                                                                      "m1", None)
    assert msg.content == (TextBlock("hi"),)
    assert hash(msg.content[0]) == hash(TextBlock("hi")) and msg.content[0].type == "text"
    assert msg == Msg("user", [TextBlock("hi")], name="n", metadata={"k": 1}, id="m1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        msg.role = "assistant"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        msg.content[0].text = "x"  # type: ignore[misc]
    copy = msg.replace(metadata={"k": 2})
    assert (copy.id, copy.content, copy.metadata, msg.metadata) == ("m1", msg.content,
                                                                    {"k": 2}, {"k": 1})
    assert Msg.user("a").id != Msg.user("a").id


def test_ids_are_a_process_prefix_and_one_counter_shared_by_messages() -> None:
    first = new_id()
    msg = Msg.user("x")
    last = new_id()
    ids = [first, msg.id, last]
    assert len(set(ids)) == 3
    assert all(len(i) == 18 and int(i, 16) >= 0 for i in ids)  # 8 hex + 10 hex digits
    assert {i[:8] for i in ids} == {first[:8]}
    assert [int(i[8:], 16) for i in ids] == [int(first[8:], 16) + k for k in range(3)]
    assert Msg.user("y", id="given").id == "given"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork only")
def test_a_process_forked_after_import_hands_out_ids_the_parent_never_will() -> None:
    parent_before = new_id()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next ids, then leave without pytest's teardown
        os.close(read_end)
        os.write(write_end, f"{new_id()} {Msg.user('x').id}".encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        child_ids = pipe.read().split()
    os.waitpid(pid, 0)
    parent_after = [new_id(), Msg.user("x").id]
    assert len(child_ids) == 2
    assert {i[:8] for i in child_ids} != {parent_before[:8]}
    assert not set(child_ids) & {parent_before, *parent_after}
    assert {i[:8] for i in parent_after} == {parent_before[:8]}


@pytest.mark.parametrize("make, name", [
    (lambda v: messages_module.TextBlock(v), "TextBlock.text"),
    (lambda v: messages_module.TextBlock(text=v), "TextBlock.text"),
    (lambda v: messages_module.ThinkingBlock(v), "ThinkingBlock.thinking"),
    (lambda v: messages_module.ToolResultBlock("call_1", v), "ToolResultBlock.output"),
])
@pytest.mark.parametrize("value", [5, None, b"bytes", ["a"]])
def test_a_block_refuses_text_that_is_not_a_str_where_it_is_made(
        make: Any, name: str, value: object) -> None:
    # was sent as is, and the vendor answered 400
    with pytest.raises(InvalidInputError, match=rf"{re.escape(name)} must be a str, got "
                                                rf"{type(value).__name__}"):
        make(value)


def test_a_block_keeps_str_and_str_subclasses() -> None:
    class Name(str):
        pass

    assert messages_module.TextBlock(Name("Ann")).text == "Ann"
    assert messages_module.TextBlock("").text == ""
