"""Why tool-call argument text that is no JSON object could not be read:
*cut* or *malformed*, told apart (``never_closed``, ``flaw``), so the model
and the errors say what happened (``decoding.explain_raw``).

* **cut**: the object never closed. The text does not end with ``}`` and is
  the start of some JSON object (nothing wrong before its end: it stops
  inside a string, after a comma, with brackets open): the reply was cut,
  at the token limit or by a router that rewrote ``length``. The model is
  asked to send the whole object again.
* **malformed**: the object closed (the text ends with ``}``) or a fault
  comes before the end: a bad escape (``"\\d"``, ``"C:\\Users\\"``: a
  backslash before the closing quote escapes it and the string never
  ends), a mismatched bracket, a doubled comma. Nothing was cut; the model
  is told the fault and where it is, to fix it.

Invalid escapes do not make a cut text malformed: they are judged once the
text is whole (a cut reply is sent again in full anyway).
"""

from __future__ import annotations

import json
import re

__all__ = ["flaw", "never_closed"]

_BAD_ESCAPE = re.compile(r'\\(?=[^"\\/bfnrtu])|\\u(?![0-9a-fA-F]{4})')
_LITERALS = ("true", "false", "null")
_DECODER = json.JSONDecoder(strict=False)  # raw control characters in strings: read, as elsewhere


def never_closed(text: str) -> bool:
    """Whether ``text`` is a JSON object cut before it closed (see the module
    docstring): it does not end with ``}``, and parsing it fails at its end
    only (inside a string, or expecting more), never at a fault before."""
    body = text.strip()
    if not body.startswith("{") or body.endswith("}"):
        return False
    body = _BAD_ESCAPE.sub(r"\\\\", body)  # judged once whole: not a fault of a cut text
    try:
        _DECODER.decode(body)
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string"):
            return True  # it stops inside a string
        tail = body[exc.pos:].strip()
        return not tail or any(word.startswith(tail) for word in _LITERALS) or (
            _is_number_start(tail))
    return False


def _is_number_start(tail: str) -> bool:
    """``tail`` is the start of a number (``-``, ``1.``, ``2e``)."""
    return bool(re.fullmatch(r"-?\d*\.?\d*([eE][+-]?\d*)?", tail))


def flaw(text: str) -> str:
    """Where and what the first fault of JSON ``text`` is, for the model to fix
    (``""`` when the standard parser reads it: another rule refused it)."""
    body = text.strip()
    try:
        _DECODER.decode(body)
    except json.JSONDecodeError as exc:
        at = exc.pos
        if exc.msg.startswith("Invalid \\escape") or exc.msg.startswith("Invalid \\u"):
            return (f"invalid escape {body[at:at + 2]!r} at character {at} (a backslash in a "
                    "JSON string is written as two: \\\\)")
        if exc.msg.startswith("Unterminated string"):
            return (f"the string at character {at} never ends (a backslash before its closing "
                    "quote escapes it: a backslash in a JSON string is written as two: \\\\)")
        return f"{exc.msg.lower()} at character {at} ({body[max(0, at - 12):at + 12]!r})"
    return ""
