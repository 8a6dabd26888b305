"""An output type that is none is a ``SchemaError`` before any request, on
every path a user names one: ``call``/``stream``, ``extract_many`` and
``agentflow extract --schema``. pydantic's own ``BaseModel`` (and bare
``RootModel``) describe no fields: ``BaseModel`` was sent as an empty object
and its validated output crashed the checks after the request with a bare
``TypeError``; ``extract_many`` raised pydantic's own error (or an
``AttributeError``) for a value or a class no JSON Schema describes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, RootModel

from agentflow import ReActAgent, SchemaError, extract_many
from agentflow.testing import Call, FunctionModel, RecordedRequest, Reply
from tests.test_cli import agentflow, one_line


class Plain:
    """A class that is no model, dataclass or TypedDict."""


def _model() -> FunctionModel:
    def reply(request: RecordedRequest) -> Reply:
        return Reply(tool_calls=[Call("generate_response", {"x": 1})])

    return FunctionModel(reply)


@pytest.mark.parametrize("output", [BaseModel, RootModel])
async def test_pydantics_own_bases_are_refused_before_any_request(output: Any) -> None:
    model = _model()
    agent = ReActAgent("a", model)
    with pytest.raises(SchemaError, match=f"pydantic's {output.__name__} itself describes no "
                                          "fields"):
        await agent.call("hi", output)
    with pytest.raises(SchemaError):
        async for _ in agent.stream("hi", output):
            pass
    assert model.requests == []


@pytest.mark.parametrize("output", [BaseModel, RootModel, Plain, 42, "Contact"])
async def test_extract_many_refuses_what_is_no_output_type_before_any_input(
        output: Any) -> None:
    model = _model()
    read: list[str] = []

    def inputs() -> Any:
        read.append("x")
        yield "Ann: a person"

    with pytest.raises(SchemaError):
        async for _ in extract_many(model, inputs(), output):
            pass
    assert model.requests == [] and read == []


async def test_the_cli_exits_2_on_base_model_itself(tmp_path: Path) -> None:
    schema = tmp_path / "schema.py"
    schema.write_text("from pydantic import BaseModel\n")
    doc = tmp_path / "a.txt"
    doc.write_text("Ann: a person")
    status, _, stderr = await agentflow(
        "extract", "--schema", f"{schema}:BaseModel", "--input", str(doc), "--model",
        "openai:gpt-4o-mini", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "k")
    assert status == 2, stderr
    assert "pydantic's BaseModel itself describes no fields" in one_line(stderr)
