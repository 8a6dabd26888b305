"""Tests for agentflow.tools: schemas from signatures, validation, execution, names."""

import threading

import anyio
import anyio.lowlevel
import pydantic
import pytest

import agentflow.tools as tools_module
from agentflow.errors import ToolDefinitionError, ToolError, ToolNameError
from agentflow.messages import ToolResultBlock, ToolUseBlock
from agentflow.model import ToolSpec
from agentflow.tools import (
    TOOL_NAME_PATTERN,
    Tool,
    Toolkit,
    describe_validation_error,
    sanitize_tool_name,
    tool,
    validate_tool_name,
)


def test_public_names_exist():
    for name in tools_module.__all__:
        assert hasattr(tools_module, name), name


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first addend.
        b: the second addend.
    """
    return a + b


def search(query: str, limit: int = 5, tags: list[str] | None = None) -> list[str]:
    """Search the catalogue.

    Args:
        query: what to look for.
        limit (int): how many results,
            at most.
        tags: optional filter.

    Returns:
        matching titles.
    """
    return [query] * limit


def _use(args, name="t", id="call_1"):
    return ToolUseBlock(id, name, args)


# ----------------------------------------------------------------------------- schema


def test_schema_from_signature_and_google_docstring():
    t = Tool.from_function(search)
    assert t.name == "search"
    assert t.description == "Search the catalogue."
    assert t.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for."},
            "limit": {"type": "integer", "default": 5, "description": "how many results, at most."},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
                "description": "optional filter.",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert t.spec == ToolSpec("search", "Search the catalogue.", t.parameters)
    assert t.is_async is False


def test_explicit_name_and_description_win():
    t = Tool.from_function(add, name="plus", description="Adds.")
    assert (t.name, t.description) == ("plus", "Adds.")


def test_description_falls_back_to_name_without_docstring():
    def bare(x):
        return x

    t = Tool.from_function(bare)
    assert t.description == "bare"
    assert t.parameters["properties"] == {"x": {}}
    assert t.parameters["required"] == ["x"]


def test_pydantic_field_default_keeps_its_constraints():
    def pick(n: int = pydantic.Field(3, ge=1, description="how many")) -> int:
        return n

    t = Tool.from_function(pick)
    assert t.parameters["properties"]["n"] == {
        "type": "integer", "default": 3, "minimum": 1, "description": "how many",
    }


def test_nested_model_parameter():
    class Address(pydantic.BaseModel):
        city: str

    def ship(to: Address) -> str:
        return to.city

    t = Tool.from_function(ship)
    assert t.parameters["properties"]["to"] == {"$ref": "#/$defs/Address"}
    assert t.parameters["$defs"]["Address"]["properties"]["city"]["type"] == "string"


async def test_nested_model_argument_is_validated_into_the_model():
    class Address(pydantic.BaseModel):
        city: str

    def ship(to: Address) -> str:
        assert isinstance(to, Address)
        return to.city.upper()

    result = await Tool.from_function(ship).run(_use({"to": {"city": "oslo"}}))
    assert result == ToolResultBlock("call_1", "OSLO", name="ship")


def test_callable_object_is_a_tool():
    class Multiplier:
        """Multiply by a factor."""

        def __call__(self, x: int) -> int:
            return x * 3

    t = Tool.from_function(Multiplier())
    assert t.name == "Multiplier"
    assert t.parameters["properties"] == {"x": {"type": "integer"}}


@pytest.mark.parametrize(
    "fn",
    [
        lambda *args: None,
        lambda **kwargs: None,
        eval("lambda a, /: None"),  # positional-only
    ],
)
def test_unsupported_parameter_kinds_raise(fn):
    with pytest.raises(ToolDefinitionError, match="named parameter"):
        Tool.from_function(fn, name="bad")


class _NotPydantic:
    pass


def _underscore(_private: int) -> int:
    return _private


def _unknown_type(value: _NotPydantic) -> int:
    return 1


def test_undeclarable_parameter_raises_typed_error():
    with pytest.raises(ToolDefinitionError, match="'value'"):
        Tool.from_function(_unknown_type)


async def test_underscore_parameter_keeps_its_name():
    t = Tool.from_function(_underscore)
    assert list(t.parameters["properties"]) == ["_private"]
    result = await t.run(ToolUseBlock("c1", t.name, {"_private": "3"}))
    assert result.output == "3" and not result.is_error


def test_parameter_named_model_config_is_not_silently_dropped():
    def f(model_config: int) -> int:
        return model_config

    t = Tool.from_function(f)
    assert "model_config" in t.parameters["properties"]


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["a", "get_weather", "A-b_9", "x" * 64, "_x", "_1"])
def test_valid_names(name):
    assert validate_tool_name(name) == name
    assert Tool.from_function(add, name=name).name == name


@pytest.mark.parametrize("name", ["my tool!", "x" * 65, "café", "加法", "", "a.b", "a b",
                                  "1st", "-x", "9"])
def test_invalid_explicit_names_raise(name):
    with pytest.raises(ToolNameError) as info:
        Tool.from_function(add, name=name)
    assert repr(name) in str(info.value)
    assert "A-Za-z0-9_-" in str(info.value)


def test_trailing_newline_name_is_rejected():
    with pytest.raises(ToolNameError):
        validate_tool_name("abc\n")


def café(x: int) -> int:
    """Non-ASCII function name."""
    return x


def test_derived_non_ascii_name_is_sanitized_with_hash_suffix():
    t = Tool.from_function(café)
    assert TOOL_NAME_PATTERN.fullmatch(t.name)
    assert t.name.startswith("caf_")
    assert len(t.name) == len("caf_") + 8


def test_sanitized_names_stay_distinct():
    def one():
        return 1

    def two():
        return 2

    one.__name__, two.__name__ = "加法", "减法"
    a, b = Tool.from_function(one), Tool.from_function(two)
    assert a.name != b.name
    assert all(TOOL_NAME_PATTERN.fullmatch(n) for n in (a.name, b.name))
    assert Toolkit([one, two]).names == [a.name, b.name]


@pytest.mark.parametrize("derived", ["2fa_check", "-dash", "３d", "9" * 70])
def test_derived_names_start_with_a_letter_or_underscore(derived):
    # C19: Gemini refuses a function name that starts with a digit or '-'.
    name = sanitize_tool_name(derived)
    assert TOOL_NAME_PATTERN.fullmatch(name) and not name[0].isdigit() and name[0] != "-"
    assert sanitize_tool_name(derived) == name


def test_sanitize_long_and_lambda_names():
    long = sanitize_tool_name("x" * 70)
    assert len(long) == 64
    assert TOOL_NAME_PATTERN.fullmatch(long)
    assert sanitize_tool_name("x" * 70) == long  # deterministic
    assert sanitize_tool_name("x" * 71) != long
    lam = Tool.from_function(lambda q: q).name
    assert lam.startswith("lambda_")
    assert TOOL_NAME_PATTERN.fullmatch(lam)
    assert sanitize_tool_name("ok_name") == "ok_name"


def test_not_callable_raises_definition_error():
    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_function(42)  # type: ignore[arg-type]
    assert "callable" in str(info.value)
    assert "int" in str(info.value)


def test_tool_name_error_is_a_definition_error():
    assert issubclass(ToolNameError, ToolDefinitionError)


# ----------------------------------------------------------------------------- run


async def test_sync_tool_runs_in_worker_thread():
    loop_thread = threading.get_ident()
    seen = []

    def where() -> str:
        seen.append(threading.get_ident())
        return "ok"

    result = await Tool.from_function(where).run(_use({}))
    assert result.output == "ok"
    assert seen and seen[0] != loop_thread


async def test_async_tool_runs_on_the_loop():
    loop_thread = threading.get_ident()

    async def fetch(key: str) -> dict:
        await anyio.lowlevel.checkpoint()
        return {"key": key, "thread_is_loop": threading.get_ident() == loop_thread}

    t = Tool.from_function(fetch)
    assert t.is_async
    result = await t.run(_use({"key": "k"}))
    assert result.output == '{"key":"k","thread_is_loop":true}'
    assert not result.is_error


async def test_async_callable_object():
    class Fetcher:
        async def __call__(self, n: int) -> int:
            await anyio.lowlevel.checkpoint()
            return n + 1

    t = Tool.from_function(Fetcher())
    assert t.is_async
    assert (await t.run(_use({"n": 1}))).output == "2"


async def test_lax_coercion():
    result = await Tool.from_function(add).run(_use({"a": "30", "b": 12}, name="add", id="c9"))
    assert result == ToolResultBlock("c9", "42", is_error=False, name="add", is_json=True)


async def test_validation_error_names_the_field():
    result = await Tool.from_function(add).run(_use({"a": "thirty", "b": 1}))
    assert result.is_error
    assert result.tool_use_id == "call_1"
    assert "'add'" in result.output
    assert "- a: Input should be a valid integer" in result.output
    assert "- b" not in result.output


async def test_missing_and_extra_fields_are_reported():
    result = await Tool.from_function(add).run(_use({"a": 1, "c": 2}))
    assert result.is_error
    assert "- b: Field required" in result.output
    assert "- c: Extra inputs are not permitted" in result.output


async def test_non_json_arguments_become_an_error_result():
    result = await Tool.from_function(add).run(_use({"__raw_arguments__": "{oops"}))
    assert result.is_error
    assert "__raw_arguments__" in result.output


async def test_exception_becomes_error_result():
    def boom(x: int) -> int:
        raise ValueError(f"bad value {x}")

    result = await Tool.from_function(boom).run(_use({"x": 3}))
    assert result == ToolResultBlock("call_1", "ValueError: bad value 3", is_error=True,
                                     name="boom")


async def test_async_exception_becomes_error_result():
    async def boom() -> None:
        raise KeyError("k")

    result = await Tool.from_function(boom).run(_use({}))
    assert result.is_error
    assert result.output == "KeyError: 'k'"


async def test_tool_error_message_is_passed_verbatim():
    def picky(x: int) -> int:
        raise ToolError("x must be even; try 4")

    result = await Tool.from_function(picky).run(_use({"x": 3}))
    assert result.is_error
    assert result.output == "x must be even; try 4"


async def test_cancellation_propagates_out_of_a_tool():
    started = anyio.Event()

    async def slow() -> str:
        started.set()
        await anyio.sleep(10)
        return "never"

    t = Tool.from_function(slow)
    with anyio.move_on_after(5) as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(t.run, _use({}))
            await started.wait()
            tg.cancel_scope.cancel()
    assert not scope.cancelled_caught  # cancelled promptly by the task group, not the timeout


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", "plain"),
        ({"a": [1, "é"]}, '{"a":[1,"é"]}'),
        (None, "null"),
        (3.5, "3.5"),
    ],
)
async def test_results_are_stringified(value, text):
    def give() -> object:
        return value

    assert (await Tool.from_function(give).run(_use({}))).output == text


async def test_model_and_odd_objects_are_stringified():
    class Out(pydantic.BaseModel):
        n: int

    class Odd:
        def __str__(self) -> str:
            return "odd!"

    def model() -> Out:
        return Out(n=1)

    def odd() -> Odd:
        return Odd()

    assert (await Tool.from_function(model).run(_use({}))).output == '{"n":1}'
    assert (await Tool.from_function(odd).run(_use({}))).output == '"odd!"'


def test_describe_validation_error_lines():
    class M(pydantic.BaseModel):
        items: list[int]

    with pytest.raises(pydantic.ValidationError) as info:
        M.model_validate({"items": [1, "x"]})
    assert describe_validation_error(info.value) == (
        "- items.1: Input should be a valid integer, unable to parse string as an integer"
    )


# ----------------------------------------------------------------------------- decorator & Toolkit


def test_tool_decorator_both_forms():
    @tool
    def first(x: int) -> int:
        return x

    @tool(name="renamed", description="d")
    def second(x: int) -> int:
        return x

    assert isinstance(first, Tool)
    assert first.name == "first"
    assert (second.name, second.description) == ("renamed", "d")


def test_toolkit_basics():
    kit = Toolkit([add, Tool.from_function(search)])
    assert kit.names == ["add", "search"]
    assert len(kit) == 2
    assert "add" in kit
    assert "nope" not in kit
    assert kit.get("nope") is None
    assert kit.get("add").function is add
    assert [t.name for t in kit] == ["add", "search"]
    assert [s.name for s in kit.specs()] == ["add", "search"]
    added = kit.add(café)
    assert kit.names[-1] == added.name


def test_toolkit_duplicate_names_raise():
    with pytest.raises(ToolNameError, match="duplicate tool name 'add'"):
        Toolkit([add, add])
    kit = Toolkit([add])
    with pytest.raises(ToolNameError, match="'add'"):
        kit.add(Tool.from_function(search, name="add"))
    assert kit.names == ["add"]


def test_toolkit_non_callable_raises():
    with pytest.raises(ToolDefinitionError, match="callable"):
        Toolkit([add, "not a function"])
