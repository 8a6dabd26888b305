"""Contact extraction (e-mail signatures, web pages).

Name, phone, company and title are ``Grounded()``: a phone number the model
invents is sent back ("not found in the document") and never reaches a record;
e-mail is normalised to lower case, so it is marked ``Derived()``: the
extraction default (which grounds every other string) leaves it alone, and
records list it under ``ungrounded``.

    agentflow extract --schema examples/contact.py:Contact \\
        --input examples/data/contacts.jsonl --model openai:gpt-4o-mini
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from agentflow.grounding import Grounded
from agentflow.grounding.marker import Derived

INSTRUCTIONS = "Extract the contact details of the person the text is about."


class Contact(BaseModel):
    """A person's contact card."""

    name: Annotated[str, Grounded(case_sensitive=False)]
    email: Annotated[str | None, Derived()] = Field(None, description="lower-case e-mail address")
    phone: Annotated[str | None, Grounded()] = Field(None, description="phone number as written")
    company: Annotated[str | None, Grounded()] = None
    title: Annotated[str | None, Grounded()] = Field(None, description="job title")
