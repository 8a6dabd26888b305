"""The per-call input check done once per message (agentflow.input_checks): a call
checks only the messages added since the last check; the verdicts are unchanged."""

from __future__ import annotations

import pytest

from agentflow import AgentState, ModelProfile, ReActAgent, UnsupportedInputError
from agentflow.content import DocumentBlock, ImageBlock
from agentflow.input_checks import check_call_inputs
from agentflow.messages import Msg
from agentflow.testing import ScriptedModel
from tests import media

IMAGES = ModelProfile(input_modalities={"text", "image"})


def image_msg(pad: int = 0) -> Msg:
    return Msg.user(["look", ImageBlock.from_bytes(media.png(pad=pad))])


def pdf_msg() -> Msg:
    return Msg.user(["read", DocumentBlock.from_bytes(media.pdf())])


def test_checked_messages_are_not_walked_again() -> None:
    memory = [image_msg(), Msg.assistant("seen"), image_msg(), Msg.assistant("seen too")]
    checked = check_call_inputs(memory, [], IMAGES, "m", None)
    assert checked.count == 4 and checked.last is memory[-1] and checked.inline > 0
    # an earlier message swapped behind the check's back (the last checked one kept):
    # not looked at again, which shows the checked part is skipped
    memory[0] = pdf_msg()
    again = check_call_inputs(memory, [Msg.user("more")], IMAGES, "m", checked)
    assert again.count == 4 and again.inline == checked.inline
    # a fresh check (no prefix) walks it and refuses the PDF, as before
    with pytest.raises(UnsupportedInputError, match="message 0"):
        check_call_inputs(memory, [], IMAGES, "m", None)


def test_new_messages_are_checked_with_their_index() -> None:
    memory = [image_msg(), Msg.assistant("seen")]
    checked = check_call_inputs(memory, [], IMAGES, "m", None)
    memory += [Msg.user("next"), Msg.assistant("ok")]
    with pytest.raises(UnsupportedInputError, match="message 4"):
        check_call_inputs(memory, [pdf_msg()], IMAGES, "m", checked)
    memory.append(pdf_msg())
    with pytest.raises(UnsupportedInputError, match="message 4"):
        check_call_inputs(memory, [], IMAGES, "m", checked)


def test_the_inline_limit_still_spans_the_whole_conversation() -> None:
    one = image_msg(pad=3000)
    size = check_call_inputs([one], [], IMAGES, "m", None).inline
    profile = IMAGES.with_(max_inline_bytes=size * 2 + size // 2)
    memory = [one, Msg.assistant("a"), image_msg(pad=3000), Msg.assistant("b")]
    checked = check_call_inputs(memory, [], profile, "m", None)
    assert checked.inline == 2 * size
    with pytest.raises(UnsupportedInputError, match="inline content too large"):
        check_call_inputs(memory, [image_msg(pad=3000)], profile, "m", checked)


@pytest.mark.parametrize("change", ["rollback", "replace_last", "other_profile", "other_name"])
def test_a_memory_that_no_longer_extends_the_checked_part_is_checked_whole(change: str) -> None:
    memory = [image_msg(), Msg.assistant("seen"), image_msg(), Msg.assistant("seen too")]
    checked = check_call_inputs(memory, [], IMAGES, "m", None)
    profile, name = IMAGES, "m"
    if change == "rollback":  # the last messages dropped, then others appended
        del memory[2:]
        memory.insert(0, pdf_msg())
    elif change == "replace_last":
        memory[0] = pdf_msg()
        memory[-1] = Msg.assistant("edited")
    elif change == "other_profile":
        memory[0] = pdf_msg()
        profile = IMAGES.with_(max_image_bytes=10_000_000)
    else:
        memory[0] = pdf_msg()
        name = "m-2"
    with pytest.raises(UnsupportedInputError, match="message 0"):
        check_call_inputs(memory, [], profile, name, checked)


async def test_an_agent_checks_each_message_once_across_calls() -> None:
    model = ScriptedModel(["one", "two", "three"], profile=IMAGES)
    agent = ReActAgent("a", model=model)
    state = AgentState()
    await agent.call(image_msg(), state=state)
    assert state.inputs_checked is not None and state.inputs_checked.count == 0
    await agent.call(image_msg(), state=state)
    first = state.inputs_checked
    assert first is not None and first.count == 2 and first.last is state.memory[1]
    with pytest.raises(UnsupportedInputError, match="message 4"):  # unchanged verdict
        await agent.call(pdf_msg(), state=state)
    assert len(model.requests) == 2
