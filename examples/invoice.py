"""Invoice extraction with line items.

    agentflow extract --schema examples/invoice.py:Invoice \\
        --input examples/data/invoices.jsonl                       # the embedded model
    agentflow extract --schema examples/invoice.py:Invoice \\
        --input examples/data/invoices.jsonl --model gemini:gemini-2.5-flash

Every string and the item list are bounded (``max_length``): the embedded
model's grammar then cannot write past its output limit (1024 tokens) on a
long or rambling description, which it did with unbounded fields.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

INSTRUCTIONS = (
    "Extract the invoice as JSON. invoice_number follows 'No.'; issue_date is the date, "
    "written YYYY-MM-DD; vendor follows 'From:'; customer follows 'To:'; currency is the "
    "three-letter code after the amounts; items are the lines 'quantity x description @ "
    "unit_price = amount'; total is the amount after 'TOTAL'. Amounts are numbers."
)
"""Where each field is, in words (the bundled base model never sees the schema's
descriptions)."""
MAX_CHARS = 3000


class LineItem(BaseModel):
    description: str = Field(max_length=60)
    quantity: float
    unit_price: float
    amount: float


class Invoice(BaseModel):
    """An invoice and its line items."""

    invoice_number: str = Field(max_length=40)
    issue_date: str = Field(description="YYYY-MM-DD", max_length=10)
    vendor: str = Field(max_length=80)
    customer: str = Field(max_length=80)
    currency: str = Field(description="ISO 4217 code, e.g. EUR", max_length=3)
    items: list[LineItem] = Field(max_length=10)
    total: float
