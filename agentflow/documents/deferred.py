"""Media read from disk when their input is sent, not when the batch is listed.

    block = DeferredDocument("scans/0001.pdf")      # nothing read yet
    ExtractInput("scans/0001.pdf", "", (block,))    # extract_many reads it when it sends it

A batch of thousands of PDFs sent as document blocks (``agentflow extract --pdf
document``) would otherwise hold every file's bytes from the listing to the end
of the run. ``extract_many`` resolves a ``DeferredDocument`` into a
``DocumentBlock`` (``resolve_media``) when it builds that input's user message,
so at most the inputs being sent (its ``concurrency``) have their bytes in
memory, and they are let go with the request. Each ``load`` reads the file
again: a file that changed or vanished since the listing is read as it is then
(a vanished one fails that input with a ``DocumentError``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentflow.errors import DocumentError
from agentflow.media.blocks import DocumentBlock

__all__ = ["DeferredDocument", "resolve_media"]


@dataclass(frozen=True, slots=True)
class DeferredDocument:
    """A document block whose bytes are read from ``path`` when its input is sent.

    Attributes:
        path: the file (a ``.gz`` suffix: gunzipped when read).
        media_type: the block's media type (``application/pdf``).
        filename: the name the vendor is shown (``None``: the file's name
            without ``.gz``).
    """

    path: str
    media_type: str = "application/pdf"
    filename: str | None = None

    def load(self) -> DocumentBlock:
        """The ``DocumentBlock`` of the file's bytes, read now.

        Raises:
            DocumentError: the file cannot be read (gone, unreadable, corrupt
                ``.gz``, larger than ``agentflow.documents.reading.MAX_INPUT_BYTES``).
            MediaTypeError: the bytes are not of ``media_type``.
        """
        from agentflow.documents.reading import (  # the same reader as the listing
            InputError,
            read_bytes,
        )

        try:
            raw = read_bytes(Path(self.path))
        except InputError as exc:
            raise DocumentError(str(exc), path=self.path,
                                reason="the file was listed but could not be read when its "
                                       "input was sent") from None
        name = self.filename or Path(self.path.removesuffix(".gz")).name
        return DocumentBlock.from_bytes(raw, self.media_type, filename=name)


def resolve_media(media: Iterable[Any]) -> list[Any]:
    """``media`` with each ``DeferredDocument`` loaded (other blocks as they are).

    Raises:
        the errors of ``DeferredDocument.load``.
    """
    return [item.load() if isinstance(item, DeferredDocument) else item for item in media]
