"""Few-shot examples: worked input -> output pairs shown to the model before
the document.

Small and base models copy a demonstrated pattern far better than they follow
a description of it (LangExtract requires examples for that reason), and
every model learns the expected granularity of list items and the form of
each value from them::

    EXAMPLES = [Example(text="acme (1.0-1) unstable; urgency=low ...",
                        output=ChangelogEntry(package="acme", ...))]
    extract_many(model, docs, ChangelogEntry, examples=EXAMPLES)
    agent.call(doc, ChangelogEntry, examples=EXAMPLES)
    ReActAgent(..., output=OutputConfig(examples=EXAMPLES))

**Checked at set-up** (``check_examples``, before any model request): each
example's output must validate as the call's output type (an instance of it,
or a ``dict`` of its fields), and each of its grounded values (fields marked
``Grounded()``, or every free-text string under a ``ground=`` default) must
be a verbatim span of the example's own ``text`` (the definition of
``agentflow.grounding.locate``); under a ``ground=`` default each number and
date field not marked ``Derived()`` must be written in the text too (read by
value: ``1,200`` for 1200; an example that shows an invented number teaches
the model to invent one). An unknown key is refused where its model leaves
``extra`` unset (``agentflow.output.example_extra``). A bad example raises
``InvalidExampleError`` naming the example (its position) and what was wrong.
A call whose output type the framework built from the user's model (a chunk
of a long document, a recall pass: ``agentflow.output.derived``) checks the
examples against the user's model, and shows them as the built type.

**Rendering** (``example_messages``): each example becomes a user message
holding its text and an assistant message holding its output as JSON
(schema key order, property names as the schema spells them, ``json.dumps``
form: ``{"a": 1, "b": [2, 3]}``, non-ASCII kept), in order. The engine puts
them into each request after the system messages and before the call's own
messages; they are never stored in the conversation memory, and the same
examples give the same prefix on every request (prompt caching). This is the
form every chat API takes, and the form of the native-output and prompt
strategies' answers (a JSON text reply); on a completion-style template (the
embedded model's ``PLAIN_TEMPLATE``) it reads as "document, ``JSON:``,
object" pairs, the exact form the model is then asked to continue.

**Budget.** The long-document planner counts the rendered examples with the
system prompt (``extract_many``'s prompt overhead), so a chunk still fits the
context window with them.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import BaseModel, RootModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from agentflow.errors import InvalidExampleError
from agentflow.grounding import Grounded, check_grounding, grounded_values
from agentflow.grounding.typed_leaves import TypedValue
from agentflow.grounding.typed_values import found_in
from agentflow.messages import Msg
from agentflow.output.derived import origin_of, project
from agentflow.output.example_extra import unknown_keys

__all__ = ["CheckedExamples", "Example", "check_example_list", "check_examples",
           "example_messages", "examples_text"]


class Example:
    """One worked example: an input ``text`` and the ``output`` expected of it.

    An example is a value, taken when it is made: ``output`` is a deep copy
    of what was given, and reading ``example.output`` gives a copy of it
    again, so editing the dict (or model) given, or the one read, changes
    no example and no set-up made from one (the structured-output engine
    reuses a set-up while its examples are equal: ``fingerprint``). To
    change an example, make a new one.

    Attributes:
        text: the example document, as the model would receive it.
        output: an instance of the output type, or a ``dict`` (or any value)
            that validates as it (a copy; see above).
        fingerprint: the example's content (its text and output as JSON,
            keys sorted), computed once when it is made: two examples are
            equal, and hash alike, when their fingerprints are.
    """

    __slots__ = ("_output", "fingerprint", "text")

    text: str
    _output: Any
    fingerprint: bytes

    def __init__(self, text: str, output: Any) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "_output", copy.deepcopy(output))
        object.__setattr__(self, "fingerprint", _fingerprint(text, output))

    @property
    def output(self) -> Any:
        """The expected output (a deep copy of the one given: see the class)."""
        return copy.deepcopy(self._output)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Example is immutable: make a new one (not {name}=...)")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Example is immutable: cannot delete {name}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Example):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    def __repr__(self) -> str:
        return f"Example(text={self.text!r}, output={self._output!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Example, (self.text, self._output))


def _fingerprint(text: Any, output: Any) -> bytes:
    """``text`` and ``output`` as sorted-key JSON (models by their fields as set,
    an integer past 64 bits or a float that is no number by its text, any
    other value orjson cannot write by its ``repr``)."""
    return orjson.dumps([text, _canonical(output)], default=_plain,
                        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)


def _canonical(value: Any) -> Any:
    """``value`` with what orjson refuses or writes ambiguously made plain: an
    integer past 64 bits (orjson raises ``TypeError``: it never asks
    ``default``) and a NaN or infinity (orjson writes ``null``: ``{"x": nan}``
    would equal ``{"x": None}``) as tagged text, inside mappings, lists,
    tuples and models too."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else ["int", str(value)]
    if isinstance(value, float):
        return value if math.isfinite(value) else ["float", repr(value)]
    if isinstance(value, Mapping):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, BaseModel):
        return [type(value).__qualname__, _canonical(value.__dict__),
                _canonical(value.__pydantic_extra__)]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return _canonical(value)
    if isinstance(value, set | frozenset):
        return sorted(map(repr, value))
    return repr(value)


@dataclass(frozen=True, slots=True)
class CheckedExample:
    """An example whose output validated: the text and the validated value."""

    text: str
    value: Any


class CheckedExamples(tuple[Example, ...]):
    """Examples given with ``check_examples``'s answer for one output type
    and ``ground`` marker, and the locators learned from it: a run's plan
    (``agentflow.extraction.pipeline``) checks its examples once and gives
    them so to each call, whose set-up (``check_examples`` for that type and
    marker, or for a type built from it: a chunk's, a recall pass's) takes
    the answer kept instead of checking them again. As examples, the tuple
    of them (equal to the same examples in a plain tuple).

    Attributes:
        checked: ``check_examples(examples, output_type, ground)``.
        output_type / ground: what they were checked for.
        locators: where each field lives, learned from ``checked`` for
            ``output_type`` (``agentflow.grounding.locators.learn_locators``).
    """

    checked: tuple[CheckedExample, ...]
    output_type: Any
    ground: Grounded | None
    locators: Mapping[str, Any]

    def __new__(cls, examples: Sequence[Example], checked: tuple[CheckedExample, ...],
                output_type: Any, ground: Grounded | None,
                locators: Mapping[str, Any]) -> CheckedExamples:
        self = super().__new__(cls, examples)
        self.checked, self.output_type, self.ground = checked, output_type, ground
        self.locators = locators
        return self

    def checked_for(self, output_type: Any, ground: Grounded | None) -> bool:
        """Whether they were checked for ``output_type`` and ``ground``."""
        return self.output_type is output_type and self.ground == ground

    def __reduce__(self) -> tuple[Any, ...]:
        return (CheckedExamples, (tuple(self), self.checked, self.output_type, self.ground,
                                  self.locators))


def _adapter(output_type: Any) -> TypeAdapter[Any]:
    return TypeAdapter(output_type)


def _describe(errors: Sequence[ErrorDetails]) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in errors)


def check_example_list(examples: Any) -> None:
    """``examples`` is a list (a sequence) of ``Example``s, whatever the output
    (also a call that asks for none, where they are not shown).

    Raises:
        InvalidExampleError: not a sequence (a str, one ``Example``), or an item
            that is not an ``Example``, named (``examples[i]``).
    """
    if isinstance(examples, (str, Example)) or not isinstance(examples, Sequence):
        raise InvalidExampleError(
            f"examples must be a list of Example, got {type(examples).__name__}")
    for i, example in enumerate(examples):
        if not isinstance(example, Example):
            raise InvalidExampleError(f"examples[{i}] is a {type(example).__name__}; "
                                      "expected Example(text=..., output=...)")


def check_examples(
    examples: Sequence[Example], output_type: Any, ground: Grounded | None = None
) -> tuple[CheckedExample, ...]:
    """Validate each example against ``output_type`` and its own text.

    Args:
        examples: the examples, in the order they are shown.
        output_type: the call's output type. One the framework derived from
            the user's model (``agentflow.output.derived``: a chunk's partial
            model, a recall pass's) takes the examples of that model, in
            every form it takes them, each shown as ``output_type``.
        ground: the call's ``ground`` default (``None``: only the fields
            marked ``Grounded()`` are grounded).

    Returns:
        The checked examples, in order.

    Raises:
        InvalidExampleError: an item is not an ``Example``, its text is empty,
            its output is an instance of another model, does not validate as
            ``output_type`` or has a key the schema does not (at any depth,
            where the model holding it leaves ``extra`` unset:
            ``agentflow.output.example_extra``), or one of its
            grounded values is not a verbatim span of its text; under a
            ``ground`` default, or one of its numbers or dates (not
            ``Derived()``) is not written in its text (read by value, as
            documents are: ``agentflow.grounding.typed_values``). The message
            names the example (``examples[i]``) and each failing field.
    """
    if isinstance(examples, CheckedExamples) and examples.checked_for(output_type, ground):
        return examples.checked  # checked once, by whoever gave them so
    check_example_list(examples)
    origin = origin_of(output_type)
    if origin is not None:  # a type built from the user's (a chunk's, a recall pass's):
        # the examples are the user's, checked as such and shown as this type
        return tuple(CheckedExample(e.text, project(e.value, output_type))
                     for e in check_examples(examples, origin, ground))
    adapter = _adapter(output_type)
    checked: list[CheckedExample] = []
    for i, example in enumerate(examples):
        where = f"examples[{i}]"
        if not isinstance(example, Example):
            raise InvalidExampleError(
                f"{where} is a {type(example).__name__}; expected Example(text=..., output=...)")
        if not isinstance(example.text, str) or not example.text.strip():
            raise InvalidExampleError(f"{where}: the text is empty; give the example document")
        output = example.output
        if isinstance(output, BaseModel):  # validated again, even if built unvalidated
            if isinstance(output_type, type) and not isinstance(output, output_type):
                raise InvalidExampleError(
                    f"{where}: the output is a {type(output).__name__}; expected a "
                    f"{_name(output_type)} (or a dict that validates as one)")
            # its fields by name (never computed fields), values as set; a root model's root
            output = output.root if isinstance(output, RootModel) else dict(output)
            by_name: bool | None = True
        else:
            by_name = None  # a dict: keys as the schema spells them (aliases)
        # a key the schema does not have is a typo, not a value to drop, unless
        # its model says what to do with one (``example_extra``)
        extra = unknown_keys(adapter, output_type, output, by_name)
        try:
            value = adapter.validate_python(output, by_name=by_name)
        except ValidationError as exc:
            raise InvalidExampleError(
                f"{where}: the output is not a valid {_name(output_type)}: "
                f"{_describe([*exc.errors(), *extra])}") from None
        if extra:
            raise InvalidExampleError(
                f"{where}: the output is not a valid {_name(output_type)}: {_describe(extra)}")
        typed: list[TypedValue] = []  # numbers and dates, under a ground= default
        check = check_grounding(grounded_values(value, output_type, ground, typed), example.text)
        unwritten = [t for t in typed if not found_in(t.value, example.text)]
        if not check.ok or unwritten:
            cut = {(p, v): t for p, v, t in check.cut}
            problems = [f"{p}={v!r} cuts through {cut[p, v]!r} in the example's text"
                        if (p, v) in cut else f"{p}={v!r} is not in the example's text"
                        for p, v in check.unfound]
            problems += [f"{p} is empty" for p, _ in check.empty]
            problems += [f"{t.path}={_shown(t.value)} is not written in the example's text "
                         f"(mark the field Derived() if it is computed)" for t in unwritten]
            raise InvalidExampleError(
                f"{where}: grounded values must be copied from the example's own text: "
                + "; ".join(problems))
        checked.append(CheckedExample(example.text, value))
    return tuple(checked)


def _shown(value: Any) -> str:
    """A number or date as JSON writes it (``1994``, ``2024-03-05``)."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _name(output_type: Any) -> str:
    return getattr(output_type, "__name__", None) or repr(output_type)


def output_json(value: Any, output_type: Any) -> str:
    """``value`` as the JSON text of an answer: schema key order, property
    names as the schema spells them (aliases), ``", "`` / ``": "``
    separators, non-ASCII kept."""
    data = _adapter(output_type).dump_python(value, mode="json", by_alias=True)
    return json.dumps(data, ensure_ascii=False)


def example_messages(examples: Sequence[CheckedExample], output_type: Any) -> list[Msg]:
    """The user/assistant message pairs that show ``examples`` (see the
    module docstring), in order."""
    messages: list[Msg] = []
    for example in examples:
        messages.append(Msg.user(example.text))
        messages.append(Msg.assistant(output_json(example.value, output_type)))
    return messages


def examples_text(examples: Sequence[CheckedExample], output_type: Any) -> str:
    """The examples' texts and answers joined (what the token budget counts)."""
    return "\n\n".join(
        f"{e.text}\n\n{output_json(e.value, output_type)}" for e in examples)
