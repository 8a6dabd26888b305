"""Vendor fault: an older Ollama refusing a field's newer form.

Ollama took a JSON schema in ``format`` from 0.5 on; before that its Go
decoder refused the request, 400 ``{"error": "json: cannot unmarshal object
into Go struct field ChatRequest.format of type string"}`` (ollama/ollama#7991,
https://github.com/ollama/ollama/issues/7991; Kiln-AI/Kiln#186), and a
``think`` level where only a boolean was taken the same way. It was a plain
``BadRequestError``: every structured call failed on such a server. It is an
``UnsupportedFeatureError`` of the feature the field carries now
(``native_output`` for ``format``, ``thinking`` for ``think``), so the
engine steps down to the output tool instead of failing the call.

Served by the Ollama fake as an Ollama 0.4 server, through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from agentflow import ReActAgent, UnsupportedFeatureError
from agentflow.providers._ollama_errors import map_error
from agentflow.providers.ollama import OllamaChatModel
from tests.fakes.base import FakeCall, FakeError, FakeReply
from tests.fakes.ollama import OllamaFake, ollama_error
from tests.provider_scenarios import FAST


class Ollama04(OllamaFake):
    """Ollama before 0.5: ``format`` is a string, ``think`` a boolean."""

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        for field, kind in (("format", str), ("think", bool)):
            value = body.get(field) if isinstance(body, dict) else None
            if value is not None and not isinstance(value, kind):
                got = "object" if isinstance(value, dict) else "string"
                return ollama_error(400, f"json: cannot unmarshal {got} into Go struct field "
                                         f"ChatRequest.{field} of type {kind.__name__}")
        return super().check(request, body)


class City(BaseModel):
    name: str
    country: str


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_schema_format_refused_steps_down_to_the_output_tool(stream: bool) -> None:
    async with Ollama04() as fake:
        fake.add(FakeReply(tool_calls=[FakeCall("generate_response",
                                                {"name": "Paris", "country": "FR"})]))
        model = OllamaChatModel("llama3.1:8b", base_url=fake.url, settings=FAST, stream=stream)
        try:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
        finally:
            await model.aclose()
    assert reply.output == City(name="Paris", country="FR")
    first, last = fake.requests[0].body, fake.requests[-1].body
    assert isinstance(first.get("format"), dict) and not isinstance(last.get("format"), dict)


def test_the_refusal_names_the_feature() -> None:
    for field, feature in (("format", "native_output"), ("think", "thinking")):
        body = ('{"error": "json: cannot unmarshal string into Go struct field '
                f'ChatRequest.{field} of type bool"}}').encode()
        error = map_error(400, {}, body)
        assert isinstance(error, UnsupportedFeatureError) and error.feature == feature
