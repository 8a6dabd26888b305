"""How the argument text of one assembled tool call is read when it is no
plain JSON object (used by ``agentflow.reply.ToolCallAssembler``): closing
brackets set right (``rebalanced_arguments``), several objects glued together
(``concatenated_objects``), a streamed start followed by the whole object
(``restarted_object``), and a nameless call whose arguments name it
(``enveloped``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentflow.output.brackets import rebalanced
from agentflow.output.decoding import RAW_ARGUMENTS, decode_arguments

__all__ = ["MAX_RESTART_DECODES", "concatenated_objects", "enveloped", "rebalanced_arguments",
           "restarted_object"]

_SPACES_TO_END = re.compile(r"\s*\Z")

MAX_RESTART_DECODES = 16
"""The most places ``restarted_object`` decodes (a ``{`` whose text begins
with all the text before it): a real restart has one, a hostile run of
braces has one at each brace."""


def enveloped(args: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The name and arguments of a call streamed without a name whose argument
    text is the grammar envelope ``{"function": {"_name": <name>, <arguments>}}``
    (TGI before 3.0 streams its tool grammar's whole output so, with
    ``"name": null``: huggingface/text-generation-inference#2794), else
    ``(None, args)``."""
    inner = args.get("function") if len(args) == 1 else None
    name = inner.get("_name") if isinstance(inner, dict) else None
    if not isinstance(inner, dict) or not isinstance(name, str) or not name:
        return None, args
    return name, {k: v for k, v in inner.items() if k != "_name"}


def rebalanced_arguments(text: str, args: dict[str, Any], ended: bool) -> dict[str, Any]:
    """``args`` (unreadable) read again from ``text`` with its closing
    brackets set right, when that is the only fault; else ``args``."""
    fixed = rebalanced(text, add=ended)
    if fixed is None:
        return args
    again = decode_arguments(fixed)
    return args if RAW_ARGUMENTS in again else again


def concatenated_objects(text: str) -> list[dict[str, Any]] | None:
    """The objects of argument text that is two or more JSON objects glued
    together (``{"a": 1}{"a": 2}``: servers that fold parallel calls of one
    tool into one call's arguments), or ``None``. Each is a call of its own,
    so two outputs are never read as one (the last) and two tool calls both run.
    The same object repeated is one call sent twice (servers that re-send the
    whole arguments in a stream's last delta): it is read once."""
    decoder = json.JSONDecoder()
    objects: list[dict[str, Any]] = []
    at, end = 0, len(text)
    while True:
        while at < end and text[at].isspace():
            at += 1
        if at == end:
            break
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        objects.append(value)
    if all(o == objects[0] for o in objects[1:]):
        return objects[:1] if len(objects) > 1 else None
    return objects


def restarted_object(text: str) -> list[dict[str, Any]] | None:
    """``[object]`` when argument text is the start of a JSON object followed
    by that whole object: a server's tool parser that streamed part of the
    arguments and then flushed all of them at the end of the stream
    (``{"command": "ls -l"{"command": "ls -l", "description": "List"}``,
    sgl-project/sglang#23071; ``{{"city": "Orlando", ...}``,
    vllm-project/vllm#51697); else ``None``. Only a start that the object's
    own text begins with is dropped: other text before an object stays an error.

    Linear in the text: a ``{`` whose text does not begin with the start
    before it is passed over without a copy (``_prefix_lengths``), and at
    most ``MAX_RESTART_DECODES`` places that do are decoded (a failed decode
    costs time in its offset: CPython's error counts the lines before it).
    Each ``{`` once sliced the rest of the text, and a long cut-off argument
    text (a code tool's, a brace a line) took time growing with the square
    of its length."""
    if not text.rstrip().endswith("}"):
        return None
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())  # the head is stripped: it begins here
    shared = _prefix_lengths(text, start)
    decodes = MAX_RESTART_DECODES
    at = text.find("{", 1)
    while at > 0 and decodes:
        head_end = at  # the head, text[start:head_end], ends before the spaces before ``at``
        while head_end > start and text[head_end - 1].isspace():
            head_end -= 1
        if head_end > start and at > start and shared[at - start] >= head_end - start:
            decodes -= 1
            try:
                value, end = decoder.raw_decode(text, at)
            except ValueError:
                value, end = None, at
            if isinstance(value, dict) and _SPACES_TO_END.match(text, end):
                return [value]
        at = text.find("{", at + 1)
    return None


def _prefix_lengths(text: str, start: int) -> list[int]:
    """For each offset ``k`` of ``text[start:]``, how many characters from
    ``start + k`` equal those from ``start`` (the Z-function; the whole for
    ``k = 0``), in time linear in the text."""
    n = len(text) - start
    z = [0] * n
    if n:
        z[0] = n
    left = right = 0
    for k in range(1, n):
        length = min(right - k, z[k - left]) if k < right else 0
        while k + length < n and text[start + length] == text[start + k + length]:
            length += 1
        z[k] = length
        if k + length > right:
            left, right = k, k + length
    return z
