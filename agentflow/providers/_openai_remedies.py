"""What an OpenAI-style server's 400 refuses, when the request can be sent
again without it: a strict function schema (``strict_refused``), optional
refinement fields (``refused_optional_fields``), or the schema carrier a
constrained-decoding engine cannot compile (``refused_part``: an
``UnsupportedFeatureError`` the structured-output engine degrades on).
``OpenAICompatibleModel._send`` applies them, at most ``MAX_REMEDIES`` times
per request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from agentflow.errors import BadRequestError, UnsupportedFeature, UnsupportedFeatureError
from agentflow.providers._openai_errors import engine_refused, schema_carrier

__all__ = ["MAX_REMEDIES", "OPTIONAL_FIELDS", "refused_optional_fields", "refused_part",
           "remedy_for", "strict_refused"]

OPTIONAL_FIELDS = ("stream_options", "parallel_tool_calls")
"""Request fields that only refine a request (usage in the stream's last chunk,
one tool call at a time): a server that refuses one as unknown gets the request
without it (vLLM before 0.6.5 and Fireworks answer "Extra inputs are not
permitted" for ``stream_options``, older Azure OpenAI "Unrecognized request
argument supplied: stream_options"; vllm-project/vllm#10463)."""
MAX_REMEDIES = 3
"""Most times one request is sent again after refusals it could remedy."""
_FIELD_REFUSAL = re.compile(
    r"unrecognized|extra inputs|extra_forbidden|not permitted|unknown (?:parameter|field|"
    r"argument|name)|unexpected (?:parameter|field|keyword|argument)|not supported|"
    r"unsupported|not allowed|invalid (?:parameter|field|argument)", re.I)


def refused_optional_fields(message: str, sent: Sequence[str]) -> frozenset[str]:
    """The fields of ``sent`` (``OPTIONAL_FIELDS`` the request carried) that an
    error ``message`` refuses: it names them (``parallel_tool_calls``, or in
    words: "Parallel tool calls are not supported") and says they are unknown or
    not allowed. Empty for any other error. (Read as words only, such a refusal
    was taken for a refusal of the tools themselves, and the tools were dropped.)"""
    if not _FIELD_REFUSAL.search(message):
        return frozenset()
    return frozenset(name for name in sent
                     if re.search(rf"\b{name.replace('_', '[_ ]')}\b", message, re.I))


def refused_part(
    error: BadRequestError, carrier: UnsupportedFeature | Literal["strict"] | None
) -> BadRequestError:
    """``error``, or, for a constrained-decoding engine's refusal
    (``engine_refused``) of a request whose schema came in ``carrier``, the
    ``UnsupportedFeatureError`` naming that part."""
    if carrier is None or carrier == "strict" or not engine_refused(str(error)):
        return error
    if isinstance(error, UnsupportedFeatureError) and error.feature == carrier:
        return error
    return UnsupportedFeatureError(error.message, feature=carrier, status=error.status,
                                   code=error.code, vendor=error.vendor)


_STRICT_REFUSAL = re.compile(r"invalid schema for function", re.I)


def strict_refused(error: BadRequestError) -> bool:
    """Whether a 400 refuses a strict function schema (OpenAI: "Invalid schema
    for function 'X': In context=(...), ...", code ``invalid_function_parameters``)."""
    return error.code == "invalid_function_parameters" or bool(
        _STRICT_REFUSAL.search(str(error)))


def remedy_for(
    error: BadRequestError, body: Mapping[str, Any], may_resend: bool
) -> Literal["strict"] | frozenset[str] | BadRequestError:
    """What to do about ``error``, the refusal of request ``body``: ``"strict"``
    (send it again without ``strict``: its strict tools were refused), the
    ``OPTIONAL_FIELDS`` to send it again without, or the error to raise
    (``refused_part``: ``error`` itself, or the ``UnsupportedFeatureError``
    naming the schema carrier; ``tool_schema`` for a function schema refused
    with no ``strict`` left to drop). ``may_resend``: fewer than ``MAX_REMEDIES``
    resends so far; without it, only the error."""
    offered = body.get("tools")
    strict = any((t.get("function") or {}).get("strict") for t in offered) if offered else False
    carrier = schema_carrier(body)
    message = str(error)
    if may_resend and strict and (strict_refused(error) or (
            carrier == "strict" and engine_refused(message))):
        return "strict"
    fields = refused_optional_fields(message, [f for f in OPTIONAL_FIELDS if f in body])
    if may_resend and fields:
        return fields
    if strict_refused(error) and not isinstance(error, UnsupportedFeatureError):
        # a function schema refused even without ``strict``: the tool path steps
        # down to the prompt path once (``tool_schema``), never the same 400 again
        return UnsupportedFeatureError(error.message, feature="tool_schema",
                                       status=error.status, code=error.code,
                                       vendor=error.vendor)
    return refused_part(error, carrier)
