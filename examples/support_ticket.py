"""Support-ticket classification.

    agentflow extract --schema examples/support_ticket.py:TicketTriage \\
        --input examples/data/tickets.jsonl --model anthropic:claude-sonnet-4-5
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

INSTRUCTIONS = (
    "Classify the customer support ticket: its category, priority and sentiment, and "
    "summarize the problem in one sentence."
)


class TicketTriage(BaseModel):
    """How to route a support ticket."""

    category: Literal["billing", "bug", "account", "feature_request", "other"]
    priority: Literal["low", "normal", "high", "urgent"]
    sentiment: Literal["negative", "neutral", "positive"]
    summary: str = Field(description="one sentence")
    needs_human: bool = Field(description="true when an agent must answer in person")
