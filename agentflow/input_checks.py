"""The check that a model takes a conversation's images and documents, from
its profile, before any request (``agentflow.content`` re-exports
``check_inputs``), and its incremental form for a call (``check_call_inputs``).

The input check of a call (``agentflow.content.check_inputs``), done once per
message instead of over the whole memory on every call.

    checked = check_call_inputs(state.memory, inputs, profile, name, state.inputs_checked)
    state.inputs_checked = checked     # the next call checks only what came after

A conversation's memory grows by appending: the messages a call checked are
still there, unchanged (a ``Msg`` is frozen), on the next call. So the check
remembers how far it got (``CheckedPrefix``: the number of memory messages
checked, the last of them, the base64 total of their inline blocks, and the
profile and model checked against) and the next call checks only the messages
after that, carrying the total on (the inline limit is per request, over the
whole conversation). The whole memory is checked again when the memory no
longer extends the checked part (shorter, or another message where the last
checked one was: a rollback or an edit) or the model is another one. An
earlier message replaced in place while the last checked one stays is not
seen until then; a fresh ``AgentState`` (or ``inputs_checked = None``) checks
everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentflow._slots_init import slot_init
from agentflow.errors import InvalidInputError, UnsupportedInputError
from agentflow.media.blocks import DocumentBlock, ImageBlock
from agentflow.media.types import Modality

if TYPE_CHECKING:
    from agentflow.messages import Msg
    from agentflow.model import ModelProfile

__all__ = [
    "CheckedPrefix",
    "check_call_inputs",
    "check_inputs",
    "modality",
]

_MEDIA = (ImageBlock, DocumentBlock)

# ----------------------------------------------------------------------------- the check


def modality(block: object) -> Modality:
    """The input modality ``block`` needs: ``"image"``, ``"pdf"`` or ``"text"``."""
    if isinstance(block, ImageBlock):
        return "image"
    if isinstance(block, DocumentBlock):
        return "pdf"
    return "text"


def _mb(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 100_000 else f"{n} bytes"


def check_inputs(messages: Iterable[Msg], profile: ModelProfile, model_name: str, *,
                 first_index: int = 0, inline: int = 0) -> int:
    """Refuse, before any request, a block the model does not take; return the
    base64 bytes of the inline blocks so far (``inline`` plus those of
    ``messages``), so a caller can check a conversation a part at a time
    (``agentflow.input_checks``): ``first_index`` is the index of the first of
    ``messages`` in the conversation (errors name it).

    Decision table, per image/document block (profile data only):

    ======================================================  =====================
    the block is in a message whose role is not ``user``      InvalidInputError
    modality not in ``profile.input_modalities``              UnsupportedInputError
    a URL source, modality not in ``url_input_modalities``    UnsupportedInputError
    image media type not in ``profile.image_media_types``     UnsupportedInputError
    bytes over ``max_image_bytes`` / ``max_document_bytes``   UnsupportedInputError
    base64 of all blocks over ``max_inline_bytes``            UnsupportedInputError
    ======================================================  =====================

    Raises:
        UnsupportedInputError: naming the model, the modality, the block and the limit.
        InvalidInputError: an image or document outside a user message.
    """
    for index, msg in enumerate(messages, start=first_index):
        for block in msg.content:
            if not isinstance(block, _MEDIA):  # a tuple made once, not a union per block
                continue
            kind = modality(block)
            where = f"message {index}: {block!r}"
            if msg.role != "user":
                raise InvalidInputError(
                    f"images and documents go in user messages; {where} is in a {msg.role} "
                    "message")
            if kind not in profile.input_modalities:
                accepted = ", ".join(sorted(profile.input_modalities))
                raise UnsupportedInputError(
                    f"model {model_name!r} does not accept {kind} input ({where}); it takes: "
                    f"{accepted}. Use a model whose profile lists {kind!r} in input_modalities, "
                    "or send the content as text", model=model_name, modality=kind)
            if block.url is not None:
                if kind not in profile.url_input_modalities:
                    raise UnsupportedInputError(
                        f"model {model_name!r} does not fetch {kind} input from a URL ({where}); "
                        f"pass the bytes instead ({type(block).__name__}.from_path/from_bytes)",
                        model=model_name, modality=kind)
                continue
            assert block.data is not None
            if isinstance(block, ImageBlock) and block.media_type not in profile.image_media_types:
                raise UnsupportedInputError(
                    f"model {model_name!r} does not accept {block.media_type} images ({where}); "
                    f"it takes {', '.join(sorted(profile.image_media_types))}",
                    model=model_name, modality=kind)
            limit = (profile.max_image_bytes if isinstance(block, ImageBlock)
                     else profile.max_document_bytes)
            if limit is not None and len(block.data) > limit:
                raise UnsupportedInputError(
                    f"{kind} too large for model {model_name!r}: {_mb(len(block.data))} > "
                    f"{_mb(limit)} per {kind} ({where})", model=model_name, modality=kind)
            inline += 4 * ((len(block.data) + 2) // 3)
            if profile.max_inline_bytes is not None and inline > profile.max_inline_bytes:
                raise UnsupportedInputError(
                    f"inline content too large for model {model_name!r}: the base64 of the "
                    f"images and documents comes to {_mb(inline)} > {_mb(profile.max_inline_bytes)}"
                    f" per request (at {where}); send fewer or smaller files, or URLs",
                    model=model_name, modality=kind)
    return inline


# ----------------------------------------------------------------------------- per call


@slot_init
@dataclass(frozen=True, slots=True)
class CheckedPrefix:
    """How much of a memory the input check has passed.

    Attributes:
        count: memory messages checked (``memory[:count]``).
        last: ``memory[count - 1]`` when checked (``None``: none).
        inline: base64 bytes of their inline image and document blocks.
        profile / model_name: what they were checked against.
    """

    count: int
    last: Msg | None
    inline: int
    profile: ModelProfile
    model_name: str


def _extends(memory: Sequence[Msg], prefix: CheckedPrefix | None, profile: ModelProfile,
             model_name: str) -> bool:
    return (prefix is not None and prefix.profile is profile
            and prefix.model_name == model_name and len(memory) >= prefix.count
            and (prefix.count == 0 or memory[prefix.count - 1] is prefix.last))


def check_call_inputs(memory: Sequence[Msg], inputs: Sequence[Msg], profile: ModelProfile,
                      model_name: str, prefix: CheckedPrefix | None) -> CheckedPrefix:
    """Check ``[*memory, *inputs]`` as ``check_inputs`` does, skipping the part of
    ``memory`` that ``prefix`` (the previous call's result) says was checked;
    return what is now checked of ``memory``.

    Raises:
        the errors of ``agentflow.content.check_inputs``.
    """
    start, inline = (prefix.count, prefix.inline) if prefix is not None and _extends(
        memory, prefix, profile, model_name) else (0, 0)
    if start < len(memory):  # a fresh state or an unchanged memory has nothing new
        inline = check_inputs(memory[start:], profile, model_name, first_index=start,
                              inline=inline)
    check_inputs(inputs, profile, model_name, first_index=len(memory), inline=inline)
    return CheckedPrefix(len(memory), memory[-1] if memory else None, inline, profile,
                         model_name)
