"""Deferred media (agentflow.documents.deferred): a PDF sent as a document block is read when
its input is sent and let go after, so a batch never holds every file's bytes."""

from __future__ import annotations

import gc
import io
import random
import tracemalloc
from pathlib import Path

import pytest
from fpdf import FPDF
from PIL import Image
from pydantic import BaseModel

from agentflow import DocumentError, ModelProfile
from agentflow.batch import ExtractInput, extract_many
from agentflow.content import DocumentBlock
from agentflow.documents.deferred import DeferredDocument, resolve_media
from agentflow.documents.inputs import iter_documents
from agentflow.testing import FunctionModel, RecordedRequest, Reply

FILES = 12


class Title(BaseModel):
    title: str


def heavy_pdf(seed: int) -> bytes:
    """A one-page PDF with a little text and ~300 KB of incompressible image."""
    rng = random.Random(seed)
    image = Image.frombytes("RGB", (320, 320), rng.randbytes(320 * 320 * 3))
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(0, 8, f"Report number {seed}")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf.image(buffer, x=10, y=30, w=100)
    return bytes(pdf.output())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for n in range(FILES):
        (tmp_path / f"r{n:02}.pdf").write_bytes(heavy_pdf(n))
    return tmp_path


def test_listed_documents_hold_no_pdf_bytes(folder: Path) -> None:
    size = (folder / "r00.pdf").stat().st_size
    assert size > 250_000
    list(iter_documents([str(folder / "r00.pdf")], deliver=lambda has_text: "document"))  # imports
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        docs = list(iter_documents([str(folder)], deliver=lambda has_text: "document"))
        gc.collect()  # pypdf's parsed objects form cycles: garbage, not held
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert len(docs) == FILES and all(isinstance(d.data, DeferredDocument) for d in docs)
    assert held < 2 * size, f"{held} bytes held for {FILES} PDFs of {size} bytes"
    first = docs[0].data
    assert isinstance(first, DeferredDocument)
    block = first.load()
    assert block.data == (folder / "r00.pdf").read_bytes() and block.filename == "r00.pdf"


def listing(folder: Path) -> tuple[list[Path], list[int]]:
    paths = sorted(folder.glob("*.pdf"))
    return paths, [p.stat().st_size for p in paths]


async def test_each_file_is_read_when_its_input_is_sent_and_let_go_after(folder: Path) -> None:
    paths, sizes = listing(folder)
    size = sizes[0]
    held: list[int] = []
    sent: list[tuple[bytes, int]] = []  # each sent file's last bytes and length, not its bytes

    def answer(request: RecordedRequest) -> Reply:
        [block] = next(m for m in request.messages if m.role == "user").media
        assert isinstance(block, DocumentBlock) and block.data is not None
        sent.append((block.data[-10:], len(block.data)))
        held.append(tracemalloc.get_traced_memory()[0])
        index = len(sent)
        if index < len(paths):  # the next file changes after the listing: read as it is now
            with paths[index].open("ab") as f:
                f.write(b"\n%touched\n")
        model.requests.clear()  # the test model's own log would hold every request
        return Reply(text=f'{{"title": "report {index}"}}')

    model = FunctionModel(answer, profile=ModelProfile(input_modalities=frozenset(
        {"text", "pdf"})))
    inputs = [ExtractInput(p.name, "", (DeferredDocument(str(p)),)) for p in paths]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        results = [r async for r in extract_many(model, inputs, Title, concurrency=1)]
    finally:
        tracemalloc.stop()
    assert all(r.ok for r in results) and len(sent) == FILES
    assert all(tail.endswith(b"%touched\n") for tail, _ in sent[1:])  # read when sent
    assert [length for _, length in sent] == listing(folder)[1]
    # at most the input being sent (bytes, base64 and the request) is held, never all
    assert max(held) - base < 4 * size, (max(held) - base, size)
    assert held[-1] - held[0] < 2 * size


def test_a_file_gone_before_it_is_sent_fails_that_input(tmp_path: Path) -> None:
    gone = DeferredDocument(str(tmp_path / "gone.pdf"))
    with pytest.raises(DocumentError, match=r"gone\.pdf") as info:
        resolve_media([gone])
    assert "listed" in info.value.reason
