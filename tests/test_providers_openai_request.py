"""Request building of the OpenAI-style adapters (``providers._openai_request``)
and how ``OpenAICompatibleModel`` reads a reply's payloads
(``providers._openai_compat``): bodies built directly, no server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agentflow import ReActAgent
from agentflow.errors import ProviderError, ServerError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat, TextDelta
from agentflow.providers._markup import MarkupFilter
from agentflow.providers._openai_compat import GENERIC_PROFILE, OpenAICompatibleModel
from agentflow.providers._payload import ReplyGuard
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST, close_models, tracked

MESSAGES = [Msg.user("hi")]


def _model(cls: type[OpenAICompatibleModel] = OpenAICompatibleModel) -> OpenAICompatibleModel:
    return cls("m", base_url="http://127.0.0.1:9/v1", api_key="k", profile=GENERIC_PROFILE)


def _format(name: str, field: str) -> ResponseFormat:
    return ResponseFormat("json_schema", {"type": "object", "properties": {field: {
        "type": "integer"}}, "required": [field]}, name=name)


def _sent(model: OpenAICompatibleModel, rf: ResponseFormat) -> Any:
    return model.build_body(MESSAGES, [], GenerateOptions(response_format=rf))["response_format"]


def test_each_response_format_is_sent_as_its_own_and_a_repeated_one_is_reused() -> None:
    model = _model()
    a, b = _format("A", "x"), _format("B b", "y")
    first_a, first_b, again_a = _sent(model, a), _sent(model, b), _sent(model, a)
    assert first_a["json_schema"]["name"] == "A"
    assert first_a["json_schema"]["schema"]["required"] == ["x"]
    assert first_b["json_schema"]["name"] == "B_b"  # sanitized
    assert first_b["json_schema"]["schema"]["required"] == ["y"]
    assert again_a == first_a
    assert _sent(model, a) is again_a  # the same format in a row: its wire form once
    assert _sent(_model(), a) == first_a  # per model instance, same content


def _whole(model: OpenAICompatibleModel, payload: Mapping[str, Any]) -> list[Any]:
    guard = ReplyGuard(model.vendor, stream=False)
    return model.whole_chunks(guard, payload, MarkupFilter(()))


REPLY = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}


def test_a_payload_carrying_an_error_raises_it() -> None:
    with pytest.raises(ProviderError, match="boom"):
        _whole(_model(), {"error": {"message": "boom", "type": "server_error"}, **REPLY})
    chunks = _whole(_model(), {"error": None, **REPLY})  # an empty error is no error
    assert [c.text for c in chunks if isinstance(c, TextDelta)] == ["hi"]


def test_a_vendor_payload_check_runs_for_payloads_without_an_error_key() -> None:
    class Vendor(OpenAICompatibleModel):
        def payload_error(self, payload: Mapping[str, Any]) -> ProviderError | None:
            if "base_resp" in payload:
                return ServerError("vendor status", vendor=self.vendor)
            return None

    with pytest.raises(ServerError, match="vendor status"):
        _whole(_model(Vendor), {"base_resp": {"status_code": 1}, **REPLY})
    assert [c.type for c in _whole(_model(Vendor), REPLY)] == ["text", "finish"]


class _Invoice(BaseModel):
    total_cents: int = Field(description="the amount due, in cents, tax included")
    due: str = Field(description="the due date, ISO 8601")


@pytest.mark.parametrize(("model_name", "shown"), [
    ("qwen2.5-7b-instruct", True),        # llama.cpp / vLLM: a grammar over sampling only
    ("Meta-Llama-3.1-8B-Instruct", True),
    ("gpt-4o-mini", False),                # OpenAI's own model: OpenAI shows it itself
])
async def test_a_server_whose_grammar_hides_the_schema_gets_it_in_an_instruction(
        model_name: str, shown: bool) -> None:
    """ollama#8162's kind on generic OpenAI-compatible servers: the response
    format constrains decoding but the model never read the field names and
    descriptions, so it filled them wrongly."""
    try:
        async with OpenAIFake() as fake:
            fake.add(FakeReply(text='{"total_cents": 1250, "due": "2026-01-31"}'))
            model = tracked(OpenAIChatModel(model_name, api_key="k", base_url=fake.url,
                                            settings=FAST))
            reply = await ReActAgent("a", model).call("Invoice: 12.50 due Jan 31", _Invoice)
            body = fake.requests[0].body
    finally:
        await close_models()
    assert reply.output == _Invoice(total_cents=1250, due="2026-01-31")
    assert body["response_format"]["type"] == "json_schema"
    said = " ".join(str(m.get("content")) for m in body["messages"] if m["role"] == "system")
    assert ("in cents, tax included" in said and "total_cents" in said) is shown
