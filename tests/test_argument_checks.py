"""A wrong kind of argument to a public entry point is a ``TypeError`` (or a
``ValueError`` out of range) naming the argument, before any request; never
Python's own error from deep inside, an ``ExceptionGroup``, or a value taken
silently (``on_invalid="raize"`` retried, ``concurrency=True`` ran)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from agentflow import (
    AgentState,
    ArgumentTypeError,
    ArgumentValueError,
    OutputConfig,
    ReActAgent,
    Tool,
    ToolDefinitionError,
    ToolTypeError,
    extract_many,
)
from agentflow.approvals import RequireApproval
from agentflow.testing import FunctionModel


class Doc(BaseModel):
    title: str | None = None


def _model() -> FunctionModel:
    return FunctionModel(lambda request: '{"title": null}')


EXTRACT: list[tuple[dict[str, Any], str]] = [
    ({"concurrency": "4"}, "concurrency must be an int >= 1, got '4' (str)"),
    ({"concurrency": 2.5}, "concurrency must be an int >= 1, got 2.5 (float)"),
    ({"concurrency": True}, "concurrency must be an int >= 1, got True (bool)"),
    ({"max_chars": 2.5}, "max_chars must be an int >= 1 or None, got 2.5 (float)"),
    ({"order": None}, "order must be one of 'input', 'completed', got None (NoneType)"),
    ({"instructions": 5}, "instructions must be a str or None, got 5 (int)"),
    ({"ground": "yes"}, "ground must be True, False, a Grounded() or None, got 'yes' (str)"),
    ({"on_progress": 5}, "on_progress must be a function or None, got 5 (int)"),
    ({"passes": 2.5}, "passes must be an int >= 1, got 2.5 (float)"),
    ({"passes": True}, "passes must be an int >= 1, got True (bool)"),
    ({"inputs": "a b"}, "inputs must be an iterable of documents, got a str; wrap one "
                        "document in a list: [text]"),  # a document's text is never shown
    ({"chunking": "auto"}, "chunking must be a Chunking() or None, got 'auto' (str)"),
    ({"allow_partial": "no"}, "allow_partial must be True or False, got 'no' (str)"),
    ({"batch": "x"}, "batch must be a BatchSettings or None, got 'x' (str)"),
]


@pytest.mark.parametrize(("arguments", "message"), EXTRACT)
async def test_extract_many_names_a_wrong_argument_before_any_request(
        arguments: dict[str, Any], message: str) -> None:
    model = _model()
    arguments = {"inputs": ["a b"], **arguments}
    with pytest.raises(ArgumentTypeError) as info:
        async for _ in extract_many(model, output=Doc, **arguments):
            pass
    assert str(info.value) == message
    assert isinstance(info.value, TypeError)
    assert model.requests == []


AGENT: list[tuple[dict[str, Any], str]] = [
    ({"max_iters": "3"}, "max_iters must be an int >= 1, got '3' (str)"),
    ({"stream_retries": 1.5}, "stream_retries must be an int >= 0, got 1.5 (float)"),
    ({"sys_prompt": 5}, "sys_prompt must be a str or None, got 5 (int)"),
    ({"options": {}}, "options must be a GenerateOptions or None, got {} (dict)"),
    ({"output": {}}, "output must be an OutputConfig or None, got {} (dict)"),
    ({"middleware": [5]}, "middleware[0] must be a Middleware (subclass it), got 5 (int)"),
    ({"middleware": RequireApproval({"lookup"})},
     "middleware must be a list of Middleware, got a RequireApproval; wrap a single one in a "
     "list"),
    ({"middleware": 5},
     "middleware must be a list of Middleware, got 5 (int); wrap a single one in a list"),
]


@pytest.mark.parametrize(("arguments", "message"), AGENT)
def test_the_agent_names_a_wrong_argument(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentTypeError) as info:
        ReActAgent("a", _model(), **arguments)
    assert str(info.value) == message


@pytest.mark.parametrize(("arguments", "message"), [
    ({"state": {}}, "state must be an AgentState or None, got {} (dict)"),
    ({"ground": "yes"}, "ground must be True, False, a Grounded() or None, got 'yes' (str)"),
])
async def test_a_call_names_a_wrong_argument_before_any_request(
        arguments: dict[str, Any], message: str) -> None:
    model = _model()
    agent = ReActAgent("a", model)
    with pytest.raises(TypeError) as info:
        await agent.call("hi", Doc, **arguments)
    assert str(info.value) == message
    with pytest.raises(TypeError):
        async for _ in agent.stream("hi", Doc, **arguments):
            pass
    assert model.requests == []


@pytest.mark.parametrize(("arguments", "error", "message"), [
    ({"on_invalid": "raize"}, ArgumentValueError, "on_invalid must be one of 'retry', "
                                                  "'raise' or a function, got 'raize' (str)"),
    ({"on_multiple": None}, ArgumentTypeError, "on_multiple must be one of 'retry', 'raise' or "
                                               "a function, got None (NoneType)"),
    ({"output_retries": "2"}, ArgumentTypeError,
     "output_retries must be an int >= 0, got '2' (str)"),
    ({"output_retries": -1}, ArgumentValueError, "output_retries must be an int >= 0, got -1"),
    ({"max_forcing": 1.5}, ArgumentTypeError, "max_forcing must be an int >= 0, got 1.5 (float)"),
    ({"ground": "yes"}, ArgumentTypeError, "ground must be True, False or a Grounded(), got 'yes'"),
    ({"validators": 5}, ArgumentTypeError, "validators must be a list of functions, got 5 (int)"),
    ({"validators": print}, ArgumentTypeError, "validators must be a list of functions, got "
                                               "<built-in function print>"),
    ({"validators": [5]}, ArgumentTypeError, "validators[0] must be a function (output -> "
                                             "output), got 5 (int)"),
])
def test_output_config_names_a_wrong_setting(arguments: dict[str, Any], error: type,
                                             message: str) -> None:
    with pytest.raises(error) as info:
        OutputConfig(**arguments)
    assert str(info.value).startswith(message)


def _lookup(key: str) -> str:
    return key


@pytest.mark.parametrize(("make", "message"), [
    (lambda: ReActAgent("a", _model(), tools=_lookup),
     "tools must be a list of callables or Tools, got <function _lookup"),
    (lambda: ReActAgent("a", _model(), tools=[_lookup, 42]),
     "a tool must be a callable, got 42 (int)"),
    (lambda: Tool.from_function(42), "a tool must be a callable, got 42 (int)"),
])
def test_a_wrong_type_of_tool_is_a_type_error_and_still_a_tool_definition_error(
        make: Any, message: str) -> None:
    """A single tool not in a list was a ``ValueError`` (``ToolDefinitionError``)
    while a single middleware was a ``TypeError``: both are now the same kind,
    and ``except ToolDefinitionError`` still catches the tool's."""
    with pytest.raises(ToolTypeError) as info:
        make()
    assert str(info.value).startswith(message)
    assert isinstance(info.value, ToolDefinitionError)
    assert isinstance(info.value, ArgumentTypeError)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize(("passes", "error"), [
    (0, ArgumentValueError), (-1, ArgumentValueError),
    ("2", ArgumentTypeError), (None, ArgumentTypeError),
])
async def test_passes_is_checked_like_every_other_count(passes: Any, error: type) -> None:
    """``passes`` was checked by hand: a wrong type was a ``ValueError``."""
    model = _model()
    with pytest.raises(error, match="passes must be an int >= 1"):
        async for _ in extract_many(model, ["a b"], Doc, passes=passes):
            pass
    assert model.requests == []


def test_the_value_of_a_secret_argument_is_never_shown() -> None:
    from agentflow._arguments import check_instance

    with pytest.raises(ArgumentTypeError) as info:
        check_instance("api_key", b"sk-live-123", str, "a str", secret=True)
    assert str(info.value) == "api_key must be a str, got a bytes"


def test_right_arguments_are_taken() -> None:
    config = OutputConfig(on_invalid=lambda exc: "again", validators=[lambda out: None],
                          attempts_in_context=None)
    agent = ReActAgent("a", _model(), output=config, sys_prompt=None, max_iters=2)
    assert agent.output_config is config
    assert AgentState().memory == []


def _settings(**arguments: Any) -> Any:
    from agentflow.batch_api.settings import BatchSettings

    return BatchSettings(**arguments)


def _limits(**arguments: Any) -> Any:
    from agentflow.client_tools import ClientToolLimits

    return ClientToolLimits(**arguments)


def _chunking(**arguments: Any) -> Any:
    from agentflow import Chunking

    return Chunking(**arguments)


def _server(**arguments: Any) -> Any:
    from agentflow.mcp import MCPServer

    return MCPServer.stdio("python", ["-V"], **arguments)


@pytest.mark.parametrize(("make", "error", "message"), [
    # each was Python's own error from a comparison ("'>' not supported between..."),
    # or a plain ValueError/TypeError worded its own way
    (lambda: _settings(poll_initial="5"), ArgumentTypeError,
     "BatchSettings.poll_initial must be a number of seconds > 0, got '5' (str)"),
    (lambda: _settings(poll_factor=float("nan")), ArgumentValueError,
     "BatchSettings.poll_factor must be a number >= 1, got nan (float)"),
    (lambda: _settings(on_usage=5), ArgumentTypeError,
     "BatchSettings.on_usage must be a function or None, got 5 (int)"),
    (lambda: _limits(max_tools=0), ArgumentValueError,
     "ClientToolLimits.max_tools must be an int >= 1, got 0 (int)"),
    (lambda: _chunking(max_chars="5"), ArgumentTypeError,
     "Chunking.max_chars must be an int >= 1 or None, got '5' (str)"),
    (lambda: _chunking(item_unit="row"), ArgumentValueError,
     "Chunking.item_unit must be one of 'block', 'line', got 'row' (str)"),
    (lambda: _server(timeout="5"), ArgumentTypeError,
     "timeout must be a number of seconds > 0 or None, got '5' (str)"),
    (lambda: _server(include="add"), ArgumentTypeError,
     "include must be a list of tool names, got 'add' (str); wrap a single one in a list"),
    (lambda: _server(on_invalid_schema="drop"), ArgumentValueError,
     "on_invalid_schema must be one of 'raise', 'skip', got 'drop' (str)"),
])
def test_settings_objects_name_a_wrong_argument_the_same_way(
        make: Any, error: type, message: str) -> None:
    with pytest.raises(error) as info:
        make()
    assert str(info.value) == message
OPTIONS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"max_tokens": "10"}, TypeError, "options.max_tokens must be an int >= 1 or None, got '10'"),
    ({"max_tokens": 0}, ValueError, "options.max_tokens must be an int >= 1 or None, got 0 (int)"),
    ({"max_tokens": True}, TypeError, "options.max_tokens must be an int"),
    ({"temperature": "hot"}, TypeError, "options.temperature must be a number >= 0 or None"),
    ({"temperature": float("nan")}, ValueError, "options.temperature must be a number >= 0"),
    ({"temperature": -0.5}, ValueError, "options.temperature must be a number >= 0 or None, "
                                        "got -0.5"),
    ({"stream": "no"}, TypeError, "options.stream must be True, False or None, got 'no'"),
    ({"thinking": 1}, TypeError, "options.thinking must be True, False or None, got 1"),
    ({"extra": [1]}, TypeError, "options.extra must be a mapping of request fields"),
    ({"extra": {1: "x"}}, TypeError, "a key of options.extra must be a str, got 1"),
    ({"tool_choice": "required"}, TypeError, "options.tool_choice must be a ToolChoice"),
]


@pytest.mark.parametrize(("fields", "error", "message"), OPTIONS)
async def test_options_of_the_wrong_kind_are_refused_before_any_request(
        fields: dict[str, Any], error: type[Exception], message: str) -> None:
    """A ``GenerateOptions`` field of the wrong type or range is named when the
    agent is made, and by ``generate``; it was sent to the vendor as given (a 400
    on every request), read by its truth (``stream="no"`` streamed), dropped (a
    NaN temperature sent as null) or met ``dict()``'s error deep in the call."""
    from agentflow import GenerateOptions, Msg, generate

    options = GenerateOptions(**fields)
    with pytest.raises(error, match=re.escape(message)):
        ReActAgent("a", _model(), options=options)
    model = _model()
    with pytest.raises(error, match=re.escape(message)):
        await generate(model, [Msg.user("hi")], options=options)
    assert model.requests == []


def test_a_tool_choice_of_no_mode_is_refused() -> None:
    from agentflow import ToolChoice

    with pytest.raises(ValueError, match=r"ToolChoice\.mode must be one of"):
        ToolChoice("always")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ToolChoice\.name must be the tool's name"):
        ToolChoice("specific")
    assert ToolChoice.specific("lookup").name == "lookup"


PROFILES: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"schema_dialect": "xml"}, ValueError, "ModelProfile.schema_dialect must be one of 'plain'"),
    ({"supports_tools": "no"}, TypeError, "ModelProfile.supports_tools must be True or False"),
    ({"context_window": "8k"}, TypeError, "ModelProfile.context_window must be an int >= 1 or "
                                          "None, got '8k'"),
    ({"context_window": 0}, ValueError, "ModelProfile.context_window must be an int >= 1 or "
                                        "None, got 0 (int)"),
    ({"native_output": "yes"}, ValueError, "ModelProfile.native_output must be one of"),
    ({"tool_choice_modes": {"auto", "always"}}, ValueError,
     "a mode of ModelProfile.tool_choice_modes must be one of"),
    ({"input_modalities": "text"}, TypeError, "ModelProfile.input_modalities must be a set of str"),
    ({"cumulative_stream_deltas": 1}, TypeError, "ModelProfile.cumulative_stream_deltas must be"),
]


@pytest.mark.parametrize(("fields", "error", "message"), PROFILES)
def test_a_profile_field_of_the_wrong_kind_is_named_where_it_is_made(
        fields: dict[str, Any], error: type[Exception], message: str) -> None:
    """A profile (``ModelProfile(...)``, ``profile.with_(...)``) refuses a value of
    the wrong type or range, naming the field; it met ``KeyError: 'xml'`` in the
    call, ``str // int`` in every record of a batch, or was read by its truth."""
    from agentflow import ModelProfile

    with pytest.raises(error, match=re.escape(message)):
        ModelProfile(**fields)
    with pytest.raises(error, match=re.escape(message)):
        ModelProfile().with_(**fields)


def test_a_profile_set_given_as_a_list_is_kept_as_a_frozenset() -> None:
    from agentflow import ModelProfile

    profile = ModelProfile(tool_choice_modes=["auto", "none"], image_media_types=("image/png",))
    assert profile.tool_choice_modes == frozenset({"auto", "none"})
    assert profile.image_media_types == frozenset({"image/png"})
    assert profile == ModelProfile().with_(tool_choice_modes={"auto", "none"},
                                           image_media_types={"image/png"})


@pytest.mark.parametrize("fields", [{"case_sensitive": "false"}, {"whole_tokens": 1},
                                    {"longest": None}, {"clean": "yes"}])
def test_a_grounded_flag_that_is_no_bool_is_refused(fields: dict[str, Any]) -> None:
    """``Grounded(case_sensitive="false")`` was case-sensitive (a str is true);
    every flag of the marker is a bool or a ``TypeError`` naming it."""
    from agentflow import Grounded

    [name] = fields
    with pytest.raises(TypeError, match=re.escape(f"Grounded.{name} must be True or False")):
        Grounded(**fields)


@pytest.mark.parametrize(("arguments", "error", "message"), [
    ({"strategy": "bogus"}, "UsageError", "strategy='bogus' is not an output strategy"),
    ({"strategy": 5}, "UsageError", "strategy=5 is not an output strategy"),
    ({"examples": "abc"}, "InvalidExampleError", "examples must be a list of Example, got str"),
    ({"examples": [5]}, "InvalidExampleError", "examples[0] is a int; expected Example("),
])
async def test_a_call_without_an_output_still_names_a_bad_strategy_or_examples(
        arguments: dict[str, Any], error: str, message: str) -> None:
    """``call(msg, strategy="bogus")`` without an output type ran (the value was
    never looked at), while the same call with one raised: a misuse is one in
    both. A valid strategy stays accepted (the web helpers pass theirs)."""
    model = _model()
    agent = ReActAgent("a", model)
    with pytest.raises(Exception, match=re.escape(message)) as info:
        await agent.call("hi", **arguments)
    assert type(info.value).__name__ == error
    with pytest.raises(Exception, match=re.escape(message)):
        [e async for e in agent.stream("hi", **arguments)]
    assert model.requests == []
    assert (await agent.call("hi", strategy="tool")).text == '{"title": null}'
