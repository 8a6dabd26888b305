"""Failures of a run and the signals that steer it: state conflicts, tools,
``ModelRetry`` and the structured-output errors (``agentflow.errors``
re-exports these; the tree is drawn there)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentflow.errors._root import AgentflowError

if TYPE_CHECKING:
    from agentflow.usage import Usage

__all__ = [
    "DegenerateOutputError",
    "GroundingError",
    "ModelRetry",
    "MultipleStructuredOutputsError",
    "OutputTruncatedError",
    "StateConflictError",
    "StrayCancelError",
    "StructuredOutputError",
    "StructuredOutputValidationError",
    "ToolError",
    "ToolRetriesExceededError",
]


# --------------------------------------------------------------------------- tools


class StateConflictError(AgentflowError):
    """A ``StateStore.save`` found another version than the one the caller
    loaded: another request changed (or created) the conversation meanwhile.
    Nothing was written; reload and run the call again.

    Attributes:
        key: the conversation key.
        expected_version: the version the caller loaded (0: none).
        actual_version: the version stored now (0: none).
    """

    def __init__(self, key: str, expected_version: int, actual_version: int) -> None:
        super().__init__(
            f"conversation {key!r} was changed by another request: expected version "
            f"{expected_version}, found {actual_version}; nothing was saved (reload and retry)"
        )
        self.key = key
        self.expected_version = expected_version
        self.actual_version = actual_version


class ToolError(AgentflowError):
    """Raise inside a tool to hand the model an error result with this message
    (any other exception does the same, with its type name prefixed)."""


class ToolRetriesExceededError(AgentflowError):
    """A tool's calls failed (bad arguments, an exception, ``ToolError``) more
    often in one call than its retry budget allows (``Tool.max_retries``, else
    ``ReActAgent(tool_retries=...)``): the model keeps misusing it, so the
    call stops instead of spending ``max_iters``.

    Attributes:
        tool: the tool's name.
        failures: failed calls of it in this agent call.
        last_error: the last error result the model was given.
    """

    def __init__(self, tool: str, *, failures: int, last_error: str) -> None:
        self.tool = tool
        self.failures = failures
        self.last_error = last_error
        super().__init__(
            f"tool {tool!r} failed {failures} times in one call, past its retry budget; "
            f"last error: {last_error[:300]}. Raise the budget (Tool max_retries / "
            "ReActAgent tool_retries) or fix the tool's description"
        )


class StrayCancelError(AgentflowError):
    """A ``CancelledError`` that no canceller asked for ended one input's
    work: code inside the call (a model client, a tool, middleware, a
    library's own cancel scope or timeout) raised it while the run was not
    being cancelled (``Task.cancelling()`` was 0: ``agentflow._commit.
    stray_cancel``). ``extract_many`` records it as that input's error (the
    original ``CancelledError`` is its ``__cause__``) and the other inputs
    carry on; a real cancellation of the run is never turned into one. Also
    raised by ``extract_many`` when inputs it started ended with no record
    at all (their work was cancelled on its own), rather than end the run as
    if it were complete."""


class ModelRetry(AgentflowError):
    """Raise from an output validator to reject a valid-but-wrong output: the
    model is asked again with this message (counted in ``output_retries``)."""


# --------------------------------------------------------------------------- output


class StructuredOutputError(AgentflowError):
    """No validated structured output was produced.

    Attributes:
        raw_text: the model's final free text (may be ``""``).
        attempts: model requests the call spent trying to get the output.
        reason: a short machine-readable reason (``"no_output"``, ``"invalid"``,
            ``"truncated"``, ``"multiple"``, ``"not_requested"``, ``"vendor_error"``:
            the vendor failed the generation on the last attempt).
        usage: the tokens the call spent (``Usage``, the call's total, as
            ``Complete.usage`` says it), set when the error leaves the call
            (raised, or as the reply's result); ``None`` for an error made
            outside a call.
    """

    def __init__(
        self, message: str, *, raw_text: str = "", attempts: int = 0, reason: str = "no_output",
        usage: Usage | None = None,
    ) -> None:
        self.raw_text = raw_text
        self.attempts = attempts
        self.reason = reason
        self.usage = usage
        super().__init__(message)


class StructuredOutputValidationError(StructuredOutputError):
    """The output failed validation and the policy was ``on_invalid="raise"``
    (or the retry budget ran out).

    Attributes:
        errors: pydantic's error list (``loc``, ``msg``, ``type``...).
    """

    def __init__(
        self,
        message: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        raw_text: str = "",
        attempts: int = 0,
    ) -> None:
        self.errors = errors or []
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="invalid")


class MultipleStructuredOutputsError(StructuredOutputError):
    """The model called the output tool more than once in one reply and the
    policy was ``on_multiple="raise"``.

    Attributes:
        count: how many output calls the reply held.
    """

    def __init__(self, message: str, *, count: int, attempts: int = 0) -> None:
        self.count = count
        super().__init__(message, attempts=attempts, reason="multiple")


class OutputTruncatedError(StructuredOutputError):
    """The model stopped at its token limit (finish reason ``length``) before the
    output was complete. Raise ``max_tokens`` or shrink the schema.

    Attributes:
        path: the output's field being written when the reply was cut
            (``attrs.k2``, ``items[3].name``; ``None`` when not known).
    """

    def __init__(
        self, message: str, *, raw_text: str = "", attempts: int = 0, usage: Usage | None = None,
        path: str | None = None,
    ) -> None:
        self.path = path
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="truncated",
                         usage=usage)


class GroundingError(StructuredOutputError):
    """The output validated, but grounded values are not verbatim spans of the
    source (or are empty), still after the ``output_retries`` budget.

    Attributes:
        output: the last validated output (not a result: do not use it as one).
        unfound: ``(field path, value)`` of each value not found in the source.
        empty: field paths of grounded values that were empty.
        refused: the paths of ``unfound`` whose values the source does write,
            refused by a check of their place or edges (a label at their
            start, a cut token: ``agentflow.grounding.check.GroundingCheck.
            refused``); the others' values are not in it.
        detail: one line per failing field (human-readable).
    """

    def __init__(
        self,
        message: str,
        *,
        output: Any = None,
        unfound: list[tuple[str, str]] | None = None,
        empty: list[str] | None = None,
        detail: str = "",
        raw_text: str = "",
        attempts: int = 0,
        refused: list[str] | None = None,
    ) -> None:
        self.output = output
        self.unfound = list(unfound or [])
        self.empty = list(empty or [])
        self.refused = list(refused or [])
        self.detail = detail
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="not_grounded")


class DegenerateOutputError(StructuredOutputError):
    """The output validated, but holds what a looping model writes (a unit
    repeated many times, one list item over and over), still after the
    ``output_retries`` budget. See ``agentflow.grounding.degenerate``.

    Attributes:
        output: the last validated output (not a result).
        problems: ``(field path, what is wrong)`` per degenerate value.
        detail: one line per problem (human-readable).
    """

    def __init__(
        self,
        message: str,
        *,
        output: Any = None,
        problems: list[tuple[str, str]] | None = None,
        detail: str = "",
        raw_text: str = "",
        attempts: int = 0,
    ) -> None:
        self.output = output
        self.problems = list(problems or [])
        self.detail = detail
        super().__init__(message, raw_text=raw_text, attempts=attempts, reason="degenerate")
