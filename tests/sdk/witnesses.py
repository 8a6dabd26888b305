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
import inspect
import json
import re
import ssl
from collections.abc import Callable, Mapping
from typing import Any

from agentflow.messages import Msg, TextBlock, ToolResultBlock, ToolUseBlock
from agentflow.model import ToolChoice, ToolSpec

from .scenarios import Contact, Result, Scenario

__all__ = ["WITNESSES", "Witness"]

KEY = "test-key"
TLS = ssl.create_default_context()
"""One TLS context for every SDK client (each would load the CA bundle again,
~70 ms; the fakes speak plain HTTP anyway)."""


def _text(msg: Msg) -> str:
    return "".join(b.text for b in msg.content if isinstance(b, TextBlock))


def _uses(msg: Msg) -> list[ToolUseBlock]:
    return [b for b in msg.content if isinstance(b, ToolUseBlock)]


def _results(msg: Msg) -> list[ToolResultBlock]:
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


# ----------------------------------------------------------------------------- OpenAI


def openai_messages(messages: tuple[Msg, ...]) -> list[dict[str, Any]]:
    """Chat-completions messages as the OpenAI docs write them (an error
    result is marked in its text: the wire has no error flag)."""
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role in ("system", "user") and not _results(msg):
            out.append({"role": msg.role, "content": _text(msg)})
        elif msg.role == "assistant":
            calls = [{"id": u.id, "type": "function",
                      "function": {"name": u.name, "arguments": json.dumps(dict(u.input))}}
                     for u in _uses(msg)]
            entry: dict[str, Any] = {"role": "assistant", "content": _text(msg) or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        else:
            out.extend({"role": "tool", "tool_call_id": r.tool_use_id,
                        "content": ("Error: " if r.is_error else "") + r.output}
                       for r in _results(msg))
    return out


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
        for message in kwargs["messages"]:
            if message["role"] == "assistant" and message.get("tool_calls"):
                message["reasoning_content"] = ""
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


# ----------------------------------------------------------------------------- Anthropic


def anthropic_messages(messages: tuple[Msg, ...]) -> tuple[list[dict[str, Any]],
                                                           list[dict[str, Any]]]:
    """``(system blocks, messages)`` as the Messages API docs write them."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "system":
            system.append({"type": "text", "text": _text(msg)})
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        blocks: list[dict[str, Any]] = []
        for r in _results(msg):
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": r.tool_use_id,
                                     "content": r.output}
            if r.is_error:
                block["is_error"] = True
            blocks.append(block)
        if _text(msg):
            blocks.append({"type": "text", "text": _text(msg)})
        blocks += [{"type": "tool_use", "id": u.id, "name": u.name, "input": dict(u.input)}
                   for u in _uses(msg)]
        out.append({"role": role, "content": blocks})
    return system, out


def anthropic_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    if choice.mode == "specific":
        return {"type": "tool", "name": choice.name}
    return {"type": {"required": "any"}.get(choice.mode, choice.mode)}


_ANTHROPIC_LOGICAL = ("system", "messages", "tools", "tool_choice", "output_config")


class AnthropicWitness(Witness):
    """The ``anthropic`` SDK."""

    sdk = "anthropic"

    def client(self, url: str) -> Any:
        import anthropic
        return anthropic.AsyncAnthropic(api_key=KEY, base_url=url, max_retries=0,
                                        http_client=anthropic.DefaultAsyncHttpxClient(verify=TLS))

    async def request(self, scenario: Scenario, ours: Mapping[str, Any], url: str,
                      model: str, stream: bool) -> None:
        from anthropic.lib._parse._transform import to_json_output_format
        system, messages = anthropic_messages(scenario.messages)
        kwargs: dict[str, Any] = {"messages": messages}
        if system:
            kwargs["system"] = system
        if scenario.tools:
            kwargs["tools"] = [{"name": t.name, "description": t.description,
                                "input_schema": dict(t.parameters)} for t in scenario.tools]
            if scenario.options.tool_choice is not None:
                kwargs["tool_choice"] = anthropic_tool_choice(scenario.options.tool_choice)
        if scenario.native:
            kwargs["output_config"] = {"format": to_json_output_format(Contact)}
        async with self.client(url) as client:
            known = set(inspect.signature(client.messages.create).parameters)
            extra = {k: v for k, v in ours.items() if k not in _ANTHROPIC_LOGICAL
                     and k not in known}
            kwargs.update({k: v for k, v in ours.items() if k not in _ANTHROPIC_LOGICAL
                           and k in known})
            reply = await client.messages.create(**kwargs, extra_body=extra or None)
            if stream:
                async for _ in reply:
                    pass

    async def read(self, url: str, model: str, stream: bool,
                   ours: Mapping[str, Any]) -> Result:
        kwargs: dict[str, Any] = {k: v for k, v in ours.items()
                                  if k not in (*_ANTHROPIC_LOGICAL, "stream")}
        kwargs["messages"] = [{"role": "user", "content": "hi"}]
        async with self.client(url) as client:
            if stream:
                async with client.messages.stream(**kwargs) as events:
                    done = await events.get_final_message()
            else:
                done = await client.messages.create(**kwargs)
        blocks = done.content
        return Result(
            "".join(b.text for b in blocks if b.type == "text"),
            "".join(b.thinking for b in blocks if b.type == "thinking"),
            tuple((b.name, dict(b.input)) for b in blocks if b.type == "tool_use"),
            (done.usage.input_tokens, done.usage.output_tokens), done.stop_reason or "")


# ----------------------------------------------------------------------------- Gemini


class GeminiWitness(Witness):
    """``google-genai`` (the Gemini Developer API, v1beta)."""

    sdk = "google-genai"

    def client(self, url: str) -> Any:
        from google import genai
        from google.genai import types
        root, _, version = url.rpartition("/")
        return genai.Client(api_key=KEY, http_options=types.HttpOptions(
            base_url=root, api_version=version, client_args={"verify": TLS},
            async_client_args={"verify": TLS, "ssl": TLS}))

    async def request(self, scenario: Scenario, ours: Mapping[str, Any], url: str,
                      model: str, stream: bool) -> None:
        from google.genai import types
        contents: list[types.Content] = []
        system = None
        for msg in scenario.messages:
            if msg.role == "system":
                system = _text(msg)
                continue
            parts = [types.Part(function_response=types.FunctionResponse(
                name=r.name, response={"error" if r.is_error else "result": r.output}))
                for r in _results(msg)]
            if _text(msg):
                parts.append(types.Part(text=_text(msg)))
            parts += [types.Part(function_call=types.FunctionCall(name=u.name,
                                                                  args=dict(u.input)))
                      for u in _uses(msg)]
            contents.append(types.Content(role="model" if msg.role == "assistant" else "user",
                                          parts=parts))
        config: dict[str, Any] = {
            k: v for k, v in (ours.get("generationConfig") or {}).items()
            if k not in ("responseMimeType", "responseSchema", "responseJsonSchema")}
        if system:
            config["system_instruction"] = system
        if scenario.tools:
            config["tools"] = [types.Tool(function_declarations=[
                types.FunctionDeclaration(name=t.name, description=t.description,
                                          parameters_json_schema=dict(t.parameters))
                for t in scenario.tools])]
            choice = scenario.options.tool_choice
            if choice is not None:
                mode = {"auto": "AUTO", "none": "NONE"}.get(choice.mode, "ANY")
                config["tool_config"] = types.ToolConfig(
                    function_calling_config=types.FunctionCallingConfig(
                        mode=mode, allowed_function_names=[choice.name] if choice.name else None))
        if scenario.native:
            config["response_mime_type"] = "application/json"
            config["response_schema"] = Contact
        settings = types.GenerateContentConfig.model_validate(config)
        async with self.client(url).aio as client:
            if stream:
                async for _ in await client.models.generate_content_stream(
                        model=model, contents=contents, config=settings):
                    pass
            else:
                await client.models.generate_content(model=model, contents=contents,
                                                     config=settings)

    async def read(self, url: str, model: str, stream: bool,
                   ours: Mapping[str, Any]) -> Result:
        from google.genai import types
        config = types.GenerateContentConfig.model_validate(ours.get("generationConfig") or {})
        async with self.client(url).aio as client:
            if stream:
                replies = [r async for r in await client.models.generate_content_stream(
                    model=model, contents="hi", config=config)]
            else:
                replies = [await client.models.generate_content(model=model, contents="hi",
                                                                config=config)]
        text, thought, calls, finish, usage = [], [], [], "", (0, 0)
        for reply in replies:
            for candidate in reply.candidates or ():
                for part in (candidate.content.parts if candidate.content else None) or ():
                    if part.function_call:
                        calls.append((part.function_call.name, dict(part.function_call.args)))
                    elif part.text:
                        (thought if part.thought else text).append(part.text)
                if candidate.finish_reason:
                    finish = candidate.finish_reason.value
            if reply.usage_metadata:
                meta = reply.usage_metadata
                usage = (meta.prompt_token_count or 0, (meta.candidates_token_count or 0)
                         + (meta.thoughts_token_count or 0))
        return Result("".join(text), "".join(thought), tuple(calls), usage, finish)

    @staticmethod
    def error_status(exc: BaseException) -> int | None:
        return getattr(exc, "code", None)


# ----------------------------------------------------------------------------- Ollama


class OllamaWitness(Witness):
    """The ``ollama`` client."""

    sdk = "ollama"

    def client(self, url: str) -> Any:
        import ollama
        return ollama.AsyncClient(host=url, verify=TLS)

    async def request(self, scenario: Scenario, ours: Mapping[str, Any], url: str,
                      model: str, stream: bool) -> None:
        messages: list[dict[str, Any]] = []
        for msg in scenario.messages:
            if msg.role == "assistant":
                messages.append({"role": "assistant", "content": _text(msg), "tool_calls": [
                    {"id": u.id, "function": {"index": i, "name": u.name,
                                              "arguments": dict(u.input)}}
                    for i, u in enumerate(_uses(msg))]})
            elif _results(msg):
                messages += [{"role": "tool", "tool_name": r.name, "tool_call_id": r.tool_use_id,
                              "content": ("Error: " if r.is_error else "") + r.output}
                             for r in _results(msg)]
            else:
                messages.append({"role": msg.role, "content": _text(msg)})
        kwargs: dict[str, Any] = {k: v for k, v in ours.items()
                                  if k not in ("messages", "tools", "format", "stream")}
        if scenario.tools and scenario.options.tool_choice != ToolChoice.NONE:
            kwargs["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": dict(t.parameters)}}
                for t in scenario.tools]
        if scenario.native:
            kwargs["format"] = Contact.model_json_schema()
        async with self.client(url) as client:
            reply = await client.chat(messages=messages, stream=stream, **kwargs)
            if stream:
                async for _ in reply:
                    pass

    async def read(self, url: str, model: str, stream: bool,
                   ours: Mapping[str, Any]) -> Result:
        kwargs = {k: v for k, v in ours.items() if k not in ("messages", "tools", "stream")}
        kwargs["messages"] = [{"role": "user", "content": "hi"}]
        async with self.client(url) as client:
            if stream:
                parts = [p async for p in await client.chat(stream=True, **kwargs)]
            else:
                parts = [await client.chat(**kwargs)]
        calls = tuple((c.function.name, dict(c.function.arguments))
                      for p in parts for c in p.message.tool_calls or ())
        last = parts[-1]
        return Result("".join(p.message.content or "" for p in parts),
                      "".join(p.message.thinking or "" for p in parts), calls,
                      (last.prompt_eval_count or 0, last.eval_count or 0), last.done_reason or "")


WITNESSES: dict[str, Callable[[], Witness]] = {
    "openai": OpenAIWitness,
    "deepseek": DeepSeekWitness,
    "dashscope": OpenAIWitness,
    "minimax": MiniMaxWitness,
    "glm": GLMWitness,
    "anthropic": AnthropicWitness,
    "gemini": GeminiWitness,
    "ollama": OllamaWitness,
}


async def in_thread(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A sync SDK call off the event loop (the fake serves on the loop)."""
    return await asyncio.to_thread(func, *args, **kwargs)
