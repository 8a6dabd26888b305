"""``MarkupFilter``: in-band tool-call markup in one reply's chunks turned into
tool calls, streamed and whole (``_markup`` has the overview and the registry
of formats).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from agentflow.messages import new_id
from agentflow.model import (
    FinishChunk,
    ModelChunk,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolSpec,
)
from agentflow.providers._markup_calls import AnyMarkup, MarkupCall, ToolMarkup, typed_value
from agentflow.providers._reply_markup import LeadHold, ReplyMarkup

__all__ = ["MarkupFilter", "filter_for"]


class _Scan:
    """The markup state of one channel of a reply (its text, or its reasoning)."""

    __slots__ = ("block", "held", "start")

    def __init__(self) -> None:
        self.held = ""
        self.block: str | None = None
        self.start = ""

    def rest(self) -> str:
        """What is held (an unclosed block, a partial start token), emptied."""
        rest = (self.start + self.block if self.block is not None else "") + self.held
        self.block, self.start, self.held = None, "", ""
        return rest


class MarkupFilter:
    """Turns markup in one reply's text chunks into tool calls (see the
    module docstring). ``feed`` each chunk's output, then ``close``.

    Markup in the reasoning (``ThinkingDelta`` text: DeepSeek's
    ``reasoning_content``, a vLLM reasoning parser that kept a call inside
    ``<think>``) is read too, for a model that wrote its call there and no
    call in its answer: those calls are kept until the reply ends and used
    only if the answer made no call (structured or markup); otherwise their
    text goes back to the reasoning, as written.

    A whole-reply form (``ReplyMarkup``) is looked for only when ``tools``
    are offered: the reply's head is held while it may be one (``LeadHold``),
    and a real tool call or the reply's end settles it.

    The calls read from the answer's markup are passed on when the reply
    ends, once its structured calls are known: a markup call that repeats
    one of them (same name, same arguments: a server whose tool parser
    extracted the call yet left its markup in the text) is dropped with its
    text, so the tool runs once; any other is passed on.

    Args:
        markups: the formats to look for.
        tools: the request's tools, for typing string-only formats' values
            and naming the tools a whole-reply form may call.
    """

    _BASE_INDEX = 1000
    """Indices of markup calls start here, clear of the vendor's own."""

    def __init__(self, markups: Sequence[AnyMarkup], tools: Sequence[ToolSpec] = ()) -> None:
        lead = None
        if markups:
            self._markups = tuple(m for m in markups if isinstance(m, ToolMarkup))
            forms = [m for m in markups if isinstance(m, ReplyMarkup)]
            lead = LeadHold(forms, frozenset(t.name for t in tools)) if forms and tools else None
            self._starts = tuple(dict.fromkeys(m.start for m in self._markups))
        else:  # nothing to look for (most models): nothing to sort out per reply
            self._markups = self._starts = ()
        self._lead = lead
        self._schemas = ({t.name: t.parameters for t in tools}
                         if self._markups or lead is not None else {})
        self._scan = _Scan()
        self._thought: _Scan | None = None
        self._thought_calls: list[tuple[str, list[MarkupCall]]] = []
        self._held: list[MarkupCall] = []  # the answer's markup calls, until the reply ends
        self._real: dict[int, tuple[str, bytes, Mapping[str, Any] | None]] = {}
        # the reply's structured calls by index: name, argument text, whole arguments
        self._calls = 0
        self._structured = False

    @property
    def active(self) -> bool:
        """Whether there is anything to look for."""
        return bool(self._markups) or self._lead is not None

    def feed(self, chunks: Iterable[ModelChunk]) -> list[ModelChunk]:
        """The chunks to pass on for ``chunks`` (``chunks`` itself, when it is
        a list and there is nothing to look for)."""
        if not self._markups and self._lead is None:
            return chunks if isinstance(chunks, list) else list(chunks)
        out: list[ModelChunk] = []
        for chunk in chunks:
            if isinstance(chunk, TextDelta) and not self._structured:
                lead = self._lead
                if lead is not None and not lead.done:
                    passed = lead.take(chunk.text)
                    if passed:
                        self._text(passed, out)
                    continue
                self._text(chunk.text, out)
            elif (isinstance(chunk, ThinkingDelta) and chunk.text and chunk.signature is None
                  and chunk.provider_data is None):
                self._thinking(chunk.text, out)
            elif isinstance(chunk, FinishChunk):
                self._settle(out)
                self._flush(out)
                if self._calls and chunk.reason in ("stop", "tool_calls"):
                    chunk = FinishChunk("tool_calls", chunk.raw)
                out.append(chunk)
            else:
                if isinstance(chunk, ToolCallDelta) and chunk.index < self._BASE_INDEX:
                    self._settle(out, parse=False)  # a held head is text beside real calls
                    self._structured = True  # real tool calls: markup after them stays text
                    self._note(chunk)
                out.append(chunk)
        return out

    def close(self) -> list[ModelChunk]:
        """What is still held at the end of the reply (as text)."""
        out: list[ModelChunk] = []
        if self._markups or self._lead is not None:  # nothing is held without them
            self._settle(out)
            self._flush(out)
        return out

    # -- internals --------------------------------------------------------
    def _settle(self, out: list[ModelChunk], parse: bool = True) -> None:
        """End the hold of the reply's head: its calls (when ``parse`` and a
        whole-reply form reads it), else its text, read for markup as usual."""
        lead = self._lead
        if lead is None or lead.done:
            return
        found = lead.settle() if parse else lead.release()
        if isinstance(found, str):
            if found:
                self._text(found, out)
        else:
            out.extend(self._deltas(found))
    def _note(self, chunk: ToolCallDelta) -> None:
        """Add ``chunk`` to the structured call it is a fragment of (only while
        markup calls wait for the reply's end: the rest is never compared)."""
        name, text, whole = self._real.get(chunk.index, ("", b"", None))
        piece = chunk.arguments
        self._real[chunk.index] = (name or chunk.name or "",
                                   text + (piece.encode() if isinstance(piece, str) else piece),
                                   chunk.arguments_obj if chunk.arguments_obj is not None
                                   else whole)

    def _release(self, out: list[ModelChunk]) -> None:
        """Pass on the answer's markup calls, but those that repeat a structured
        call of the reply (each structured call matches one at most)."""
        held, self._held = self._held, []
        if not held:
            return
        real: list[tuple[str, Any]] = []
        for name, text, whole in self._real.values():
            try:
                real.append((name, dict(whole) if whole is not None else orjson.loads(text)))
            except orjson.JSONDecodeError:
                continue  # no arguments to compare: it repeats nothing
        kept = []
        for call, args in zip(held, self._typed(held), strict=True):
            if (call.name, args) in real:
                real.remove((call.name, args))
            else:
                kept.append(call)
        out.extend(self._deltas(kept))

    def _flush(self, out: list[ModelChunk]) -> None:
        found = self._open_block(self._scan)
        if found is not None:
            self._held.extend(found[1])
        if self._thought is not None:
            found = self._open_block(self._thought)
            if found is not None:
                self._thought_calls.append(found)
            rest = self._thought.rest()
            if rest:
                out.append(ThinkingDelta(rest))
            if self._calls or self._structured or self._held:  # the answer made its own calls
                out.extend(ThinkingDelta(raw) for raw, _ in self._thought_calls)
            else:  # the calls were written in the reasoning only: they are the reply's
                out.extend(d for _, calls in self._thought_calls for d in self._deltas(calls))
            self._thought_calls.clear()
        self._release(out)
        rest = self._scan.rest()
        if rest:
            out.append(TextDelta(rest))  # broken or unclosed markup stays text

    def _open_block(self, scan: _Scan) -> tuple[str, list[MarkupCall]] | None:
        """A block still open at the reply's end, of a format that runs to the
        end (``end == ""``, Mistral's ``[TOOL_CALLS]``): its raw text and
        calls, taken out of ``scan``; ``None`` when there is none or it does
        not parse (it then stays text)."""
        if scan.block is None or not any(
                m.start == scan.start and not m.end for m in self._markups):
            return None
        calls = self._parse(scan.start, scan.block)
        if calls is None:
            return None
        raw = scan.start + scan.block
        scan.block, scan.start = None, ""
        return raw, calls

    def _thinking(self, piece: str, out: list[ModelChunk]) -> None:
        if self._thought is None:
            self._thought = _Scan()
        for item in self._blocks(self._thought, piece):
            if isinstance(item, str):
                out.append(ThinkingDelta(item))
            else:
                self._thought_calls.append(item)

    def _text(self, piece: str, out: list[ModelChunk]) -> None:
        for item in self._blocks(self._scan, piece):
            if isinstance(item, str):
                out.append(TextDelta(item))
            else:  # passed on when the reply ends (``_release``)
                self._held.extend(item[1])

    def _blocks(self, scan: _Scan, piece: str) -> list[str | tuple[str, list[MarkupCall]]]:
        """``piece`` read on from ``scan``'s state: plain text (a ``str``) and
        the parsed blocks (their raw text and calls), in order."""
        out: list[str | tuple[str, list[MarkupCall]]] = []
        text = scan.held + piece
        scan.held = ""
        while text:
            if scan.block is None:
                at, start = self._find_start(text)
                if start is None:
                    keep = self._partial_start(text)
                    if len(text) > keep:
                        out.append(text[: len(text) - keep])
                    scan.held = text[len(text) - keep:]
                    return out
                if at:
                    out.append(text[:at])
                scan.block, scan.start = "", start
                text = text[at + len(start):]
                continue
            ends = {m.end for m in self._markups if m.start == scan.start}
            buffer = scan.block + text
            found = min(((buffer.find(e), e) for e in ends if e and e in buffer), default=None)
            if found is None:
                scan.block = buffer
                return out
            at, end = found
            body, text = buffer[:at], buffer[at + len(end):]
            raw = scan.start + body + end
            calls = self._parse(scan.start, body)
            out.append(raw if calls is None else (raw, calls))
            scan.block, scan.start = None, ""
        return out

    def _find_start(self, text: str) -> tuple[int, str | None]:
        best: tuple[int, str | None] = (-1, None)
        for start in self._starts:
            at = text.find(start)
            if at >= 0 and (best[1] is None or at < best[0]):
                best = (at, start)
        return best

    def _partial_start(self, text: str) -> int:
        """Length of the longest end of ``text`` that may begin a start token."""
        longest = 0
        for start in self._starts:
            for k in range(min(len(start) - 1, len(text)), longest, -1):
                if text.endswith(start[:k]):
                    longest = k
                    break
        return longest

    def _parse(self, start: str, body: str) -> list[MarkupCall] | None:
        for markup in self._markups:
            if markup.start != start:
                continue
            try:
                calls = markup.parse(body)
            except (ValueError, TypeError, KeyError, IndexError):
                calls = None
            if calls:
                return calls
        return None

    def _typed(self, calls: list[MarkupCall]) -> list[dict[str, Any]]:
        """Each call's arguments, string-only formats' values typed from the
        tool's schema."""
        typed = []
        for call in calls:
            args: Mapping[str, Any] = call.arguments
            if call.raw_values:
                schema = self._schemas.get(call.name) or {}
                props = schema.get("properties") or {}
                args = {k: typed_value(str(v), props.get(k), schema) for k, v in args.items()}
            typed.append(dict(args))
        return typed

    def _deltas(self, calls: list[MarkupCall]) -> list[ModelChunk]:
        out: list[ModelChunk] = []
        for call, args in zip(calls, self._typed(calls), strict=True):
            index = self._BASE_INDEX + self._calls
            self._calls += 1
            out.append(ToolCallDelta(index, id=f"call_{new_id()}", name=call.name,
                                     arguments=orjson.dumps(args).decode()))
        return out


_NOTHING = MarkupFilter(())
"""The filter of every reply with no markup to look for: it holds no state
(``feed`` passes the chunks on, ``close`` returns none), so one serves all."""


def filter_for(markups: Sequence[AnyMarkup], tools: Sequence[ToolSpec] = ()) -> MarkupFilter:
    """A reply's ``MarkupFilter`` for ``markups`` and the request's ``tools``:
    a fresh one per reply, or the shared idle one when there is no markup to
    look for (most models: no filter state made per request)."""
    return MarkupFilter(markups, tools) if markups else _NOTHING
