"""What every framework adapter and scenario shares: the schema, the tasks,
the ground truth, and the environment that keeps frameworks off the network.

Imported inside the benchmark virtual environments (pydantic, orjson present).
"""

from __future__ import annotations

import orjson
from pydantic import BaseModel

from .offline import OFFLINE_ENV, apply_offline_env

__all__ = [
    "CONTACT_SCHEMA",
    "OFFLINE_ENV",
    "Contact",
    "apply_offline_env",
    "contact_for",
    "prompt_for",
]


class Contact(BaseModel):
    """A person in the CRM."""

    name: str
    email: str
    age: int
    tags: list[str]


CONTACT_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "email": {"type": "string"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "email", "age", "tags"],
    "additionalProperties": False,
}
"""``Contact`` as an OpenAI strict JSON Schema (the floors send it as is)."""

_FIRST = ("Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "John")
_LAST = ("Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson")
_TAGS = ("lead", "customer", "partner", "vip", "churn-risk", "newsletter", "beta", "emea")

def contact_for(i: int) -> Contact:
    """The ground truth of task ``i`` (deterministic)."""
    first, last = _FIRST[i % len(_FIRST)], _LAST[(i // len(_FIRST)) % len(_LAST)]
    tags = [_TAGS[(i + k * 3) % len(_TAGS)] for k in range(1 + i % 3)]
    return Contact(name=f"{first} {last}", email=f"{first.lower()}.{last.lower()}{i}@example.org",
                   age=20 + (i * 7) % 60, tags=tags)


def prompt_for(i: int) -> str:
    """The user message of task ``i``: the record to extract, as JSON (the
    chaos model answers with that record)."""
    record = orjson.dumps(contact_for(i).model_dump()).decode()
    return f"Extract the contact from this CRM record (ticket {i}): {record}"
