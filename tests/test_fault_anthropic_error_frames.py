"""Vendor fault: a proxy's error frame in an Anthropic stream without its discriminator.

Anthropic ends a failing stream with ``event: error`` and ``{"type": "error",
"error": {"type", "message"}}``. Anthropic-compatible proxies send the error
object without the top-level ``"type": "error"`` (``data: {"error":
{"message": "Stream error: ...", "type": "stream_error"}}``,
https://github.com/lbjlaq/Antigravity-Manager/pull/3371), or an ``event: error``
whose data is text. The first was skipped as an unknown event and the reply
ended as a cut stream with the proxy's reason lost (an ``overloaded_error``
was no ``OverloadedError``); the second failed as a malformed event. Both are
now the typed error they report, with its words.

Served by the Anthropic fake, streamed, through the public API."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from agentflow import OverloadedError, ReActAgent, ServerError
from agentflow.providers.anthropic import AnthropicChatModel
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.base import FakeReply
from tests.provider_scenarios import FAST


class ProxyErrorFrame(AnthropicFake):
    """After ``message_start``, sends ``extra["frame"]`` (raw bytes) and ends."""

    def render_events(self, reply: FakeReply, body: Any) -> list[bytes]:
        return [*super().render_events(reply, body)[:2], reply.extra["frame"]]


def _frame(payload: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    data = payload if isinstance(payload, bytes) else orjson.dumps(payload)
    return head + b"data: " + data + b"\n\n"


@pytest.mark.parametrize(("frame", "kind", "words"), [
    (_frame({"error": {"message": "Stream error: upstream closed", "type": "stream_error"}}),
     ServerError, "Stream error: upstream closed"),
    (_frame({"error": {"type": "overloaded_error", "message": "Overloaded"}}, "error"),
     OverloadedError, "Overloaded"),
    (_frame(b"upstream request timeout", "error"), ServerError, "upstream request timeout"),
], ids=["no-discriminator", "overloaded", "text"])
async def test_a_proxy_error_frame_is_its_typed_error(frame: bytes, kind: type[Exception],
                                                      words: str) -> None:
    async with ProxyErrorFrame() as fake:
        fake.default = FakeReply(text="unused", extra={"frame": frame})
        async with AnthropicChatModel("claude-sonnet-4-5", base_url=fake.url, api_key="k",
                                      settings=FAST) as model:
            with pytest.raises(kind) as info:
                async for _ in ReActAgent("a", model).stream("Hello"):
                    pass
    assert words in str(info.value)
