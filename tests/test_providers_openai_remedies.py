"""``remedy_for``: what an OpenAI-style adapter does about a refused request
(``providers._openai_remedies``), as a table over the refused body."""

from __future__ import annotations

from typing import Any

import pytest

from agentflow.errors import BadRequestError, UnsupportedFeatureError
from agentflow.providers._openai_remedies import remedy_for

STRICT_TOOLS = {"tools": [{"type": "function", "function": {"name": "f", "strict": True}}]}
PLAIN_TOOLS = {"tools": [{"type": "function", "function": {"name": "f"}}]}
NATIVE = {"response_format": {"type": "json_schema", "json_schema": {"name": "o"}}}
XGRAMMAR = "The provided JSON schema contains features not supported by xgrammar."


def _refusal(message: str, code: str | None = None) -> BadRequestError:
    return BadRequestError(message, status=400, code=code, vendor="v")


@pytest.mark.parametrize(("body", "message", "code", "expected"), [
    (STRICT_TOOLS, "Invalid schema for function 'f': In context=()", None, "strict"),
    (STRICT_TOOLS, "whatever", "invalid_function_parameters", "strict"),
    (STRICT_TOOLS, XGRAMMAR, None, "strict"),  # the engine refused the strict tools
    ({**STRICT_TOOLS, "stream_options": {}},
     "Unrecognized request argument supplied: stream_options", None,
     frozenset({"stream_options"})),
    ({**PLAIN_TOOLS, "parallel_tool_calls": False},
     "Extra inputs are not permitted: parallel_tool_calls", None,
     frozenset({"parallel_tool_calls"})),
    ({**PLAIN_TOOLS, "parallel_tool_calls": False},
     "Parallel tool calls are not supported for this model", None,
     frozenset({"parallel_tool_calls"})),  # in words: not a refusal of the tools
    ({**PLAIN_TOOLS, "stream_options": {}}, "Stream options is not supported", None,
     frozenset({"stream_options"})),
    (PLAIN_TOOLS, "Unrecognized request argument supplied: stream_options", None,
     "error"),  # not sent: nothing to drop
    (NATIVE, XGRAMMAR, None, "native_output"),
    (PLAIN_TOOLS, "messages must not be empty", None, "error"),
], ids=["strict-wording", "strict-code", "strict-engine", "stream_options",
        "parallel_tool_calls", "parallel-in-words", "stream-options-in-words",
        "field-not-sent", "engine-native", "other"])
def test_remedy_for_a_refused_body(body: dict[str, Any], message: str, code: str | None,
                                   expected: Any) -> None:
    error = _refusal(message, code)
    remedy = remedy_for(error, body, True)
    if expected == "error":
        assert remedy is error
    elif expected == "native_output":
        assert isinstance(remedy, UnsupportedFeatureError) and remedy.feature == "native_output"
    else:
        assert remedy == expected


def test_without_resends_left_only_the_error_remains() -> None:
    error = _refusal("Invalid schema for function 'f': In context=()")
    remedy = remedy_for(error, STRICT_TOOLS, False)  # no resend: the engine steps down once
    assert isinstance(remedy, UnsupportedFeatureError) and remedy.feature == "tool_schema"
    assert str(remedy) == str(error)
    error = _refusal("Unrecognized request argument supplied: stream_options")
    assert remedy_for(error, {**PLAIN_TOOLS, "stream_options": {}}, False) is error
