"""The reply side of the OpenAI chat-completions wire format
(``agentflow.providers._openai_wire`` re-exports it): ``ChunkParser`` folds
stream chunks (``chat.completion.chunk``) or a whole reply
(``chat.completion``) into ``ModelChunk``s; ``parse_usage`` and
``finish_reason`` (``_openai_finish``) and ``token_logprobs``
(``_openai_logprobs``) normalize what vendors report (re-exported here);
what one delta's text adds (cumulative or restated text, content parts) is
``_openai_deltas``'.

Wire facts follow shared/providers.md section 1 (OpenAI Chat Completions):
stream tool-call deltas are keyed by ``index``; a refusal arrives in
``refusal`` instead of ``content``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentflow.errors import ContextLengthError
from agentflow.model import (
    FinishChunk,
    ModelChunk,
    TextDelta,
    ThinkingDelta,
    TokenLogprob,
    ToolCallDelta,
    Usage,
    UsageChunk,
)
from agentflow.providers._openai_deltas import SoFar, content_parts, new_text, whole_json
from agentflow.providers._openai_finish import finish_reason, parse_usage
from agentflow.providers._openai_logprobs import token_logprobs
from agentflow.providers._reasoning_details import REASONING_DETAILS, DetailsMerger

__all__ = ["CALL_EXTRAS", "REASONING_OPAQUE", "ChunkParser", "finish_reason", "parse_usage",
           "token_logprobs"]

CALL_EXTRAS = "openai_extra_content"
"""``ToolUseBlock.provider_data`` key: a call's ``extra_content`` (Gemini's
OpenAI-compatible endpoints carry the thought signature there,
``{"google": {"thought_signature": ...}}``), sent back with the call."""

REASONING_OPAQUE = "openai_reasoning_opaque"
"""``ThinkingBlock.provider_data`` key: a reply's ``reasoning_opaque`` (GitHub
Copilot's chat completions: the encrypted reasoning state that comes with
its ``reasoning_text``), sent back with the assistant turn."""

_UNSET: Any = object()
_PLAIN_ENDS = frozenset({"stop", "other"})
_ABNORMAL_ENDS = frozenset({"length", "content_filter", "refusal", "error"})
"""The normalized reasons a router's ``native_finish_reason`` overrides a
plain ``stop`` with (``ChunkParser.finish``)."""


class ChunkParser:
    """Folds chat-completion payloads into ``ModelChunk``s, one parser per reply.

    ``feed`` takes one stream chunk (``choices[0].delta``) or a whole reply
    (``choices[0].message``). Tool calls are keyed by ``index``; servers that
    omit it are handled by ``id`` (a new id starts a new call, a fragment
    without id/name continues the last). Arguments given as an object (some
    compatible servers) become ``arguments_obj``. A refusal is streamed as text
    and the finish reason becomes ``refusal``; ``stop`` with tool calls becomes
    ``tool_calls``, and ``tool_calls`` without any becomes ``stop`` (vLLM's
    forced choice that produced no call, vllm-project/vllm#53255; a reasoning
    model's answer left in its reasoning, labring/FastGPT#7339): the reply
    is read for what it holds. The deprecated ``function_call`` (one call, finish reason
    ``function_call``) older compatible servers answer with is read as call 0.
    All-zero usage (MiniMax placeholders) is skipped. A server that streams
    a call's arguments *cumulatively* (each fragment the whole text so far:
    DeepSeek and Baidu Qianfan in that mode, NousResearch/hermes-agent#35592)
    is read as deltas (``_new_arguments``), never concatenated into
    ``{"a{"a": 1{"a": 1}``.
    Subclasses override ``text`` (content handling) and ``close`` (flush).

    Payloads are read as the wire format shapes them: one of another shape
    raises ``LookupError``/``TypeError``/``AttributeError``/``ValueError``
    (or makes a chunk with a field of the wrong type), which the caller's
    ``ReplyGuard.fold`` turns into a typed ``ProviderError``.
    """

    __slots__ = ("_alias", "_args", "_choice", "_details", "_ending", "_ids", "_last",
                 "_logprobs", "_model", "_names", "_next", "_refused", "_reply_id", "_so_far",
                 "_texted", "_tools_seen", "_top", "_usage", "stream_deltas", "terminal")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._names: dict[int, str] = {}
        """Per index: the tool name its call began with."""
        self._alias: dict[int, int] = {}
        """Index -> the index of the call it repeats (its id and name again)."""
        self._last = -1
        self._next = 0
        self._refused = False
        self._tools_seen = False
        self._usage: Usage | None = None
        self._model: str | None = None
        self._reply_id: str | None = None
        self._logprobs: Sequence[TokenLogprob] = ()
        self._args: dict[int, SoFar] = {}
        """Per index: the argument text of its latest call so far."""
        self._choice: Any = _UNSET
        """The ``index`` of the choice this reply reads (the first one's; none is 0)."""
        self._top = 0
        """The highest choice ``index`` read so far."""
        self._texted = False
        """Set once reply text came in a ``delta`` (``_message``)."""
        self._ending = False
        """Whether the payload being read carries the finish reason."""
        self.terminal = False
        """Set when a payload itself ends the reply (no ``[DONE]`` needed)."""
        self._details: DetailsMerger | None = None
        """OpenRouter's ``reasoning_details`` so far (``_reasoning_details``)."""
        self._so_far: dict[str, SoFar] = {}
        """Per channel (``content``, ``reasoning``): the text so far (``new_text``)."""
        self.stream_deltas: bool | None = None
        """The endpoint's ``ModelProfile.cumulative_stream_deltas`` (``new_text``'s ``known``)."""

    def feed(self, payload: Mapping[str, Any]) -> list[ModelChunk]:
        """The chunks of one payload."""
        out: list[ModelChunk] = []
        raw_finish = None
        if self._model is None:  # the answering model and reply id, for tracing
            model, reply_id = payload.get("model"), payload.get("id")
            self._model = model if isinstance(model, str) and model else None
            self._reply_id = reply_id if isinstance(reply_id, str) and reply_id else None
        choices = payload.get("choices")
        if choices and (choice := self._chosen(choices, payload.get("object"))) is not None:
            self._logprobs = token_logprobs(choice.get("logprobs"))
            delta = choice.get("delta")
            if delta is None:
                delta = self._message(choice)
            raw_finish = choice.get("finish_reason")
            if delta:
                self._ending = bool(raw_finish) and raw_finish != "null"
                self.delta(delta, out)
        if payload.get("truncated") is True:  # llama.cpp: the prompt was cut to its window
            raise ContextLengthError(
                "the server says it truncated the prompt to its context window "
                '("truncated": true): the reply read only part of the input')
        raw_usage = payload.get("usage")  # most stream chunks carry none: no call for them
        if raw_usage is None and raw_finish and self._usage is None:
            # Groq: the usage under ``x_groq`` in the finish chunk (vercel/ai#1651);
            # Moonshot (Kimi): under the finish chunk's choice (earendil-works/pi#2017)
            extension = payload.get("x_groq")
            raw_usage = extension.get("usage") if isinstance(extension, Mapping) else None
            if raw_usage is None:
                raw_usage = choice.get("usage")
        usage = parse_usage(raw_usage) if raw_usage is not None else None
        if usage is not None and usage.total_tokens and (self._usage is None
                                                         or usage != self._usage):
            self._usage = usage
            out.append(UsageChunk(usage))
        if raw_finish and raw_finish != "null":
            if self._details is not None and self._details.changed:
                out.append(self._details_chunk(self._details))
            out.append(self.finish(raw_finish, choice.get("native_finish_reason")))
        return out

    def _chosen(self, choices: Any, kind: Any = None) -> Any:
        """The choice this reply reads: the one with ``index`` 0 (else the
        first) in the first payload, that index's in later ones; ``None``: the
        payload carries only other choices. A server that answers several
        completions (``n`` > 1: Azure, BerriAI/litellm#3276) interleaves their
        deltas, and read together they made one value of two. Old TGI (before
        1.4.4, huggingface/text-generation-inference#1648) numbered each
        chunk's choice by token, in ``text_completion`` chunks (``kind``):
        there an index above every one seen continues the reply (never in a
        ``chat.completion.chunk`` stream: other completions)."""
        first = choices[0]
        if self._choice is _UNSET:
            if len(choices) > 1:
                first = next((c for c in choices if not c.get("index")), first)
            self._choice = self._top = first.get("index") or 0  # no index: the one choice
            return first
        for choice in choices:
            index = choice.get("index") or 0
            if index == self._choice:
                return choice
            if kind == "text_completion" and isinstance(index, int) and index > self._top:
                self._top = index  # TGI < 1.4.4: the next token's chunk
                return choice
        return None

    def _message(self, choice: Mapping[str, Any]) -> Any:
        """What of a choice's whole ``message`` is read: all of it, unless
        reply text or calls came before it in ``delta``s. Some servers and
        proxies close a stream with the whole reply again, as a ``message``
        (abundantbeing/hermes-browser-extension#11): read as one more delta,
        it doubled the text and the calls. openai-python's stream reads
        ``delta`` alone; the finish reason and usage are read still. A whole
        reply, or a stream whose only content is such a message (MiniMax
        after a bare ``role`` delta), is read in full."""
        if self._texted or self._tools_seen:
            return None
        return choice.get("message")

    def delta(self, delta: Mapping[str, Any], out: list[ModelChunk]) -> None:
        """Fold one ``delta``/``message`` object in."""
        reasoning = (delta.get("reasoning_content") or delta.get("reasoning")
                     or delta.get("reasoning_text"))
        if reasoning and isinstance(reasoning, str):
            reasoning = new_text(self._so_far, "reasoning", reasoning, False,
                                 self.stream_deltas)
            if reasoning:
                out.append(ThinkingDelta(reasoning))
        opaque = delta.get("reasoning_opaque")  # GitHub Copilot's, with reasoning_text
        if opaque and isinstance(opaque, str):
            out.append(ThinkingDelta(provider_data={REASONING_OPAQUE: opaque}))
        content = delta.get("content")
        if content:
            self._texted = True
            if isinstance(content, list):
                thought, content = content_parts(content)
                if thought:
                    out.append(ThinkingDelta(thought))
            elif type(content) is str:
                seen = self._so_far.get("content")
                if seen is not None and len(content) < seen.size and not seen.cumulative:
                    seen.parts.append(content)  # an incremental delta: ``new_text``'s fast path
                    seen.size += len(content)
                else:
                    content = new_text(self._so_far, "content", content, self._ending,
                                       self.stream_deltas)
            if content:
                self.text(content, out)
        refusal = delta.get("refusal")
        if refusal:
            self._refused = True
            out.append(TextDelta(refusal))
        details = delta.get("reasoning_details")  # OpenRouter's: sent back, as it came
        if details:
            if self._details is None:
                self._details = DetailsMerger()
            self._details.add(details)
        calls = delta.get("tool_calls")
        if calls:
            if type(calls) is dict:  # one call as an object, not a list (TGI before 3.0)
                calls = [calls]
            for call in calls:
                out.append(self.tool_call(call))
        elif isinstance(legacy := delta.get("function_call"), Mapping) and legacy:
            # the deprecated single ``function_call`` (finish reason ``function_call``)
            # that older OpenAI-compatible servers still answer with: call 0
            out.append(self.tool_call({"index": 0, "function": legacy}))

    def text(self, content: str, out: list[ModelChunk]) -> None:
        """Handle reply text (MiniMax splits ``<think>`` tags out here), with
        the tokens of this payload's ``logprobs.content`` when it has some."""
        logprobs, self._logprobs = self._logprobs, ()
        out.append(TextDelta(content, logprobs=logprobs) if logprobs else TextDelta(content))

    def tool_call(self, call: Mapping[str, Any]) -> ToolCallDelta:
        """One ``tool_calls[]`` entry as a ``ToolCallDelta``."""
        fn = call.get("function") or {}
        call_id = _call_id(call.get("id"))
        name = fn.get("name") or None
        index = call.get("index")
        fresh = call_id is not None and call_id not in self._ids  # another call begins
        if isinstance(index, int):
            if self._alias:
                index = self._alias.get(index, index)
            if fresh and name is None and index in self._names and not self._closed(index):
                # a fragment of the open call under an id of its own (GLM-4's
                # openai_api_server gives every fragment a new id, zai-org/GLM-4#194):
                # it continues the call, as a fragment without an id does
                call_id, fresh = None, False
            if call_id is not None and not fresh and self._ids[call_id] != index and (
                    name is None or self._names.get(self._ids[call_id]) == name):
                # the same call (id and name) sent again under another index
                # (GitHub Copilot, NousResearch/hermes-agent#96925): one call, never
                # run twice; its arguments, if they differ, make a call of their own
                self._alias[index] = index = self._ids[call_id]
        else:
            if call_id is not None and call_id in self._ids:
                index = self._ids[call_id]
            elif self._last < 0 or (call_id is None and name is None) or self._anonymous():
                index = max(self._last, 0)  # the open call (its id and name come late)
            else:
                index = self._next
        if name is not None and index not in self._names:
            self._names[index] = name
        if call_id is not None:
            self._ids[call_id] = index
        self._last = index
        self._next = max(self._next, index + 1)
        self._tools_seen = True
        args = fn.get("arguments")
        extra = call.get("extra_content")  # Gemini's thought signature: sent back
        data = {CALL_EXTRAS: extra} if extra and isinstance(extra, Mapping) else None
        if isinstance(args, Mapping):
            return ToolCallDelta(index, call_id, name, arguments_obj=args, provider_data=data)
        if not isinstance(args, str):
            args = ""
        elif args:
            args = self._new_arguments(index, fresh, name is not None, args)
        if fresh and not args:  # a call begins with no argument text: none so far
            self._args.pop(index, None)
        return ToolCallDelta(index, call_id, name, args, provider_data=data)

    def _anonymous(self) -> bool:
        """Whether the latest call came with arguments alone so far (no id, no
        name): a server that sends a call's first argument text before its id
        and name (Zoo-Code-Org/Zoo-Code#695) names it in a later fragment."""
        return self._last not in self._names and self._last not in self._ids.values()

    def _closed(self, index: int) -> bool:
        """Whether the argument text of the call at ``index`` is whole JSON."""
        seen = self._args.get(index)
        return seen is not None and whole_json(seen.text())

    def _new_arguments(self, index: int, fresh: bool, named: bool, args: str) -> str:
        """What ``args`` adds to the argument text of the call at ``index``.

        A fragment that repeats the whole text so far and goes on (a server
        streaming cumulatively) adds only its rest; once a call is seen
        streaming so, a fragment that adds nothing is dropped. Any other
        fragment is a delta, as the wire format has it (a whole repeat of
        complete arguments, or a second object glued on, is left as is for
        ``ToolCallAssembler``, which reads those). Only a fragment longer than
        the text so far is compared: a delta stream pays no join."""
        seen = self._args.get(index)
        if seen is not None and seen.cumulative and named and whole_json(seen.text()):
            fresh = True  # a call of its own after a whole one (a server without ids)
        if seen is None or fresh:
            self._args[index] = SoFar(args)
            return args
        if seen.cumulative:
            text = seen.text()
            if args.startswith(text):
                seen.parts, seen.size = [args], len(args)
                return args[len(text):]
        elif len(args) > seen.size:
            text = seen.text()
            if text.strip() and args.startswith(text) and not whole_json(text):
                seen.cumulative = True
                seen.parts, seen.size = [args], len(args)
                return args[len(text):]
        seen.parts.append(args)
        seen.size += len(args)
        return args

    def finish(self, raw: str, native: Any = None) -> FinishChunk:
        """The normalized finish chunk for the vendor's ``raw`` reason.

        ``native``: a router's ``native_finish_reason``, the upstream model's
        own word next to the normalized one (OpenRouter, "Standardized finish
        reasons", openrouter.ai/announcements/standardized-finish-reasons).
        Routers send ``stop`` for some ends their upstream calls otherwise
        (reVrost/go-openrouter#43: "finish_reason come back as stop, but
        native_finish_reason vastly different"): a Gemini reply cut at
        ``MAX_TOKENS`` or blocked for ``SAFETY``, a refusal. Read as ``stop``,
        a cut or filtered reply passed as a complete answer; where the
        normalized reason says only ``stop`` (or is unknown) and the native
        one names a cut, a filter, a refusal or a failure, the native one is
        the reply's reason (and its ``raw``)."""
        reason = finish_reason(raw)
        if isinstance(native, str) and native and reason in _PLAIN_ENDS:
            told = finish_reason(native)
            if told in _ABNORMAL_ENDS:
                reason, raw = told, native
        if self._refused:
            reason = "refusal"
        elif reason == "stop" and self._tools_seen:
            reason = "tool_calls"
        elif reason == "tool_calls" and not self._tools_seen:
            reason = "stop"  # a label without a call (vllm-project/vllm#53255): a plain end
        return FinishChunk(reason, raw, self._model, self._reply_id)

    @staticmethod
    def _details_chunk(details: DetailsMerger) -> ThinkingDelta:
        """The reply's ``reasoning_details`` so far, kept with its thinking."""
        return ThinkingDelta(provider_data={REASONING_DETAILS: details.items()})

    def close(self) -> list[ModelChunk]:
        """Chunks held back until the reply ends: ``reasoning_details`` that
        came after the finish reason."""
        if self._details is not None and self._details.changed:
            return [self._details_chunk(self._details)]
        return []


def _call_id(given: Any) -> Any:
    """A ``tool_calls[]`` entry's ``id`` as the reply gave it: an integer as
    its decimal text, as OpenAI-compatible servers send some (NVIDIA NIM's
    ``z-ai/glm-5.1``, anomalyco/opencode#25786: "Expected 'id' to be a
    string"), which failed the whole reply as a malformed event; an empty
    value (``""``, ``null``) none, so the call gets an id of its own; any
    other as it is (a string; else refused as malformed by ``ReplyGuard``)."""
    if type(given) is int:
        return str(given)
    return given or None
