"""Tool calls from streamed fragments: ``ToolCallAssembler`` folds a reply's
``ToolCallDelta``s, interleaved across parallel calls and split at any byte,
into whole ``ToolUseBlock``s; ``parse_arguments`` reads one call's arguments.

``agentflow.reply.ReplyBuilder`` holds one assembler per reply; both names are
re-exported from ``agentflow.reply``.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Collection, Mapping
from typing import Any

import orjson

from agentflow._clean_text import clean_tool_name
from agentflow.messages import ToolUseBlock, new_id
from agentflow.model import ToolCallDelta
from agentflow.output.assembled_arguments import (
    concatenated_objects,
    enveloped,
    rebalanced_arguments,
    restarted_object,
)
from agentflow.output.decoding import RAW_ARGUMENTS, decode_arguments, exact_object
from agentflow.output.parsing import closed_json

__all__ = ["ToolCallAssembler", "parse_arguments"]


def parse_arguments(raw: str | bytes | Mapping[str, Any] | None) -> dict[str, Any]:
    """Tool-call arguments as a dict: ``agentflow.output.decoding.decode_arguments``.

    Accepts an object, a JSON string (also encoded two or three times),
    Python-literal syntax (read safely, never evaluated), or an
    empty/whitespace/``null`` value (-> ``{}``). Anything else (text that is
    not JSON, JSON that is not an object, a Python set or bytes literal) is
    returned as ``{"__raw_arguments__": text}`` so that validation reports it
    to the model instead of crashing the call.
    """
    return decode_arguments(raw)


class ToolCallAssembler:
    """Builds complete tool calls from ``ToolCallDelta`` fragments.

    Fragments of several calls may interleave. A call is keyed by
    ``(index, id)``: a fragment with a new non-null id at an index already
    holding a call with another id starts a new call (servers that send
    parallel calls all at index 0); a fragment without id (or with the same
    id) continues the latest call at its index, unless it opens a call of
    its own (a name or whole arguments) while that call is already complete
    (its arguments a whole JSON value): servers without ids. Two calls'
    arguments are never concatenated. A name given again on a later
    fragment of an open call is the same name (vLLM, MiniMax via NIM), the
    whole name so far and more (a cumulative stream), or the rest of a name
    split like arguments (``get_wea`` + ``ther``: Gemini's and LM Studio's
    OpenAI-compatible streams, continuedev/continue#5849): ``_folded_name``.
    A call that began without a name (its id and arguments first) takes the
    name a later fragment gives it (vercel/ai#14722); a call with neither name
    nor id that follows, at the next index, a named call still without
    arguments holds that call's arguments (a server's parser that opened the
    call at one index and streamed its arguments at the next with ``"name":
    null, "id": null``, sgl-project/sglang#23071): ``_orphans_joined``.
    Argument fragments may be str or bytes split at any byte (inside an
    escape sequence or a multi-byte UTF-8 character); bytes are decoded
    incrementally per call.
    """

    __slots__ = ("_calls", "_latest")

    def __init__(self) -> None:
        self._calls: list[_PendingCall] = []
        self._latest: dict[int, _PendingCall] = {}

    def add(self, delta: ToolCallDelta) -> None:
        """Fold one fragment in."""
        call = self._latest.get(delta.index)
        if call is None or _starts_new(call, delta):
            call = self._latest[delta.index] = _PendingCall(delta.index)
            self._calls.append(call)
        if delta.id and not call.id:
            call.id = delta.id
        if delta.name:
            call.name = _folded_name(call.name, delta.name)
        if delta.arguments:
            if isinstance(delta.arguments, bytes):
                if call.decoder is None:
                    call.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
                call.parts.append(call.decoder.decode(delta.arguments))
            else:
                call.parts.append(delta.arguments)
        if delta.arguments_obj is not None:
            call.obj = dict(delta.arguments_obj)
        if delta.provider_data:
            call.provider_data.update(delta.provider_data)

    def arguments_text(self, index: int) -> str:
        """The argument text received so far for the latest call at ``index``."""
        call = self._latest.get(index)
        return "".join(call.parts) if call else ""

    def name(self, index: int) -> str | None:
        """The tool name of the latest call at ``index``, once known."""
        call = self._latest.get(index)
        return call.name if call else None

    def finish(self, closed: list[str] | None = None, ended: bool = True,
               taken: Callable[[], Collection[str]] | None = None) -> list[ToolUseBlock]:
        """The complete calls, ordered by index (calls sharing an index in order
        of arrival). Missing or repeated ids are
        synthesised (``call_<index>_<hex>``), so ids are unique within a reply,
        and within the conversation when ``taken`` gives the ids its earlier
        calls have (asked once, only for a reply whose calls carry ids): a
        server that numbers its calls per reply (Kimi's ``functions.f:0``,
        ``terminal:0``) repeats them, and a strict vendor refuses a history
        whose ids repeat (Anthropic's "tool_use ids must be unique", DeepSeek's
        "Duplicate value for 'tool_call_id'"), a UI client merges the calls;
        arguments are parsed by ``parse_arguments``. Arguments that are several
        JSON objects glued together become one call each (same name; ids after
        the first synthesised). Argument text that is an object with closing
        brackets lost or doubled (``agentflow.output.brackets``) is read with
        them set right; lost ones are added only when the reply ``ended``
        normally (never after a cut at the token limit). ``closed``, when
        given, receives the ids of the calls whose argument *text* was whole
        JSON objects (never those given as objects: a cut there cannot be
        seen). A call whose argument text is one plain JSON object keeps that
        text (``ToolUseBlock.arguments``). An entry with neither a name nor
        arguments (nothing, or ``{}``) is no call: a server's empty
        ``tool_calls`` skeleton beside a finished text answer (LM Studio's
        ``{"id": "", "type": "function"}``, lmstudio-ai/lmstudio-bug-tracker#830)
        was run as a call to tool ``""`` (the answer set aside for a "not
        found" round trip, and a nameless call in the history that strict
        servers refuse)."""
        if not self._calls:  # a reply without tool calls
            return []
        blocks: list[ToolUseBlock] = []
        seen: set[str] = set()
        prior: Collection[str] | None = None if taken is not None else ()
        calls = self._calls
        if len(calls) > 1:
            calls = _orphans_joined(sorted(calls, key=lambda c: c.index))
        for call in calls:
            if call.decoder is not None:
                call.parts.append(call.decoder.decode(b"", final=True))
                call.decoder = None
            whole = False
            exact: str | None = None  # argument text that is one plain JSON object
            if call.obj is not None:
                inputs = [call.obj]
            else:
                text = "".join(call.parts)
                plain = exact_object(text)
                if plain is not None:
                    inputs, exact = [plain], text
                else:
                    args = parse_arguments(text)
                    inputs = ((concatenated_objects(text) or restarted_object(text)
                               or [rebalanced_arguments(text, args, ended)])
                              if RAW_ARGUMENTS in args else [args])
                if closed is not None:
                    whole = RAW_ARGUMENTS not in inputs[0] and closed_json(text)
            name = call.name
            if not name and len(inputs) == 1:
                name, inputs[0] = enveloped(inputs[0])
                if name:
                    exact = None  # the text was the envelope, not these arguments
            if not name and not any(inputs):
                continue  # an empty entry (no name, no arguments): no call at all
            if prior is None and call.id and taken is not None:
                prior = taken()
            for n, args in enumerate(inputs):
                call_id = (call.id if n == 0 and call.id and call.id not in seen
                           and call.id not in (prior or ())
                           else f"call_{call.index}_{new_id()}")
                seen.add(call_id)
                if whole and closed is not None:
                    closed.append(call_id)
                blocks.append(
                    ToolUseBlock(
                        id=call_id,
                        name=clean_tool_name(name),
                        input=args,
                        provider_data=call.provider_data,
                        arguments=exact,
                    )
                )
        return blocks

    def __bool__(self) -> bool:
        return bool(self._calls)


def _folded_name(name: str | None, fragment: str) -> str:
    """The name of an open call after a fragment naming it (see ``ToolCallAssembler``)."""
    if not name or fragment.startswith(name):
        return fragment  # the first, a repeat, or the whole name so far and more
    return name + fragment  # the rest of a split name


def _orphans_joined(calls: list[_PendingCall]) -> list[_PendingCall]:
    """``calls`` (by index) with each call that has neither name nor id nor an
    arguments object folded into the call just before it, at the index before,
    when that one is named and got no argument text (see ``ToolCallAssembler``)."""
    out: list[_PendingCall] = []
    for call in calls:
        last = out[-1] if out else None
        if (last is not None and not (call.name or call.id) and call.obj is None
                and last.index == call.index - 1 and last.name and last.obj is None
                and not "".join(last.parts).strip() and last.decoder is None):
            last.parts, last.decoder = call.parts, call.decoder
            continue
        out.append(call)
    return out


def _starts_new(call: _PendingCall, delta: ToolCallDelta) -> bool:
    """Whether ``delta`` begins another call at the index ``call`` holds."""
    if delta.id:
        return bool(call.id) and delta.id != call.id
    if not (delta.name or delta.arguments_obj is not None) or not (call.name or call.id):
        return False
    if delta.name and not call.name:
        return False  # the name of a call that began with its id and arguments (vercel/ai#14722)
    if call.obj is not None:
        return True
    text = "".join(call.parts).strip()
    if not text or call.decoder is not None:
        return False
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


class _PendingCall:
    __slots__ = ("decoder", "id", "index", "name", "obj", "parts", "provider_data")

    def __init__(self, index: int) -> None:
        self.index = index
        self.id: str | None = None
        self.name: str | None = None
        self.parts: list[str] = []
        self.obj: dict[str, Any] | None = None
        self.decoder: codecs.IncrementalDecoder | None = None
        self.provider_data: dict[str, Any] = {}
