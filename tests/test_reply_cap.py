"""The most bytes one reply may hold (``HttpSettings.max_reply_bytes``,
``providers._reply_cap``): a server that streams without end, answers a
whole body without end, an error page without end, or a small compressed
body that inflates past the limit is cut off at the limit with
``ReplyTooLargeError`` naming it, never retried, instead of filling the
memory (there was no cap: only the 600 s deadline stopped an endless
stream, after it had buffered all it sent).

Served by an OpenAI fake on 127.0.0.1 that writes until the client closes
the connection; each test waits for the error (no timing)."""

from __future__ import annotations

import gzip
from typing import Any

import orjson
import pytest
from aiohttp import web

from agentflow import ReActAgent, ReplyTooLargeError
from agentflow.providers import HttpSettings
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.openai import OpenAIFake

LIMIT = 256 * 1024
SETTINGS = HttpSettings(backoff_initial=0.01, backoff_max=0.02, max_retries=2,
                        max_reply_bytes=LIMIT)


class EndlessFake(OpenAIFake):
    """Answers every request with a body that never ends (``kind``: an event
    stream of content deltas, a whole JSON reply, a 500 error page), or with
    a gzip body that inflates to four times the limit (``"gzip"``)."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.answered = 0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        self.answered += 1
        if self.kind == "gzip":
            body = b'{"choices": [{"message": {"content": "' + b"a" * (4 * LIMIT) + b'"}}]}'
            return web.Response(body=gzip.compress(body), content_type="application/json",
                                headers={"Content-Encoding": "gzip"})
        response = web.StreamResponse(status=500 if self.kind == "error" else 200)
        response.content_type = ("text/event-stream" if self.kind == "stream"
                                 else "application/json")
        await response.prepare(request)
        frame = self._frame()
        if self.kind != "stream":
            await response.write(b'{"choices": [{"message": {"content": "')
        try:
            while True:
                await response.write(frame)
        except (ConnectionError, RuntimeError):  # the client closed it: the cap held
            return response

    def _frame(self) -> bytes:
        if self.kind != "stream":
            return b"a" * 4096
        chunk: Any = {"id": "c", "object": "chat.completion.chunk", "created": 1,
                      "model": "gpt-4o", "choices": [{"index": 0, "delta": {
                          "content": "a" * 4000}, "finish_reason": None}]}
        return b"data: " + orjson.dumps(chunk) + b"\n\n"


@pytest.mark.parametrize("kind", ["stream", "whole", "error", "gzip"])
async def test_a_reply_past_the_limit_fails_naming_it_and_is_not_retried(kind: str) -> None:
    async with EndlessFake(kind) as fake, OpenAIChatModel(
            "gpt-4o", base_url=fake.url, api_key="k", stream=kind == "stream",
            settings=SETTINGS) as model:
        with pytest.raises(ReplyTooLargeError) as caught:
            await ReActAgent("a", model).call("Say a lot.")
    assert caught.value.limit == LIMIT and "262,144 bytes" in str(caught.value)
    assert "max_reply_bytes" in str(caught.value) and not caught.value.retryable
    assert fake.answered == 1


def test_the_default_limit_is_64_mib() -> None:
    assert HttpSettings().max_reply_bytes == 64 * 1024 * 1024
