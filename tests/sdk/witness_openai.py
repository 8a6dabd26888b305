"""The ``openai`` SDK (OpenAI, and the client DeepSeek, DashScope compatible
mode and MiniMax document) and ``zai-sdk`` (GLM) as witnesses (see
``tests.sdk._witness``)."""

from __future__ import annotations

import base64
import inspect
import json
import re
from collections.abc import Mapping
from typing import Any

from agentflow.content import ImageBlock
from agentflow.messages import Msg, TextBlock
from agentflow.model import ToolChoice, ToolSpec

from ._witness import KEY, TLS, Witness, in_thread, media, results, text, thoughts, uses
from .scenarios import Contact, Result, Scenario

__all__ = ["DeepSeekWitness", "GLMWitness", "MiniMaxWitness", "OpenAIWitness"]

# ----------------------------------------------------------------------------- OpenAI


def openai_messages(messages: tuple[Msg, ...]) -> list[dict[str, Any]]:
    """Chat-completions messages as the OpenAI docs write them (an error
    result is marked in its text: the wire has no error flag)."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "user" and media(msg):
            out.append({"role": "user", "content": [openai_part(b) for b in msg.content
                                                    if not isinstance(b, TextBlock) or b.text]})
        elif msg.role in ("system", "user") and not results(msg):
            out.append({"role": msg.role, "content": text(msg)})
        elif msg.role == "assistant":
            calls = [{"id": u.id, "type": "function",
                      "function": {"name": u.name, "arguments": json.dumps(dict(u.input))}}
                     for u in uses(msg)]
            entry: dict[str, Any] = {"role": "assistant", "content": text(msg) or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        else:
            out.extend({"role": "tool", "tool_call_id": r.tool_use_id,
                        "content": ("Error: " if r.is_error else "") + r.output}
                       for r in results(msg))
    return out


def openai_part(block: Any) -> dict[str, Any]:
    """A content part as platform.openai.com/docs/guides/images-vision ("Passing a
    Base64 encoded image") and /docs/guides/pdf-files ("Base64-encoded files") write it."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    encoded = base64.b64encode(block.data).decode()
    url = f"data:{block.media_type};base64,{encoded}"
    if isinstance(block, ImageBlock):
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "file", "file": {"filename": block.filename, "file_data": url}}


def openai_tools(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": dict(t.parameters)}}
            for t in tools]


def openai_tool_choice(choice: ToolChoice) -> Any:
    if choice.mode == "specific":
        return {"type": "function", "function": {"name": choice.name}}
    return choice.mode


_OPENAI_LOGICAL = ("messages", "tools", "tool_choice", "response_format")


class OpenAIWitness(Witness):
    """The ``openai`` SDK: the vendor's own for OpenAI, and the client DeepSeek,
    DashScope compatible mode and MiniMax document for their OpenAI-compatible
    endpoints."""

    sdk = "openai"

    def client(self, url: str) -> Any:
        import openai
        return openai.AsyncOpenAI(api_key=KEY, base_url=url, max_retries=0,
                                  http_client=openai.DefaultAsyncHttpxClient(verify=TLS))

    def logical(self, scenario: Scenario) -> dict[str, Any]:
        from openai.lib._parsing._completions import type_to_response_format_param
        kwargs: dict[str, Any] = {"messages": openai_messages(scenario.messages)}
        if scenario.tools and not (scenario.options.tool_choice == ToolChoice.NONE
                                   and self.none_drops_tools):
            kwargs["tools"] = openai_tools(scenario.tools)
            if scenario.options.tool_choice is not None and self.sends_tool_choice:
                kwargs["tool_choice"] = openai_tool_choice(scenario.options.tool_choice)
        if scenario.native:
            kwargs["response_format"] = type_to_response_format_param(Contact)
        return kwargs

    none_drops_tools = False
    sends_tool_choice = True

    async def request(self, scenario: Scenario, ours: Mapping[str, Any], url: str,
                      model: str, stream: bool) -> None:
        client = self.client(url)
        kwargs = self.logical(scenario)
        known = set(inspect.signature(client.chat.completions.create).parameters)
        extra = {}
        for key, value in ours.items():
            if key in _OPENAI_LOGICAL:
                continue
            if key in known:
                kwargs[key] = value
            else:
                extra[key] = value
        async with client:
            reply = await client.chat.completions.create(**kwargs, extra_body=extra or None)
            if stream:
                async for _ in reply:
                    pass

    def knobs(self, client: Any, ours: Mapping[str, Any]) -> tuple[dict[str, Any],
                                                                   dict[str, Any]]:
        """``(keyword arguments, extra_body)`` for the non-logical keys of ``ours``."""
        known = set(inspect.signature(client.chat.completions.create).parameters)
        kwargs: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in ours.items():
            if key in (*_OPENAI_LOGICAL, "stream"):
                continue
            (kwargs if key in known else extra)[key] = value
        return kwargs, extra

    async def read(self, url: str, model: str, stream: bool,
                   ours: Mapping[str, Any]) -> Result:
        client = self.client(url)
        messages = [{"role": "user", "content": "hi"}]
        kwargs, extra = self.knobs(client, ours)
        kwargs.update(messages=messages, extra_body=extra or None)
        async with client:
            if stream:
                kwargs.pop("stream_options", None)
                async with client.chat.completions.stream(
                        **kwargs, stream_options={"include_usage": True}) as events:
                    thinking = []
                    async for event in events:
                        if event.type == "chunk":
                            self.check(event.chunk)
                            for choice in event.chunk.choices:
                                extra_fields = choice.delta.model_extra or {}
                                thinking.append(extra_fields.get("reasoning_content") or "")
                    done = await events.get_final_completion()
                return self.result(done, "".join(thinking))
            done = await client.chat.completions.create(**kwargs)
            self.check(done)
            message = done.choices[0].message
            return self.result(done, (message.model_extra or {}).get("reasoning_content") or "")

    def check(self, payload: Any) -> None:
        """Raise what a 200 payload reports as an error (vendors that do so)."""

    def result(self, done: Any, thinking: str) -> Result:
        return _openai_result(done, thinking)


def _openai_result(done: Any, thinking: str) -> Result:
    choice = done.choices[0]
    calls = tuple((c.function.name, json.loads(c.function.arguments or "{}"))
                  for c in choice.message.tool_calls or ())
    usage = (done.usage.prompt_tokens, done.usage.completion_tokens) if done.usage else (0, 0)
    return Result(choice.message.content or "", thinking, calls, usage,
                  choice.finish_reason or "")


class MiniMaxWitness(OpenAIWitness):
    """MiniMax's OpenAI-compatible endpoint documents no ``tool_choice``
    (platform.minimax.io/docs/api-reference/text-openai-api): none is sent,
    and ``none`` means leaving the tools out."""

    none_drops_tools = True
    sends_tool_choice = False

    def logical(self, scenario: Scenario) -> dict[str, Any]:
        """An assistant turn goes back whole, its ``<think>`` block inline
        (platform.minimax.io/docs/guides/text-m2-function-call: "the complete
        model response must be appended to the history")."""
        kwargs = super().logical(scenario)
        turns = iter([m for m in scenario.messages if m.role == "assistant"])
        for message in kwargs["messages"]:
            if message["role"] != "assistant":
                continue
            thought = "".join(b.thinking for b in thoughts(next(turns)))
            if thought:
                message["content"] = f"<think>\n{thought}\n</think>\n\n{message['content'] or ''}"
        return kwargs

    def check(self, payload: Any) -> None:
        """MiniMax reports errors in HTTP 200 bodies: ``base_resp.status_code``
        (platform.minimax.io/docs/api-reference/text-openai-api, error codes)."""
        base = (payload.model_extra or {}).get("base_resp") or {}
        if base.get("status_code"):
            raise BaseRespError(int(base["status_code"]), str(base.get("status_msg")))

    def result(self, done: Any, thinking: str) -> Result:
        """The M2 models' reasoning is inline: ``<think>...</think>`` leads the
        content (MiniMax's docs split it off the same way)."""
        result = _openai_result(done, thinking)
        match = re.fullmatch(r"\s*<think>(.*?)</think>\s*(.*)", result.text, re.S)
        if match is None:
            return result
        return Result(match.group(2), thinking + match.group(1).strip(), result.tool_calls,
                      result.usage, result.finish)

    @staticmethod
    def error_status(exc: BaseException) -> int | None:
        """The HTTP status MiniMax's code stands for (shared/providers.md §8:
        1004 -> 401, 1002/1039 -> 429, 1008 -> 402, 1026/1027/2013 -> 400)."""
        if isinstance(exc, BaseRespError):
            return {1004: 401, 1002: 429, 1039: 429, 1008: 402, 1026: 400, 1027: 400,
                    2013: 400}.get(exc.code)
        return Witness.error_status(exc)


class BaseRespError(Exception):
    """A MiniMax ``base_resp`` error found in a 200 reply by the witness."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class DeepSeekWitness(OpenAIWitness):
    """DeepSeek: an assistant turn that made tool calls carries its
    ``reasoning_content`` back (api-docs.deepseek.com/guides/thinking_mode:
    the docs' sample appends the reply message whole)."""

    def logical(self, scenario: Scenario) -> dict[str, Any]:
        kwargs = super().logical(scenario)
        turns = iter([m for m in scenario.messages if m.role == "assistant"])
        for message in kwargs["messages"]:
            if message["role"] != "assistant":
                continue
            thought = "".join(b.thinking for b in thoughts(next(turns)))
            if message.get("tool_calls"):
                message["reasoning_content"] = thought
        return kwargs


class GLMWitness(OpenAIWitness):
    """``zai-sdk`` (sync, run in a thread): GLM documents only ``auto``, so
    ``none`` means leaving the tools out."""

    sdk = "zai-sdk"
    none_drops_tools = True

    def zai(self, url: str) -> Any:
        import httpx
        from zai import ZaiClient
        return ZaiClient(api_key=KEY, base_url=url, max_retries=0,
                         http_client=httpx.Client(verify=TLS))

    async def request(self, scenario: Scenario, ours: Mapping[str, Any], url: str,
                      model: str, stream: bool) -> None:
        client = self.zai(url)
        kwargs = self.logical(scenario)
        known = set(inspect.signature(client.chat.completions.create).parameters)
        extra = {}
        for key, value in ours.items():
            if key in _OPENAI_LOGICAL:
                continue
            if key in known:
                kwargs[key] = value
            else:
                extra[key] = value

        def call() -> None:
            reply = client.chat.completions.create(**kwargs, extra_body=extra or None)
            if stream:
                for _ in reply:
                    pass
        await in_thread(call)

    async def read(self, url: str, model: str, stream: bool,
                   ours: Mapping[str, Any]) -> Result:
        client = self.zai(url)
        kwargs, extra = self.knobs(client, ours)
        kwargs.update(messages=[{"role": "user", "content": "hi"}], extra_body=extra or None)

        def call() -> Result:
            if not stream:
                done = client.chat.completions.create(**kwargs)
                message = done.choices[0].message
                return _openai_result(done, getattr(message, "reasoning_content", "") or "")
            text, thought, finish = [], [], ""
            calls: dict[int, list[Any]] = {}
            usage = (0, 0)
            for chunk in client.chat.completions.create(**kwargs, stream=True):
                if chunk.usage:
                    usage = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                for choice in chunk.choices:
                    delta = choice.delta
                    text.append(delta.content or "")
                    thought.append(getattr(delta, "reasoning_content", None) or "")
                    for tc in delta.tool_calls or ():
                        entry = calls.setdefault(tc.index, ["", ""])
                        entry[0] = (tc.function.name if tc.function else None) or entry[0]
                        entry[1] += (tc.function.arguments if tc.function else "") or ""
                    finish = choice.finish_reason or finish
            tool_calls = tuple((n, json.loads(a or "{}")) for _, (n, a) in sorted(calls.items()))
            return Result("".join(text), "".join(thought), tool_calls, usage, finish)
        result: Result = await in_thread(call)
        return result

    @staticmethod
    def error_status(exc: BaseException) -> int | None:
        return getattr(exc, "status_code", None) or getattr(
            getattr(exc, "response", None), "status_code", None)


