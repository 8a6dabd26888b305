"""The error tree's data: which faults are the same for every input of a run
(the CLI stops at the first of those) and which belong to one input."""

from __future__ import annotations

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
