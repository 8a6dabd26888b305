"""Vendor fault: a base URL's query string lost to the request path.

Azure OpenAI's deployment routes take the API version as a query parameter,
so the base URL users give carries it:
``https://<resource>.openai.azure.com/openai/deployments/<name>?api-version=
2024-10-21`` (gateways do the same with ``?key=``). The adapter appended
``/chat/completions`` to the whole string, after the query: the request went
to ``/openai/deployments/<name>`` with ``api-version=2024-10-21/chat/
completions``, and Azure answered 404 ``{"error": {"code": "404", "message":
"Resource not found"}}``, as it does to a request without a valid
``api-version`` (ThinkInAIXYZ/deepchat#262,
https://github.com/ThinkInAIXYZ/deepchat/issues/262;
MicrosoftDocs/azure-docs#114602). The path now goes before the query, which
is kept on every request (joined with the path's own).

Served by an Azure OpenAI fake on 127.0.0.1, through the public API."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from pydantic import BaseModel

from agentflow import ReActAgent
from agentflow.errors import AuthenticationError
from agentflow.providers._http_settings import join_url
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeError, FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

VERSIONS = frozenset({"2024-10-21", "2025-04-01-preview"})
KEY = "azure-key-0123456789abcdef"
DENIED = ("Access denied due to invalid subscription key or wrong API endpoint. Make sure to "
          "provide a valid key for an active subscription and use a correct regional API "
          "endpoint for your resource.")


class AzureFake(OpenAIFake):
    """Azure OpenAI's deployment route: ``api-version`` required, 404 without
    a known one (its answer to a missing or unknown version)."""

    routes = ("/openai/deployments/{deployment}/chat/completions",)

    def base_url(self, root: str) -> str:
        return root + "/openai/deployments/gpt-4o?api-version=2024-10-21"

    def check(self, request: web.Request, body: Any) -> FakeError | None:
        if request.query.get("api-version") not in VERSIONS:
            return FakeError(404, {"error": {"code": "404", "message": "Resource not found"}})
        if request.headers.get("api-key") != KEY:  # a key as a Bearer token is refused too
            return FakeError(401, {"error": {"code": "401", "message": DENIED}})
        return super().check(request, body)


class City(BaseModel):
    name: str
    country: str


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_the_api_version_goes_with_every_request(stream: bool) -> None:
    async with AzureFake() as fake:
        fake.add(FakeReply(text='{"name": "Paris", "country": "FR"}'))
        async with OpenAIChatModel("gpt-4o", base_url=fake.url, headers={"api-key": KEY},
                                   stream=stream, settings=FAST) as model:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert reply.output == City(name="Paris", country="FR")
    assert len(fake.bodies) == 1


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_an_api_key_goes_as_the_api_key_header_on_a_deployment_route(
        stream: bool) -> None:
    """``api_key=`` on an Azure deployment route goes as ``api-key``, as the
    official ``AzureOpenAI`` client sends it (it went as ``Authorization:
    Bearer``: 401 "Access denied due to invalid subscription key"); never in
    the repr, nor in an error that quotes it back."""
    async with AzureFake() as fake:
        fake.add(FakeReply(text='{"name": "Paris", "country": "FR"}'))
        async with OpenAIChatModel("gpt-4o", base_url=fake.url, api_key=KEY, stream=stream,
                                   settings=FAST) as model:
            reply = await ReActAgent("a", model).call("Where is the Louvre?", City)
            assert KEY not in repr(model)
            fake.echo_key = True
            with pytest.raises(AuthenticationError) as caught:
                await ReActAgent("a", model).call("Where is the Louvre?", City)
    assert reply.output == City(name="Paris", country="FR")
    sent = {k.lower() for k in fake.requests[0].headers}
    assert "api-key" in sent and "authorization" not in sent
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert KEY[:12] not in str(caught.value)


def test_a_key_goes_as_a_bearer_token_off_the_deployment_route() -> None:
    assert OpenAIChatModel("gpt-4o", api_key="k").key_headers("k", "https://r.openai.azure.com"
                                                              "/openai/v1") == {
        "authorization": "Bearer k"}


@pytest.mark.parametrize(("base", "path", "url"), [
    ("https://h/v1", "chat/completions", "https://h/v1/chat/completions"),
    ("https://h/d/x?api-version=1", "/chat/completions",
     "https://h/d/x/chat/completions?api-version=1"),
    ("https://h/d/x/?api-version=1", "chat/completions",
     "https://h/d/x/chat/completions?api-version=1"),
    ("https://h/v1beta?key=s", "models/m:streamGenerateContent?alt=sse",
     "https://h/v1beta/models/m:streamGenerateContent?alt=sse&key=s"),
])
def test_join_url(base: str, path: str, url: str) -> None:
    assert join_url(base, path) == url
