"""``slot_init``: the same construction as the dataclass's own ``__init__``,
through the slots' setters."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from agentflow import events, messages, model
from agentflow._slots_init import slot_init
from agentflow.input_checks import CheckedPrefix
from agentflow.middleware import base
from agentflow.testing import RecordedRequest


@dataclass(frozen=True, slots=True)
class Plain:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=4, init=False)
    e: dict[str, int] = field(default_factory=dict, init=False)
    f: float = field(default=1.5, kw_only=True)
    g: int = field(kw_only=True, default=0)


Fast = slot_init(dataclass(frozen=True, slots=True)(type("Fast", (), {
    "__annotations__": dict(Plain.__annotations__),
    "b": "b",
    "c": field(default_factory=list),
    "d": field(default=4, init=False),
    "e": field(default_factory=dict, init=False),
    "f": field(default=1.5, kw_only=True),
    "g": field(kw_only=True, default=0),
    "__module__": __name__,
})))


def _values(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}


@pytest.mark.parametrize("args, kwargs", [
    ((1,), {}),
    ((1, "x"), {}),
    ((1, "x", [2]), {"f": 2.5, "g": 7}),
    ((), {"a": 3, "c": [1], "g": 1}),
])
def test_same_fields_as_the_dataclass_init(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    assert _values(Fast(*args, **kwargs)) == _values(Plain(*args, **kwargs))


def test_same_signature_as_the_dataclass_init() -> None:
    ours = inspect.signature(Fast.__init__).parameters
    theirs = inspect.signature(Plain.__init__).parameters
    assert list(ours) == list(theirs)
    for name in ours:
        assert ours[name].kind == theirs[name].kind
        assert repr(ours[name].default) == repr(theirs[name].default)


def test_same_errors_for_bad_arguments() -> None:
    for bad in ((), (1, "x", [], 4)):
        with pytest.raises(TypeError):
            Plain(*bad)
        with pytest.raises(TypeError):
            Fast(*bad)
    with pytest.raises(TypeError):
        Fast(1, d=5)  # not an init field


def test_factories_give_each_instance_its_own_value() -> None:
    one, two = Fast(1), Fast(1)
    assert one.c == [] and one.c is not two.c
    assert one.e == {} and one.e is not two.e


def test_the_rest_of_the_dataclass_is_unchanged() -> None:
    obj = Fast(1, "x", [2], f=2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.a = 2  # type: ignore[misc]
    assert obj == Fast(1, "x", [2], f=2.0) and obj != Fast(2)
    assert dataclasses.replace(obj, a=5).a == 5
    assert copy.deepcopy(obj) == obj
    assert repr(obj).startswith("Fast(a=1, b='x'")
    assert not hasattr(obj, "__dict__")


def test_pickles() -> None:
    usage = model.Usage(1, 2, 3, 4, 5)
    assert pickle.loads(pickle.dumps(usage)) == usage


def test_post_init_runs() -> None:
    seen: list[int] = []

    @slot_init
    @dataclass(frozen=True, slots=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            seen.append(self.n)

    Checked(3)
    assert seen == [3]


def test_refuses_what_it_cannot_build() -> None:
    @dataclass(slots=True)
    class Mutable:
        n: int

    @dataclass(frozen=True)
    class NoSlots:
        n: int

    @dataclass(frozen=True, slots=True)
    class WithInitVar:
        n: int
        extra: InitVar[int] = 0

        def __post_init__(self, extra: int) -> None: ...

    for cls in (Mutable, NoSlots, WithInitVar, int):
        with pytest.raises(TypeError):
            slot_init(cls)


# the objects every call makes: events, chunks, content blocks, usage, decisions
PER_CALL = [
    *(getattr(events, n) for n in ("CallStarted", "ReasoningChunk", "ThinkingChunk", "ToolUse",
                                   "ToolResult", "OutputPartial", "OutputRetry",
                                   "AttemptDiscarded", "Complete")),
    *(getattr(model, n) for n in ("Usage", "ToolChoice", "ToolSpec", "ResponseFormat",
                                  "GenerateOptions", "TextDelta", "ThinkingDelta",
                                  "ToolCallDelta", "UsageChunk", "FinishChunk")),
    *(getattr(messages, n) for n in ("TextBlock", "ThinkingBlock", "ToolUseBlock",
                                     "ToolResultBlock", "StructuredResult")),
    base.Act, base.ReasonAgain, base.Finish, CheckedPrefix, RecordedRequest,
]


@pytest.mark.parametrize("cls", PER_CALL, ids=lambda c: c.__name__)
def test_per_call_classes_use_slot_init(cls: type) -> None:
    assert getattr(cls.__init__, "__slot_init__", False)


def test_checked_fields_call_their_check_only_off_the_exact_type() -> None:
    seen: list[Any] = []

    def check(value: Any) -> str:
        seen.append(value)
        if isinstance(value, str):
            return value
        raise ValueError(f"not text: {type(value).__name__}")

    @slot_init(checks={"text": (str, check)})
    @dataclass(frozen=True, slots=True)
    class Checked:
        text: str
        type: str = "t"  # a field named like the builtin the check must not need

    assert Checked("a").text == "a" and Checked(text="b", type="u").type == "u"
    assert seen == []  # exactly str: no call at all on the common path

    class Sub(str):
        pass

    assert type(Checked(Sub("s")).text) is Sub and len(seen) == 1  # the check kept it
    for bad in (5, None, b"x"):
        with pytest.raises(ValueError, match="not text"):
            Checked(bad)
    with pytest.raises(TypeError, match="no init field of"):
        slot_init(checks={"nope": (str, check)})(Checked)
