"""Gemini replies read into chunks (``providers.gemini`` uses it for the
stream, whole replies and batch replies alike): ``GenerateContentResponse``
objects, their ``functionCall`` / thought / text parts, finish reasons,
usage and token log-probabilities (shared/providers.md §4;
googleapis/python-genai types.py).

Token log-probabilities (``generationConfig.responseLogprobs``): a candidate
carries ``logprobsResult`` (google-genai ``types.LogprobsResult``):
``chosenCandidates``, one ``LogprobsResultCandidate`` per decoding step
(``token``: its text, ``logProbability``: its natural log-probability,
``tokenId``), and ``topCandidates`` (the alternatives, not read here). A
stream event is a whole ``GenerateContentResponse`` read by the same
converter (google-genai ``models.py``: ``_Candidate_from_mldev`` copies
``logprobsResult`` for every event of ``generate_content_stream`` as for a
whole reply), so each event's candidate carries the tokens of its own text.
Source: googleapis/python-genai @ 6680718 (``google/genai/types.py``
``LogprobsResult``, ``LogprobsResultCandidate``; ``google/genai/models.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from agentflow.errors import ServerError, TruncatedStreamError
from agentflow.model import (
    FinishChunk,
    FinishReason,
    ModelChunk,
    TextDelta,
    ThinkingDelta,
    TokenLogprob,
    TokenLogprobs,
    ToolCallDelta,
    Usage,
    UsageChunk,
)
from agentflow.providers._gemini_errors import (
    MISSING_SIGNATURE,
    VENDOR,
    missing_signature,
    payload_error,
)
from agentflow.providers._gemini_request import CALL_ID, SIGNATURE
from agentflow.providers._payload import counted

__all__ = ["ReplyReader", "validates_signatures"]


_FINISH: dict[str, FinishReason] = {
    "STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
    "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter", "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error", "TOO_MANY_TOOL_CALLS": "error",
    "LANGUAGE": "content_filter", "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter", "MALFORMED_RESPONSE": "error",
    "ESCALATION": "content_filter", "MODEL_ARMOR": "content_filter",
    "PUP_LIMITED_DISABLED": "content_filter", "CONTINUATION": "length",
}
"""The API's ``FinishReason`` values. ``LANGUAGE`` ("flagged for using an
unsupported language") and the image filters stop a reply as ``SAFETY`` does
(microsoft/agent-framework-go#1100: unmapped, such a reply was an empty
answer); ``MALFORMED_RESPONSE`` ends a generation that failed (sent again, it
may succeed). From google-genai 3.3 ``types.FinishReason``: ``ESCALATION``
("filtered by an escalation rule"), ``MODEL_ARMOR`` ("blocked by Model
Armor") and ``PUP_LIMITED_DISABLED`` ("the user account is limited or
disabled due to Prohibited Use Policy violations") stop a reply as a filter
does; ``CONTINUATION`` ("reached the per-request token limit, but generation
is not yet complete") is a cut reply, as ``MAX_TOKENS`` is: read as
``other`` it passed for a whole answer. ``MISSING_THOUGHT_SIGNATURE`` is
not here: it faults the request's history, not the generation, and fails
the same on every retry (``end`` raises ``missing_signature``). Any other
value is ``other``."""
_UNEXPLAINED = frozenset({"OTHER", "FINISH_REASON_UNSPECIFIED"})
"""Finish reasons that say nothing: with no text and no call, the generation
failed (``{"finishReason": "OTHER", "index": 0}`` and no content,
google/generative-ai-docs#235: "frequently resulting in null response"),
finish reason ``error``; with some output, ``other``."""
_EMPTY_STOP = "STOP"
"""``STOP`` on a candidate that holds nothing at all (``"content": {"role":
"model"}``, no parts: no text, no call, no thought; BerriAI/litellm#24442,
google-gemini/deprecated-generative-ai-python#744, gemini-2.5-flash-lite and
-pro, "rerunning the same prompt ... might eventually return the expected
output") is a failed generation too, not an empty answer."""


_GENERATION = re.compile(r"gemini-(\d+)")


def validates_signatures(model: str) -> bool:
    """Whether ``model`` refuses function calls in history without a thought
    signature (Gemini 3 and later; ai.google.dev/gemini-api/docs/thought-signatures)."""
    match = _GENERATION.search(model.lower())
    return match is not None and int(match.group(1)) >= 3


def _usage(raw: Mapping[str, Any]) -> Usage:
    """Gemini counts thinking apart from candidates; our output includes it."""
    thoughts = int(raw.get("thoughtsTokenCount") or 0)
    prompt = int(raw.get("promptTokenCount") or 0)
    tools = int(raw.get("toolUsePromptTokenCount") or 0)
    candidates = int(raw.get("candidatesTokenCount") or 0)
    return counted(Usage(
        input_tokens=prompt + tools, output_tokens=candidates + thoughts,
        cached_tokens=int(raw.get("cachedContentTokenCount") or 0), reasoning_tokens=thoughts,
    ), prompt, tools, candidates)


def _call_delta(index: int, call: Mapping[str, Any],
                data: Mapping[str, Any] | None) -> ToolCallDelta:
    """A ``functionCall`` as a tool-call delta. ``args`` is a ``Struct`` (an
    object) on the wire, but Gemini-compatible gateways and proxies have
    been seen to hand it over as a JSON *string* (the form OpenAI uses for
    ``arguments``): a string is argument text for the tolerant decoder (a
    bad one goes back to the model as invalid); absent or ``null`` is ``{}``;
    anything else its JSON text, refused by validation."""
    args = call.get("args")
    if isinstance(args, Mapping) or args is None:
        return ToolCallDelta(index, id=call.get("id"), name=call["name"],
                             arguments_obj=args or {}, provider_data=data)
    text = args if isinstance(args, str) else orjson.dumps(args).decode()
    return ToolCallDelta(index, id=call.get("id"), name=call["name"], arguments=text,
                         provider_data=data)


def token_logprobs(result: Any) -> tuple[TokenLogprob, ...] | None:
    """The chosen tokens of a candidate's ``logprobsResult``
    (``{"chosenCandidates": [{"token", "logProbability", "tokenId"}...],
    "topCandidates": [...]}``): ``()`` when there is none or it lists no
    token, ``None`` when an entry has no ``token`` string or no numeric
    ``logProbability`` (the tokens can then not be laid on the text: none
    is trusted)."""
    if not isinstance(result, Mapping):
        return ()
    chosen = result.get("chosenCandidates")
    if not isinstance(chosen, list):
        return ()
    out = []
    for entry in chosen:
        token = entry.get("token") if isinstance(entry, Mapping) else None
        logprob = entry.get("logProbability") if isinstance(entry, Mapping) else None
        if not isinstance(token, str) or not isinstance(logprob, int | float) or isinstance(
                logprob, bool):
            return None
        out.append(TokenLogprob(token, min(0.0, float(logprob))))
    return tuple(out)


def _answer_text(part: Any) -> str:
    """A part's answer text (``""`` for thoughts, calls and media)."""
    if not isinstance(part, Mapping):
        return ""
    text = part.get("text")
    return text if isinstance(text, str) and not part.get("thought") else ""


class ReplyReader:
    """Folds ``GenerateContentResponse`` objects (stream events or a whole
    reply) into chunks. The text of each event's candidate carries the tokens
    of its ``logprobsResult`` (``TextDelta.logprobs``, on the event's last
    text part) while they spell that text exactly; from the first event
    whose tokens do not (a malformed entry, tokens of thoughts or of text
    the reply does not hold), no more are attached: the tokens given always
    spell a prefix of the reply's text, so a field is never scored by
    tokens of another."""

    def __init__(self) -> None:
        self.calls = 0
        self.wrote = False
        """Whether any answer text came (a reply that ends unexplained without any failed)."""
        self.thought = False
        """Whether any thought text came (an answer the engine may read from the reasoning)."""
        self.finish: str | None = None
        self.model: str | None = None
        self.reply_id: str | None = None
        self._tokens_spell_text = True

    def feed(self, data: Any) -> Iterable[ModelChunk]:
        """The chunks of one ``GenerateContentResponse``, or of each in a JSON
        array of them: ``streamGenerateContent`` without ``alt=sse`` answers
        with the whole stream as one array (its default form, which a gateway
        that drops the query gives back; nyo16/nous#26), and an error may come
        wrapped in a one-element array. Only the first element was read: the
        reply lost all text after its first event."""
        if isinstance(data, list):
            for item in data:
                yield from self.feed(item)
            return
        if "error" in data:
            raise payload_error(data) or ServerError(str(data)[:500], vendor=VENDOR)
        if isinstance(data.get("modelVersion"), str):  # for tracing
            self.model = data["modelVersion"]
        if isinstance(data.get("responseId"), str):
            self.reply_id = data["responseId"]
        if data.get("usageMetadata"):
            yield UsageChunk(_usage(data["usageMetadata"]))
        candidates = data.get("candidates") or []
        if not candidates:
            blocked = (data.get("promptFeedback") or {}).get("blockReason")
            if blocked:
                self.finish = f"BLOCKED:{blocked}"
            return
        candidate = candidates[0]
        parts = list((candidate.get("content") or {}).get("parts") or [])
        tokens = self._tokens(candidate.get("logprobsResult"), parts)
        last_text = max((i for i, p in enumerate(parts) if _answer_text(p)), default=-1)
        for i, part in enumerate(parts):
            yield from self._part(part, tokens if i == last_text else ())
        if candidate.get("finishReason"):
            self.finish = candidate["finishReason"]

    def _tokens(self, result: Any, parts: list[Any]) -> tuple[TokenLogprob, ...]:
        """This event's tokens when they spell its answer text (see the class)."""
        text = "".join(_answer_text(p) for p in parts)
        if not self._tokens_spell_text or (result is None and not text):
            return ()
        tokens = token_logprobs(result)  # () without a result: text without its tokens
        if tokens is None or "".join(t.token for t in tokens) != text:
            self._tokens_spell_text = False
            return ()
        return tokens

    def _part(self, part: Mapping[str, Any],
              tokens: tuple[TokenLogprob, ...] = ()) -> Iterable[ModelChunk]:
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            call = part["functionCall"]
            data = {k: v for k, v in ((SIGNATURE, signature), (CALL_ID, call.get("id"))) if v}
            yield _call_delta(self.calls, call, data or None)
            self.calls += 1
            return
        if part.get("thought"):
            if part.get("text"):
                self.thought = True
                yield ThinkingDelta(part["text"])
        elif part.get("text"):
            self.wrote = True
            yield (TextDelta(part["text"], logprobs=TokenLogprobs(tokens)) if tokens
                   else TextDelta(part["text"]))
        if signature:
            yield ThinkingDelta(provider_data={SIGNATURE: signature})

    def end(self, *, cut_if_unfinished: bool = True) -> Iterable[ModelChunk]:
        """The finish chunk (a whole reply without ``finishReason`` counts as
        ``STOP``, with ``raw=""``: the vendor gave no reason).

        Raises:
            TruncatedStreamError: a stream ended without ``finishReason``
                (nor a block reason): it was cut.
            BadRequestError: finish reason ``MISSING_THOUGHT_SIGNATURE`` (code
                ``MISSING_SIGNATURE``): the history lost a call's signature.
        """
        if self.finish is None and cut_if_unfinished:
            raise TruncatedStreamError("the stream ended without a finishReason; the reply "
                                       "is incomplete", vendor=VENDOR)
        raw = self.finish or ""
        if raw == MISSING_SIGNATURE:
            raise missing_signature(f"the reply ended with finish reason {raw}")
        if raw.startswith("BLOCKED:"):
            reason: FinishReason = "content_filter"
        elif raw in ("STOP", "") and self.calls:
            reason = "tool_calls"
        elif not self.calls and not self.wrote and (
                raw in _UNEXPLAINED or (raw == _EMPTY_STOP and not self.thought)):
            reason = "error"
        else:
            reason = _FINISH.get(raw or "STOP", "other")
        yield FinishChunk(reason, raw, self.model, self.reply_id)
