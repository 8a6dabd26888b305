"""Conformance against code no one here wrote: the vendors' official SDKs.

The adapters (providers/) and the fakes (tests/fakes/) were written from one
reading of the vendors' documents; both could share a misunderstanding and
every other test would still pass. Here the official Python SDKs (openai,
anthropic, google-genai, ollama, zai-sdk; pinned in the ``dev`` extra) are
the witnesses:

* **requests** — for every kit × scenario (tests/sdk/scenarios.py) × stream
  or whole, our body is checked against the SDK's request types with
  ``tests.sdk.strict.check`` (an unknown key fails unless it is a documented
  vendor extension, listed in ``Kit.extensions`` with its source), and
  compared with the body the SDK itself sends for the same logical request;
* **responses** — each SDK pointed at each fake (streamed and whole; text
  with thinking; two tool calls; an error) parses without error, and what it
  accumulates equals what our adapter extracted;
* **profiles** — each model name an SDK ships as a ``Literal`` resolves to a
  specific rule of our profile tables, not the default.

Where the SDKs disagree with the team's wire notes (shared/providers.md), the
SDK is followed and the disagreement noted here: the anthropic SDK (2.10)
authenticates with ``Authorization: Bearer`` and sends ``anthropic-version:
2026-10-21`` (the notes: ``x-api-key``, ``2023-06-01``; the fake takes both)
and has no ``temperature`` any more; google-genai sends some proto fields
snake_case (``include_thoughts``, ``property_ordering``) and the API takes
both spellings; zai-sdk clamps ``temperature`` into (0, 1) and switches
``do_sample`` off for 0 (the notes are silent; the GLM adapter now does the
same); the openai SDK's stream helper reads usage only from a
``chat.completion.chunk`` frame, not from the final ``chat.completion`` frame
the notes report for MiniMax (the fake's default tail is the former).

DashScope: our adapter speaks DashScope's OpenAI-compatible mode, whose
documented client is the ``openai`` SDK (the ``dashscope`` SDK speaks the
native ``/api/v1/services/aigc`` protocol); the ``dashscope`` SDK is used for
its model-name constants. MiniMax and DeepSeek have no SDK of their own and
document the ``openai`` SDK.
"""

from __future__ import annotations

import importlib
import typing
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from agentflow.errors import ProviderError
from tests.fakes.base import FakeReply, FakeServer
from tests.sdk.kits import KITS, Kit, comparable
from tests.sdk.scenarios import (
    REPLIES,
    SCENARIOS,
    Scenario,
    read_ours,
    read_scenario,
    scenario_applies,
)
from tests.sdk.strict import check


@pytest.fixture(params=KITS, ids=[k.id for k in KITS])
def kit(request: pytest.FixtureRequest) -> Kit:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=[True, False], ids=["stream", "whole"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
async def fake(kit: Kit) -> AsyncIterator[FakeServer]:
    async with kit.fake() as server:
        yield server


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
async def test_request_matches_sdk(kit: Kit, fake: FakeServer, stream: bool,
                                   scenario: Scenario) -> None:
    model = kit.build(fake, stream)
    try:
        if scenario.id in kit.skip:
            pytest.skip(kit.skip[scenario.id])
        if not scenario_applies(scenario, model.profile):
            pytest.skip(f"{kit.model}'s profile has no {scenario.needs!r}")
        fake.add(FakeReply(text="ok"), FakeReply(text="ok"))
        await read_ours(model, scenario)
    finally:
        await model.aclose()
    ours = fake.bodies[0]
    problems = check(ours, kit.request_type(stream), extensions=kit.extensions)
    assert not problems, "\n".join(problems)
    if scenario.id in kit.no_compare:
        return
    await kit.witness.request(scenario, ours, fake.url, kit.model, stream)
    theirs = fake.bodies[1]
    assert comparable(kit, ours, ours=True) == comparable(kit, theirs, ours=False)


# ----------------------------------------------------------------------------- profiles


def _sdk_model_names() -> list[Any]:
    """``(vendor, name)`` for every model name an SDK ships as a literal or constant."""
    from anthropic.types.model import Model as AnthropicModel
    from dashscope.aigc.generation import Generation
    from openai.types.shared.chat_model import ChatModel as OpenAIModel

    def literal(alias: Any) -> list[str]:
        found: list[str] = []
        for arg in typing.get_args(alias):
            found += list(typing.get_args(arg)) if typing.get_origin(arg) else (
                [arg] if isinstance(arg, str) else [])
        return found

    dashscope = [v for k, v in vars(Generation.Models).items()
                 if not k.startswith("_") and isinstance(v, str)]
    return ([pytest.param("openai", n, id=f"openai:{n}") for n in literal(OpenAIModel)]
            + [pytest.param("anthropic", n, id=f"anthropic:{n}")
               for n in literal(AnthropicModel)]
            + [pytest.param("dashscope", n, id=f"dashscope:{n}") for n in dashscope])


@pytest.mark.parametrize(("vendor", "name"), _sdk_model_names())
def test_sdk_model_names_resolve_to_a_specific_rule(vendor: str, name: str) -> None:
    from fnmatch import fnmatchcase

    rules = importlib.import_module(f"agentflow.providers.{vendor}").PROFILES
    matched = [r.pattern for r in rules if fnmatchcase(name.lower(), r.pattern)]
    assert matched, f"{vendor}:{name} falls to the default profile; add a rule"


# ----------------------------------------------------------------------------- responses


@pytest.mark.parametrize("reply", sorted(REPLIES))
async def test_sdk_reads_the_fake_as_we_do(kit: Kit, fake: FakeServer, stream: bool,
                                          reply: str) -> None:
    """The SDK parses the fake's reply without error, and what it accumulates
    (text, thinking, tool calls, usage, raw finish reason) is what our adapter
    extracted from the same reply."""
    model = kit.build(fake, stream)
    thinking = model.profile.supports_thinking
    fake.add(REPLIES[reply], REPLIES[reply])
    try:
        ours = await read_ours(model, read_scenario(thinking))
    finally:
        await model.aclose()
    theirs = await kit.witness.read(fake.url, kit.model, stream, fake.bodies[0])
    # whitespace around reasoning is not meaning (MiniMax's <think>\n...\n</think>)
    assert replace(theirs, thinking=theirs.thinking.strip()) == replace(
        ours, thinking=ours.thinking.strip())
    assert ours.usage == REPLIES[reply].usage and ours.finish
    assert [name for name, _ in ours.tool_calls] == [c.name for c in REPLIES[reply].tool_calls]


async def test_sdk_raises_the_fakes_error_as_we_do(kit: Kit, fake: FakeServer,
                                                  stream: bool) -> None:
    """A vendor 400 in the fake's envelope: the SDK raises its status error
    with the same status our adapter's ``ProviderError`` carries."""
    if stream and "error-stream" in kit.skip:
        pytest.skip(kit.skip["error-stream"])
    refused = kit.refusal()
    fake.add(refused, refused)
    model = kit.build(fake, stream)
    try:
        with pytest.raises(ProviderError) as ours:
            await read_ours(model, read_scenario(False))
    finally:
        await model.aclose()
    with pytest.raises(Exception) as theirs:
        await kit.witness.read(fake.url, kit.model, stream, fake.bodies[0])
    assert kit.witness.error_status(theirs.value) == ours.value.status
    assert ours.value.status is not None and ours.value.status >= 400


# ----------------------------------------------------------------------------- the check itself


def test_strict_check_names_each_problem() -> None:
    """The check fails what the SDK's types do not allow (they accept any key
    at run time) and lets a listed extension through."""
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming

    body = {"model": "m", "stream": True, "thinking": {"type": "enabled"},
            "messages": [{"role": "user", "content": "hi", "bogus": 1},
                         {"role": "robot", "content": "x"}],
            "tool_choice": "sometimes"}
    problems = check(body, CompletionCreateParamsStreaming)
    assert "thinking: unknown key (not in CompletionCreateParamsStreaming)" in problems
    assert any(p.startswith("messages[0].bogus: unknown key") for p in problems)
    assert any(p.startswith("messages[1].role:") for p in problems)
    assert any(p.startswith("tool_choice:") for p in problems)
    assert not any(p.startswith("thinking") for p in check(
        body, CompletionCreateParamsStreaming, extensions={"thinking": "a doc"}))
    assert check({"stream": True}, CompletionCreateParamsStreaming) == [
        "messages: required by CompletionCreateParamsStreaming",
        "model: required by CompletionCreateParamsStreaming"]
