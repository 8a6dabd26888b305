"""The public arguments checked by hand before ``agentflow._arguments`` (rate
limits, the web layer, chunking, Ray, read-ahead, approvals, MCP, merge rules,
the local model, tool choice, options, profiles) go through it: each wrong
value is an ``ArgumentTypeError`` (a ``TypeError``) or ``ArgumentValueError``
(a ``ValueError``) that reads ``<name> must be <what>, got <value> (<type>)``,
raised when the function is called. Before, each had its own wording, some
were a plain ``ValueError`` for a value of the wrong type (or Python's own
``'<' not supported``), and the chunkers said nothing until iterated."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from agentflow import ArgumentTypeError, ArgumentValueError, InvalidModelError, ModelArgumentError
from agentflow.approvals import RequireApproval
from agentflow.documents.readahead import read_ahead
from agentflow.extraction.chunking import iter_chunks, iter_item_chunks
from agentflow.extraction.merge import Merge
from agentflow.mcp import MCPServer
from agentflow.model import GenerateOptions, ModelProfile, ToolChoice
from agentflow.model_options import check_options
from agentflow.ratelimit import RateGovernor, request_priority, set_process_share
from agentflow.web.postgres import PostgresStateStore
from agentflow.web.sqlite import SQLiteStateStore
from agentflow.web.sse import EventStreamResponse

T, V = ArgumentTypeError, ArgumentValueError


def _agui(size: Any) -> Any:
    from agentflow.web.agui import AGUIEncoder

    return AGUIEncoder("thread", "run", max_state_bytes=size)


CASES: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: set_process_share(0), V, "share must be a number in (0, 1], got 0 (int)"),
    (lambda: set_process_share("1"), T, "share must be a number in (0, 1], got '1' (str)"),
    (lambda: request_priority("urgent"), V,  # type: ignore[arg-type]
     "priority must be one of 'live', 'batch', got 'urgent' (str)"),
    (lambda: RateGovernor(rpm=0), V, "rpm must be a number > 0 or None, got 0 (int)"),
    (lambda: RateGovernor(tpm="9"), T, "tpm must be a number > 0 or None, got '9' (str)"),
    (lambda: RateGovernor(live_reserve=1), V,
     "live_reserve must be a number in [0, 1), got 1 (int)"),
    (lambda: EventStreamResponse([], ping_interval=0), V,  # type: ignore[arg-type]
     "ping_interval must be a number of seconds > 0, got 0 (int)"),
    (lambda: EventStreamResponse([], ping_interval="15"), T,  # type: ignore[arg-type]
     "ping_interval must be a number of seconds > 0, got '15' (str)"),
    (lambda: SQLiteStateStore(":memory:", table="a b"), V,
     "table must be a plain SQL identifier (matching ^[A-Za-z_][A-Za-z0-9_]{0,62}$), "
     "got 'a b' (str)"),
    (lambda: _agui(0), V, "max_state_bytes must be an int >= 1, got 0 (int)"),
    (lambda: PostgresStateStore(b"postgresql://u:hunter2@db/x"), T,  # type: ignore[arg-type]
     "dsn must be a libpq connection string (a str) or None, got a bytes"),
    (lambda: PostgresStateStore("postgresql://db/x", min_size=2, max_size=1), V,
     "max_size must be an int >= 2, got 1 (int)"),
    (lambda: iter_chunks("text", 0), V, "max_chars must be an int >= 1, got 0 (int)"),
    (lambda: iter_chunks("text", 4, 4), V,
     "overlap must be an int >= 0 and < max_chars (4), got 4 (int)"),
    (lambda: iter_chunks(b"text", 4), T, "text must be a str, got b'text' (bytes)"),
    (lambda: iter_item_chunks("text", 4, "row"), V,  # type: ignore[arg-type]
     "unit must be one of 'block', 'line', got 'row' (str)"),
    (lambda: iter_item_chunks("text", 4, max_units=0), V,
     "max_units must be an int >= 1 or None, got 0 (int)"),
    (lambda: RequireApproval("echo"), T,
     "tools must be a list of tool names, got 'echo' (str); wrap a single one in a list"),
    (lambda: RequireApproval([1]), T,  # type: ignore[list-item]
     "tools must be a list of tool names (str), got [1] (list)"),
    (lambda: RequireApproval(needs=True), T,  # type: ignore[arg-type]
     "needs must be a function (ToolUseBlock -> bool) or None, got True (bool)"),
    (lambda: MCPServer.stdio(sys.executable, "-m server"), T,  # type: ignore[arg-type]
     "args must be a list of arguments, got '-m server' (str); split a command line "
     "(shlex.split) or pass [arg]"),
    (lambda: Merge.by_key(), V, "Merge.by_key needs at least one item field name"),
    (lambda: Merge.by_key(["sku"]), T,  # type: ignore[arg-type]
     "Merge.by_key field must be an item field name (a str), got ['sku'] (list)"),
    (lambda: ToolChoice("always"), V,  # type: ignore[arg-type]
     "ToolChoice.mode must be one of 'auto', 'none', 'required', 'specific', "
     "got 'always' (str)"),
    (lambda: ToolChoice("specific"), T,
     "ToolChoice.name must be the tool's name (a str), got None (NoneType)"),
    (lambda: ToolChoice("specific", ""), V,
     "ToolChoice.name must be the tool's name (not empty), got '' (str)"),
    (lambda: check_options(GenerateOptions(temperature=-0.5)), V,
     "options.temperature must be a number >= 0 or None, got -0.5 (float)"),
    (lambda: ModelProfile(input_modalities="text"), T,  # type: ignore[arg-type]
     "ModelProfile.input_modalities must be a set of str, got 'text' (str)"),
    (lambda: ModelProfile(image_media_types={1}), T,  # type: ignore[arg-type]
     "an item of ModelProfile.image_media_types must be a str, got 1 (int)"),
]


@pytest.mark.parametrize(("make", "error", "message"), CASES)
def test_a_wrong_argument_is_named_the_one_way(
        make: Callable[[], Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        make()
    assert str(info.value) == message
    assert "hunter2" not in str(info.value)


def test_the_ray_pool_size_is_named_the_one_way() -> None:
    pytest.importorskip("ray")
    from agentflow.ray import extract_dataset

    with pytest.raises(ArgumentValueError, match=r"^actors must be an int >= 1, got 0 \(int\)$"):
        extract_dataset(None, "x:Y", model="openai:m", actors=0)  # type: ignore[arg-type]
    with pytest.raises(ArgumentValueError,
                       match=r"^concurrency must be an int >= actors \(4\), got 2 \(int\)$"):
        extract_dataset(None, "x:Y", model="openai:m", actors=4, concurrency=2)  # type: ignore[arg-type]


async def test_read_ahead_names_a_wrong_ahead() -> None:
    with pytest.raises(ArgumentValueError, match=r"^ahead must be an int >= 1, got 0 \(int\)$"):
        await read_ahead(["missing.txt"], ahead=0).__anext__()


def test_a_local_model_thread_count_is_still_an_invalid_model_error() -> None:
    """``LocalModel(threads=0)`` raised ``InvalidModelError``: it still does (a
    ``ModelArgumentError``), and is an ``ArgumentValueError`` like the rest."""
    from agentflow.providers.local import LocalModel

    for make, message in (
            (lambda: LocalModel(threads=0), "local model threads must be an int >= 1, got 0 (int)"),
            (lambda: LocalModel(parallel="2"),  # type: ignore[arg-type]
             "local model parallel must be an int >= 1, got '2' (str)")):
        with pytest.raises(ModelArgumentError) as info:
            make()
        assert str(info.value) == message
        assert isinstance(info.value, InvalidModelError | ArgumentTypeError | ArgumentValueError)
    with pytest.raises(ArgumentValueError):
        LocalModel(threads=-1)
