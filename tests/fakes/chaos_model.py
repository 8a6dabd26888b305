"""The misbehaving model behind the chaos fake: pure, seeded decisions.

A request is classified by what it asks for (an output *tool*, or JSON in
the reply *text*), whether it *forces* a tool (and whether the vendor
honours that), and whether it carries a *reminder* (a system/developer/user
message after the task that names the output tool, or, without tools,
mentions JSON). The model then complies or misbehaves, decided by a hash of
(seed, task key, attempt), so the same task on its n-th attempt behaves the
same in every framework and every run (common random numbers):

==============  ==================================================================
behaviour       what the model sends
==============  ==================================================================
comply          the answer: one output tool call, or the JSON as the reply text
prose           a sentence with the facts, no JSON and no tool call
fenced          the JSON in a ```json fence, as text (no tool call)
wrapped         the JSON between two sentences of prose, as text (no tool call)
broken          invalid JSON (trailing comma | single quotes | truncated, finish
                reason still stop/tool_calls) as the arguments or the text
coerce          valid JSON with wrong but coercible types (numbers and booleans
                as strings)
double          two output calls at once (text mode: two JSON objects)
markup          the output call written into the text as the vendor's in-band
                markup (Hermes ``<tool_call>`` for OpenAI-like, GLM
                ``<arg_key>`` pairs, MiniMax ``<minimax:tool_call>``), no
                structured call (text mode: the JSON, so it complies)
same_index      two output calls streamed at the same index, told apart only by
                their ids (a reader keyed by index alone glues their arguments)
reasoning       a ``<think>`` block holding a wrong draft of the JSON, then the
                answer (a call, or the JSON as text)
literal         the arguments (or the text) as a Python literal (``True``,
                ``None``, single quotes), or JSON encoded twice, or with a list
                field encoded as a string
cut             the stream ends without its finish reason (``[DONE]`` after
                half the output); a whole reply is cut mid-body
==============  ==================================================================

A forced tool choice that the vendor honours turns prose/fenced/wrapped into
comply (the vendor makes the model call the tool); the arguments may still
be broken, coerced or doubled (no constrained decoding). ``response_format``
and ``strict`` are hints, not enforced.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = [
    "BEHAVIOURS",
    "DEFAULT_WEIGHTS",
    "Decision",
    "Output",
    "decide",
    "find_answer",
    "is_reminded",
    "render",
]

BEHAVIOURS = ("prose", "fenced", "wrapped", "broken", "coerce", "double", "markup",
              "same_index", "reasoning", "literal", "cut")
DEFAULT_WEIGHTS: Mapping[str, float] = {
    "prose": 0.25, "fenced": 0.15, "wrapped": 0.10, "broken": 0.20, "coerce": 0.20, "double": 0.10,
    "markup": 0.10, "same_index": 0.05, "reasoning": 0.10, "literal": 0.10, "cut": 0.05,
}
"""Relative weights of the misbehaviours (normalised when drawn)."""
BROKEN_VARIANTS = ("trailing_comma", "single_quotes", "truncated")
LITERAL_VARIANTS = ("python", "double_encoded", "field_encoded")
MARKUP_STYLES = ("hermes", "glm", "minimax")
_TEXT_ONLY = frozenset({"prose", "fenced", "wrapped"})


@dataclass(frozen=True, slots=True)
class Decision:
    """What the model does on one request.

    Attributes:
        behaviour: ``"comply"`` or one of ``BEHAVIOURS``.
        variant: for ``broken``, one of ``BROKEN_VARIANTS``.
        cut: for a truncated answer, the kept share of the JSON (0.5-0.9).
    """

    behaviour: str
    variant: str = ""
    cut: float = 0.0


@dataclass(frozen=True, slots=True)
class Output:
    """A rendered reply: text and/or raw tool-call argument strings.

    ``same_index``: stream every call at index 0; ``cut``: the share of the
    reply to send before ending it without a finish reason (0: whole)."""

    text: str = ""
    calls: Sequence[str] = field(default_factory=tuple)
    same_index: bool = False
    cut: float = 0.0


def _uniforms(seed: int, key: str, attempt: int) -> tuple[float, float, float, float]:
    digest = hashlib.blake2b(f"{seed}|{key}|{attempt}".encode(), digest_size=16).digest()
    a, b, c, d = (int.from_bytes(digest[i : i + 4], "big") / 2**32 for i in (0, 4, 8, 12))
    return a, b, c, d


def decide(
    *,
    seed: int,
    key: str,
    attempt: int,
    misbehave: float,
    misbehave_reminded: float,
    reminded: bool,
    forced: bool,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
) -> Decision:
    """The model's behaviour on attempt ``attempt`` (0-based) of task ``key``.

    ``misbehave`` is the chance of misbehaving, ``misbehave_reminded`` the
    chance when the request carries a reminder. ``forced``: a forced tool
    choice the vendor honours (text-only misbehaviours become compliance).
    """
    u_fail, u_kind, u_variant, u_cut = _uniforms(seed, key, attempt)
    if u_fail >= (misbehave_reminded if reminded else misbehave):
        return Decision("comply")
    total = sum(weights.get(b, 0.0) for b in BEHAVIOURS) or 1.0
    acc, behaviour = 0.0, BEHAVIOURS[-1]
    for name in BEHAVIOURS:
        acc += weights.get(name, 0.0) / total
        if u_kind < acc:
            behaviour = name
            break
    if forced and behaviour in _TEXT_ONLY:
        return Decision("comply")
    if behaviour == "broken":
        variant = BROKEN_VARIANTS[min(int(u_variant * 3), 2)]
        return Decision(behaviour, variant, 0.5 + 0.4 * u_cut)
    if behaviour == "literal":
        return Decision(behaviour, LITERAL_VARIANTS[min(int(u_variant * 3), 2)])
    if behaviour == "cut":
        return Decision(behaviour, "", 0.3 + 0.4 * u_cut)
    return Decision(behaviour)


# ----------------------------------------------------------------------------- rendering


def _coerced(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return {k: _coerced(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_coerced(v) for v in value]
    return value


def _prose(answer: Mapping[str, Any]) -> str:
    def show(v: Any) -> str:
        return ", ".join(map(str, v)) if isinstance(v, list) else str(v)

    facts = "; ".join(f"{k.replace('_', ' ')} is {show(v)}" for k, v in answer.items())
    return f"I looked at the record. Its {facts}. Let me know if you need anything else."


def _broken(text: str, decision: Decision) -> str:
    if decision.variant == "trailing_comma":
        return text[:-1] + ",}"
    if decision.variant == "single_quotes":
        return text.replace('"', "'")
    return text[: max(1, int(len(text) * decision.cut))]


def _python(value: Any) -> str:
    """``value`` written as a Python literal (``True``, ``None``, single quotes)."""
    return repr(value)


def _literal(answer: Mapping[str, Any], variant: str) -> str:
    if variant == "python":
        return _python(dict(answer))
    if variant == "double_encoded":
        return orjson.dumps(orjson.dumps(dict(answer)).decode()).decode()
    encoded = {k: orjson.dumps(v).decode() if isinstance(v, list) else v
               for k, v in answer.items()}
    return orjson.dumps(encoded).decode()


def _markup(name: str, answer: Mapping[str, Any], style: str) -> str:
    def text(v: Any) -> str:
        return v if isinstance(v, str) else orjson.dumps(v).decode()

    if style == "glm":
        pairs = "".join(f"<arg_key>{k}</arg_key><arg_value>{text(v)}</arg_value>"
                        for k, v in answer.items())
        return f"<tool_call>{name}\n{pairs}</tool_call>"
    if style == "minimax":
        params = "".join(f'<parameter name="{k}">{text(v)}</parameter>\n'
                         for k, v in answer.items())
        return (f'<minimax:tool_call>\n<invoke name="{name}">\n{params}</invoke>\n'
                "</minimax:tool_call>")
    call = orjson.dumps({"name": name, "arguments": dict(answer)}).decode()
    return f"<tool_call>\n{call}\n</tool_call>"


def _draft(answer: Mapping[str, Any]) -> dict[str, Any]:
    return {k: ("draft" if isinstance(v, str) else v) for k, v in answer.items()}


def render(answer: Mapping[str, Any], decision: Decision, tool_mode: bool,
           tool_name: str = "generate_response", markup: str = "hermes") -> Output:
    """The reply for ``decision``: tool-call arguments in tool mode (when the
    behaviour calls the tool), else text. ``markup``: the in-band format
    (``MARKUP_STYLES``) the ``markup`` behaviour writes."""
    compact = orjson.dumps(dict(answer)).decode()
    b = decision.behaviour
    if b == "markup":
        return Output(text=f"Calling the tool.\n{_markup(tool_name, answer, markup)}"
                      if tool_mode else compact)
    if b == "same_index":
        return Output(calls=(compact, compact), same_index=True) if tool_mode else Output(
            text=compact)
    if b == "reasoning":
        think = f"<think>A first draft: {orjson.dumps(_draft(answer)).decode()}</think>\n"
        return Output(text=think, calls=(compact,)) if tool_mode else Output(
            text=think + compact)
    if b == "literal":
        payload = _literal(answer, decision.variant)
        return Output(calls=(payload,)) if tool_mode else Output(
            text=_python(dict(answer)) if decision.variant == "python" else compact)
    if b == "cut":
        return Output(calls=(compact,), cut=decision.cut) if tool_mode else Output(
            text=compact, cut=decision.cut)
    if b == "prose":
        return Output(text=_prose(answer))
    if b == "fenced":
        pretty = orjson.dumps(dict(answer), option=orjson.OPT_INDENT_2).decode()
        return Output(text=f"```json\n{pretty}\n```")
    if b == "wrapped":
        return Output(text=f"Here is the extracted data:\n{compact}\nHope this helps!")
    if b == "broken":
        payload = _broken(compact, decision)
    elif b == "coerce":
        payload = orjson.dumps(_coerced(dict(answer))).decode()
    elif b == "double":
        return Output(calls=(compact, compact)) if tool_mode else Output(
            text=f"{compact}\n{compact}")
    else:
        payload = compact
    return Output(calls=(payload,)) if tool_mode else Output(text=payload)


# ----------------------------------------------------------------------------- reading requests


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def find_answer(messages: Sequence[Mapping[str, Any]]) -> tuple[int, str] | None:
    """(index, text) of the first user message holding a JSON object: the
    task, whose JSON record is the ground truth the model answers with."""
    for i, m in enumerate(messages):
        if m.get("role") == "user":
            text = _text_of(m.get("content"))
            if "{" in text and "}" in text:
                return i, text
    return None


def is_reminded(messages: Sequence[Mapping[str, Any]], task_index: int,
                tool_names: Sequence[str]) -> bool:
    """Whether a system/developer/user message other than the task names an
    output tool (tool mode) or mentions JSON (no tools)."""
    for i, m in enumerate(messages):
        if i == task_index or m.get("role") not in ("system", "developer", "user"):
            continue
        text = _text_of(m.get("content"))
        if tool_names:
            if any(name in text for name in tool_names):
                return True
        elif "json" in text.lower():
            return True
    return False
