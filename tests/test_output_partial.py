"""Partial output while it streams: grows, never regresses, unwraps."""

from __future__ import annotations

import random

import pytest

from agentflow.output.partial import (
    PartialOutput,
    ValueStarts,
    json_start,
    last_value_start,
    without_open_number,
)


def test_grows_and_never_regresses() -> None:
    p = PartialOutput(wrapped=False)
    assert p.from_text('{"na') is None  # nothing yet
    assert p.from_text('{"name": "An') == {"name": "An"}
    assert p.from_text('{"name": "An') is None  # unchanged: no event
    assert p.from_text('{"name": "Ann", "email": "a') == {"name": "Ann", "email": "a"}
    assert p.update({"email": "a"}) is None  # a field already seen disappeared
    assert p.from_text("not json") is None


def test_unwraps_wrapped_outputs() -> None:
    p = PartialOutput(wrapped=True)
    assert p.from_text('{"other": 1') is None
    assert p.from_text('{"result": [1, 2') == [1]  # the 2 may be the start of 23
    assert p.from_text('{"result": [1, 23,') == [1, 23]


def test_a_number_is_shown_once_it_ends() -> None:
    # a UI showed 6 F, then 64.4 F: a number cut by the chunking is not a value yet
    p = PartialOutput(wrapped=False)
    assert p.from_text('{"city": "Paris", "fahrenheit": 6') == {"city": "Paris"}
    assert p.from_text('{"city": "Paris", "fahrenheit": 64.') is None
    assert p.from_text('{"city": "Paris", "fahrenheit": 64.4') is None
    assert p.from_text('{"city": "Paris", "fahrenheit": 64.4 ') == {"city": "Paris",
                                                                     "fahrenheit": 64.4}
    assert p.from_text('{"city": "Paris", "fahrenheit": 64.4, "low": -1') is None
    assert p.from_text('{"city": "Paris", "fahrenheit": 64.4, "low": -12}') == {
        "city": "Paris", "fahrenheit": 64.4, "low": -12}


@pytest.mark.parametrize(("text", "kept"), [
    ('{"a": 1', '{"a":'), ('[1, 2', "[1,"), ("12", ""), ('{"a": 1e-', '{"a":'),
    ('{"a": 1}', '{"a": 1}'), ('{"a": 1 ', '{"a": 1 '), ('{"n": "Mike', '{"n": "Mike'),
    ('{"n": "route 66', '{"n": "route 66'), ('{"n": "a, 12', '{"n": "a,')])
def test_without_open_number(text: str, kept: str) -> None:
    assert without_open_number(text) == kept


def test_json_start_skips_prose() -> None:
    assert json_start('Sure: {"a": 1}') == '{"a": 1}'
    assert json_start("[1]") == "[1]"
    assert json_start("no json") is None


# --------------------------------------------------------------- through the agent (rules 4, 9)

import itertools  # noqa: E402

from pydantic import BaseModel  # noqa: E402

from agentflow import (  # noqa: E402
    AttemptDiscarded,
    OutputPartial,
    OutputRetry,
    PromptStrategy,
    ReActAgent,
)
from agentflow.testing import Reply, ScriptedModel  # noqa: E402


class Label(BaseModel):
    label: str
    reason: str


DRAFT = '{"label": "draft", "reason": "not yet"}'
FINAL = '{"label": "billing", "reason": "dup charge"}'


async def _events(text: str, *then: str) -> list[object]:
    model = ScriptedModel([Reply(text=text, chunk_size=3), *then])
    agent = ReActAgent("t", model)
    return [e async for e in agent.stream("label it", Label, strategy=PromptStrategy())]


@pytest.mark.parametrize("text", [
    f"<think>{DRAFT}</think>{FINAL}",
    f"<Thinking mode='x'>\n{DRAFT}\n</Thinking>\n{FINAL}",
    f"<reflection>{DRAFT}</reflection> {FINAL}",
])
async def test_partials_never_show_reasoning_drafts(text: str) -> None:
    events = await _events(text)
    partials = [e.data for e in events if isinstance(e, OutputPartial)]
    assert partials and all(p.get("label") != "draft" for p in partials)
    assert "draft" not in str(partials)
    assert partials[-1] == {"label": "billing", "reason": "dup charge"}
    assert not any(isinstance(e, AttemptDiscarded) for e in events)


@pytest.mark.parametrize(("text", "final"), [
    (f"Draft: {DRAFT}\nFinal: {FINAL}", FINAL),
    (f"Draft: {FINAL}\nFinal: {DRAFT}", DRAFT),
])
async def test_a_later_value_is_announced_before_partials_restart(text: str, final: str) -> None:
    """A second value in the reply: the partials of the first are discarded
    (``superseded``) before the second's start, and never regress after it;
    two different values are no answer (the framework does not guess which
    the model meant), so the model is asked again and its one value is the output."""
    events = await _events(text, final)
    kinds = [type(e).__name__ for e in events
             if isinstance(e, OutputPartial | AttemptDiscarded)]
    at = kinds.index("AttemptDiscarded")
    assert "OutputPartial" in kinds[:at] and "OutputPartial" in kinds[at + 1:]
    discarded = next(e for e in events if isinstance(e, AttemptDiscarded))
    assert discarded.reason == "superseded"
    retry = next(e for e in events if isinstance(e, OutputRetry))  # ambiguous: asked again
    assert retry.reason == "validation" and events.index(discarded) < events.index(retry)
    after = [e.data for e in events[events.index(discarded):events.index(retry)]
             if isinstance(e, OutputPartial)]
    for before, later in itertools.pairwise(after):
        assert before.keys() <= later.keys()  # no regression after the restart
    assert events[-1].output == Label.model_validate_json(final)  # type: ignore[attr-defined]


def test_value_starts_matches_last_value_start_on_every_prefix() -> None:
    """The incremental scanner gives ``last_value_start``'s answer for each
    prefix of a growing text, and for texts that do not extend the last one."""
    rng = random.Random(19)
    alphabet = ['{', '}', '[', ']', '"', "'", "\\", "a", " ", ":", ",", "<", "1"]
    for opening in ("{", "[{"):
        for _ in range(300):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            starts = ValueStarts(opening)
            cut = 0
            while cut < len(text):
                cut = min(len(text), cut + rng.randint(1, 5))
                assert starts(text[:cut]) == last_value_start(text[:cut], opening), text[:cut]
            other = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
            assert starts(other) == last_value_start(other, opening), other


def test_value_starts_follows_a_streamed_reply() -> None:
    starts = ValueStarts("{")
    assert starts("Sure: ") is None
    assert starts('Sure: {"a": "}') == 6
    assert starts('Sure: {"a": "}"} then {"b"') == 22
    assert starts('Sure: {"a": "}"} then {"b": 2} done') == 22
    assert starts('{"c": 1}') == 0  # a new attempt: scanned afresh
