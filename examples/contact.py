"""Contact extraction (e-mail signatures, web pages).

    agentflow extract --schema examples/contact.py:Contact \\
        --input examples/data/contacts.jsonl --model openai:gpt-4o-mini
"""

from __future__ import annotations

from pydantic import BaseModel, Field

INSTRUCTIONS = "Extract the contact details of the person the text is about."


class Contact(BaseModel):
    """A person's contact card."""

    name: str
    email: str | None = Field(None, description="lower-case e-mail address")
    phone: str | None = Field(None, description="phone number as written")
    company: str | None = None
    title: str | None = Field(None, description="job title")
