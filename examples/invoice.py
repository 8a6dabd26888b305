"""Invoice extraction with line items.

    agentflow extract --schema examples/invoice.py:Invoice \\
        --input examples/data/invoices.jsonl --model gemini:gemini-2.5-flash
"""

from __future__ import annotations

from pydantic import BaseModel, Field

INSTRUCTIONS = (
    "Extract the invoice. Amounts are numbers in the invoice currency; dates are ISO "
    "8601 (YYYY-MM-DD)."
)


class LineItem(BaseModel):
    description: str
    quantity: float
    unit_price: float
    amount: float


class Invoice(BaseModel):
    """An invoice and its line items."""

    invoice_number: str
    issue_date: str = Field(description="YYYY-MM-DD")
    vendor: str
    customer: str
    currency: str = Field(description="ISO 4217 code, e.g. EUR")
    items: list[LineItem]
    total: float
