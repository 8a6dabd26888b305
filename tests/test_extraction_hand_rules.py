"""Hand rules that held (issue 30): a field whose own place rules (``line``,
``after``, ``pattern``, ``whole_items``) leave the document only the output's
value is as confident as one a learned locator found; a value among several
the rules allow, or a list that left an allowed item out, is not."""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from agentflow.batch import extract_many
from agentflow.extraction.confidence import GROUNDED, HELD, LIST_CUT, REVIEW_BELOW
from agentflow.extraction.hand_rules import held_fields
from agentflow.grounding import Grounded
from agentflow.grounding.placing import check_grounding
from agentflow.grounding.values import grounded_values
from agentflow.testing import FunctionModel, RecordedRequest

TITLE = r"^Ticket "


class Ticket(BaseModel):
    key: Annotated[str, Grounded(whole_tokens=True, line=TITLE)] = Field(
        pattern=r"^[A-Z]+-[0-9]+$")
    state: Annotated[str, Grounded(whole_tokens=True, line=TITLE, after="key")] = Field(
        pattern=r"^[a-z]+$")
    priority: Annotated[Literal["low", "normal", "urgent"], Grounded(line=TITLE)]
    steps: list[Annotated[str, Grounded(whole_items=True)]] = Field(max_length=3)


DOC = """Ticket ABC-12 open; priority=urgent
Reported by ops. The low disk alarm fired.

  * Free the disk.
  * Restart the service,
    then watch it.
    - check the log
  * Close the alarm.
  * Tell the team.
"""


def _spans(value: Ticket, source: str) -> dict[str, list[tuple[int, int]]]:
    check = check_grounding(grounded_values(value, Ticket), source)
    assert check.ok, check.message
    return {k: [tuple(s) for s in v] for k, v in check.spans.items()}  # type: ignore[misc]


def test_rules_that_leave_one_value_hold_and_rules_that_leave_several_do_not() -> None:
    full = Ticket(key="ABC-12", state="open", priority="urgent",
                  steps=["Free the disk.", "Restart the service,\n    then watch it.\n"
                         "    - check the log", "Close the alarm."])
    held = held_fields(Ticket, full, DOC, _spans(full, DOC))
    # key: ABC-12 is the only whole token of the title line its pattern allows; state
    # the only lowercase word after it there ("priority=urgent" is one token); priority
    # the only label on the title line ("low" is written, but on another line); steps:
    # the first three items in order (max_length 3), the nested item inside one taken
    assert held == {"key", "state", "priority", "steps"}
    short = full.model_copy(update={"steps": ["Free the disk.", "Close the alarm."]})
    assert "steps" not in held_fields(Ticket, short, DOC, _spans(short, DOC))  # one left out
    two = "Ticket ABC-12 open; priority=urgent or low\n  * Free the disk.\n"
    one = Ticket(key="ABC-12", state="open", priority="urgent", steps=["Free the disk."])
    # two labels on the title line: the rule does not decide between them; nor
    # between "open", "or" and "low" for state
    assert held_fields(Ticket, one, two, _spans(one, two)) == {"key", "steps"}


class Loose(BaseModel):
    word: Annotated[str, Grounded(line=TITLE)]  # a line, but no pattern: any span of it


def test_a_line_rule_without_a_pattern_does_not_pin_a_value() -> None:
    out = Loose(word="open")
    check = check_grounding(grounded_values(out, Loose), DOC)
    assert held_fields(Loose, out, DOC, {k: list(v) for k, v in check.spans.items()}) == set()


async def test_an_entry_its_hand_rules_pin_down_needs_no_review() -> None:
    replies = iter([
        {"key": "ABC-12", "state": "open", "priority": "urgent",
         "steps": ["Free the disk.", "Restart the service,\n    then watch it.\n"
                   "    - check the log", "Close the alarm."]},
        {"key": "ABC-12", "state": "open", "priority": "urgent", "steps": ["Close the alarm."]},
    ])

    def answer(request: RecordedRequest) -> str:
        return json.dumps(next(replies))

    whole = DOC.replace("  * Tell the team.\n", "")  # three items: the list is whole
    results = [r async for r in extract_many(FunctionModel(answer), [whole, DOC], Ticket,
                                             concurrency=1)]
    assert [r.ok for r in results] == [True, True]
    assert results[0].needs_review == () and results[0].cut_lists == {}
    assert results[0].confidence == {"key": HELD, "state": HELD, "priority": HELD,
                                     "steps": HELD}
    assert results[1].needs_review == ("steps",)  # items left out: grounded, not sure
    assert results[1].confidence["steps"] == GROUNDED < REVIEW_BELOW


async def test_the_first_max_length_items_of_a_longer_list_need_review() -> None:
    steps = ["Free the disk.", "Restart the service,\n    then watch it.\n    - check the log",
             "Close the alarm."]  # the first 3 (max_length) of the document's 4 items
    model = FunctionModel(lambda request: json.dumps(
        {"key": "ABC-12", "state": "open", "priority": "urgent", "steps": steps}))
    (result,) = [r async for r in extract_many(model, [DOC], Ticket)]
    assert result.ok and result.needs_review == ("steps",)
    assert result.confidence["steps"] == LIST_CUT < REVIEW_BELOW
    assert result.cut_lists == {"steps": 4}  # the document lists 4 items; 3 were kept


def test_an_item_nested_in_a_taken_item_is_part_of_it() -> None:
    from agentflow.output.grammar_values import item_values

    restart = DOC.index("Restart")
    outer = (restart, DOC.index("log") + len("log"))
    assert "check the log" in item_values(DOC)  # a nested item is an item of its own
    later = item_values(DOC, taken=[outer])  # ...but not once its outer item was taken
    assert "check the log" not in later and "Close the alarm." in later
    doubled = Ticket(key="ABC-12", state="open", priority="urgent",
                     steps=["Restart the service,\n    then watch it.\n    - check the log",
                            "check the log", "Close the alarm."])
    spans = _spans(doubled, DOC)
    assert spans["steps[1]"][0][0] > spans["steps[0]"][0][0]  # inside the item before it
    assert "steps" not in held_fields(Ticket, doubled, DOC, spans)  # its text taken twice


def test_a_list_of_whole_items_never_goes_on_inside_the_item_it_took() -> None:
    from agentflow.output.grammar_values import item_chain, item_places, next_items

    found = item_places(DOC)
    texts = [text for text, _, _ in found]
    nested = texts.index("check the log")
    outer = next(i for i, t in enumerate(texts) if t.startswith("Restart"))
    follows = next_items(found)
    assert follows[outer] == nested + 1  # after the outer item: the one after its end
    chain = item_chain(texts, 0, None, '", "', "n", follows)
    assert chain is not None
    rules, _ = chain
    # the rule that takes the outer item goes on with the item after it, never
    # with the one nested in it (which a list may still take instead of the outer)
    takes_outer = [body for name, body in rules.items()
                   if name.startswith(f"n_{outer}_") and not name.endswith("_")]
    assert takes_outer and all(f"n_{nested}_" not in body and f"n_{nested + 1}_" in body
                               for body in takes_outer)
    assert f"n_{nested}_" in rules[f"n_{outer}_1_"]  # skipping the outer item: allowed


def test_a_located_value_the_fields_own_rules_refuse_is_not_offered() -> None:
    from agentflow.grounding.locators import Locator, apply_locators

    node = {"anyOf": [{"type": "string", "pattern": r"^[A-Z]+-[0-9]+$", "x-grounded": True,
                       "x-grounded-line": TITLE}, {"type": "null"}]}
    schema = {"type": "object", "properties": {"key": node}}
    rule = Locator("key", "Ticket ", anchored=False, right=" ")
    # a part of a document with the locator's context but not the field's line (a
    # chunk of a long one): nothing the field could take, so only null is offered
    part = "Restart the Ticket abc open\n"
    assert rule.values(part) == ["abc"]
    assert apply_locators(schema, {"key": rule}, part)["properties"]["key"] == {
        "anyOf": [{"type": "null"}]}
    offered = apply_locators(schema, {"key": rule}, DOC)["properties"]["key"]
    assert offered["x-grounded-values"] == ["ABC-12"]  # on the title line, as the pattern says
