"""Tests for agentflow.reply: parse_arguments, ToolCallAssembler, ReplyBuilder, generate()."""

import itertools
import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentflow.messages import CLOSED_TOOL_CALLS, Msg, TextBlock, ThinkingBlock, ToolUseBlock
from agentflow.model import (
    FinishChunk,
    GenerateOptions,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
    UsageChunk,
)
from agentflow.reply import (
    ModelResponse,
    ReplyBuilder,
    ToolCallAssembler,
    generate,
    parse_arguments,
)
from agentflow.testing import Call, Reply, ScriptedModel

# ----------------------------------------------------------------------------- parse_arguments


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, {}),
        ("", {}),
        ("   \n\t", {}),
        (b"", {}),
        ("null", {}),
        (" null ", {}),
        ({"a": 1}, {"a": 1}),
        ('{"a": 1, "b": "é"}', {"a": 1, "b": "é"}),
        ('{"a": 1, "b": "é"}'.encode(), {"a": 1, "b": "é"}),
        (json.dumps(json.dumps({"a": [1, 2]})), {"a": [1, 2]}),  # double-encoded
        ('"   "', {}),  # double-encoded empty
        ("not json", {"__raw_arguments__": "not json"}),
        ('{"a": 1', {"__raw_arguments__": '{"a": 1'}),
        ("[1, 2]", {"__raw_arguments__": "[1, 2]"}),
        ("42", {"__raw_arguments__": "42"}),
    ],
)
def test_parse_arguments_table(raw, expected):
    assert parse_arguments(raw) == expected


def test_parse_arguments_copies_mappings():
    src = {"a": 1}
    out = parse_arguments(src)
    out["b"] = 2
    assert src == {"a": 1}


# ----------------------------------------------------------------------------- assembler


def test_assembler_interleaved_parallel_calls():
    asm = ToolCallAssembler()
    assert not asm
    asm.add(ToolCallDelta(0, id="c0", name="alpha", arguments='{"x"'))
    asm.add(ToolCallDelta(1, id="c1", name="beta", arguments="{"))
    asm.add(ToolCallDelta(0, arguments=": 1}"))
    asm.add(ToolCallDelta(1, arguments='"y": "two"}'))
    assert asm
    assert asm.arguments_text(0) == '{"x": 1}'
    assert asm.name(1) == "beta"
    assert asm.name(7) is None
    assert asm.arguments_text(7) == ""
    assert asm.finish() == [
        ToolUseBlock("c0", "alpha", {"x": 1}),
        ToolUseBlock("c1", "beta", {"y": "two"}),
    ]


def test_assembler_orders_by_index_not_arrival():
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(2, id="c2", name="late", arguments="{}"))
    asm.add(ToolCallDelta(0, id="c0", name="early", arguments="{}"))
    assert [b.name for b in asm.finish()] == ["early", "late"]


def test_assembler_synthesises_missing_ids_and_folds_a_split_name():
    # a name streamed in two fragments (continuedev/continue#5849): one name
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(0, name="look"))
    asm.add(ToolCallDelta(0, name="up", arguments='{"a": 1}'))
    asm.add(ToolCallDelta(3, name="other"))
    asm.add(ToolCallDelta(5))  # neither name nor arguments: no call (lmstudio-bug-tracker#830)
    a, b = asm.finish()
    assert a.id.startswith("call_0_")
    assert a.name == "lookup"
    assert a.input == {"a": 1}
    assert b.id.startswith("call_3_")
    assert b.name == "other"
    assert b.input == {}


@pytest.mark.parametrize(("text", "count"), [
    ('{"a": 1}{"a": 2}', 2), ('{"a": 1}\n{"b": [1, "}{"]}\n', 2), ('{}{"a": 1}{}', 3),
    ('{"a": 1}', 1), ('{"a": 1}[2]', 1), ('{"a": 1}{"a": ', 1), ('{"a": 1} tail', 1),
    ('{"a": 1}{"a": 1}', 1),  # one call re-sent whole in the last delta: read once
])
def test_assembler_splits_objects_glued_into_one_call(text, count):
    asm = ToolCallAssembler()
    for i in range(0, len(text), 3):
        asm.add(ToolCallDelta(0, "call_x" if i == 0 else None, "f" if i == 0 else None,
                              text[i:i + 3]))
    blocks = asm.finish()
    assert len(blocks) == count
    assert blocks[0].id == "call_x" and {b.name for b in blocks} == {"f"}
    assert len({b.id for b in blocks}) == count
    if count > 1 or text == '{"a": 1}{"a": 1}':
        assert dict(blocks[0].input) == json.JSONDecoder().raw_decode(text)[0]
        assert all("__raw_arguments__" not in b.input for b in blocks)


def test_assembler_whole_call_object_and_provider_data():
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(0, id="g", name="geo", arguments_obj={"lat": 1.5},
                          provider_data={"thought_signature": "s1"}))
    asm.add(ToolCallDelta(0, provider_data={"extra": 2}))
    (block,) = asm.finish()
    assert block.input == {"lat": 1.5}
    assert block.provider_data == {"thought_signature": "s1", "extra": 2}


def test_assembler_bytes_split_inside_multibyte_character():
    payload = '{"city": "Zürich 😀"}'.encode()
    cut = payload.index("😀".encode()) + 2  # in the middle of the 4-byte emoji
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(0, id="c", name="t", arguments=payload[:cut]))
    asm.add(ToolCallDelta(0, arguments=payload[cut:]))
    assert asm.finish()[0].input == {"city": "Zürich 😀"}


def test_assembler_str_split_inside_escape_sequence():
    text = json.dumps({"s": 'a"b\\c\né😀'}, ensure_ascii=True)
    start = text.index("\\ud83d")
    asm = ToolCallAssembler()
    for piece in (text[: start + 3], text[start + 3 : start + 9], text[start + 9 :]):
        asm.add(ToolCallDelta(0, id="c", name="t", arguments=piece))
    assert asm.finish()[0].input == {"s": 'a"b\\c\né😀'}


_scalars = (
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8"))
    | st.sampled_from(['"', "\\", "\n", "\t", "é", "ß", "中文", "😀", "\\u00e9", "\u2028"])
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=10,
)
_args = st.dictionaries(st.text(max_size=8), _values, max_size=5)


def _split(data, cuts):
    points = sorted({c % (len(data) + 1) for c in cuts})
    bounds = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@settings(max_examples=150, deadline=None)
@given(args=_args, ascii_only=st.booleans(), cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_assembler_bytes_split_anywhere(args, ascii_only, cuts):
    payload = json.dumps(args, ensure_ascii=ascii_only).encode()
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(0, id="c", name="tool"))
    for piece in _split(payload, cuts):
        asm.add(ToolCallDelta(0, arguments=piece))
    (block,) = asm.finish()
    assert block.input == orjson.loads(payload)
    assert block.input == args


@settings(max_examples=150, deadline=None)
@given(args=_args, ascii_only=st.booleans(), cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_assembler_str_split_anywhere(args, ascii_only, cuts):
    payload = json.dumps(args, ensure_ascii=ascii_only)
    asm = ToolCallAssembler()
    for i, piece in enumerate(_split(payload, cuts)):
        asm.add(ToolCallDelta(0, id="c" if i == 0 else None, name="tool", arguments=piece))
    assert asm.finish()[0].input == orjson.loads(payload)


@settings(max_examples=100, deadline=None)
@given(
    first=_args,
    second=_args,
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
    order=st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_assembler_interleaved_byte_fragments(first, second, cuts, order):
    """Two calls whose byte fragments (split anywhere) arrive interleaved."""
    queues = [
        _split(json.dumps(first, ensure_ascii=False).encode(), cuts),
        _split(json.dumps(second).encode(), [c * 7 for c in cuts]),
    ]
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(1, id="b", name="second"))
    asm.add(ToolCallDelta(0, id="a", name="first"))
    pick = iter(order)
    while queues[0] or queues[1]:
        index = 0 if not queues[1] else 1 if not queues[0] else int(next(pick, False))
        asm.add(ToolCallDelta(index, arguments=queues[index].pop(0)))
    a, b = asm.finish()
    assert (a.id, a.name, b.id, b.name) == ("a", "first", "b", "second")
    assert a.input == orjson.loads(json.dumps(first))
    assert b.input == orjson.loads(json.dumps(second))


def test_assembler_truncated_multibyte_bytes_do_not_crash():
    asm = ToolCallAssembler()
    asm.add(ToolCallDelta(0, id="c", name="t", arguments='{"s": "ab😀'.encode()[:-2]))
    (block,) = asm.finish()
    assert "__raw_arguments__" in block.input


def test_parse_arguments_invalid_utf8_bytes_do_not_crash():
    assert "__raw_arguments__" in parse_arguments(b'{"a": "\xff"}')


# ----------------------------------------------------------------------------- ReplyBuilder


def test_reply_builder_orders_blocks_and_keeps_last_usage():
    rb = ReplyBuilder()
    for chunk in [
        TextDelta("Hel"),
        ThinkingDelta("think "),
        ToolCallDelta(0, id="c", name="t", arguments='{"a":'),
        TextDelta("lo"),
        ThinkingDelta("more", signature="sig", provider_data={"p": 1}),
        ToolCallDelta(0, arguments=" 1}"),
        UsageChunk(Usage(1, 1)),
        UsageChunk(Usage(7, 3)),
        FinishChunk("tool_calls", "tool_calls"),
    ]:
        rb.add(chunk)
    assert rb.text == "Hello"
    assert rb.usage == Usage(7, 3)
    assert rb.finish_reason == "tool_calls"
    msg = rb.build()
    assert msg.role == "assistant"
    assert msg.content == (
        ThinkingBlock("think more", "sig", {"p": 1}),
        TextBlock("Hello"),
        ToolUseBlock("c", "t", {"a": 1}),
    )


def test_reply_builder_names_the_calls_that_closed_before_a_length_cut():
    """At finish reason ``length``, the reply says which calls' argument text
    was whole all the same (padding cut, GPT-4.1); object-given calls and cut
    ones are never listed, and nothing is said at any other finish reason."""
    chunks = [
        ToolCallDelta(0, id="padded", name="t", arguments='{"a": 1}' + "\n" * 30),
        ToolCallDelta(1, id="given", name="t", arguments_obj={"a": 2}),
        ToolCallDelta(2, id="empty", name="t", arguments=""),
        ToolCallDelta(3, id="cut", name="t", arguments='{"a": 3, "b": "x'),
    ]
    rb = ReplyBuilder()
    for chunk in [*chunks, FinishChunk("length", "length")]:
        rb.add(chunk)
    msg = rb.build()
    assert msg.metadata[CLOSED_TOOL_CALLS] == ["padded"]
    assert [c.id for c in msg.tool_uses] == ["padded", "given", "empty", "cut"]
    rb = ReplyBuilder()
    for chunk in [*chunks, FinishChunk("tool_calls", "tool_calls")]:
        rb.add(chunk)
    assert CLOSED_TOOL_CALLS not in rb.build().metadata


@pytest.mark.parametrize(("text", "reason", "expected"), [
    ('{"id": 42', "tool_calls", {"id": 42}),          # vLLM's Hermes parser lost the brace
    ('{"a": [1, {"b": 2}]', "stop", {"a": [1, {"b": 2}]}),
    ('{"a": [1, {"b": 2', "stop", {"__raw_arguments__": '{"a": [1, {"b": 2'}),
    ('{"name":"Ana","items":["a","b"', "tool_calls",      # cut; a router said tool_calls
     {"__raw_arguments__": '{"name":"Ana","items":["a","b"'}),
    ('{"a": 1}}', "tool_calls", {"a": 1}),            # Qwen's extra brace
    ('{"a": 1}}', "length", {"a": 1}),
    ('{"id": 42', "length", {"__raw_arguments__": '{"id": 42'}),  # cut: never completed
    ('{"id": 42', "content_filter", {"__raw_arguments__": '{"id": 42'}),
    ('{"a": "unterminated', "tool_calls", {"__raw_arguments__": '{"a": "unterminated'}),
])
def test_reply_builder_sets_closing_brackets_right_when_the_reply_ended(text, reason, expected):
    rb = ReplyBuilder()
    for chunk in [ToolCallDelta(0, id="c", name="t", arguments=text[:5]),
                  ToolCallDelta(0, arguments=text[5:]), FinishChunk(reason, reason)]:
        rb.add(chunk)
    assert dict(rb.build().tool_uses[0].input) == expected


def test_reply_builder_empty_reply():
    rb = ReplyBuilder()
    msg = rb.build()
    assert msg.content == ()
    assert rb.finish_reason == "stop"
    assert rb.usage == Usage()


def test_reply_builder_signature_only_thinking_block_is_kept():
    rb = ReplyBuilder()
    rb.add(ThinkingDelta(signature="only-sig"))
    assert rb.build().content == (ThinkingBlock("", "only-sig", {}),)


# ----------------------------------------------------------------------------- generate


async def test_generate_folds_stream_into_response():
    model = ScriptedModel([
        Reply(text="hello world", thinking="hmm", chunk_size=3, usage=Usage(4, 6),
              tool_calls=[Call("t", {"k": "vé"}, id="c1")])
    ])
    options = GenerateOptions(max_tokens=5)
    response = await generate(model, [Msg.user("hi")], options=options)
    assert isinstance(response, ModelResponse)
    assert response.message.text == "hello world"
    assert response.message.content[0] == ThinkingBlock("hmm")
    assert response.message.tool_uses == [ToolUseBlock("c1", "t", {"k": "vé"})]
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(4, 6, requests=1)
    assert model.requests[0].options is options
    assert model.requests[0].tools == ()


async def test_generate_default_options_and_error_propagates():
    model = ScriptedModel(["ok", Reply(error=ValueError("boom"))])
    response = await generate(model, [Msg.user("hi")])
    assert response.message.text == "ok"
    assert model.requests[0].options == GenerateOptions()
    with pytest.raises(ValueError, match="boom"):
        await generate(model, [Msg.user("again")])




# ----------------------------------------------------------------------------- argument text


def test_a_call_keeps_its_argument_text_only_when_it_is_one_plain_json_object() -> None:
    from agentflow.messages import msg_from_dict, msg_to_dict

    def built(arguments: str) -> ToolUseBlock:
        builder = ReplyBuilder()
        builder.add(ToolCallDelta(0, "c1", "f", arguments))
        [block] = builder.build().tool_uses
        return block

    plain = built('{"a": 1, "b": [2]}')
    assert plain.arguments == '{"a": 1, "b": [2]}' and plain.input == {"a": 1, "b": [2]}
    for other in ('```json\n{"a": 1}\n```', '"{\\"a\\": 1}"', "{'a': 1}", '{"a": "\\u00e9"}'):
        block = built(other)
        assert block.arguments is None and block.input == {"a": 1} | (
            {"a": "é"} if "u00e9" in other else {})
    given = ReplyBuilder()
    given.add(ToolCallDelta(0, "c1", "f", arguments_obj={"a": 1}))
    assert given.build().tool_uses[0].arguments is None  # sent as an object: no text
    # not persisted, not compared, not shown
    restored = msg_from_dict(msg_to_dict(Msg("assistant", [plain])))
    assert "arguments" not in msg_to_dict(Msg("assistant", [plain]))["content"][0]
    assert restored.content[0] == plain and restored.content[0].arguments is None  # type: ignore[union-attr]
    assert "arguments" not in repr(plain)
