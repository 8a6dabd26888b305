"""What an OpenAI-style server's 400 refuses, when the request can be sent
again without it: a strict function schema (``strict_refused``), optional
refinement fields (``refused_optional_fields``), the token-limit field it
does not take (``refused_token_field``), a sampling value only the model's
default may have (``DEFAULT_ONLY_FIELDS``), or the schema carrier a
constrained-decoding engine cannot compile (``refused_part``: an
``UnsupportedFeatureError`` the structured-output engine degrades on).
``OpenAICompatibleModel._send`` applies them, at most ``MAX_REMEDIES`` times
per request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from agentflow._logging import get_logger
from agentflow.errors import BadRequestError, UnsupportedFeature, UnsupportedFeatureError
from agentflow.model import GenerateOptions
from agentflow.providers._context_errors import MIN_OUTPUT_ROOM
from agentflow.providers._openai_errors import (
    call_ids_refused,
    content_refused,
    engine_refused,
    reasoning_refused,
    roles_refused,
    schema_carrier,
)

__all__ = ["DEFAULT_ONLY_FIELDS", "MAX_REMEDIES", "MIN_OUTPUT_ROOM", "OPTIONAL_FIELDS",
           "STREAM_FIELDS", "TOKEN_FIELDS", "Remediable", "apply_remedy", "output_room",
           "refused_optional_fields", "refused_part", "refused_token_field", "remediable",
           "remedy_for", "strict_refused"]

OPTIONAL_FIELDS = ("stream_options", "parallel_tool_calls")
"""Request fields that only refine a request (usage in the stream's last chunk,
one tool call at a time): a server that refuses one as unknown gets the request
without it (vLLM before 0.6.5 and Fireworks answer "Extra inputs are not
permitted" for ``stream_options``, older Azure OpenAI "Unrecognized request
argument supplied: stream_options"; vllm-project/vllm#10463)."""
DEFAULT_ONLY_FIELDS = ("temperature", "top_p")
"""Sampling fields a reasoning model takes at their default value only
(OpenAI's o-series and GPT-5, directly or through Azure: "Unsupported value:
'temperature' does not support 0.2 with this model. Only the default (1) value
is supported."): a refused one is sent no more by this model."""
_DEFAULT_ONLY = re.compile(r"only the default|unsupported value", re.I)
"""How a refusal of a non-default sampling value reads (not of the field itself)."""
TOKEN_FIELDS = ("max_tokens", "max_completion_tokens")
"""The two names of the reply's token limit. Reasoning models refuse the old
one ("Unsupported parameter: 'max_tokens' is not supported with this model. Use
'max_completion_tokens' instead.", Azure OpenAI and OpenAI-compatible hosts:
lobehub/lobehub#5909, OpenHands/software-agent-sdk#1083); older Azure API
versions and servers refuse the new one ("Unrecognized request argument
supplied: max_completion_tokens", openai/openai-python#1724)."""
STREAM_FIELDS = frozenset({"stream", "stream_options"})
"""What a server that refuses to stream gets the request without (a whole reply)."""
_STREAM_REFUSAL = re.compile(
    r"'stream' does not support|\bstream(?:ing)? (?:is )?not (?:currently )?supported|"
    r"\bdo(?:es)? not (?:currently )?support streaming|"
    r"\bstreaming is not (?:currently )?(?:available|allowed|enabled)", re.I)
"""A server refusing to stream this request: OpenAI's o1 models at launch ("Unsupported
value: 'stream' does not support true with this model. Only the default (false)
value is supported.", code ``unsupported_value``), Groq before tool streaming ("Tool
and function calls do not currently support streaming"; groq/groq-python#27). The
request goes again unstreamed, and the model asks for whole replies from then on
(``stream()`` still yields its events: one agent path, two transports)."""
_OUTPUT_OVER_WINDOW = (
    re.compile(r"maximum context length is (\d+) tokens.{0,120}?\((\d+) in the messages, "
               r"\d+ in the completion\)", re.I | re.S),
    re.compile(r"maximum context length is (\d+) tokens and your request has (\d+) input "
               r"tokens", re.I),
    re.compile(r"`inputs` tokens \+ `max_new_tokens` must be <= (\d+)\. Given: (\d+) "
               r"`inputs` tokens", re.I),
)
"""A request whose prompt fits the window but whose ``max_tokens`` does not fit
beside it: OpenAI's and vLLM's "This model's maximum context length is 32768
tokens. However, you requested 33792 tokens (1592 in the messages, 32200 in the
completion)", vLLM's "... is too large: 32000. This model's maximum context length
is 32768 tokens and your request has 1000 input tokens", TGI's "`inputs` tokens +
`max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047
`max_new_tokens`" (huggingface/chat-ui#1149). Each names the window and the
prompt; the request goes again with ``max_tokens`` the room left."""


def output_room(message: str, body: Mapping[str, Any]) -> int | None:
    """The reply tokens left beside the prompt when an error ``message`` says
    ``body``'s token limit does not fit the window with it
    (``_OUTPUT_OVER_WINDOW``), else ``None`` (no limit was sent, or less room
    than ``MIN_OUTPUT_ROOM``: the input itself must shrink)."""
    sent = next((body[f] for f in TOKEN_FIELDS if isinstance(body.get(f), int)), None)
    for pattern in _OUTPUT_OVER_WINDOW:
        found = pattern.search(message)
        if found is not None:
            room = int(found.group(1)) - int(found.group(2))
            if sent is not None and MIN_OUTPUT_ROOM <= room < sent:
                return room
            return None
    return None


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
                                   code=error.code, vendor=error.vendor,
                                   schema_only=True)  # the engine refused this schema


def refused_token_field(message: str, body: Mapping[str, Any]) -> str | None:
    """The other ``TOKEN_FIELDS`` name when an error ``message`` refuses the
    one ``body`` carries (names it and says it is unknown or not supported),
    else ``None``."""
    for sent, other in (TOKEN_FIELDS, TOKEN_FIELDS[::-1]):
        if sent in body and _FIELD_REFUSAL.search(message) and re.search(
                rf"\b{sent}\b", message):
            return other
    return None


_STRICT_REFUSAL = re.compile(r"invalid schema for function", re.I)


def strict_refused(error: BadRequestError) -> bool:
    """Whether a 400 refuses a strict function schema (OpenAI: "Invalid schema
    for function 'X': In context=(...), ...", code ``invalid_function_parameters``)."""
    return error.code == "invalid_function_parameters" or bool(
        _STRICT_REFUSAL.search(str(error)))


def remedy_for(
    error: BadRequestError, body: Mapping[str, Any], may_resend: bool
) -> (Literal["strict", "call_ids", "reasoning", "roles", "no_system", "content",
              "max_tokens", "max_completion_tokens"] | frozenset[str] | int
      | BadRequestError):
    """What to do about ``error``, the refusal of request ``body``: ``"strict"``
    (send it again without ``strict``: its strict tools were refused),
    ``"call_ids"`` (send it again with nine-character tool-call ids: the
    history's were refused, ``call_ids_refused``), ``"reasoning"`` (send it
    again with each tool-call turn's ``reasoning_content``: a thinking model's
    server refused the history without it, ``reasoning_refused``), ``"roles"``
    (send it again in strict turns: a chat template refused its roles,
    ``roles_refused``), ``"no_system"`` (the same with no system message at
    all), ``"content"`` (``""`` for a tool-call turn's null content,
    ``content_refused``), a number (send this request again with that
    ``max_tokens``: the prompt fits but not the limit beside it,
    ``output_room``), the
    ``TOKEN_FIELDS`` name to send the token limit under, the
    ``OPTIONAL_FIELDS`` or ``DEFAULT_ONLY_FIELDS`` to send it again without
    (``STREAM_FIELDS`` for a server refusing to stream it), or the error to raise
    (``refused_part``: ``error`` itself, or the ``UnsupportedFeatureError``
    naming the schema carrier; ``tool_schema`` for a function schema refused
    with no ``strict`` left to drop). ``may_resend``: fewer than ``MAX_REMEDIES``
    resends so far; without it, only the error."""
    offered = body.get("tools")
    strict = any((t.get("function") or {}).get("strict") for t in offered) if offered else False
    carrier = schema_carrier(body)
    message = str(error)
    room = output_room(message, body) if may_resend else None
    if room is not None:
        return room
    calls = any(m.get("tool_calls") for m in body.get("messages") or ())
    if may_resend and calls and call_ids_refused(message):
        return "call_ids"
    if may_resend and calls and reasoning_refused(message):
        return "reasoning"
    if may_resend and calls and content_refused(message):
        return "content"
    roles = roles_refused(message)
    if may_resend and roles is not None:
        return "no_system" if roles == "system" else "roles"
    if may_resend and strict and (strict_refused(error) or (
            carrier == "strict" and engine_refused(message))):
        return "strict"
    token_field = refused_token_field(message, body)
    if may_resend and token_field is not None:
        return "max_completion_tokens" if token_field == "max_completion_tokens" else "max_tokens"
    if may_resend and body.get("stream") is True and _STREAM_REFUSAL.search(message):
        return STREAM_FIELDS
    fields = refused_optional_fields(message, [f for f in OPTIONAL_FIELDS if f in body])
    if _DEFAULT_ONLY.search(message):
        fields |= refused_optional_fields(message, [f for f in DEFAULT_ONLY_FIELDS if f in body])
    if may_resend and fields:
        return fields
    if strict_refused(error) and not isinstance(error, UnsupportedFeatureError):
        # a function schema refused even without ``strict``: the tool path steps
        # down to the prompt path once (``tool_schema``), never the same 400 again
        return UnsupportedFeatureError(error.message, feature="tool_schema",
                                       status=error.status, code=error.code,
                                       vendor=error.vendor)
    return refused_part(error, carrier)


def remediable(error: BadRequestError) -> bool:
    """Whether ``error`` reads as one of the refusals ``remedy_for`` has a
    remedy for (any of them, whatever the refused request carried). Asked
    when the request as sent can no longer be rebuilt: a concurrent request
    of the model applied a remedy meanwhile, so this refusal may be the one
    remedied, and the request goes again the new way only then; any other
    400 (an image the server cannot read, a prompt over the window) is
    raised at once, never sent twice."""
    message = str(error)
    named = OPTIONAL_FIELDS + DEFAULT_ONLY_FIELDS + TOKEN_FIELDS
    return (any(pattern.search(message) for pattern in _OUTPUT_OVER_WINDOW)
            or call_ids_refused(message) or reasoning_refused(message)
            or content_refused(message) or roles_refused(message) is not None
            or strict_refused(error) or engine_refused(message)
            or _STREAM_REFUSAL.search(message) is not None
            or bool(refused_optional_fields(message, named)))


_log = get_logger("agentflow.providers")

Remedy = Literal["strict", "call_ids", "reasoning", "roles", "no_system", "content",
                 "max_tokens", "max_completion_tokens"] | frozenset[str] | int
"""What ``remedy_for`` says to change (its error case aside)."""

_FLAGS: dict[str, tuple[str, bool, str]] = {
    "strict": ("send_strict", False, "strict_refused"),
    "call_ids": ("nine_char_call_ids", True, "call_ids_refused"),
    "reasoning": ("reasoning_required", True, "reasoning_refused"),
    "content": ("string_content", True, "null_content_refused"),
}
"""A remedy that is one setting of the model: (its attribute, the value that
remedies, the log event)."""


class Remediable(Protocol):
    """The settings of an OpenAI-compatible model a remedy changes, for this
    instance only (the class defaults stay): ``OpenAICompatibleModel``."""

    @property
    def vendor(self) -> str:
        """The vendor's name, for the log."""

    _model: str
    send_strict: bool
    nine_char_call_ids: bool
    reasoning_required: bool
    string_content: bool
    alternate_roles: bool
    system_role: bool
    max_tokens_field: str
    _dropped_fields: frozenset[str]
    _remedied: int


def apply_remedy(model: Remediable, remedy: Remedy, error: BadRequestError,
                 options: GenerateOptions) -> GenerateOptions:
    """Apply ``remedy`` (``remedy_for``'s answer to ``error``) and return the
    options to send the request again with: a number is this request's
    ``max_tokens`` (the room the prompt leaves), anything else a setting of
    ``model`` from now on (strict tools off, nine-character call ids,
    reasoning sent back, ``""`` content, strict turns with or without a
    system message, the token field's name, fields sent no more), counted
    in ``model._remedied`` (a request built before it is sent again the new
    way, ``OpenAICompatibleModel._send``). Each is logged
    (``openai_compat.<what>_refused``).

    Raises:
        BadRequestError: ``error``, when ``model`` already sends the request
            the way ``remedy`` asks (refused for another reason).
    """
    said = {"vendor": model.vendor, "model": model._model, "error": str(error)[:200]}
    if isinstance(remedy, int):
        _log.warning("openai_compat.max_tokens_over_window", max_tokens=remedy, **said)
        return options.with_(max_tokens=remedy)
    if isinstance(remedy, frozenset):
        model._dropped_fields |= remedy
        model._remedied += 1
        _log.warning("openai_compat.field_refused", fields=sorted(remedy), **said)
        return options
    if remedy in _FLAGS:
        attribute, value, event = _FLAGS[remedy]
        if getattr(model, attribute) == value:
            raise error  # already sent so: refused for another reason
        setattr(model, attribute, value)
        model._remedied += 1
        _log.warning(f"openai_compat.{event}", **said)
        return options
    if remedy in ("roles", "no_system"):
        if model.alternate_roles and (remedy == "roles" or not model.system_role):
            raise error  # already sent so: refused for another reason
        model.alternate_roles = True
        model.system_role = model.system_role and remedy == "roles"
        model._remedied += 1
        _log.warning("openai_compat.roles_refused", **said)
        return options
    model.max_tokens_field = remedy  # a TOKEN_FIELDS name: the one the server takes
    model._remedied += 1
    _log.warning("openai_compat.token_field_refused", field=remedy, **said)
    return options
