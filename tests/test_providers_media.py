"""Images and PDF documents on every vendor (providers/_media.py and the
adapters' message converters) against the fake servers: the wire shapes each
vendor documents, the profile refusing before any request what a model does
not take, and the fakes refusing, in the vendor's error shape, what the vendor
refuses (checked by overriding a profile past its limits)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import orjson
import pytest

from agentflow.content import DocumentBlock, ImageBlock
from agentflow.errors import (
    BadRequestError,
    InvalidInputError,
    ProviderError,
    UnsupportedInputError,
)
from agentflow.messages import Msg
from agentflow.model import ChatModel, GenerateOptions
from agentflow.providers.openai import OpenAICompatibleModel
from agentflow.providers.registry import get_model
from agentflow.reply import generate
from tests import media
from tests.fakes.anthropic import MAX_PDF_PAGES, AnthropicFake
from tests.fakes.base import FakeCall, FakeReply, FakeServer
from tests.fakes.dashscope import DashScopeFake
from tests.fakes.deepseek import DeepSeekFake
from tests.fakes.gemini import GeminiFake
from tests.fakes.glm import GLMFake
from tests.fakes.minimax import MiniMaxFake
from tests.fakes.ollama import OllamaFake
from tests.fakes.openai import OpenAIFake
from tests.provider_scenarios import FAST

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
PNG = media.png()
PDF = media.pdf(pages=3, text="Invoice")
IMAGE = ImageBlock.from_bytes(PNG)
IMAGE_URL = ImageBlock.from_url("https://example.com/cat.png")
DOC = DocumentBlock.from_bytes(PDF, filename="invoice.pdf")
DOC_URL = DocumentBlock.from_url("https://example.com/report.pdf")
B64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()


@asynccontextmanager
async def served(fake: FakeServer, vendor: str, model: str, stream: bool = True,
                 **kwargs: Any) -> AsyncIterator[tuple[FakeServer, ChatModel]]:
    async with fake:
        built = get_model(f"{vendor}:{model}", api_key="test-key", base_url=fake.url,
                          settings=FAST, stream=stream, **kwargs)
        try:
            yield fake, built
        finally:
            await built.aclose()  # type: ignore[attr-defined]


async def ask(model: ChatModel, *blocks: Any) -> str:
    reply = await generate(model, [Msg.system("Be brief."),
                                   Msg.user(["Describe these.", *blocks])],
                           options=GenerateOptions(max_tokens=64))
    return reply.message.text


def user_content(body: dict[str, Any]) -> Any:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


# ----------------------------------------------------------------------------- OpenAI style


@STREAMS
async def test_openai_image_url_and_file_parts(stream: bool) -> None:
    async with served(OpenAIFake(), "openai", "gpt-4o-mini", stream) as (fake, model):
        fake.add(FakeReply(text="a grey square and an invoice"))
        assert await ask(model, IMAGE, IMAGE_URL, DOC) == "a grey square and an invoice"
    assert user_content(fake.bodies[0]) == [
        {"type": "text", "text": "Describe these."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
        {"type": "file", "file": {"filename": "invoice.pdf",
                                  "file_data": f"data:application/pdf;base64,{PDF64}"}},
    ]


async def test_openai_text_only_message_stays_a_string() -> None:
    async with served(OpenAIFake(), "openai", "gpt-4o-mini") as (fake, model):
        fake.add(FakeReply(text="hi"))
        await generate(model, [Msg.user("hello")])
    assert user_content(fake.bodies[0]) == "hello"


async def test_openai_unnamed_pdf_gets_a_filename() -> None:
    async with served(OpenAIFake(), "openai", "gpt-4.1") as (fake, model):
        fake.add(FakeReply(text="ok"))
        await ask(model, DocumentBlock.from_bytes(PDF))
    assert user_content(fake.bodies[0])[1]["file"]["filename"] == "document.pdf"


async def test_openai_pdf_url_refused_before_any_request() -> None:
    async with served(OpenAIFake(), "openai", "gpt-4o") as (fake, model):
        with pytest.raises(UnsupportedInputError, match="does not fetch pdf input from a URL"):
            await ask(model, DOC_URL)
    assert fake.requests == []


@pytest.mark.parametrize("name", ["gpt-3.5-turbo", "o3-mini", "gpt-4-0613", "o1-mini"])
async def test_openai_text_only_models_refuse_images(name: str) -> None:
    async with served(OpenAIFake(), "openai", name) as (fake, model):
        with pytest.raises(UnsupportedInputError, match=f"'{name}' does not accept image"):
            await ask(model, IMAGE)
    assert fake.requests == []


async def test_openai_fake_refuses_a_pdf_over_100_pages() -> None:
    async with served(OpenAIFake(), "openai", "gpt-4o") as (fake, model):
        limit = model.profile.max_document_pages
        assert limit == fake.max_pdf_pages == 100  # type: ignore[attr-defined]
        fake.add(FakeReply(text="ok"))
        assert await ask(model, DocumentBlock.from_bytes(media.pdf(pages=limit))) == "ok"
        with pytest.raises(BadRequestError, match="at most 100 pages"):
            await ask(model, DocumentBlock.from_bytes(media.pdf(pages=limit + 1)))


async def test_openai_fake_refuses_an_unsupported_image_format() -> None:
    tiff = ImageBlock.from_bytes(b"II*\x00" + b"\x00" * 64)
    async with served(OpenAIFake(), "openai", "gpt-4o") as (fake, model):
        with pytest.raises(UnsupportedInputError, match="image/tiff"):
            await ask(model, tiff)  # the profile knows first
        loose = OpenAICompatibleModel("gpt-4o", base_url=fake.url, api_key="k", settings=FAST,
                                      profile=model.profile.with_(image_media_types={
                                          "image/tiff"}))
        try:
            with pytest.raises(BadRequestError, match="unsupported image") as info:
                await ask(loose, tiff)
        finally:
            await loose.aclose()
    assert info.value.code == "invalid_image_format"


@STREAMS
async def test_dashscope_vision_model_takes_images(stream: bool) -> None:
    async with served(DashScopeFake(), "dashscope", "qwen-vl-max", stream) as (fake, model):
        fake.add(FakeReply(text="grey"))
        assert await ask(model, IMAGE, IMAGE_URL) == "grey"
        with pytest.raises(UnsupportedInputError, match="does not accept pdf"):
            await ask(model, DOC)
    assert user_content(fake.bodies[0])[1:] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    assert len(fake.requests) == 1


async def test_dashscope_text_model_refuses_images() -> None:
    async with served(DashScopeFake(), "dashscope", "qwen-plus") as (fake, model):
        with pytest.raises(UnsupportedInputError, match="'qwen-plus' does not accept image"):
            await ask(model, IMAGE)
    assert fake.requests == []


async def test_dashscope_fake_holds_the_10mb_image_limit() -> None:
    big = ImageBlock.from_bytes(media.png(pad=10 * 1024 * 1024))
    async with served(DashScopeFake(), "dashscope", "qwen-vl-max") as (fake, model):
        with pytest.raises(UnsupportedInputError, match="image too large"):
            await ask(model, big)
        assert fake.requests == []
        loose = get_model("dashscope:qwen-vl-max", api_key="k", base_url=fake.url,
                          settings=FAST, profile=model.profile.with_(max_image_bytes=None))
        try:
            with pytest.raises(BadRequestError, match="max bytes per data-uri item"):
                await ask(loose, big)
        finally:
            await loose.aclose()  # type: ignore[attr-defined]


@STREAMS
async def test_glm_sends_bare_base64(stream: bool) -> None:
    async with served(GLMFake(), "glm", "glm-4.6v", stream) as (fake, model):
        fake.add(FakeReply(text="grey"))
        assert await ask(model, IMAGE, IMAGE_URL) == "grey"
    assert user_content(fake.bodies[0])[1:] == [
        {"type": "image_url", "image_url": {"url": B64}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]


async def test_glm_fake_refuses_a_data_url() -> None:
    async with GLMFake() as fake:
        vision = get_model("glm:glm-4.6v").profile
        model = OpenAICompatibleModel("glm-4.6v", base_url=fake.url, api_key="k",
                                      settings=FAST, profile=vision)
        try:
            with pytest.raises(BadRequestError, match="1210"):
                await ask(model, IMAGE)
        finally:
            await model.aclose()


async def test_glm_text_models_refuse_images() -> None:
    async with served(GLMFake(), "glm", "glm-4.6") as (fake, model):
        with pytest.raises(UnsupportedInputError, match=r"'glm-4\.6' does not accept image"):
            await ask(model, IMAGE)
    assert fake.requests == []


@pytest.mark.parametrize(("vendor", "name", "make"), [
    ("deepseek", "deepseek-v4-flash", DeepSeekFake),
    ("minimax", "MiniMax-M2.7", MiniMaxFake),
])
async def test_text_only_vendors_refuse_before_any_request(
        vendor: str, name: str, make: Callable[[], FakeServer]) -> None:
    async with served(make(), vendor, name) as (fake, model):
        for block in (IMAGE, DOC):
            with pytest.raises(UnsupportedInputError, match=f"'{name}' does not accept") as info:
                await ask(model, block)
            assert info.value.model == name
    assert fake.requests == []


async def test_deepseek_fake_refuses_content_parts() -> None:
    async with served(DeepSeekFake(), "deepseek", "deepseek-v4-flash") as (fake, model):
        loose = get_model("deepseek:deepseek-v4-flash", api_key="k", base_url=fake.url,
                          settings=FAST,
                          profile=model.profile.with_(input_modalities={"text", "image"}))
        try:
            with pytest.raises(BadRequestError, match="unknown variant `image_url`"):
                await ask(loose, IMAGE)
        finally:
            await loose.aclose()  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- Anthropic


@STREAMS
async def test_anthropic_image_and_document_blocks(stream: bool) -> None:
    async with served(AnthropicFake(), "anthropic", "claude-sonnet-4-6", stream) as (fake, model):
        fake.add(FakeReply(text="an invoice"))
        assert await ask(model, IMAGE, IMAGE_URL, DOC, DOC_URL) == "an invoice"
    blocks = [{k: v for k, v in b.items() if k != "cache_control"}
              for b in fake.bodies[0]["messages"][-1]["content"]]
    assert blocks == [
        {"type": "text", "text": "Describe these."},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                        "data": PDF64}, "title": "invoice.pdf"},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/report.pdf"},
         "title": "report.pdf"},
    ]


async def test_anthropic_claude_3_takes_images_not_pdfs() -> None:
    async with served(AnthropicFake(), "anthropic", "claude-3-haiku-20240307") as (fake, model):
        fake.add(FakeReply(text="grey"))
        assert await ask(model, IMAGE) == "grey"
        with pytest.raises(UnsupportedInputError, match="does not accept pdf"):
            await ask(model, DOC)
    assert len(fake.requests) == 1


async def test_anthropic_image_limit_matches_the_api() -> None:
    """The profile's per-image limit is what the API measures (5 MiB of base64):
    an image at the limit passes the fake; one byte more is refused by the
    profile, and by the fake when the profile is overridden."""
    at_limit = 3_932_160
    fits = ImageBlock.from_bytes(media.png(pad=at_limit - len(media.png(pad=1)) + 1))
    assert len(fits.data or b"") == at_limit
    over = ImageBlock.from_bytes(media.png(pad=at_limit - len(media.png(pad=1)) + 4))
    async with served(AnthropicFake(), "anthropic", "claude-sonnet-4-6") as (fake, model):
        fake.add(FakeReply(text="ok"))
        assert await ask(model, fits) == "ok"
        with pytest.raises(UnsupportedInputError, match="image too large"):
            await ask(model, over)
        loose = get_model("anthropic:claude-sonnet-4-6", api_key="k", base_url=fake.url,
                          settings=FAST, profile=model.profile.with_(max_image_bytes=None))
        try:
            with pytest.raises(BadRequestError, match="image exceeds 5 MB maximum"):
                await ask(loose, over)
        finally:
            await loose.aclose()  # type: ignore[attr-defined]


async def test_anthropic_fake_counts_pdf_pages() -> None:
    async with served(AnthropicFake(), "anthropic", "claude-sonnet-4-6") as (fake, model):
        assert model.profile.max_document_pages == MAX_PDF_PAGES == 100
        fake.add(FakeReply(text="ok"))
        assert await ask(model, DocumentBlock.from_bytes(media.pdf(pages=100))) == "ok"
        with pytest.raises(BadRequestError, match="maximum of 100 PDF pages"):
            await ask(model, DocumentBlock.from_bytes(media.pdf(pages=60)),
                      DocumentBlock.from_bytes(media.pdf(pages=41)))


# ----------------------------------------------------------------------------- Gemini


@STREAMS
async def test_gemini_inline_and_file_data(stream: bool) -> None:
    async with served(GeminiFake(), "gemini", "gemini-2.5-flash", stream) as (fake, model):
        fake.add(FakeReply(text="an invoice"))
        assert await ask(model, IMAGE, DOC, DOC_URL) == "an invoice"
    parts = fake.bodies[0]["contents"][-1]["parts"]
    assert parts == [
        {"text": "Describe these."},
        {"inlineData": {"mimeType": "image/png", "data": B64}},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF64}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/report.pdf"}},
    ]


async def test_gemini_refuses_gif_and_too_much_inline_data() -> None:
    gif = ImageBlock.from_bytes(media.GIF)
    big = DocumentBlock.from_bytes(media.pdf() + b"%" * 16_000_000)
    async with served(GeminiFake(), "gemini", "gemini-2.5-flash") as (fake, model):
        with pytest.raises(UnsupportedInputError, match="image/gif"):
            await ask(model, gif)
        with pytest.raises(UnsupportedInputError, match="inline content too large"):
            await ask(model, big)
        assert fake.requests == []
        loose = get_model("gemini:gemini-2.5-flash", api_key="k", base_url=fake.url,
                          settings=FAST, profile=model.profile.with_(
                              max_inline_bytes=None, image_media_types={"image/gif"}))
        try:
            with pytest.raises(BadRequestError, match="Request payload size exceeds the limit"):
                await ask(loose, big)
            with pytest.raises(BadRequestError, match="Unsupported MIME type: image/gif"):
                await ask(loose, gif)
        finally:
            await loose.aclose()  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- Ollama


@STREAMS
async def test_ollama_images_on_the_message(stream: bool) -> None:
    async with served(OllamaFake(), "ollama", "qwen2.5vl:7b", stream) as (fake, model):
        fake.add(FakeReply(text="grey"))
        assert await ask(model, IMAGE, ImageBlock.from_bytes(media.JPEG)) == "grey"
    user = fake.bodies[0]["messages"][-1]
    assert user == {"role": "user", "content": "Describe these.",
                    "images": [B64, base64.b64encode(media.JPEG).decode()]}


async def test_ollama_refusals() -> None:
    async with served(OllamaFake(), "ollama", "qwen2.5vl:7b") as (fake, model):
        with pytest.raises(UnsupportedInputError, match="does not accept pdf"):
            await ask(model, DOC)
        with pytest.raises(UnsupportedInputError, match="from a URL"):
            await ask(model, IMAGE_URL)
        with pytest.raises(UnsupportedInputError, match="image/gif"):
            await ask(model, ImageBlock.from_bytes(media.GIF))
    async with served(OllamaFake(), "ollama", "qwen3:8b") as (fake2, text_model):
        with pytest.raises(UnsupportedInputError, match="'qwen3:8b' does not accept image"):
            await ask(text_model, IMAGE)
    assert fake.requests == [] and fake2.requests == []


async def test_ollama_fake_refuses_images_for_a_model_without_vision() -> None:
    async with served(OllamaFake(), "ollama", "qwen3:8b") as (fake, model):
        loose = get_model("ollama:qwen3:8b", base_url=fake.url, settings=FAST,
                          profile=model.profile.with_(input_modalities={"text", "image"}))
        try:
            with pytest.raises(ProviderError, match="missing data required for image input"):
                await ask(loose, IMAGE)
        finally:
            await loose.aclose()  # type: ignore[attr-defined]


def test_ollama_adapter_refuses_what_its_wire_cannot_carry() -> None:
    from agentflow.providers._media import ollama_image, openai_part

    with pytest.raises(InvalidInputError, match="images only"):
        ollama_image(DOC)
    with pytest.raises(InvalidInputError, match="no field for a image URL"):
        ollama_image(IMAGE_URL)
    with pytest.raises(InvalidInputError, match="no field for a document URL"):
        openai_part(DOC_URL)


# ----------------------------------------------------------------------------- local


def test_local_model_is_text_only_without_a_projector(tmp_path: Any) -> None:
    from agentflow.providers.local import LocalModel

    plain = LocalModel()
    assert plain.profile.input_modalities == frozenset({"text"})
    vision = LocalModel(str(tmp_path / "m.gguf"), mmproj=tmp_path / "mmproj.gguf")
    assert vision.profile.input_modalities == frozenset({"text", "image"})
    assert "image/webp" not in vision.profile.image_media_types  # stb_image cannot decode it


# ----------------------------------------------------------------------------- encoding once


async def test_bytes_are_encoded_once_across_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """A block sent in many requests (a conversation's history, retries) is
    base64-encoded once: the adapters use the block's cached encoding."""
    import agentflow.media.blocks as content  # where the blocks encode (agentflow.content)

    calls: list[int] = []
    real = content.base64.b64encode

    def counting(data: bytes, *args: Any) -> bytes:
        calls.append(len(data))
        return real(data, *args)

    monkeypatch.setattr(content.base64, "b64encode", counting)
    doc = DocumentBlock.from_bytes(media.pdf(pages=5))
    image = ImageBlock.from_bytes(media.png(pad=50_000))
    for fake, vendor, name in ((AnthropicFake(), "anthropic", "claude-sonnet-4-6"),
                               (OpenAIFake(), "openai", "gpt-4o"),
                               (GeminiFake(), "gemini", "gemini-2.5-flash")):
        async with served(fake, vendor, name) as (server, model):
            for _ in range(3):
                server.add(FakeReply(text="ok"))
                assert await ask(model, image, doc) == "ok"
    assert sorted(calls) == sorted([len(doc.data or b""), len(image.data or b"")])


# ----------------------------------------------------------------------------- through the agent


@pytest.mark.parametrize(("make", "vendor", "name"), [
    (AnthropicFake, "anthropic", "claude-sonnet-4-5"),
    (OpenAIFake, "openai", "gpt-4o-mini"),
    (GeminiFake, "gemini", "gemini-2.5-flash"),
])
async def test_structured_output_from_a_pdf_and_a_follow_up_call(
        make: Callable[[], FakeServer], vendor: str, name: str) -> None:
    """An extraction from a PDF through the agent (structured output on the
    vendor's path), the state stored as JSON and read back, and a second call
    that sends the document again, unchanged, from the restored state."""
    from pydantic import BaseModel

    from agentflow.agent import ReActAgent
    from agentflow.state import AgentState

    class Invoice(BaseModel):
        number: str
        total: float

    async with served(make(), vendor, name) as (fake, model):
        agent = ReActAgent("reader", model)
        answer = {"number": "INV-7", "total": 12.5}
        if model.profile.native_output == "json_schema":
            fake.add(FakeReply(text='{"number": "INV-7", "total": 12.5}'))
        else:
            fake.add(FakeReply(tool_calls=[FakeCall("generate_response", answer, id="c1")]))
        state = AgentState()
        reply = await agent.call(Msg.user(["Read the invoice.", DOC]), Invoice, state=state)
        assert reply.output == Invoice(number="INV-7", total=12.5)
        restored = AgentState.from_json(state.to_json())
        assert restored.memory[0].content[1] == DOC
        fake.add(FakeReply(text="It is INV-7."))
        again = await agent.call("Which invoice was it?", state=restored)
        assert again.text == "It is INV-7."
    first, second = (orjson.dumps(b) for b in fake.bodies)
    assert first.count(PDF64.encode()) == 1 and second.count(PDF64.encode()) == 1


async def test_vendor_echo_of_a_presigned_url_loses_its_query() -> None:
    # OpenAI's reply to an image it cannot fetch names the URL, query and all:
    # {"message": "Error while downloading https://...", "code": "invalid_image_url"}.
    # A presigned URL's query is its credential: no error text may carry it.
    url = ("https://bucket.s3.amazonaws.com/cat.png?X-Amz-Credential=AKIAEXAMPLE0001"
           "&X-Amz-Signature=5f2b9c0d7e1a4b3c")
    async with served(OpenAIFake(), "openai", "gpt-4o") as (fake, model):
        fake.add_error(400, {"error": {"message": f"Error while downloading {url}.",
                                       "type": "invalid_request_error", "param": None,
                                       "code": "invalid_image_url"}})
        with pytest.raises(BadRequestError) as info:
            await ask(model, ImageBlock.from_url(url))
    error = info.value
    for text in (str(error), error.message, repr(error), repr(error.args)):
        assert "X-Amz" not in text and "AKIAEXAMPLE" not in text and "5f2b9c0d" not in text
    assert "https://bucket.s3.amazonaws.com/cat.png?\u2026" in error.message
    assert error.code == "invalid_image_url"
