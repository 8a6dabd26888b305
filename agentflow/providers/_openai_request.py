"""Request building for ``OpenAICompatibleModel``: the body of one Chat
Completions request and the hooks vendor modules override to shape it
(``apply_tools``, ``apply_response_format``, ``apply_thinking``,
``temperature``, ``streams``...). Split out of ``_openai_compat`` (which
sends the request and reads the reply); the class here holds no state of its
own, only the methods, over the attributes the model sets.

Wire facts: shared/providers.md section 1 (OpenAI Chat Completions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import orjson

from agentflow.errors import UnsupportedFeatureError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ModelProfile, ResponseFormat, ToolSpec
from agentflow.providers._adapter import system_reminder
from agentflow.providers._alternating import alternating
from agentflow.providers._media import ImageUrlStyle
from agentflow.providers._openai_wire import (
    JSON_INSTRUCTION,
    SCHEMA_INSTRUCTION,
    ReasoningHistory,
    format_messages,
    format_response_format,
    format_tool_choice,
    format_tools,
    insert_instruction,
    mentions_json,
)

LOGPROB_ALTERNATIVES = 1
"""``top_logprobs`` sent with ``logprobs``: the most likely token at each place
besides the one written (the confidence reads only the written token's; at
least 1, since llama.cpp's server reads ``top_logprobs`` as its ``n_probs``)."""

__all__ = ["FORCE_NAMED_TOOL", "LOGPROB_ALTERNATIVES", "OpenAIRequestHooks", "WireFormat"]

FORCE_NAMED_TOOL = ("You must now call the `{name}` tool, the only tool available, exactly "
                    "once. Reply with the tool call only, no text.")
"""The reminder that goes with an emulated ``specific`` tool choice (``offer_named_tool``)."""


@dataclass(eq=False, slots=True)
class WireFormat:
    """A json_schema ``response_format`` as sent: the engine's ``ResponseFormat``
    (one object per output type), its wire form (read-only: never edited) and
    that form serialized (``json``: made on first use, kept; ``None`` when
    JSON cannot carry it as it is, left to the HTTP layer's writer)."""

    source: ResponseFormat
    wire: dict[str, Any]
    json: orjson.Fragment | None = None
    tried: bool = False


class OpenAIRequestHooks:
    """The request-building half of ``OpenAICompatibleModel`` (see the module
    docstring); its attributes are the model's."""

    vendor: ClassVar[str]
    max_tokens_field: str
    send_strict: bool
    nine_char_call_ids: bool
    reasoning_required: bool
    alternate_roles: bool
    string_content: bool
    system_role: bool
    send_stream_options: ClassVar[bool]
    reasoning_history: ClassVar[ReasoningHistory]
    image_urls: ClassVar[ImageUrlStyle]
    own_host: bool
    foreign_signature: str | None
    _model: str
    _profile: ModelProfile
    _stream: bool
    _late_system: Literal["system", "user"]
    _dropped_fields: frozenset[str]
    _last_format: WireFormat | None

    def build_body(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> dict[str, Any]:
        """The JSON request body.

        Raises:
            UnsupportedFeatureError: a ``tool_choice`` the profile says the
                vendor refuses (never sent), or a vendor hook's refusal.
        """
        wire = format_messages(messages, reasoning=(
                                   "required" if self.reasoning_required
                                   else self.reasoning_history),
                               late_system=self._late_system, images=self.image_urls,
                               nine_char_ids=self.nine_char_call_ids,
                               null_content=not self.string_content,
                               call_extras=not self.own_host,
                               foreign_signature=self.foreign_signature)
        body: dict[str, Any] = {"model": self._model, "messages": wire}
        if self.streams(options):
            body["stream"] = True
            if self.send_stream_options:
                body["stream_options"] = {"include_usage": True}
        self.apply_tools(body, tools, options)
        if options.response_format is not None:
            self.apply_response_format(body, options.response_format, options)
        self.apply_thinking(body, options)
        if options.max_tokens is not None:
            body[self.max_tokens_field] = options.max_tokens
        if options.temperature is not None:
            body["temperature"] = self.temperature(options.temperature)
        if options.logprobs and self._profile.token_logprobs:
            # each reply token's log-probability, in choices[].logprobs.content[]
            # (OpenAI's chat completions reference; llama.cpp's server the same)
            body["logprobs"] = True
            body["top_logprobs"] = LOGPROB_ALTERNATIVES
        if options.extra:
            body.update(options.extra)
        return body

    def streams(self, options: GenerateOptions) -> bool:
        """Whether this request streams: ``options.stream`` when set, else the
        model's ``stream=``. Vendors override it to keep streaming where a
        whole reply would differ (``options.stream=False`` is a "nobody reads
        the deltas" hint, ``GenerateOptions``)."""
        return self._stream if options.stream is None else options.stream

    def apply_tools(
        self, body: dict[str, Any], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> None:
        """Set ``tools``, ``tool_choice`` (only modes the profile allows; dropped
        without tools, which OpenAI refuses) and ``parallel_tool_calls``."""
        choice = options.tool_choice
        if not tools:
            return
        if choice is not None and not self._profile.allows_tool_choice(choice, options):
            thinking = self._profile.thinking_active(options)
            raise UnsupportedFeatureError(
                f"{self._model} does not accept tool_choice={choice.mode!r}"
                f"{' while thinking' if thinking else ''} (profile.tool_choice_modes="
                f"{sorted(self._profile.tool_choice_modes)}); it was not sent",
                feature="tool_choice", status=None, vendor=self.vendor,
            )
        body["tools"] = format_tools(tools, strict=self.send_strict)
        if choice is not None:
            body["tool_choice"] = format_tool_choice(choice)
        if options.parallel_tool_calls is not None and self._profile.parallel_tool_calls_flag:
            body["parallel_tool_calls"] = options.parallel_tool_calls

    def offer_named_tool(
        self, body: dict[str, Any], tools: Sequence[ToolSpec], options: GenerateOptions
    ) -> tuple[Sequence[ToolSpec], GenerateOptions]:
        """Emulate ``specific`` for a vendor that enforces no named ``tool_choice``
        (GLM answers "Tool choice must be auto", MiniMax ignores it): only the
        named tool is offered, no ``tool_choice`` is sent (the API's ``auto``),
        and a closing system reminder asks for that tool — the forced turn of
        the structured-output engine can then only call ``generate_response``
        or answer in text (C21; the same emulation as ``providers.ollama``).
        Other choices pass unchanged."""
        choice = options.tool_choice
        if choice is None or choice.mode != "specific" or not tools:
            return tools, options
        named = [t for t in tools if t.name == choice.name] or list(tools)
        role = "user" if self._late_system == "user" else "system"
        body["messages"].append({"role": role, "content": system_reminder(
            FORCE_NAMED_TOOL.format(name=choice.name))})
        return named, options.with_(tool_choice=None)

    def apply_response_format(
        self, body: dict[str, Any], rf: ResponseFormat, options: GenerateOptions
    ) -> None:
        """Set ``response_format``. json_schema is sent only when the profile
        says the model has it; otherwise JSON mode with the schema in a system
        instruction. JSON mode gets an instruction naming JSON when no message
        does (vendors refuse JSON mode without the word). A profile with
        ``native_schema_in_prompt`` (a server whose json_schema only constrains
        sampling) gets the schema in a system instruction beside it too."""
        if rf.type == "json_schema" and rf.schema is not None:
            if self.json_schema_ok(options):
                last = self._last_format  # the engine sends one ResponseFormat per output type
                if last is None or last.source is not rf:
                    last = self._last_format = WireFormat(rf, format_response_format(rf))
                body["response_format"] = last.wire  # read-only: serialized, never edited
                if self._profile.native_schema_in_prompt:  # the grammar shows it to no one
                    insert_instruction(body["messages"], SCHEMA_INSTRUCTION.format(
                        schema=orjson.dumps(dict(rf.schema)).decode()))
                return
            schema = orjson.dumps(dict(rf.schema)).decode()
            insert_instruction(body["messages"], SCHEMA_INSTRUCTION.format(schema=schema))
        elif not mentions_json(body["messages"]):
            insert_instruction(body["messages"], JSON_INSTRUCTION)
        body["response_format"] = {"type": "json_object"}

    def json_schema_ok(self, options: GenerateOptions) -> bool:
        """Whether ``response_format`` json_schema may be sent (the profile says so)."""
        return self._profile.native_output == "json_schema"

    def apply_thinking(self, body: dict[str, Any], options: GenerateOptions) -> None:
        """Turn reasoning on/off per ``options.thinking`` (no standard field here)."""

    def temperature(self, value: float) -> float:
        """The temperature to send (vendors with a narrower range clamp it)."""
        return value

    def body_json(self, body: Mapping[str, Any]) -> bytes | None:
        """``body`` (``_body``'s) as JSON, its ``response_format`` written from the
        bytes it was serialized to when first sent (``WireFormat``: a schema is
        serialized once per output type, not per request); the same bytes as
        serializing the whole body. ``None`` (the HTTP layer serializes the
        body: it repairs or refuses what JSON cannot carry as it is) for a body
        without that format, or one orjson refuses."""
        last = self._last_format
        if last is None or body.get("response_format") is not last.wire:
            return None
        if not last.tried:
            last.tried = True
            try:
                last.json = orjson.Fragment(orjson.dumps(last.wire))
            except TypeError:
                last.json = None
        if last.json is None:
            return None
        try:
            return orjson.dumps({**body, "response_format": last.json})
        except TypeError:  # (a lone surrogate in a message...): left to the HTTP layer
            return None

    def _body(self, messages: Sequence[Msg], tools: Sequence[ToolSpec], options: GenerateOptions
              ) -> dict[str, Any]:
        """``build_body`` without the optional fields this model's server refused,
        its messages in strict turns where the server's chat template asked
        for them (``alternate_roles``, ``providers._alternating``)."""
        body = self.build_body(messages, tools, options)
        for name in self._dropped_fields:
            body.pop(name, None)
        if self.alternate_roles:  # a chat template that refused anything but strict turns
            body["messages"] = alternating(body["messages"], system=self.system_role)
        return body
