"""The request deadline grows with the reply budget on the embedded model
(a long grounded extraction under load must not be cut by a fixed 600 s),
stays the settings' on vendors' APIs, and a user's own deadline stands.
Deterministic: the deadline each request hands to the HTTP layer is read
where the exchange opens its deadline scope, and a per-request
deadline is shown to bound a request against a server that answers later
than it."""

from __future__ import annotations

import pytest

from agentflow.errors import DeadlineExceededError
from agentflow.messages import Msg
from agentflow.model import GenerateOptions, ResponseFormat
from agentflow.providers import HttpSettings
from agentflow.providers._http import HttpClient, read_json
from agentflow.providers._local_deadline import (
    PROMPT_TOKENS_PER_SECOND,
    REPLY_TOKENS_PER_SECOND,
    reply_deadline,
)
from agentflow.providers.local import LocalModel, bundled_available
from agentflow.providers.openai import OpenAIChatModel
from agentflow.reply import generate
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.test_http import Raw, raw_server, record_exchange_scopes

DEFAULT = HttpSettings().deadline
assert DEFAULT == 600.0


def test_the_deadline_is_a_window_of_prompt_plus_the_reply_budget_at_slow_rates() -> None:
    assert (PROMPT_TOKENS_PER_SECOND, REPLY_TOKENS_PER_SECOND) == (16.0, 2.0)
    assert reply_deadline(1024, 4096, 600.0) == 256 + 512
    assert reply_deadline(6000, 4096, 600.0) == 256 + 3000
    assert reply_deadline(10, 100, 600.0) == 600.0  # never below the default
    with pytest.raises(ValueError, match="reply_tokens=-1"):
        reply_deadline(-1, 4096, 600.0)


def _body(model: LocalModel, max_tokens: int | None = None) -> dict[str, object]:
    return model.build_body([Msg.user("x")], (), GenerateOptions(max_tokens=max_tokens))


def test_the_embedded_model_s_deadline_follows_each_request_s_budget() -> None:
    model = LocalModel()  # a 4,096-token window per slot, a 1,024-token default reply
    assert model.request_deadline(_body(model)) == 768.0
    assert model.request_deadline(_body(model, 6000)) == 3256.0  # a long grounded list
    # settings given for other reasons leave the deadline to follow the budget
    tuned = LocalModel(settings=HttpSettings(connect_timeout=3.0))
    assert tuned.request_deadline(_body(tuned, 6000)) == 3256.0
    unknown = LocalModel(context=0)  # the window unknown: the prompt's own tokens count
    assert unknown.profile.context_window is None
    assert unknown.request_deadline(_body(unknown, 6000)) == 3001.0


def test_a_user_s_own_deadline_stands() -> None:
    short = LocalModel(settings=HttpSettings(deadline=30.0))
    assert short.request_deadline(_body(short, 6000)) == 30.0
    unlimited = LocalModel(settings=HttpSettings(deadline=None))
    assert unlimited.request_deadline(_body(unlimited, 6000)) is None


@pytest.fixture
def scopes(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The delay of every deadline scope the exchange opens."""
    return record_exchange_scopes(monkeypatch)


async def test_a_request_s_own_deadline_bounds_it(scopes: list[float | None]) -> None:
    """``HttpClient.open(deadline=...)`` overrides the settings' deadline: a
    server that answers after 2 s fails a request given 0.3 s (the settings
    say 600), and ``None`` opens no scope at all."""
    json_headers = {"content-type": "application/json"}
    late = Raw([b"{}"], headers=json_headers, latency=2.0)
    async with raw_server(late, Raw([b"{}"], headers=json_headers)) as (url, _):
        client = HttpClient(url, vendor="t", settings=HttpSettings(max_retries=0))
        with pytest.raises(DeadlineExceededError) as info:
            async with client.open("x", {}, deadline=0.3) as response:
                await read_json(response)
        async with client.open("x", {}, deadline=None) as response:
            assert await read_json(response) == {}
        await client.aclose()
    assert info.value.deadline == 0.3 and "0.3s" in str(info.value)
    assert scopes == [0.3]


async def test_a_vendor_keeps_the_settings_deadline_whatever_its_budget(
        scopes: list[float | None]) -> None:
    async with OpenAIFake() as fake:
        fake.add(FakeReply("ok"), FakeReply("ok"))
        model = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k")
        await generate(model, [Msg.user("hi")], (), GenerateOptions(max_tokens=16_000))
        own = OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                              settings=HttpSettings(deadline=42.0))
        await generate(own, [Msg.user("hi")], (), GenerateOptions(max_tokens=16_000))
        await model.aclose()
        await own.aclose()
    assert scopes == [DEFAULT, 42.0]


async def test_the_embedded_model_s_request_carries_its_budget_s_deadline(
        scopes: list[float | None]) -> None:
    """On the real embedded server: a request with a 3,000-token default
    reply and a 4,096-token window is given 256 + 1,500 s; a grammar of one
    short value keeps the reply itself short."""
    if not bundled_available():
        pytest.skip("the 'local' extra is not installed")
    model = LocalModel(max_tokens=3000)
    schema = {"type": "object", "properties": {"a": {"type": "string", "enum": ["x"]}},
              "required": ["a"], "additionalProperties": False}
    options = GenerateOptions(response_format=ResponseFormat("json_schema", schema))
    try:
        reply = await generate(model, [Msg.user("a?")], (), options)
    finally:
        await model.aclose()
    assert reply.message.text == '{"a": "x"}' and scopes == [1756.0]
