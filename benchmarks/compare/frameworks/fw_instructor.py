"""Instructor: ``instructor.from_openai(AsyncOpenAI(...))`` (default mode TOOLS:
a forced function call); ``create(response_model=Contact, ...)`` and
``create_partial`` for partial objects. Default retries and strictness.

Runs in its own virtual environment: Instructor's pins (jiter < 0.15) rule out
the openai release the other peers need.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import instructor
from openai import AsyncOpenAI

from ..common import Contact
from . import StreamItem, Target

__all__ = ["build"]


class InstructorAdapter:
    """One patched client."""

    def __init__(self, target: Target) -> None:
        self.raw = AsyncOpenAI(base_url=target.openai_url, api_key="sk-bench-dummy")
        self.client = instructor.from_openai(self.raw)
        self.model = target.model

    def _messages(self, prompt: str) -> list[Any]:
        return [{"role": "user", "content": prompt}]

    async def extract(self, prompt: str) -> Any:
        return await self.client.chat.completions.create(
            model=self.model, response_model=Contact, messages=self._messages(prompt))

    async def stream(self, prompt: str) -> AsyncIterator[StreamItem]:
        last = None
        async for partial in self.client.chat.completions.create_partial(
                model=self.model, response_model=Contact, messages=self._messages(prompt)):
            last = partial
            yield "partial", partial
        yield "final", last

    async def aclose(self) -> None:
        await self.raw.close()


async def build(target: Target) -> InstructorAdapter:
    """The adapter for ``target``."""
    return InstructorAdapter(target)
