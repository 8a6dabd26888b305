"""Tool-call forms without tokens of their own: the whole reply text is the
call (GLM-4-0414's ``get_weather\\n{"city": "Paris"}``), read only against the
request's offered tools.

A token-delimited format (``_markup.ToolMarkup``) can be found anywhere in a
reply; a form like this one is recognised only by its shape from the first
character, so it has two functions instead of a start and an end token:

* ``lead(text, names)``: what the text so far can still be — ``"no"`` (not
  this form: the text is passed on), ``"maybe"`` (too short to tell: held)
  or ``"held"`` (its head is this form's: the rest of the reply is held and
  parsed when it ends);
* ``parse(text, names)``: the calls the whole reply holds, or ``None`` (the
  held text is then passed on as text, unchanged).

Reasoning first: a reasoning model served without a reasoning parser
writes its reasoning into the text before the call (GLM-Z1, the reasoning
GLM-4-0414: ``<think>...</think>\nget_weather\n{...}``; or without the
opening tag when the chat template put it into the prompt). The end of such
a block (``</think>``) starts the head anew: the reasoning is passed on as
text, as written (``output.thinking.strip_thinking`` reads past it), and what
follows it is judged as a reply's head. This happens once per reply.

Streaming: ``LeadHold`` holds a reply's text from its first chunk only while
a form says ``maybe`` or ``held``, so prose is delayed by at most the length
of a tool name's prefix, and a reply whose head is a call is parsed whole at
its end (its arguments are never streamed as text, and a reply that turns out
not to parse loses nothing: it is passed on as text then). Nothing is looked
for when no tools are offered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = ["Lead", "LeadHold", "MarkupCall", "ReplyMarkup"]

Lead: TypeAlias = Literal["no", "maybe", "held"]


@dataclass(frozen=True, slots=True)
class MarkupCall:
    """One call read from markup: the tool name and its arguments (a dict,
    or a mapping of parameter name to raw text for string-only formats)."""

    name: str
    arguments: Mapping[str, Any]
    raw_values: bool = False
    """``arguments`` values are raw text to be typed from the tool's schema."""


REASONING_END = "</think>"
"""The end of a reasoning block written into the text (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class ReplyMarkup:
    """One tool-call form that is a whole reply (see the module docstring).

    Attributes:
        name: the registry name (``"glm-4-0414"``).
        lead: what a reply beginning with the text can be, given the offered
            tool names.
        parse: the calls of a whole reply, given the offered tool names;
            ``None`` when it is not this form (``ValueError`` and friends
            count as ``None``).
    """

    name: str
    lead: Callable[[str, frozenset[str]], Lead]
    parse: Callable[[str, frozenset[str]], list[MarkupCall] | None]


class LeadHold:
    """The head of one reply's text, held while a ``ReplyMarkup`` may be it.

    ``take`` each text piece: ``None`` while held, else the text to pass on
    (everything held so far with the piece; the hold is over for good).
    ``settle`` at the end of the reply (or before a structured tool call):
    the calls the held text is, or the text to pass on.
    """

    __slots__ = ("_forms", "_held", "_names", "_tail", "_text", "_watch", "done")

    def __init__(self, forms: Sequence[ReplyMarkup], names: frozenset[str]) -> None:
        self._forms = tuple(forms)
        self._names = names
        self._text = ""
        self._held = False  # a form said "held": no more checks, parse at the end
        self._watch: bool | None = None  # passing text on, looking for REASONING_END
        self._tail = ""  # the end of the text passed on, for an end tag cut in two
        self.done = not self._forms or not names

    def take(self, piece: str) -> str | None:
        """``None`` while the reply's head is held; else the text to pass on."""
        if self._watch:
            return self._watching(piece)
        self._text += piece
        if self._held:
            return None
        verdicts = [form.lead(self._text, self._names) for form in self._forms]
        if "held" in verdicts:
            self._held = True
            return None
        if "maybe" in verdicts:
            return None
        if self._watch is None:  # not yet restarted: reasoning may come first
            self._watch = True
            text, self._text = self._text, ""
            return self._watching(text)
        return self.release()

    def _watching(self, piece: str) -> str:
        """``piece`` passed on up to a reasoning block's end; what follows the
        end is judged as a reply's head (once)."""
        seen = self._tail + piece
        at = seen.find(REASONING_END)
        if at < 0:
            self._tail = seen[-(len(REASONING_END) - 1):]
            return piece
        cut = at + len(REASONING_END) - len(self._tail)
        self._watch, self._tail = False, ""
        rest = self.take(piece[cut:]) if piece[cut:] else None
        return piece[:cut] + (rest or "")

    def settle(self) -> list[MarkupCall] | str:
        """The calls of the held text (a form parses it whole), else the text
        (possibly empty) to pass on. The hold is over for good."""
        text = self.release()
        if text.strip():
            for form in self._forms:
                try:
                    calls = form.parse(text, self._names)
                except (ValueError, TypeError, KeyError, IndexError):
                    calls = None
                if calls:
                    return calls
        return text

    def release(self) -> str:
        """The held text, to pass on as it is; the hold is over for good."""
        text, self._text, self.done, self._watch = self._text, "", True, False
        return text
