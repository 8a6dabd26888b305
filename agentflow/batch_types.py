"""What ``extract_many`` (``agentflow.batch``) takes and gives: an input (id,
text, media), its result (output or typed error, spans, usage, chunks,
truncation), and the forms an input may be given in."""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    Callable,
    Collection,
    Generator,
    Iterable,
    Sequence,
)
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypedDict

from agentflow._slots_init import slot_init
from agentflow.documents.seen import SeenIds
from agentflow.errors import DuplicateInputIdError, InvalidInputError
from agentflow.extraction.chunked import ChunkReport, Truncation
from agentflow.extraction.merge import Conflict
from agentflow.messages import OutputT
from agentflow.model import Usage

if TYPE_CHECKING:
    from agentflow.batch_api.mode import Mode
    from agentflow.batch_api.runner import BatchSettings
    from agentflow.extraction.budget import Chunking
    from agentflow.extraction.chunked import ChunkProgress
    from agentflow.grounding import Grounded
    from agentflow.output.examples import Example

__all__ = ["ExtractInput", "ExtractOptions", "ExtractResult", "IdCheck", "InputLike", "UniqueIds",
           "check_inputs", "not_text"]


@dataclass(frozen=True, slots=True)
class ExtractInput:
    """One input: an id (unique within the batch), its text, and ``media``: image
    or document blocks (``agentflow.content``) sent before the text in the same
    user message (a PDF the model reads itself). An input with media is sent
    whole, never chunked; its text may then be empty. A
    ``agentflow.documents.deferred.DeferredDocument`` among the media is read from disk
    only when this input is sent."""

    id: str
    text: str
    media: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        """Refuse an id or a text that is not a ``str`` (``InvalidInputError``)."""
        if not isinstance(self.id, str):
            raise InvalidInputError(
                f"ExtractInput id is a {type(self.id).__name__} ({_shown(self.id)}); "
                "expected a str")
        if not isinstance(self.text, str):
            raise InvalidInputError(not_text(self.id, self.text))


def _shown(value: object) -> str:
    """A short repr of a refused value (never a whole document)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def not_text(input_id: str, text: object) -> str:
    """What is wrong with input ``input_id`` whose text is ``text``, not a ``str``."""
    hint = ("decode it first (e.g. data.decode('utf-8')), or let agentflow.documents "
            "read the file (it detects the encoding)"
            if isinstance(text, bytes | bytearray | memoryview)
            else "give the document's text as a str")
    return (f"input {input_id!r}: the text is a {type(text).__name__} ({_shown(text)}), "
            f"not a str; {hint}")


@slot_init
@dataclass(frozen=True, slots=True)
class ExtractResult(Generic[OutputT]):
    """The outcome of one input; generic in the output type for type checkers
    (``extract_many(agent, docs, Invoice)`` yields ``ExtractResult[Invoice]``).

    Attributes:
        index: position of the input in the batch (from 0).
        id: the input's id.
        output: the validated output, or ``None`` (then ``error`` says why).
        error: the exception (a ``StructuredOutputError``, a ``ProviderError``...)
            when there is no output.
        usage: tokens and model requests spent on this input.
        attempts: model requests made for this input.
        duration: wall-clock seconds from start to end of this input's call.
        spans: field path -> ``[(start, end)]`` character offsets of each
            grounded value in the input text (``agentflow.grounding``).
        chunks: how a long document was read (``None``: in one request).
        truncated: set when ``max_chars`` cut the document.
        conflicts: fields on which a long document's chunks (or passes)
            disagreed, whatever the merge rule that settled them (``first``,
            ``majority``; ``must_agree``: the record fails); such a field's
            confidence is at most ``confidence.CONFLICTED``.
        confidence: top-level field -> confidence in ``[0, 1]`` of an ``ok``
            result (``agentflow.extraction.confidence``); empty otherwise.
        needs_review: the fields of an ``ok`` result whose confidence is
            below ``confidence.REVIEW_BELOW``, in order: the record is right
            as far as grounding can tell, but these fields need a look.
        token_probs: top-level field -> the probability of the least likely
            token that wrote its value, when the model gave token
            log-probabilities (``agentflow.output.token_confidence``; one
            reading: the first pass's, a long document's chunks: none).
        ungrounded: paths of values nothing checked against the document
            (a ``Derived()`` field, a boolean, a number it does not write).
        cut_lists: list field -> the number of items the document lists,
            for a list kept at its ``max_length`` (the first items) while
            the document lists more (``agentflow.extraction.list_cuts``).
        cut_dicts: dict field -> the most keys its schema lets it hold, for
            a dict that holds that many: the grammar stopped it there, and
            the document may hold more pairs (``agentflow.extraction.dict_cuts``).
        repeated_items: list field -> ``[{"item", "listed", "written"}]``
            for a list that holds an item more times than the document
            writes it (``agentflow.extraction.list_repeats``).
        dropped: field -> why its value was refused, for a field nulled
            because the model's value could not be placed in the document
            (``allow_partial``; ``agentflow.extraction.dropped``): its
            confidence is at most ``dropped.DROPPED``, so it needs review.
    """

    index: int
    id: str
    output: OutputT | None
    error: Exception | None
    usage: Usage
    attempts: int
    duration: float
    spans: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    chunks: ChunkReport | None = None
    truncated: Truncation | None = None
    conflicts: tuple[Conflict, ...] = ()
    confidence: dict[str, float] = field(default_factory=dict)
    needs_review: tuple[str, ...] = ()
    ungrounded: tuple[str, ...] = ()
    token_probs: dict[str, float] = field(default_factory=dict)
    cut_lists: dict[str, int] = field(default_factory=dict)
    cut_dicts: dict[str, int] = field(default_factory=dict)
    repeated_items: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether a validated output was produced."""
        return self.error is None


InputLike = str | ExtractInput | tuple[str, str]


class ExtractOptions(TypedDict, total=False):
    """The keywords of ``extract_many`` and ``extract_many_sync`` (each described
    there), for type checkers: ``**options: Unpack[ExtractOptions]``."""

    concurrency: int
    order: Literal["input", "completed"]
    instructions: str | None
    ground: bool | Grounded | None
    chunking: Chunking | None
    passes: int
    allow_partial: bool
    max_chars: int | None
    on_progress: Callable[[ChunkProgress], None] | None
    examples: Sequence[Example] | None
    mode: Mode
    batch: BatchSettings | None


def as_input(index: int, item: InputLike) -> ExtractInput:
    """Input ``index`` as an ``ExtractInput``: a ``str`` is a text whose id is
    its position; an ``(id, text)`` pair's id is ``str(id)`` (an int, a
    ``Path``...; never ``None`` or bytes, whose ``str`` is no name), its text
    a ``str`` (never converted: ``str(None)`` or ``str(b"...")`` is not the
    document).

    Raises:
        InvalidInputError: (a ``TypeError``) the input is of another type, its
            id is ``None`` or bytes, or its text is not a ``str`` (bytes:
            decode them first); the message names the input and the type.
    """
    if isinstance(item, ExtractInput):
        return item
    if isinstance(item, str):
        return ExtractInput(str(index), item)
    if isinstance(item, tuple) and len(item) == 2:
        input_id = _pair_id(index, item[0])
        if not isinstance(item[1], str):
            raise InvalidInputError(not_text(input_id, item[1]))
        return ExtractInput(input_id, item[1])
    raise InvalidInputError(
        f"input {index} is a {type(item).__name__}; expected str, (id, text) or ExtractInput"
    )


def _pair_id(index: int, raw: object) -> str:
    """The id of an ``(id, text)`` input: ``str(raw)``, refused where that is
    no name (``None``, bytes) or cannot be made (a ``__str__`` that raises: the
    run ended with its bare error)."""
    if raw is None or isinstance(raw, bytes | bytearray | memoryview):
        raise InvalidInputError(
            f"input {index}: the id is {_shown(raw)}, a {type(raw).__name__}; give a str "
            "(or a value whose str() names the document: an int, a Path)")
    try:
        return str(raw)
    except Exception as exc:
        raise InvalidInputError(
            f"input {index}: the id, a {type(raw).__name__}, cannot be written as text "
            f"(str() raised {type(exc).__name__}); give a str") from exc


def _id_of(index: int, item: object) -> tuple[str, bool] | None:
    """``(id, generated)`` of an input as ``as_input`` makes it, without making it;
    ``None`` for an input ``as_input`` refuses (refused when it is reached)."""
    if isinstance(item, ExtractInput):
        return item.id, False
    if isinstance(item, str):
        return str(index), True
    if isinstance(item, tuple) and len(item) == 2:
        try:
            return _pair_id(index, item[0]), False
        except InvalidInputError:  # refused when it is reached (as_input)
            return None
    return None


class IdCheck:
    """Refuses a repeated input id (``extract_many``): ids key the results, and two
    results under one id cannot be told apart (``order="completed"``). Ids made
    from positions (plain ``str`` inputs) never repeat among themselves; one
    equal to an id given explicitly is refused too, saying it was generated.

        check = IdCheck()
        check.add(index, item)        # raises DuplicateInputIdError on a repeat
        IdCheck.all(inputs)           # a whole collection, before any request

    The ids met are kept in a ``SeenIds`` (a temporary SQLite database, whole
    ids, no digests), made at the first id: memory does not grow with a
    stream of millions of inputs.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: SeenIds | None = None

    def add(self, index: int, item: InputLike) -> None:
        """Record input ``index``'s id.

        Raises:
            DuplicateInputIdError: an earlier input has the same id (naming both positions).
        """
        found = _id_of(index, item)
        if found is None:
            return
        input_id, generated = found
        if self._seen is None:
            self._seen = SeenIds()
        first = self._seen.setdefault(input_id, 2 * index + generated)
        if isinstance(first, int) and first // 2 != index:
            raise DuplicateInputIdError(input_id, first // 2, index,
                                        generated=(bool(first % 2), generated))

    @classmethod
    def all(cls, inputs: Collection[InputLike]) -> None:
        """Check every input of a collection (it can be read again), before any request.

        Raises:
            DuplicateInputIdError: the first repeated id, with both positions.
        """
        check = cls()
        for index, item in enumerate(inputs):
            check.add(index, item)


def check_inputs(inputs: Collection[InputLike]) -> None:
    """Check every input of a collection (it can be read again) before any
    request, in order: its form (``as_input``) and its id (``IdCheck``).

    Raises:
        InvalidInputError: the first input of an unsupported form, or whose
            id or text is refused.
        DuplicateInputIdError: the first repeated id, with both positions.
    """
    check = IdCheck()
    for index, item in enumerate(inputs):
        as_input(index, item)
        check.add(index, item)


@dataclass(frozen=True, slots=True)
class UniqueIds:
    """Inputs whose producer guarantees unique ids (``agentflow extract``'s
    reader: each file once, each JSONL id once per file), so ``extract_many``
    keeps no id to check repeats: its memory stays bounded on a stream of
    millions of inputs. A repeat that does come through is not refused: two
    results share the id.

        extract_many(model, UniqueIds(read_inputs()), Invoice)

    Attributes:
        inputs: the inputs (a sync or async iterable, as ``extract_many`` takes).
    """

    inputs: Iterable[InputLike] | AsyncIterable[InputLike]


async def async_inputs(inputs: Iterable[InputLike] | AsyncIterable[InputLike]) -> AsyncGenerator[
    InputLike, None
]:
    """``inputs`` (a sync or async iterable, as ``extract_many`` takes it) as
    one async iterator of its items, passed through unchecked (``as_input``
    checks each); it raises what iterating ``inputs`` raises. When it is
    closed (the run ended, or stopped early) it closes the iterator it took
    from ``inputs`` too, in the task that iterated it, so a generator's
    ``finally`` and its task groups run there and then, not later in the
    garbage collector."""
    if isinstance(inputs, AsyncIterable):
        iterator = aiter(inputs)
        try:
            async for item in iterator:
                yield item
        finally:
            if isinstance(iterator, AsyncGenerator):
                await iterator.aclose()
    else:
        sync_iterator = iter(inputs)
        try:
            for item in sync_iterator:
                yield item
        finally:
            if isinstance(sync_iterator, Generator):
                sync_iterator.close()
