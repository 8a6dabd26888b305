"""The two floors: what structured output costs with no framework at all.

* ``openai-sdk``: ``AsyncOpenAI.chat.completions.create`` with a strict
  json_schema ``response_format``, then ``Contact.model_validate_json`` on the
  content; streaming with the SDK's ``chat.completions.stream`` helper, whose
  ``content.delta`` events carry the partially parsed object.
* ``raw``: one ``aiohttp`` session, ``orjson`` bodies, ``model_validate_json``;
  streaming parses SSE lines by hand and the partial object with
  ``pydantic_core.from_json(allow_partial=...)``.
* ``raw-stream``: the raw floor's ``extract`` over a stream: aiohttp, SSE
  lines split by hand, ``orjson`` per chunk, one ``model_validate_json`` at
  the end (no partial objects): the like work ``agent.stream()`` is judged
  against.

Neither retries or repairs anything: their chaos figures are the model's own
compliance.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pydantic_core
from openai import AsyncOpenAI

from ..common import CONTACT_SCHEMA, Contact
from . import StreamItem, Target

__all__ = ["RawHTTPError", "build_openai_sdk", "build_raw", "build_raw_stream"]

RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "Contact", "schema": CONTACT_SCHEMA, "strict": True},
}


class RawHTTPError(Exception):
    """A non-200 reply to the raw floor."""


class OpenAISDKAdapter:
    """The official SDK, no framework."""

    def __init__(self, target: Target) -> None:
        self.client = AsyncOpenAI(base_url=target.openai_url, api_key="sk-bench-dummy")
        self.model = target.model

    async def extract(self, prompt: str) -> Any:
        response = await self.client.chat.completions.create(
            model=self.model, messages=[{"role": "user", "content": prompt}],
            response_format=RESPONSE_FORMAT,  # type: ignore[arg-type]
        )
        return Contact.model_validate_json(response.choices[0].message.content or "")

    async def stream(self, prompt: str) -> AsyncIterator[StreamItem]:
        async with self.client.chat.completions.stream(
                model=self.model, messages=[{"role": "user", "content": prompt}],
                response_format=Contact) as stream:
            async for event in stream:
                if event.type == "content.delta" and event.parsed:
                    yield "partial", event.parsed
                else:
                    yield "event", None
            final = await stream.get_final_completion()
        yield "final", final.choices[0].message.parsed

    async def aclose(self) -> None:
        await self.client.close()


class RawAdapter:
    """aiohttp + orjson + pydantic, by hand."""

    def __init__(self, target: Target) -> None:
        self.url = target.openai_url + "/chat/completions"
        self.model = target.model
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=max(100, target.concurrency)),
            headers={"Authorization": "Bearer sk-bench-dummy",
                     "Content-Type": "application/json"})

    def _body(self, prompt: str, stream: bool) -> bytes:
        return orjson.dumps({"model": self.model, "stream": stream,
                             "messages": [{"role": "user", "content": prompt}],
                             "response_format": RESPONSE_FORMAT})

    async def extract(self, prompt: str) -> Any:
        async with self.session.post(self.url, data=self._body(prompt, False)) as response:
            raw = await response.read()
            if response.status != 200:
                raise RawHTTPError(f"HTTP {response.status}: {raw[:200]!r}")
        content = orjson.loads(raw)["choices"][0]["message"]["content"] or ""
        return Contact.model_validate_json(content)

    async def stream(self, prompt: str) -> AsyncIterator[StreamItem]:
        text = ""
        async with self.session.post(self.url, data=self._body(prompt, True)) as response:
            if response.status != 200:
                raise RawHTTPError(f"HTTP {response.status}")
            async for line in response.content:
                if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                    continue
                choices = orjson.loads(line[6:]).get("choices") or ()
                piece = choices[0]["delta"].get("content") if choices else None
                if not piece:
                    yield "event", None
                    continue
                text += piece
                try:
                    partial = pydantic_core.from_json(text, allow_partial="trailing-strings")
                except ValueError:
                    partial = None
                yield ("partial", partial) if partial else ("event", None)
        yield "final", Contact.model_validate_json(text)

    async def aclose(self) -> None:
        await self.session.close()


class RawStreamAdapter(RawAdapter):
    """The raw floor, streamed: ``extract`` reads the SSE reply chunk by chunk."""

    async def extract(self, prompt: str) -> Any:
        pieces: list[str] = []
        async with self.session.post(self.url, data=self._body(prompt, True)) as response:
            if response.status != 200:
                raise RawHTTPError(f"HTTP {response.status}")
            async for line in response.content:
                if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
                    continue
                choices = orjson.loads(line[6:]).get("choices") or ()
                piece = choices[0]["delta"].get("content") if choices else None
                if piece:
                    pieces.append(piece)
        return Contact.model_validate_json("".join(pieces))


async def build_openai_sdk(target: Target) -> OpenAISDKAdapter:
    """The openai-SDK floor for ``target``."""
    return OpenAISDKAdapter(target)


async def build_raw(target: Target) -> RawAdapter:
    """The raw floor for ``target``."""
    return RawAdapter(target)


async def build_raw_stream(target: Target) -> RawStreamAdapter:
    """The raw streaming floor for ``target``."""
    return RawStreamAdapter(target)
