"""The error tree's data: which faults are the same for every input of a run
(the CLI stops at the first of those) and which belong to one input."""

from __future__ import annotations

import inspect
import pickle
from typing import Any

import pytest

from agentflow import errors


@pytest.mark.parametrize(("cls", "same"), [
    (errors.UsageError, True),  # misuse: the run's set-up
    (errors.InvalidModelError, True),
    (errors.SchemaError, True),
    (errors.BatchUnavailableError, True),
    (errors.AuthenticationError, True),  # a wrong key
    (errors.NotFoundError, True),  # a model the vendor does not have
    (errors.MediaTypeError, False),  # one input's bytes, though raised before any request
    (errors.UnsupportedInputError, False),  # one input's PDF over the vendor's limit
    (errors.RateLimitedError, False),
    (errors.BatchRequestError, False),
    (errors.StructuredOutputError, False),
    (errors.NoTextLayerError, False),
    (errors.AgentflowError, False),
])
def test_same_for_every_input_is_class_data(cls: type[errors.AgentflowError], same: bool) -> None:
    assert cls.same_for_every_input is same


def test_instances_read_their_class() -> None:
    pdf_too_big = errors.UnsupportedInputError("too big", model="m", modality="pdf")
    assert isinstance(pdf_too_big, errors.UsageError)  # misuse by family...
    assert not pdf_too_big.same_for_every_input  # ...but about one input: the run goes on
    assert errors.AuthenticationError("no key", status=401).same_for_every_input


_ARGUMENTS: dict[str, Any] = {
    "feature": "tools", "field": "total", "conflicts": ("1", "2"), "key": "conv-1",
    "expected_version": 1, "actual_version": 2, "start": 0, "end": 10, "count": 2,
    "kind": "expired", "batch_id": "batch_1", "deadline": 5.0, "failures": 3,
    "model": "m", "modality": "image", "reason": "not expressible", "retry_after": 1.5,
}


def _instance(cls: type[errors.AgentflowError]) -> errors.AgentflowError:
    """``cls`` built with its required arguments (and ``retry_after`` where taken)."""
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for p in params:
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty:
            args.append("boom" if not args else _ARGUMENTS.get(p.name, "v"))
        elif p.kind is p.KEYWORD_ONLY and (p.default is p.empty or p.name == "retry_after"):
            kwargs[p.name] = _ARGUMENTS.get(p.name, "v")
        elif p.kind is p.VAR_POSITIONAL and not args:
            args.append("boom")
    return cls(*args, **kwargs)


@pytest.mark.parametrize("name", [n for n in errors.__all__
                                  if isinstance(getattr(errors, n), type)])
def test_every_error_crosses_a_process_boundary_as_it_is(name: str) -> None:
    """Ray actors and multiprocessing pickle exceptions: Python's default
    pickling calls ``__init__`` with the message only, which failed for every
    error with keyword-only arguments and decorated a rate limit's message twice."""
    error = _instance(getattr(errors, name))
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error) and str(copy) == str(error)
    assert vars(copy) == vars(error) and copy.args == error.args


def test_every_error_is_importable_from_the_package() -> None:
    """A user catches what a run raises by importing it from ``agentflow``;
    the MCP family stays in ``agentflow.errors`` (as ``agentflow.mcp``'s
    docstring says), since ``import agentflow`` does not load MCP."""
    import agentflow

    names = {n for n in errors.__all__ if isinstance(getattr(errors, n), type)}
    assert {n for n in names if not n.startswith("MCP")} <= set(agentflow.__all__)
    assert agentflow.StrayCancelError is errors.StrayCancelError
