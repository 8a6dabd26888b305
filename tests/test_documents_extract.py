"""`agentflow extract` over real PDFs and a real HTML page, on a fake vendor and on
the embedded model; then `agentflow report` over the records.

The PDFs are made here (fpdf2), read by pypdf; the HTML page is parsed by
Lexbor. Every span must point into the text the model saw (the extracted text,
re-read here through ``agentflow.documents``) and name the right page.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentflow.cli import main
from agentflow.documents import load_document, page_of
from agentflow.providers.local import bundled_available
from tests.fakes.base import FakeReply
from tests.fakes.openai import OpenAIFake
from tests.pdfs import report_html_bytes, scanned_pdf, text_pdf

HAVE_LOCAL = bundled_available()

SCHEMA = '''
from typing import Annotated
from pydantic import BaseModel, Field
from agentflow import Grounded

INSTRUCTIONS = ("Extract from the report: person is who prepared or reported it; site is the "
                "place; amount is the total amount of money with its currency.")

class Report(BaseModel):
    person: Annotated[str, Grounded()] = Field(max_length=40)
    site: Annotated[str | None, Grounded()] = Field(None, max_length=60)
    amount: Annotated[str | None, Grounded()] = Field(None, max_length=30)
'''

ANSWERS = {  # what a good model answers, by a phrase of the document
    "Quarterly maintenance": {"person": "Dana Whitfield", "site": "North Ridge pumping station",
                              "amount": "2,100.00 EUR"},
    "Incident 4471": {"person": "Renée Façade", "site": "Hochwaldstraße 12, Zürich",
                      "amount": "2\u202f100 €"},
}


def user_text(body: Any) -> str:
    """The text parts of the request's user message (content blocks aside)."""
    content = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if part.get("type") == "text")


def user_files(body: Any) -> list[bytes]:
    """The PDFs sent as ``file`` parts of the user message (decoded)."""
    content = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if isinstance(content, str):
        return []
    return [base64.b64decode(part["file"]["file_data"].partition(",")[2])
            for part in content if part.get("type") == "file"]


def answer(body: Any) -> FakeReply:
    text = user_text(body)
    for phrase, output in ANSWERS.items():
        if phrase in text:
            return FakeReply(text=json.dumps(output, ensure_ascii=False))
    return FakeReply(text=json.dumps({"person": "nobody"}))


def documents(folder: Path) -> Path:
    folder.mkdir()
    (folder / "report.pdf").write_bytes(text_pdf())
    (folder / "incident.html").write_bytes(report_html_bytes())
    (folder / "scan.pdf").write_bytes(scanned_pdf(2))
    (folder / "locked.pdf").write_bytes(text_pdf(owner_password="o", user_password="u"))
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00garbage" * 50)
    return folder


def read_records(path: Path) -> dict[str, dict[str, Any]]:
    return {Path(r["id"]).name: r for r in map(orjson.loads, path.read_bytes().splitlines())}


def check_spans(record: dict[str, Any], path: Path) -> None:
    """Every span is the output value's text in the extracted text, on the page named."""
    seen = load_document(path.read_bytes(), name=str(path))
    for field, spans in record.get("spans", {}).items():
        for index, (start, end) in enumerate(spans):
            assert seen.text[start:end] == record["output"][field], (field, start, end)
            if seen.pages is not None:
                assert record["span_pages"][field][index] == page_of(start, seen.pages)
    if seen.pages is not None:
        assert record["pages"] == [list(p) for p in seen.pages]
    else:
        assert "pages" not in record and "span_pages" not in record


async def run_cli(*argv: str) -> int:
    return await anyio.to_thread.run_sync(main, list(argv))


async def test_pdfs_and_html_through_extract_on_a_fake_vendor(tmp_path: Path) -> None:
    folder = documents(tmp_path / "in")
    (tmp_path / "report_schema.py").write_text(SCHEMA)
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as fake:
        fake.default = answer
        status = await run_cli(
            "extract", "--schema", f"{tmp_path / 'report_schema.py'}:Report", "--input",
            str(folder), "--model", "openai:gpt-4o-mini", "--base-url", fake.url,
            "--api-key", "k", "--out", str(out))
        sent = [next(m["content"] for m in r.body["messages"] if m["role"] == "user")
                for r in fake.requests]
    assert status == 1  # three inputs fail, each with its record
    assert len(sent) == 2  # only the readable documents reached the model
    assert any("Valve V-17 leaks at the flange." in s and "%PDF" not in s for s in sent)
    assert any("Unit\tStatus" in s and "<td>" not in s and "tracking" not in s for s in sent)
    records = read_records(out)
    assert set(records) == {"report.pdf", "incident.html", "scan.pdf", "locked.pdf",
                            "broken.pdf"}

    pdf = records["report.pdf"]
    assert pdf["ok"] and pdf["output"] == ANSWERS["Quarterly maintenance"]
    assert pdf["span_pages"] == {"person": [1], "site": [1], "amount": [3]}
    assert len(pdf["pages"]) == 3
    check_spans(pdf, folder / "report.pdf")
    html = records["incident.html"]
    assert html["ok"] and html["output"] == ANSWERS["Incident 4471"]
    assert set(html["spans"]) == {"person", "site", "amount"}
    check_spans(html, folder / "incident.html")

    scan = records["scan.pdf"]["error"]  # the model reads PDFs, but grounding needs text
    assert scan["type"] == "NoTextLayerError" and "without a text layer" in scan["message"]
    assert "grounded" in scan["reason"] and "OCR" in scan["reason"]
    assert records["scan.pdf"]["attempts"] == 0
    locked = records["locked.pdf"]["error"]
    assert locked["type"] == "EncryptedDocumentError" and "password" in locked["reason"]
    broken = records["broken.pdf"]["error"]
    assert broken["type"] == "CorruptDocumentError" and broken["reason"]

    # the review page highlights the spans in the extracted text, not in the raw file
    page = tmp_path / "review.html"
    assert await run_cli("report", str(out), "-o", str(page), "--input", str(tmp_path)) == 0
    shown = page.read_text()
    for value in ("Dana Whitfield", "2,100.00 EUR", "Renée Façade", "Hochwaldstraße 12"):
        assert re.search(rf"<mark[^>]*>{re.escape(value)}", shown), value
    assert "%PDF" not in shown and "differ" not in shown.lower().split("summary")[0]
    assert "NoTextLayerError" in shown and "grounded fields need one" in shown


async def test_a_pdf_by_its_bytes_and_a_cut_prefix_moves_the_pages(tmp_path: Path) -> None:
    (tmp_path / "report.bin").write_bytes(text_pdf())
    schema = tmp_path / "s.py"
    schema.write_text(SCHEMA + "\ndef prepare(text):\n    return text[text.index('Findings'):]\n")
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as fake:
        fake.default = lambda body: FakeReply(text=json.dumps(
            {"person": "Ines Okafor", "site": None, "amount": "860.00 EUR"}))
        await run_cli("extract", "--schema", f"{schema}:Report", "--input",
                      str(tmp_path / "report.bin"), "--model", "openai:gpt-4o-mini",
                      "--base-url", fake.url, "--api-key", "k", "--out", str(out))
        first = fake.requests[0].body
    record = read_records(out)["report.bin"]  # a PDF by its bytes, whatever its name
    seen = load_document(text_pdf())
    offset = seen.text.index("Findings")
    assert record["source_offset"] == offset
    assert record["pages"][0] == [0, 0] and record["pages"][1][0] == 0  # page 1 was cut away
    assert record["span_pages"] == {"person": [3], "amount": [3]}
    (start, end), = record["spans"]["person"]
    assert seen.text[offset + start:offset + end] == "Ines Okafor"
    assert "Quarterly" not in json.dumps(first)  # the model saw the text prepare() kept


PLAIN_SCHEMA = '''
from pydantic import BaseModel, Field

class Report(BaseModel):
    person: str = Field(max_length=40)
    amount: str | None = Field(None, max_length=30)
'''


async def test_pdfs_as_document_blocks_to_a_model_that_reads_them(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(text_pdf())
    (tmp_path / "scan.pdf").write_bytes(scanned_pdf(2))
    (tmp_path / "plain.py").write_text(PLAIN_SCHEMA)
    (tmp_path / "grounded.py").write_text(SCHEMA)
    reply = {"person": "Dana Whitfield", "amount": "2,100.00 EUR"}

    async def extract(*args: str, schema: str = "plain.py") -> tuple[int, list[Any]]:
        out = tmp_path / "out.jsonl"
        out.unlink(missing_ok=True)
        async with OpenAIFake() as fake:
            fake.default = lambda body: FakeReply(text=json.dumps(reply))
            status = await run_cli(
                "extract", "--schema", f"{tmp_path / schema}:Report", "--model",
                "openai:gpt-4o-mini", "--base-url", fake.url, "--api-key", "k", "--out",
                str(out), *args)
            bodies = [r.body for r in fake.requests]
        records = list(read_records(out).values()) if out.exists() else []
        return status, [*records, bodies]

    # auto: a scan (no text layer) goes as the PDF itself; the model's answer is kept
    status, (record, bodies) = await extract("--input", str(tmp_path / "scan.pdf"))
    assert status == 0 and record["ok"] and record["sent_as"] == "document"
    assert user_files(bodies[0]) == [(tmp_path / "scan.pdf").read_bytes()]
    assert user_text(bodies[0]) == ""
    assert "spans" not in record and "pages" not in record

    # --pdf document: the PDF and its text layer beside it; spans and pages from the text
    status, (record, bodies) = await extract("--input", str(tmp_path / "report.pdf"),
                                             "--pdf", "document", schema="grounded.py")
    assert status == 0 and record["sent_as"] == "document+text"
    assert user_files(bodies[0]) == [(tmp_path / "report.pdf").read_bytes()]
    assert "Valve V-17" in user_text(bodies[0])
    assert record["span_pages"] == {"person": [1], "amount": [3]}
    check_spans(record, tmp_path / "report.pdf")

    # --pdf text: the text layer only; the scan is a NoTextLayerError that says what to do
    status, (record, bodies) = await extract("--input", str(tmp_path / "scan.pdf"),
                                             "--pdf", "text")
    assert status == 1 and bodies == [] and record["error"]["type"] == "NoTextLayerError"
    assert "model that reads PDF documents" in record["error"]["reason"]

    # --pdf document on a model without PDF input: refused before any request (exit 2)
    async with OpenAIFake() as fake:
        status = await run_cli(
            "extract", "--schema", f"{tmp_path / 'plain.py'}:Report", "--model",
            "openai:o3-mini", "--base-url", fake.url, "--api-key", "k", "--input",
            str(tmp_path / "scan.pdf"), "--pdf", "document")
        assert status == 2 and fake.requests == []


async def test_a_scan_for_a_model_without_document_input_is_a_no_text_layer_record(
        tmp_path: Path) -> None:
    (tmp_path / "scan.pdf").write_bytes(scanned_pdf(1))
    (tmp_path / "plain.py").write_text(PLAIN_SCHEMA)
    out = tmp_path / "out.jsonl"
    async with OpenAIFake() as fake:  # o3-mini takes text only (its profile)
        status = await run_cli(
            "extract", "--schema", f"{tmp_path / 'plain.py'}:Report", "--model",
            "openai:o3-mini", "--base-url", fake.url, "--api-key", "k", "--input",
            str(tmp_path / "scan.pdf"), "--out", str(out))
        assert fake.requests == []
    (record,) = read_records(out).values()
    assert status == 1 and record["error"]["type"] == "NoTextLayerError"
    assert "its one page has no text" in record["error"]["reason"]


@pytest.mark.skipif(not HAVE_LOCAL, reason="the 'local' extra is not installed")
async def test_pdfs_and_html_through_extract_on_the_embedded_model(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(text_pdf())
    (folder / "incident.html").write_bytes(report_html_bytes())
    (folder / "scan.pdf").write_bytes(scanned_pdf(1))
    (tmp_path / "report_schema.py").write_text(SCHEMA)
    out = tmp_path / "out.jsonl"
    status = await run_cli("extract", "--schema", f"{tmp_path / 'report_schema.py'}:Report",
                           "--input", str(folder), "--model", "local", "--out", str(out))
    assert status == 1  # the scanned PDF at least
    records = read_records(out)
    assert set(records) == {"report.pdf", "incident.html", "scan.pdf"}
    assert records["scan.pdf"]["error"]["type"] == "NoTextLayerError"
    for name in ("report.pdf", "incident.html"):
        record = records[name]
        assert record["attempts"] >= 1 and record["usage"]["output_tokens"] > 0
        if not record["ok"]:  # a 270M base model: only a typed refusal may fail it
            assert record["error"]["type"] in ("DegenerateOutputError", "GroundingError")
            continue
        assert record["spans"]  # the grammar made every grounded value a verbatim span
        check_spans(record, folder / name)
    assert "pages" in records["report.pdf"]
