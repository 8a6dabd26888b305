"""Media token estimates (agentflow.media.tokens): the vendors' documented rules,
profile data, and the rate governor counting images and PDFs by them, never by
the length of their base64."""

from __future__ import annotations

import io
import random

import anyio
import pytest
from PIL import Image

from agentflow import generate
from agentflow.content import DocumentBlock, ImageBlock
from agentflow.media.tokens import (
    DEFAULT_IMAGE_TOKENS,
    DEFAULT_PDF_PAGE_TOKENS,
    AreaImages,
    GridImages,
    MediaTokens,
    TiledImages,
    block_tokens,
    image_tokens,
    media_cost,
    pdf_pages,
)
from agentflow.messages import Msg
from agentflow.providers.anthropic import AnthropicChatModel
from agentflow.providers.gemini import GeminiChatModel
from agentflow.providers.openai import OpenAIChatModel
from agentflow.ratelimit import governor_for
from agentflow.ratelimit.formats import estimate_request_tokens
from tests import media
from tests.fakes.base import FakeReply
from tests.fakes.limits import FakeLimits
from tests.fakes.openai import OpenAIFake
from tests.pdfs import text_pdf


@pytest.mark.parametrize(("size", "rule", "tokens"), [
    # OpenAI's worked examples (images-vision#calculating-costs)
    ((1024, 1024), TiledImages(), 765),
    ((2048, 4096), TiledImages(), 1105),
    ((512, 512), TiledImages(), 255),
    # Anthropic: w*h/750, long edge to 1568, at most ~1,600 (vision, "Evaluate image size")
    ((1000, 1000), AreaImages(), 1334),
    ((200, 200), AreaImages(), 54),
    ((8000, 8000), AreaImages(), 1600),
    # Gemini: 258 up to 384 px, else 258 per 768 px tile (docs/tokens)
    ((384, 300), GridImages(), 258),
    ((1000, 1000), GridImages(), 4 * 258),
    ((1024, 1024), None, DEFAULT_IMAGE_TOKENS),
])
def test_documented_image_rules(size: tuple[int, int], rule: TiledImages | AreaImages |
                                GridImages | None, tokens: int) -> None:
    assert image_tokens(*size, rule) == tokens


def test_blocks_count_by_pixels_and_pages_never_by_bytes() -> None:
    png = ImageBlock.from_bytes(media.png(1024, 1024, pad=500_000))  # big file, 1024 px
    assert block_tokens(png, MediaTokens(TiledImages())) == 765
    pdf = DocumentBlock.from_bytes(text_pdf(), filename="r.pdf")
    assert pdf_pages(text_pdf()) == 3
    assert block_tokens(pdf, MediaTokens(GridImages(), pdf_page=258)) == 3 * 258
    assert block_tokens(pdf, MediaTokens()) == 3 * DEFAULT_PDF_PAGE_TOKENS
    unknown = ImageBlock.from_url("https://example.com/a.png")
    assert block_tokens(unknown, MediaTokens(TiledImages())) == DEFAULT_IMAGE_TOKENS
    tokens, chars = media_cost([png, pdf, unknown], MediaTokens(TiledImages(), pdf_page=10))
    assert tokens == 765 + 30 + DEFAULT_IMAGE_TOKENS
    assert chars == len(png.base64) + len(pdf.base64)
    assert estimate_request_tokens(400, None, 256, media_tokens=765) == 100 + 765 + 256


def test_vendor_profiles_carry_their_rules() -> None:
    openai = OpenAIChatModel("gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="k")
    anthropic = AnthropicChatModel("claude-sonnet-4-5", base_url="http://127.0.0.1:9",
                                   api_key="k")
    gemini = GeminiChatModel("gemini-2.5-flash", base_url="http://127.0.0.1:9", api_key="k")
    assert openai.profile.media_tokens.image == TiledImages()
    assert anthropic.profile.media_tokens == MediaTokens(AreaImages(), pdf_page=3_000)
    assert gemini.profile.media_tokens == MediaTokens(GridImages(), pdf_page=258)


def noise_png(side: int) -> bytes:
    """An incompressible PNG: its file is about 3 bytes a pixel."""
    image = Image.frombytes("RGB", (side, side), random.Random(side).randbytes(side * side * 3))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


async def test_the_governor_does_not_hold_back_image_requests_by_their_base64() -> None:
    photo = ImageBlock.from_bytes(noise_png(450))  # ~600 KB: 800,000 base64 characters
    assert len(photo.base64) > 750_000
    async with OpenAIFake() as fake:
        fake.limits = FakeLimits(rpm=10_000, tpm=30_000)  # 500 tokens/s
        fake.default = lambda body: FakeReply(text="a photo", usage=(900, 20))
        model = OpenAIChatModel("gpt-4o", base_url=fake.url, api_key="k-media-tokens",
                                stream=False)
        governor = governor_for("openai", base_url=fake.url, api_key="k-media-tokens",
                                family="gpt-4o")
        try:
            with anyio.fail_after(120):
                for _ in range(4):
                    reply = await generate(model, [Msg.user([photo, "what is it?"])])
                    assert reply.message.text == "a photo"
        finally:
            await model.aclose()
        assert len(fake.requests) == 4 and governor.admitted == 4
        # counted as 200,000 tokens of text each, the requests waited ~20 s for the bucket
        assert governor.waited_s < 2.0, governor.waited_s
