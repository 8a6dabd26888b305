"""Request building of the OpenAI-style adapters (``providers._openai_request``)
and how ``OpenAICompatibleModel`` reads a reply's payloads
(``providers._openai_compat``): bodies built directly, no server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentflow.errors import ProviderError, ServerError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat, TextDelta
from agentflow.providers._markup import MarkupFilter
from agentflow.providers._openai_compat import GENERIC_PROFILE, OpenAICompatibleModel
from agentflow.providers._payload import ReplyGuard

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
