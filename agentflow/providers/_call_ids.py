"""Tool-call ids each wire takes, for a history whose calls another vendor (or
a gateway) named.

A conversation's tool calls keep the ids their vendor gave them, and those
ids go back with the history. Vendors refuse each other's: Anthropic takes
only ``^[a-zA-Z0-9_-]+$`` (400 "messages.1.content.0.tool_use.id: String
should match pattern"), which Kimi K2's ``functions.get_weather:0`` and a
gateway's ``call_x|fc_y`` break; OpenAI takes at most 40 characters (400
"Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string
with maximum length 40", code ``string_above_max_length``), which ids of the
Responses API (``fc_`` + 50 hex) and of gateways break. A conversation begun
on one vendor and continued on another then failed on every request.

Mistral's API and Mistral chat templates (vLLM, mlx-lm) take exactly nine
letters and digits (400 "Tool call id was call_PTLP8xhu3uwZk4l3nlnrrJha but
must be a-z, A-Z, 0-9, with a length of 9."; langchain-ai/langchain#24668,
anomalyco/opencode#1680, ml-explore/mlx-lm#1375): ids of other vendors, and a
server's own ``chatcmpl-tool-...`` ids replayed to it, break that.

Each function leaves an id the wire takes as it is, and maps any other to one
it takes, deterministically (a digest of the original), so a call and its
result, mapped apart, still match, and two ids never become one.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque

__all__ = ["OPENAI_MAX_ID", "UniqueCallIds", "anthropic_call_id", "nine_char_call_id",
           "openai_call_id"]

OPENAI_MAX_ID = 40
"""The longest tool-call id OpenAI's chat completions take (``string_above_max_length``)."""

_ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]+")
_ANTHROPIC_MAX_ID = 64  # for ids we make; valid ones keep their length
_DIGEST = 10


def anthropic_call_id(call_id: str) -> str:
    """``call_id`` as Anthropic's ``tool_use.id`` / ``tool_use_id`` take it:
    unchanged when it matches ``^[a-zA-Z0-9_-]+$``, else its other characters
    as ``_`` with a digest of the original (at most 64 characters)."""
    if _ANTHROPIC_ID.fullmatch(call_id):
        return call_id
    return _derived(re.sub(r"[^A-Za-z0-9_-]", "_", call_id), call_id, _ANTHROPIC_MAX_ID)


def openai_call_id(call_id: str) -> str:
    """``call_id`` as OpenAI-style ``tool_calls[].id`` / ``tool_call_id`` take
    it: unchanged up to ``OPENAI_MAX_ID`` characters, else its start with a
    digest of the whole (exactly ``OPENAI_MAX_ID`` characters)."""
    if len(call_id) <= OPENAI_MAX_ID:
        return call_id
    return _derived(call_id, call_id, OPENAI_MAX_ID)


_NINE_CHAR_ID = re.compile(r"[A-Za-z0-9]{9}")
_ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def nine_char_call_id(call_id: str) -> str:
    """``call_id`` as Mistral's wire takes it: unchanged when it is nine letters
    and digits, else nine letters and digits drawn from a digest of it."""
    if _NINE_CHAR_ID.fullmatch(call_id):
        return call_id
    n = int.from_bytes(hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).digest()[:8])
    out = []
    for _ in range(9):
        n, digit = divmod(n, len(_ALNUM))
        out.append(_ALNUM[digit])
    return "".join(out)


def _derived(base: str, original: str, limit: int) -> str:
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST]
    return f"{base[: limit - _DIGEST - 1]}_{digest}"


class UniqueCallIds:
    """One request's tool-call ids made unique, in history order. Vendors
    refuse a history that holds one id twice (Anthropic: 400 "`tool_use` ids
    must be unique"; strict OpenAI-style servers: "Duplicate value for
    'tool_call_id'"), which a conversation stored before the agent made a
    later reply's repeated id unique can hold (a server numbering its calls
    per reply, Kimi's ``functions.f:0``), or a UI client's history: the later
    call goes out as ``<id>_<n>``, and each result answers the oldest call of
    its id still unanswered (one reply calling ``functions.f:0`` twice: the
    first result the first call, the second the second).
    The same history always gives the same ids (a prompt cache's prefix holds)."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._open: dict[str, deque[str]] = {}  # a history id -> its calls' wire ids, unanswered
        self._latest: dict[str, str] = {}  # a history id -> the wire id of its latest call

    def call(self, given: str) -> str:
        """The wire id of a call whose (wire-valid) id is ``given``."""
        wire, n = given, 1
        while wire in self._used:
            n += 1
            wire = f"{given}_{n}"
        self._used.add(wire)
        self._open.setdefault(given, deque()).append(wire)
        self._latest[given] = wire
        return wire

    def result(self, given: str) -> str:
        """The wire id a result for ``given`` answers: its oldest call still
        unanswered's, else (all answered: a result repeated) its latest
        call's, else ``given``."""
        waiting = self._open.get(given)
        if waiting:
            return waiting.popleft()
        return self._latest.get(given, given)
