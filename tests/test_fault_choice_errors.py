"""Vendor fault: an error reported inside a choice.

OpenRouter commits its HTTP 200 before the upstream provider runs and reports
a later failure inside the choice: ``{"finish_reason": "error", "error":
{"code": 404, "message": "No endpoints found that support image input"}}``
(https://github.com/nodetool-ai/nodetool/pull/5755), in a whole reply and in a
stream chunk. Only the finish reason was read: every such failure was a
generic, retryable ``ServerError`` that did not say what failed, and a request
no provider could serve was sent again. The choice's error is now typed by its
code as its HTTP twin (404 -> ``NotFoundError``, 429 -> ``RateLimitedError``,
502 -> ``ServerError``) with its message.

Served by the OpenAI-style fake, whole and streamed, through the public API."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow import NotFoundError, RateLimitedError, ReActAgent, ServerError
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST


class ChoiceError(OpenAIFake):
    """Ends the reply's choice with ``finish_reason: "error"`` and ``extra["error"]``."""

    def render_json(self, reply: FakeReply, body: Any) -> Any:
        out = super().render_json(reply, body)
        out["choices"][0].update(finish_reason="error", error=reply.extra["error"])
        return out

    def tail_frames(self, reply: FakeReply, body: Any) -> list[dict[str, Any]]:
        frame = self.chunk(body, {"content": ""}, "error")
        frame["choices"][0]["error"] = reply.extra["error"]
        return [frame]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(("error", "kind"), [
    ({"code": 404, "message": "No endpoints found that support image input"}, NotFoundError),
    ({"code": 429, "message": "Rate limit exceeded: upstream"}, RateLimitedError),
    ({"code": 502, "message": "Provider returned error"}, ServerError),
], ids=["404", "429", "502"])
async def test_a_choice_error_is_typed_by_its_code(stream: bool, error: dict[str, Any],
                                                   kind: type[Exception]) -> None:
    async with ChoiceError() as fake:
        fake.default = FakeReply(text="", extra={"error": error})
        async with OpenAIChatModel("openrouter/auto", base_url=fake.url, api_key="k",
                                   stream=stream, settings=FAST) as model:
            with pytest.raises(kind) as info:
                async for _ in ReActAgent("o", model).stream("Describe the image"):
                    pass
    assert error["message"] in str(info.value)
    if kind is NotFoundError:
        assert len(fake.requests) == 1
