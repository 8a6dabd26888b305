"""The input check of a call (``agentflow.content.check_inputs``), done once per
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

from collections.abc import Sequence
from dataclasses import dataclass

from agentflow._slots_init import slot_init
from agentflow.content import check_inputs
from agentflow.messages import Msg
from agentflow.model import ModelProfile

__all__ = ["CheckedPrefix", "check_call_inputs"]


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
