"""``OpenAIRequestHooks.body_json``: a request body written with its
json_schema response format serialized once per output type (``WireFormat``),
the same bytes as serializing the whole body."""

from __future__ import annotations

import orjson

from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat
from agentflow.providers._openai_compat import GENERIC_PROFILE, OpenAICompatibleModel
from agentflow.providers._payload import dump_json

NATIVE = GENERIC_PROFILE.with_(native_output="json_schema")


def _model() -> OpenAICompatibleModel:
    return OpenAICompatibleModel("m", base_url="http://127.0.0.1:9/v1", api_key="k",
                                 profile=NATIVE)


def _format(name: str, field: str) -> ResponseFormat:
    return ResponseFormat("json_schema", {"type": "object", "properties": {field: {
        "type": "string", "description": "caf\u00e9 \u2014 \"quoted\""}}, "required": [field]},
        name=name)


def _body(model: OpenAICompatibleModel, rf: ResponseFormat | None, text: str = "hi",
          **options: object) -> dict[str, object]:
    return model._body([Msg.system("be brief"), Msg.user(text)], [],
                       GenerateOptions(response_format=rf, **options))  # type: ignore[arg-type]


def test_the_bytes_are_those_of_the_whole_body() -> None:
    model = _model()
    a = _format("A", "x")
    for text in ("hi", "\u00e9t\u00e9 \U0001f600", 'a "quote" and \\ back'):
        body = _body(model, a, text, max_tokens=50, temperature=0.5, logprobs=True)
        assert model.body_json(body) == dump_json(body)
    body = _body(model, a)
    assert model.body_json(body) == model.body_json(_body(model, a))  # the format's bytes kept
    assert orjson.loads(model.body_json(body) or b"")["response_format"]["json_schema"][
        "name"] == "A"


def test_another_output_type_is_written_from_its_own_format() -> None:
    model = _model()
    a, b = _format("A", "x"), _format("B", "y")
    body_a, body_b = _body(model, a), _body(model, b)
    assert model.body_json(body_b) == dump_json(body_b)
    assert model.body_json(body_a) is None  # the format sent before: written by the HTTP layer
    again = _body(model, a)
    sent = model.body_json(again)
    assert sent == dump_json(again) and b'"required":["x"]' in sent


def test_a_body_without_the_format_or_one_orjson_refuses_is_left_to_the_http_layer() -> None:
    model = _model()
    assert model.body_json(_body(model, None)) is None  # no response format at all
    a = _format("A", "x")
    lone = _body(model, a, "cut emoji \ud83d")  # a lone surrogate: dump_json repairs it
    assert model.body_json(lone) is None
    assert b"\\ufffd" in dump_json(lone) or "\ufffd".encode() in dump_json(lone)
    edited = _body(model, a)
    edited["response_format"] = {"type": "json_object"}  # replaced by a vendor's hook
    assert model.body_json(edited) is None
