"""Field paths spelled with the keys the model sees (``agentflow.extraction.
field_keys``), and the verification messages a model reads back naming its
keys while results keep python names."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
import pytest
from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from typing_extensions import TypedDict

from agentflow import ReActAgent
from agentflow.errors import DegenerateOutputError, GroundingError
from agentflow.events import Complete, OutputRetry
from agentflow.grounding import Grounded
from agentflow.grounding.field_keys import key_path
from agentflow.grounding.output_checks import check_output
from agentflow.providers.openai import OpenAIChatModel
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST, close_models, tracked


class Entry(BaseModel):
    version: Annotated[str, Grounded()] = Field(alias="ver")
    distribution: Annotated[str, Grounded(after="version")] = Field(alias="dist")


class Header(BaseModel):
    package: Annotated[str, Grounded()] = Field(alias="pkg")
    entries: list[Entry] = Field(default=[], validation_alias="Entries")
    tags: list[Annotated[str, Grounded()]] = Field(
        default=[], validation_alias=AliasChoices("labels", "tags"), alias="Tags")
    maybe: Entry | None = None
    by_name: dict[str, Entry] = {}


class Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    first_name: Annotated[str, Grounded()]


@dataclass
class Plain:
    first_name: str


class Typed(TypedDict):
    entry: Entry


def test_key_path_spells_each_field_by_the_key_of_its_schema() -> None:
    assert key_path("package", Header) == "pkg"
    assert key_path("entries[2].version", Header) == "Entries[2].ver"
    assert key_path("tags[0]", Header) == "Tags[0]"  # a validation alias that is no str
    assert key_path("maybe.distribution", Header) == "maybe.dist"  # through `| None`
    assert key_path("by_name.k.version", Header) == "by_name.k.ver"  # through a dict
    assert key_path("first_name", Camel) == "firstName"  # an alias generator
    assert key_path("first_name", Plain) == "first_name"
    assert key_path("entry.version", Typed) == "entry.ver"
    assert key_path("entry.version", list[Typed]) == "entry.version"  # no list at the top
    assert key_path("[1].entry.version", list[Typed]) == "[1].entry.ver"
    assert key_path("result", str) == "result"
    assert key_path("unknown.version", Header) == "unknown.version"


def test_the_detail_the_model_reads_names_its_keys_and_results_python_names() -> None:
    value = Header.model_validate({"pkg": "avahi", "Entries": [{"ver": "0.8-10",
                                                                 "dist": "avahi"}],
                                   "labels": ["nowhere"]})
    text = "avahi (0.8-10) bookworm; urgency=medium"
    with pytest.raises(GroundingError) as raised:
        check_output(value, Header, None, text)
    err = raised.value
    assert "- Tags[0]: 'nowhere' is not found" in err.detail
    assert "- Entries[0].dist: 'avahi' is not after the value of 'ver'" in err.detail
    assert "correct 'ver' if" in err.detail
    assert "package" not in err.detail and "version" not in err.detail
    # the error's message and fields keep python names, as spans and records do
    assert "- tags[0]: 'nowhere'" in str(err) and "is not after the value of 'version'" in str(err)
    assert ("tags[0]", "nowhere") in err.unfound


def test_degenerate_detail_names_the_models_keys() -> None:
    value = Header.model_validate({"pkg": "a", "labels": ["a"] * 6})
    with pytest.raises(DegenerateOutputError) as raised:
        check_output(value, Header, None, "a")
    assert "- Tags: the item 'a' is repeated 6 times" in raised.value.detail
    assert raised.value.problems[0][0] == "tags" and "- tags:" in str(raised.value)


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    await close_models()


async def test_a_vendor_model_is_told_the_key_it_wrote() -> None:
    class Package(BaseModel):
        package: Annotated[str, Grounded()] = Field(alias="pkg")

    async with OpenAIFake() as fake:
        fake.add(FakeReply(text=orjson.dumps({"pkg": "bookworm-backports"}).decode()),
                 FakeReply(text=orjson.dumps({"pkg": "avahi"}).decode()))
        model = tracked(OpenAIChatModel("gpt-4o-mini", base_url=fake.url, api_key="k",
                                        settings=FAST))
        async with aclosing(ReActAgent("x", model).stream(
                "avahi (0.8-10) bookworm; urgency=medium", Package)) as stream:
            events: list[Any] = [e async for e in stream]
    complete = events[-1]
    assert isinstance(complete, Complete) and complete.spans == {"package": [(0, 5)]}
    [retry] = [e for e in events if isinstance(e, OutputRetry)]
    assert "pkg: 'bookworm-backports' is not found" in retry.message
    assert "package" not in retry.message
    assert "pkg" in orjson.dumps(fake.bodies[0]).decode()
