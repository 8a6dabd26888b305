"""The ``anthropic``, ``google-genai`` and ``ollama`` SDKs as witnesses (see
``tests.sdk._witness``)."""

from __future__ import annotations

import base64
import inspect
from collections.abc import Mapping
from typing import Any

from agentflow.content import DocumentBlock, ImageBlock
from agentflow.messages import Msg, TextBlock
from agentflow.model import ToolChoice

from ._witness import KEY, TLS, Witness, media, results, text, thoughts, uses
from .scenarios import Contact, Result, Scenario

__all__ = ["AnthropicWitness", "GeminiWitness", "OllamaWitness"]

# ----------------------------------------------------------------------------- Anthropic


def anthropic_messages(messages: tuple[Msg, ...], thinking: bool = False
                       ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(system blocks, messages)`` as the Messages API docs write them; with
    ``thinking`` on, an assistant turn's signed thinking blocks go back first
    (docs.anthropic.com/en/docs/build-with-claude/extended-thinking)."""
    system: list[dict[str, Any]] = []
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "system":
            system.append({"type": "text", "text": text(msg)})
            continue
        role = "assistant" if msg.role == "assistant" else "user"
        blocks: list[dict[str, Any]] = [
            {"type": "thinking", "thinking": b.thinking, "signature": b.signature}
            for b in thoughts(msg) if thinking and b.signature]
        for r in results(msg):
            block: dict[str, Any] = {"type": "tool_result", "tool_use_id": r.tool_use_id,
                                     "content": r.output}
            if r.is_error:
                block["is_error"] = True
            blocks.append(block)
        if media(msg):  # in the order given (docs.anthropic.com .../vision, .../pdf-support)
            blocks += [anthropic_media(b) for b in msg.content
                       if isinstance(b, ImageBlock | DocumentBlock)
                       or (isinstance(b, TextBlock) and b.text)]
        elif text(msg):
            blocks.append({"type": "text", "text": text(msg)})
        blocks += [{"type": "tool_use", "id": u.id, "name": u.name, "input": dict(u.input)}
                   for u in uses(msg)]
        out.append({"role": role, "content": blocks})
    return system, out


def anthropic_media(block: Any) -> dict[str, Any]:
    """A text, image or document block with a base64 source, as the vision and
    PDF-support docs write them."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    source = {"type": "base64", "media_type": block.media_type,
              "data": base64.standard_b64encode(block.data).decode()}
    out: dict[str, Any] = {"type": block.type, "source": source}
    if isinstance(block, DocumentBlock) and block.filename:
        out["title"] = block.filename
    return out


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
        system, messages = anthropic_messages(scenario.messages,
                                              (ours.get("thinking") or {}).get("type") == "enabled")
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
                system = text(msg)
                continue
            parts = [types.Part(function_response=types.FunctionResponse(
                name=r.name, response={"error" if r.is_error else "result": r.output}))
                for r in results(msg)]
            if media(msg):  # ai.google.dev/gemini-api/docs/image-understanding: bytes parts
                parts += [types.Part.from_bytes(data=b.data, mime_type=b.media_type)
                          if isinstance(b, ImageBlock | DocumentBlock) else types.Part(text=b.text)
                          for b in msg.content if not isinstance(b, TextBlock) or b.text]
            elif text(msg):
                parts.append(types.Part(text=text(msg)))
            parts += [types.Part(function_call=types.FunctionCall(name=u.name,
                                                                  args=dict(u.input)))
                      for u in uses(msg)]
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
                said = "".join(b.thinking for b in thoughts(msg))
                messages.append({"role": "assistant", "content": text(msg),
                                 **({"thinking": said} if said else {}), "tool_calls": [
                    {"id": u.id, "function": {"index": i, "name": u.name,
                                              "arguments": dict(u.input)}}
                    for i, u in enumerate(uses(msg))]})
            elif results(msg):
                messages += [{"role": "tool", "tool_name": r.name, "tool_call_id": r.tool_use_id,
                              "content": ("Error: " if r.is_error else "") + r.output}
                             for r in results(msg)]
            elif media(msg):  # docs/api.md "Chat request (with images)"; the SDK encodes bytes
                import ollama
                messages.append({"role": msg.role, "content": text(msg), "images": [
                    ollama.Image(value=b.data) for b in media(msg)]})
            else:
                messages.append({"role": msg.role, "content": text(msg)})
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


