"""The vendors' official SDKs as witnesses: each turns a ``Scenario`` into
its own call against a fake on 127.0.0.1 (the fake records the body it sent),
and reads a fake's reply into a ``Result``.

A witness builds the logical parts of a request (messages, tools,
tool_choice, output schema) from the scenario by itself, the way a developer
following the vendor's docs would, with the SDK's own helpers where it has
them (``type_to_response_format_param``, ``transform_schema``,
``response_schema=<pydantic model>``). The vendor knobs our adapter set
(model, stream, token caps, thinking switches...) are passed through as the
SDK's keyword arguments or ``extra_body``, so the SDK serializes them too.

Every SDK client is made with ``max_retries=0`` (or its equivalent) and a
dummy key; nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Mapping
from typing import Any

from agentflow.content import DocumentBlock, ImageBlock
from agentflow.messages import Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock

from .scenarios import Result, Scenario

__all__ = ["KEY", "TLS", "Witness", "in_thread", "media", "results", "text", "thoughts", "uses"]

KEY = "test-key"
TLS = ssl.create_default_context()
"""One TLS context for every SDK client (each would load the CA bundle again,
~70 ms; the fakes speak plain HTTP anyway)."""


def media(msg: Msg) -> list[ImageBlock | DocumentBlock]:
    return [b for b in msg.content if isinstance(b, ImageBlock | DocumentBlock)]


def text(msg: Msg) -> str:
    return "".join(b.text for b in msg.content if isinstance(b, TextBlock))


def uses(msg: Msg) -> list[ToolUseBlock]:
    return [b for b in msg.content if isinstance(b, ToolUseBlock)]


def thoughts(msg: Msg) -> list[ThinkingBlock]:
    return [b for b in msg.content if isinstance(b, ThinkingBlock)]


def results(msg: Msg) -> list[ToolResultBlock]:
    return [b for b in msg.content if isinstance(b, ToolResultBlock)]


class Witness:
    """One SDK. ``request`` sends ``scenario`` (with ``ours``, our adapter's
    body, for the vendor knobs) to ``url``; ``read`` asks for a reply to one
    user turn (with the knobs of ``ours``, the body our adapter sent for the
    same reply: thinking switches, token caps) and reads the reply the fake
    has queued; ``error_status`` is the HTTP status of the SDK's exception."""

    sdk = ""

    async def request(self, scenario: Scenario, ours: Mapping[str, Any], url: str,
                      model: str, stream: bool) -> None:
        raise NotImplementedError

    async def read(self, url: str, model: str, stream: bool,
                   ours: Mapping[str, Any]) -> Result:
        raise NotImplementedError

    @staticmethod
    def error_status(exc: BaseException) -> int | None:
        return getattr(exc, "status_code", None)


async def in_thread(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A sync SDK call off the event loop (the fake serves on the loop)."""
    return await asyncio.to_thread(func, *args, **kwargs)

