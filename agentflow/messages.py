"""Messages: ``Msg``, its content blocks, and the metadata keys agentflow sets.

A ``Msg`` is a frozen dataclass: ``role``, a tuple of content blocks, an
optional ``name`` and a ``metadata`` mapping. Blocks carry a literal ``type``
discriminator, so a conversation round-trips exactly through JSON
(``msg_to_dict`` / ``msg_from_dict``, used by ``AgentState``).

Images and PDF documents are ``ImageBlock`` / ``DocumentBlock``
(``agentflow.content``, re-exported here); the JSON holds their bytes as base64.

Roles: ``system``, ``user``, ``assistant`` and ``tool`` (a message holding
``ToolResultBlock``s answering the previous assistant message's tool calls).
Each provider module maps these to its wire protocol.

This module holds ``Msg`` (construction, views, ids, JSON round-trip) and
re-exports the rest: the blocks from ``agentflow._blocks``, the metadata keys
and ``ReminderType`` from ``agentflow._msg_keys``, ``clean_text`` /
``clean_data`` from ``agentflow._clean_text``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, cast

from pydantic import TypeAdapter
from typing_extensions import TypeVar

from agentflow._blocks import Block, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentflow._clean_text import clean_data, clean_text
from agentflow._msg_content import BLOCK_TYPESET, as_block, checked, content_items
from agentflow._msg_keys import (
    ANSWER_FROM_REASONING,
    CACHE_CONTROL,
    CLOSED_TOOL_CALLS,
    FIELD_PROBS,
    STRUCTURED_OUTPUT,
    STRUCTURED_OUTPUT_ATTEMPT,
    STRUCTURED_OUTPUT_REMINDER,
    STRUCTURED_OUTPUT_REMINDER_TYPE,
    TOKEN_LOGPROBS,
    ReminderType,
)
from agentflow._slots_init import slot_init
from agentflow.errors import InvalidInputError, StructuredOutputError
from agentflow.logprobs import TokenLogprob, TokenLogprobs
from agentflow.media.blocks import DocumentBlock, ImageBlock

__all__ = [
    "ANSWER_FROM_REASONING",
    "CACHE_CONTROL",
    "CLOSED_TOOL_CALLS",
    "FIELD_PROBS",
    "STRUCTURED_OUTPUT",
    "STRUCTURED_OUTPUT_ATTEMPT",
    "STRUCTURED_OUTPUT_REMINDER",
    "STRUCTURED_OUTPUT_REMINDER_TYPE",
    "TOKEN_LOGPROBS",
    "Block",
    "DocumentBlock",
    "ImageBlock",
    "Msg",
    "OutputT",
    "ReminderType",
    "Role",
    "StructuredResult",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "clean_data",
    "clean_text",
    "msg_from_dict",
    "msg_to_dict",
    "new_id",
]

# Metadata keys and ReminderType: agentflow._msg_keys (re-exported) -----------

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]


# Blocks: agentflow._blocks (re-exported); content checks: agentflow._msg_content

_ROLES = frozenset({"system", "user", "assistant", "tool"})


@slot_init
@dataclass(frozen=True, slots=True)
class StructuredResult:
    """What a call produced for its output type: the validated value, or the
    error that explains why there is none. Not persisted (the JSON is, in the
    message text and ``metadata[STRUCTURED_OUTPUT]``). ``spans``: field path
    -> ``[(start, end)]`` character offsets of each grounded value in the
    source (``agentflow.grounding``)."""

    value: Any = None
    error: StructuredOutputError | None = None
    spans: Mapping[str, list[tuple[int, int]]] = field(default_factory=dict)


def _id_source() -> Callable[[], str]:
    """A fresh id source: a random 8-hex-digit prefix and a 10-digit hex counter,
    formatted in C (no Python frame per id)."""
    return map((os.urandom(4).hex() + "%010x").__mod__, itertools.count()).__next__


_NEXT_ID: Callable[[], str] = _id_source()
"""The next id (``new_id``). A process forked after import (multiprocessing's
``fork`` start method, a pre-forking server) gets a new prefix in the child, so
parent and child never hand out the same id."""


def _reseed_ids() -> None:
    global _NEXT_ID
    _NEXT_ID = _id_source()


if hasattr(os, "register_at_fork"):  # POSIX only; Windows has no fork
    os.register_at_fork(after_in_child=_reseed_ids)



def new_id() -> str:
    """A process-unique id: a random per-process prefix and a counter (cheaper
    than uuid4 on the per-message hot path)."""
    return _NEXT_ID()


OutputT = TypeVar("OutputT", default=Any)
"""The output type of a call (``agent.call(msg, Contact)``: ``Contact``); to a
type checker only. ``Any`` where none is known (``Msg`` is ``Msg[Any]``)."""


@dataclass(frozen=True, slots=True)
class Msg(Generic[OutputT]):
    """One message of a conversation.

    ``content`` accepts a str (one ``TextBlock``) or any iterable of blocks and
    is stored as a tuple. ``result`` is set on a call's reply only; read it
    through ``output`` / ``structured_data``. Generic in the call's output type
    for type checkers only: ``agent.call(msg, Contact)`` returns a
    ``Msg[Contact]``, whose ``output`` is a ``Contact``.
    """

    role: Role
    content: tuple[Block, ...]
    name: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)
    result: StructuredResult | None = field(default=None, compare=False, repr=False)

    def __init__(
        self,
        role: Role,
        content: str | Iterable[Block | str],
        name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
        result: StructuredResult | None = None,
    ) -> None:
        if role not in _ROLES:
            raise InvalidInputError(
                f"unknown message role {role!r}: expected one of {', '.join(sorted(_ROLES))}"
            )
        if isinstance(content, str):  # TextBlock(content), through its slots' setters
            text = _NEW_BLOCK(TextBlock)
            _SET_TEXT(text, content)
            _SET_TYPE(text, "text")
            blocks: tuple[Block, ...] = (text,)
        else:
            items = content_items(content)
            if BLOCK_TYPESET.issuperset(map(type, items)):  # no Python frame per block
                blocks = items  # all blocks (Any items): no cast() call
            else:
                blocks = tuple(as_block(i, item) for i, item in enumerate(checked(content, items)))
        _SET_ROLE(self, role)  # the slots' own setters: no lookup by name per field
        _SET_CONTENT(self, blocks)
        _SET_NAME(self, name)
        _SET_METADATA(self, dict(metadata) if metadata else {})
        _SET_ID(self, id or _NEXT_ID())  # new_id, without its frame
        _SET_RESULT(self, result)

    # convenience constructors
    @classmethod
    def user(cls, content: str | Iterable[Block | str], *, name: str | None = None,
             metadata: Mapping[str, Any] | None = None, id: str | None = None,
             result: StructuredResult | None = None) -> Msg:
        """A user message holding ``content``: text, or text and blocks
        (``Msg.user(["Describe it.", ImageBlock.from_path("cat.png")])``); the
        keywords as ``Msg`` takes them (named: no ``**`` dict per message)."""
        return cls("user", content, name, metadata, id, result)

    @classmethod
    def system(cls, text: str, *, name: str | None = None,
               metadata: Mapping[str, Any] | None = None, id: str | None = None,
               result: StructuredResult | None = None) -> Msg:
        """A system message holding ``text`` (the keywords as ``Msg`` takes them)."""
        return cls("system", text, name, metadata, id, result)

    @classmethod
    def assistant(cls, text: str, *, name: str | None = None,
                  metadata: Mapping[str, Any] | None = None, id: str | None = None,
                  result: StructuredResult | None = None) -> Msg:
        """An assistant message holding ``text`` (the keywords as ``Msg`` takes them)."""
        return cls("assistant", text, name, metadata, id, result)

    # views
    @property
    def text(self) -> str:
        """All text blocks joined (thinking excluded)."""
        content = self.content
        if len(content) == 1 and type(content[0]) is TextBlock:  # the common message
            return content[0].text
        return "".join(b.text for b in content if isinstance(b, TextBlock))

    @property
    def media(self) -> list[ImageBlock | DocumentBlock]:
        """The image and document blocks of this message, in order."""
        return [b for b in self.content if isinstance(b, ImageBlock | DocumentBlock)]

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls this message makes, in order."""
        content = self.content
        if len(content) == 1:  # the common messages: no comprehension frame
            block = content[0]
            if type(block) is TextBlock:
                return []
            if type(block) is ToolUseBlock:
                return [block]
        return [b for b in content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The tool results this message holds, in order."""
        content = self.content
        if len(content) == 1:  # the common message: no comprehension frame
            block = content[0]
            if type(block) is ToolResultBlock:
                return [block]
        return [b for b in content if isinstance(b, ToolResultBlock)]

    @property
    def output(self) -> OutputT:
        """The call's validated structured output.

        Raises:
            StructuredOutputError: no output was produced (the error carries the
                model's raw final text and the attempt count), or none was asked for.
        """
        if self.result is None:
            raise StructuredOutputError(
                "this message carries no structured output: pass an output type to "
                "agent.call(msg, OutputType)",
                raw_text=self.text,
                reason="not_requested",
            )
        if self.result.error is not None:
            raise self.result.error
        return cast("OutputT", self.result.value)

    @property
    def spans(self) -> Mapping[str, list[tuple[int, int]]]:
        """Where each grounded value of the output is in the source: field path
        (``maintainer``, ``changes[2]``) -> ``[(start, end)]`` character
        offsets into the text of the user messages the caller gave the call
        (joined by a blank line when there are several); ``{}`` when nothing was
        grounded or no output was produced."""
        return self.result.spans if self.result is not None else {}

    def structured_data(self, output_type: Any) -> Any:
        """Validate this message's stored output JSON as ``output_type``.

        Works on messages restored from JSON too (it reads
        ``metadata[STRUCTURED_OUTPUT]`` or the text).

        Raises:
            StructuredOutputError: the message holds no structured output.
            pydantic.ValidationError: the stored data does not fit ``output_type``.
        """
        if self.result is not None and self.result.error is not None:
            raise self.result.error
        if not self.metadata.get(STRUCTURED_OUTPUT):
            raise StructuredOutputError(
                "this message holds no structured output",
                raw_text=self.text,
                reason="not_requested",
            )
        return TypeAdapter(output_type).validate_json(self.text)

    def replace(self, **changes: Any) -> Msg[OutputT]:
        """A copy with ``changes`` applied (same id unless given)."""
        if changes.keys() <= _TRUSTED_CHANGES:  # role and blocks already checked: copy them
            new: Msg[OutputT] = object.__new__(Msg)
            _SET_ROLE(new, self.role)
            _SET_CONTENT(new, self.content)
            _SET_NAME(new, self.name)
            metadata = changes.get("metadata", self.metadata)
            _SET_METADATA(new, dict(metadata) if metadata else {})
            _SET_ID(new, self.id)
            _SET_RESULT(new, changes.get("result", self.result))
            return new
        return Msg(
            role=changes.get("role", self.role),
            content=changes.get("content", self.content),
            name=changes.get("name", self.name),
            metadata=changes.get("metadata", self.metadata),
            id=changes.get("id", self.id),
            result=changes.get("result", self.result),
        )


_TRUSTED_CHANGES = frozenset({"metadata", "result"})
"""``Msg.replace`` changes that need no check of the role or the blocks."""

# The slots' setters (a frozen dataclass's fields are set through them, bypassing
# its ``__setattr__``, as ``object.__setattr__`` does after a lookup by name).
def _setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The ``__set__`` of ``cls``'s slot ``name``."""
    return cast("Callable[[Any, Any], None]", vars(cls)[name].__set__)


_SET_ROLE = _setter(Msg, "role")
_SET_CONTENT = _setter(Msg, "content")
_SET_NAME = _setter(Msg, "name")
_SET_METADATA = _setter(Msg, "metadata")
_SET_ID = _setter(Msg, "id")
_SET_RESULT = _setter(Msg, "result")
_SET_TEXT = _setter(TextBlock, "text")
_SET_TYPE = _setter(TextBlock, "type")


_NEW_BLOCK = object.__new__
"""``object.__new__``: a ``TextBlock`` made without its ``__init__`` (``Msg`` of plain text)."""


# Persistence ----------------------------------------------------------------

_BLOCKS: TypeAdapter[list[Block]] = TypeAdapter(list[Block])


def msg_to_dict(msg: Msg) -> dict[str, Any]:
    """A JSON-ready dict of ``msg`` (snake_case keys; ``result`` is not kept).
    A reply's ``TOKEN_LOGPROBS`` are written as ``{"token", "logprob",
    "bytes"}`` objects (``bytes``: a list of byte values, or ``null``), which
    ``msg_from_dict`` reads back as ``TokenLogprob``s."""
    metadata = dict(msg.metadata)
    tokens = metadata.get(TOKEN_LOGPROBS)
    if isinstance(tokens, tuple | list | TokenLogprobs):
        metadata[TOKEN_LOGPROBS] = [_token_json(t) for t in tokens]
    return {
        "id": msg.id,
        "role": msg.role,
        "name": msg.name,
        "content": _BLOCKS.dump_python(list(msg.content), mode="json"),
        "metadata": metadata,
    }


def _token_json(token: Any) -> Any:
    """A ``TokenLogprob`` as a JSON object; anything else as it is."""
    if isinstance(token, TokenLogprob):
        return {"token": token.token, "logprob": token.logprob,
                "bytes": list(token.bytes) if token.bytes is not None else None}
    return token


def _token_of(entry: Any) -> Any:
    """A stored ``{"token", "logprob", "bytes"}`` object as a ``TokenLogprob``;
    anything else as it is."""
    if isinstance(entry, Mapping) and isinstance(entry.get("token"), str) and isinstance(
            entry.get("logprob"), int | float) and not isinstance(entry.get("logprob"), bool):
        data = entry.get("bytes")
        try:
            raw = bytes(data) if isinstance(data, list) else None
        except (TypeError, ValueError):  # not byte values: the token's text stands for them
            raw = None
        return TokenLogprob(entry["token"], float(entry["logprob"]), raw)
    return entry


def msg_from_dict(data: Mapping[str, Any]) -> Msg:
    """Rebuild a ``Msg`` from ``msg_to_dict`` output.

    Raises:
        pydantic.ValidationError: a block is malformed.
        KeyError: ``role`` or ``content`` is missing.
    """
    metadata = data.get("metadata") or {}
    tokens = metadata.get(TOKEN_LOGPROBS) if isinstance(metadata, Mapping) else None
    if isinstance(tokens, list):
        metadata = {**metadata, TOKEN_LOGPROBS: tuple(_token_of(t) for t in tokens)}
    return Msg(
        role=data["role"],
        content=_BLOCKS.validate_python(data["content"]),
        name=data.get("name"),
        metadata=metadata,
        id=data.get("id"),
    )
