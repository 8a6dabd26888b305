"""Vendor fault: an error whose ``message`` is an object.

Mistral's API answers a request it cannot validate with HTTP 422 and the
validation errors as an object under ``message``: ``{"object": "error",
"message": {"detail": [{"type": "float_type", "loc": ["body", "top_p"],
"msg": "Input should be a valid number", "input": null}]}, "type":
"invalid_request_message_error", ...}``
(https://github.com/mistralai/platform-docs-public/issues/212). The typed
error's text was the Python repr of that object (``{'detail': [{'type':
...``). It now reads as FastAPI's ``detail`` bodies do: ``body.top_p: Input
should be a valid number``, each failing field with its message; an object
message of another shape is its JSON text.

Served by the OpenAI-style fake, through the public API."""

from __future__ import annotations

import pytest

from agentflow import BadRequestError, ReActAgent
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

MISTRAL_422 = {"object": "error", "message": {"detail": [
    {"type": "float_type", "loc": ["body", "top_p"], "msg": "Input should be a valid number",
     "input": None},
    {"type": "extra_forbidden", "loc": ["body", "chat_template_kwargs"],
     "msg": "Extra inputs are not permitted", "input": {}}]},
    "type": "invalid_request_message_error", "param": None, "code": None}


async def _refused(body: object) -> BadRequestError:
    async with OpenAIFake() as fake:
        fake.add_error(422, body)
        async with OpenAIChatModel("mistral-small-latest", base_url=fake.url, api_key="k",
                                   settings=FAST) as model:
            with pytest.raises(BadRequestError) as info:
                await ReActAgent("m", model).call("Hello")
    return info.value


async def test_a_validation_object_reads_as_its_fields() -> None:
    error = await _refused(MISTRAL_422)
    assert error.message == ("body.top_p: Input should be a valid number; "
                             "body.chat_template_kwargs: Extra inputs are not permitted")
    assert error.status == 422 and error.code == "invalid_request_message_error"


async def test_another_object_message_is_its_json() -> None:
    error = await _refused({"error": {"message": {"reason": "bad field"}, "code": "x"}})
    assert error.message == '{"reason":"bad field"}'
