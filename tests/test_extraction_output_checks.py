"""The grounding and degeneracy checks of a validated output
(``agentflow.grounding.output_checks``)."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import BaseModel

from agentflow.errors import DegenerateOutputError, GroundingError
from agentflow.grounding import Grounded
from agentflow.grounding.output_checks import call_source, check_output
from agentflow.messages import Msg


class Entry(BaseModel):
    maintainer: Annotated[str, Grounded()]
    note: str = ""


def test_call_source_joins_every_user_message_of_the_calls_input() -> None:
    # the caller's input messages, all of them (not only a leading run of user ones)
    inputs = [Msg.user("first"), Msg.system("context"), Msg.user("second")]
    assert call_source(inputs) == "first\n\nsecond"
    assert call_source([Msg.assistant("only")]) == ""
    assert call_source([]) == ""


def test_check_output_gives_the_spans_of_grounded_values() -> None:
    source = "Maintainer: Ann Lee <ann@x.io>"
    spans = check_output(Entry(maintainer="Ann Lee"), Entry, None, source)
    assert spans == {"maintainer": [(12, 19)]}
    assert source[12:19] == "Ann Lee"


def test_check_output_refuses_a_value_not_in_the_source() -> None:
    with pytest.raises(GroundingError) as info:
        check_output(Entry(maintainer="Bob Stone"), Entry, None, "Maintainer: Ann Lee")
    assert "maintainer" in info.value.detail


def test_check_output_under_ground_checks_every_string() -> None:
    value = Entry(maintainer="Ann Lee", note="invented")
    assert check_output(value, Entry, None, "Ann Lee")  # the note is not marked
    with pytest.raises(GroundingError):
        check_output(value, Entry, Grounded(), "Ann Lee")


def test_check_output_refuses_a_repetition_loop() -> None:
    class Notes(BaseModel):
        text: str

    looped = Notes(text="abc " * 200)
    with pytest.raises(DegenerateOutputError):
        check_output(looped, Notes, None, "abc")
