"""Misuse: the caller used the API wrongly, raised before any model request
(``agentflow.errors`` re-exports these; the tree is drawn there)."""

from __future__ import annotations

from collections.abc import Sequence

from agentflow.errors._root import AgentflowError

__all__ = [
    "AlreadyDecidedError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "BatchUnavailableError",
    "DuplicateInputIdError",
    "InvalidChunkError",
    "InvalidExampleError",
    "InvalidInputError",
    "InvalidModelError",
    "InvalidRecordError",
    "InvalidStateError",
    "MediaTypeError",
    "ModelArgumentError",
    "ModelClosedError",
    "SchemaError",
    "ToolDefinitionError",
    "ToolNameError",
    "ToolTypeError",
    "UnsupportedInputError",
    "UsageError",
]


# --------------------------------------------------------------------------- misuse


class UsageError(AgentflowError):
    """The caller used the API wrongly. Raised before any model request."""

    same_for_every_input = True


class ArgumentTypeError(UsageError, TypeError):
    """A public argument of the wrong type (``concurrency="4"``, a single
    middleware not in a list): the message names the argument, what it must be
    and what it got (``agentflow._arguments``)."""


class ArgumentValueError(UsageError, ValueError):
    """A public argument of the right type but a wrong value (``passes=0``,
    ``on_invalid="raize"``): the message names the argument, what it must be
    and what it got (``agentflow._arguments``)."""


class InvalidInputError(UsageError, TypeError):
    """The message input of ``call()``/``stream()`` is not a str, a ``Msg`` or a
    non-empty sequence of them; or an ``extract_many`` input is not a str, an
    ``(id, text)`` pair with a text that is a str, or an ``ExtractInput``."""


class AlreadyDecidedError(InvalidInputError):
    """A decision for a tool call that an earlier request already decided
    (``agentflow.approvals``): a decision is applied once, so an approved
    call never runs twice (a double click, a retried request, a replay).

    Attributes:
        call_ids: the calls decided again.
    """

    def __init__(self, call_ids: Sequence[str]) -> None:
        self.call_ids = tuple(call_ids)
        super().__init__(
            f"the tool call(s) {', '.join(self.call_ids)} were already decided by an earlier "
            "request: a decision is applied once and an approved call never runs again "
            "(load the conversation to read its outcome)")


class MediaTypeError(InvalidInputError):
    """Image or document bytes whose magic bytes match no known media type, a
    media type that does not match the bytes, or one the block kind does not
    hold (``agentflow.content``).

    Attributes:
        media_type: the media type given or found, when there is one.
    """

    same_for_every_input = False  # about one input's bytes

    def __init__(self, message: str, *, media_type: str | None = None) -> None:
        super().__init__(message)
        self.media_type = media_type


class UnsupportedInputError(InvalidInputError):
    """An image or document block the model does not accept, by its profile
    (``ModelProfile.input_modalities`` and the limits beside it). Raised before
    any request.

    Attributes:
        model: the model's name.
        modality: ``"image"`` or ``"pdf"``.
    """

    same_for_every_input = False  # about one input's bytes

    def __init__(self, message: str, *, model: str, modality: str) -> None:
        super().__init__(message)
        self.model = model
        self.modality = modality


class InvalidModelError(UsageError, TypeError):
    """The model given to an agent is neither a ``ChatModel`` nor a known
    ``"vendor:model"`` string."""


class ModelArgumentError(InvalidModelError, ArgumentTypeError, ArgumentValueError):
    """A model's own argument of the wrong type or value (a local model's
    ``threads=0``): an ``InvalidModelError``, as it was raised before, and
    the ``ArgumentTypeError``/``ArgumentValueError`` of every other public
    argument (``agentflow._arguments``), so it is a ``TypeError`` and a
    ``ValueError`` both."""


class InvalidChunkError(InvalidModelError):
    """A ``ChatModel``'s ``stream`` (or its ``whole_reply``, through
    ``ReplyBuilder.add``) gave something that is not a ``ModelChunk`` (a str, a
    dict, ``None``...): a model written against the protocol wrongly, so every
    request would meet it.

    Attributes:
        model: the model's ``model_name`` (``""``: not known).
        yielded: what it gave, as a short ``repr`` with its type.
    """

    def __init__(self, message: str, *, model: str, yielded: str) -> None:
        super().__init__(message)
        self.model = model
        self.yielded = yielded


class ModelClosedError(UsageError, RuntimeError):
    """A model was used after ``aclose()`` (its own, its agent's, or the end
    of its ``async with`` block). A closed model opens no new HTTP session
    and starts no new embedded server, as a closed httpx or aiohttp client
    refuses requests: make a new model for more requests.

    Attributes:
        model: the model, as ``"vendor:model"``.
    """

    def __init__(self, message: str, *, model: str) -> None:
        super().__init__(message)
        self.model = model


class InvalidStateError(UsageError, ValueError):
    """Stored ``AgentState`` JSON that is malformed (wrong shapes, unknown
    roles) or inconsistent (a tool call without its result)."""


class InvalidRecordError(UsageError, ValueError):
    """An extraction record that does not have the record shape (a JSON object
    with a string ``id`` and a boolean ``ok``), or a results file line that is
    not JSON. The message names the file and line, or the record's position."""


class InvalidExampleError(UsageError, ValueError):
    """A few-shot example (``agentflow.output.examples.Example``) whose
    output does not validate as the output type, or whose grounded values are
    not spans of its own text. The message names the example
    (``examples[i]``) and each failing field."""
class BatchUnavailableError(UsageError, ValueError):
    """``mode="batch"`` on a model whose vendor has no batch API (the model is
    not ``agentflow.batch_api.BatchCapable``); raised before any request."""


class ToolDefinitionError(UsageError, ValueError):
    """A tool cannot be declared (not callable, bad signature, ...)."""


class ToolTypeError(ToolDefinitionError, ArgumentTypeError):
    """``tools=`` is not a list (a single tool given bare), or a tool is not
    callable: a ``ToolDefinitionError`` as before, and a ``TypeError`` like
    every other wrong type of argument."""


class ToolNameError(ToolDefinitionError):
    """A tool name breaks the cross-vendor rule ``^[A-Za-z0-9_-]{1,64}$`` or is
    used twice in one toolkit."""


class SchemaError(UsageError, ValueError):
    """An output type cannot be expressed in the JSON Schema dialect a vendor
    accepts.

    Attributes:
        path: the field path inside the output type (``"Node.children"``), or ``""``.
        reason: why the dialect cannot express it.
    """

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{reason}")


class DuplicateInputIdError(UsageError, ValueError):
    """Two inputs of one ``extract_many`` run share an id, so their results could
    not be told apart (under ``order="completed"`` above all). Raised before any
    request when the inputs are a collection; for a lazy iterable, when the
    repeat is read (its request is never made).

    Attributes:
        id: the id given twice.
        first: position (from 0) of the input that had it first.
        second: position of the repeat.
    """

    def __init__(self, input_id: str, first: int, second: int, *,
                 generated: tuple[bool, bool] = (False, False)) -> None:
        self.id, self.first, self.second = input_id, first, second
        made = [" (generated from its position: a plain str input)" if g else ""
                for g in generated]
        super().__init__(
            f"inputs {first}{made[0]} and {second}{made[1]} share the id {input_id!r}: ids key "
            "the results and must be unique within a run; give each input its own id "
            "(e.g. (id, text) or ExtractInput)")
