"""How many tokens an image or a PDF counts, from the vendor's documented rule
(profile data, ``ModelProfile.media_tokens``), for the rate governor's estimate.

    block_tokens(ImageBlock.from_path("scan.png"), OPENAI_RULES)   # 85 + 170 × tiles

A request's text is estimated at 4 characters a token, but an image or a PDF is
not counted by its bytes: a vendor counts an image by its pixels and a PDF by
its pages. Counting their base64 as text (what the governor did) made a 1 MB
photo 350,000 tokens, holding a batch back for a minute per image. The rules:

* ``TiledImages`` (OpenAI, "Calculating costs",
  platform.openai.com/docs/guides/images-vision#calculating-costs): scaled to fit
  2048 × 2048, then its shortest side to 768; ``base + per_tile × tiles`` of
  512 × 512 (85 + 170 per tile for GPT-4o / GPT-4.1).
* ``AreaImages`` (Anthropic, "Evaluate image size",
  docs.anthropic.com/en/docs/build-with-claude/vision): ``width × height / 750``
  after scaling the long edge to at most 1568 px, and at most about 1,600 (a
  larger image is scaled down to that).
* ``GridImages`` (Gemini, "Understand and count tokens",
  ai.google.dev/gemini-api/docs/tokens): 258 tokens when both sides are at most
  384 px, else 258 per 768 × 768 tile.
* ``pdf_page``: tokens per PDF page (Gemini: 258 per page, "Document
  understanding", ai.google.dev/gemini-api/docs/document-processing;
  Anthropic: "1,500-3,000 tokens per page" of text plus the page's image,
  docs.anthropic.com/en/docs/build-with-claude/pdf-support, taken at 3,000).

Without a rule, or when the size cannot be read (an image format whose header
``imagesize`` does not know, a URL block), an image counts
``DEFAULT_IMAGE_TOKENS`` and a PDF page ``DEFAULT_PDF_PAGE_TOKENS``: the largest
of the documented figures, so the governor errs on the side of waiting. A PDF's
pages are counted from its page objects (``/Type /Page``); a PDF whose page
objects are compressed out of sight counts one page per ``BYTES_PER_PDF_PAGE``.
Never the base64 length.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BYTES_PER_PDF_PAGE",
    "DEFAULT_IMAGE_TOKENS",
    "DEFAULT_PDF_PAGE_TOKENS",
    "AreaImages",
    "GridImages",
    "MediaTokens",
    "TiledImages",
    "block_tokens",
    "image_tokens",
    "media_cost",
    "pdf_pages",
    "request_media_cost",
]

DEFAULT_IMAGE_TOKENS = 1_600
"""An image of unknown size or vendor: about the most any documented rule gives a
high-detail image (Anthropic's cap is ~1,600; OpenAI's 768 × 2048 is 1,445)."""

DEFAULT_PDF_PAGE_TOKENS = 3_000
"""A PDF page for a vendor without a rule: Anthropic's upper figure."""

BYTES_PER_PDF_PAGE = 50_000
"""Bytes per page assumed for a PDF whose page objects cannot be counted."""


@dataclass(frozen=True, slots=True)
class TiledImages:
    """OpenAI's rule: fit in ``fit`` × ``fit``, shortest side to ``short_side``,
    then ``base + per_tile`` × the ``tile``-pixel tiles covering it."""

    base: int = 85
    per_tile: int = 170
    tile: int = 512
    fit: int = 2048
    short_side: int = 768


@dataclass(frozen=True, slots=True)
class AreaImages:
    """Anthropic's rule: long edge scaled to at most ``max_edge``, then
    ``width × height / pixels_per_token``, at most ``max_tokens`` (a larger image
    is scaled down to fit it)."""

    pixels_per_token: int = 750
    max_edge: int = 1568
    max_tokens: int = 1600


@dataclass(frozen=True, slots=True)
class GridImages:
    """Gemini's rule: ``per_tile`` when both sides are at most ``small``, else
    ``per_tile`` for each ``tile`` × ``tile`` tile."""

    per_tile: int = 258
    small: int = 384
    tile: int = 768


ImageRule = TiledImages | AreaImages | GridImages


@dataclass(frozen=True, slots=True)
class MediaTokens:
    """A vendor's token rules for media (``ModelProfile.media_tokens``).

    Attributes:
        image: how an image is counted (``None``: ``DEFAULT_IMAGE_TOKENS`` each).
        pdf_page: tokens per PDF page (``None``: ``DEFAULT_PDF_PAGE_TOKENS``).
    """

    image: ImageRule | None = field(default=None)
    pdf_page: int | None = None


def image_tokens(width: int, height: int, rule: ImageRule | None) -> int:
    """Tokens of a ``width`` × ``height`` pixel image under ``rule`` (see the module)."""
    if rule is None or width <= 0 or height <= 0:
        return DEFAULT_IMAGE_TOKENS
    w, h = float(width), float(height)
    if isinstance(rule, TiledImages):
        if max(w, h) > rule.fit:
            w, h = w * rule.fit / max(w, h), h * rule.fit / max(w, h)
        if min(w, h) > rule.short_side:
            w, h = w * rule.short_side / min(w, h), h * rule.short_side / min(w, h)
        tiles = math.ceil(w / rule.tile) * math.ceil(h / rule.tile)
        return rule.base + rule.per_tile * tiles
    if isinstance(rule, AreaImages):
        if max(w, h) > rule.max_edge:
            w, h = w * rule.max_edge / max(w, h), h * rule.max_edge / max(w, h)
        return max(1, min(rule.max_tokens, math.ceil(w * h / rule.pixels_per_token)))
    if max(w, h) <= rule.small:
        return rule.per_tile
    return rule.per_tile * math.ceil(w / rule.tile) * math.ceil(h / rule.tile)


_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_pages(data: bytes) -> int:
    """The pages of the PDF ``data``: its page objects, or (none visible: object
    streams) one per ``BYTES_PER_PDF_PAGE``, at least 1."""
    found = len(_PAGE.findall(data))
    return found or max(1, math.ceil(len(data) / BYTES_PER_PDF_PAGE))


def _size(data: bytes) -> tuple[int, int]:
    import imagesize  # type: ignore[import-untyped]  # header reader: PNG, JPEG, GIF, WebP...

    try:
        width, height = imagesize.get(io.BytesIO(data))
    except Exception:  # an unreadable header: the conservative default applies
        return -1, -1
    return int(width), int(height)


def block_tokens(block: Any, rules: MediaTokens) -> int:
    """Tokens of one ``ImageBlock`` (``type == "image"``) or ``DocumentBlock``
    (``"document"``) under ``rules``; 0 for other blocks. A URL block (no bytes)
    counts the defaults: one image, or one page."""
    kind = getattr(block, "type", None)
    data = getattr(block, "data", None)
    if kind == "image":
        if data is None:
            return DEFAULT_IMAGE_TOKENS
        return image_tokens(*_size(data), rules.image)
    if kind == "document":
        per_page = rules.pdf_page if rules.pdf_page is not None else DEFAULT_PDF_PAGE_TOKENS
        return per_page * (pdf_pages(data) if data is not None else 1)
    return 0


_MEDIA_KINDS = frozenset({"image", "document"})
_NO_MEDIA = (0, 0)


def request_media_cost(messages: Iterable[Any], rules: MediaTokens) -> tuple[int, int]:
    """``media_cost`` of every block of ``messages`` (each with ``content``:
    ``Msg``); ``(0, 0)`` at once for a request of text alone (no list made)."""
    for message in messages:
        for block in message.content:
            if block.type in _MEDIA_KINDS:
                return media_cost([b for m in messages for b in m.content], rules)
    return _NO_MEDIA


def media_cost(blocks: Iterable[Any], rules: MediaTokens) -> tuple[int, int]:
    """For the image and document blocks among ``blocks``: ``(tokens, chars)``,
    their tokens under ``rules`` and the characters of their base64 text in the
    request (to take out of the text estimate)."""
    tokens = chars = 0
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind not in ("image", "document"):
            continue
        tokens += block_tokens(block, rules)
        data = getattr(block, "data", None)
        if data is not None:
            chars += 4 * ((len(data) + 2) // 3)
    return tokens, chars
