"""A long document whose chunks disagree on a scalar merged by the default
``first`` rule: the record keeps the first value, stays ``ok``, and says the
chunks disagreed (``conflicts``, the field flagged for review), as the
``majority`` rule's records do (agentflow.extraction.merge)."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, Field

from agentflow import Chunking
from agentflow.batch import extract_many
from agentflow.extraction.confidence import CONFLICTED, REVIEW_BELOW
from agentflow.extraction.records import to_record
from agentflow.testing import FunctionModel, RecordedRequest, Reply


class Invoice(BaseModel):
    customer: str | None = None
    total: int | None = None
    items: list[str] = Field(default_factory=list)


def reads_its_chunk(request: RecordedRequest) -> Reply:
    text = request.messages[-1].text
    customers = re.findall(r"Customer: (\w+)", text)
    totals = re.findall(r"Total: (\d+)", text)
    return Reply(text=json.dumps({"customer": customers[0] if customers else None,
                                  "total": int(totals[0]) if totals else None,
                                  "items": re.findall(r"Item: (\w+)", text)}))


def document(second_customer: str, second_total: int) -> str:
    return ("Customer: Ann\nTotal: 10\n"
            + "".join(f"Item: a{k}\nfill {'w' * 50}\n" for k in range(20))
            + f"Customer: {second_customer}\nTotal: {second_total}\n"
            + "".join(f"Item: b{k}\nfill {'w' * 50}\n" for k in range(20)))


async def test_chunks_that_disagree_under_the_first_rule_are_reported_and_flagged() -> None:
    (r,) = [r async for r in extract_many(FunctionModel(reads_its_chunk),
                                          [("d", document("Bob", 99))], Invoice,
                                          chunking=Chunking(max_chars=700))]
    assert r.ok and r.chunks is not None and r.chunks.total > 1
    assert (r.output.customer, r.output.total, len(r.output.items)) == ("Ann", 10, 40)
    by_path = {c.path: c for c in r.conflicts}
    assert set(by_path) == {"customer", "total"}
    assert by_path["customer"].rule == "first" and by_path["customer"].chosen == "Ann"
    assert [v for v, _, _ in by_path["customer"].values] == ["Ann", "Bob"]
    assert [v for v, _, _ in by_path["total"].values] == [10, 99]
    assert r.confidence["customer"] <= CONFLICTED < REVIEW_BELOW
    assert {"customer", "total"} <= set(r.needs_review)
    record = to_record(r)
    assert [(c["path"], c["rule"], c["chosen"]) for c in record["conflicts"]] == [
        ("customer", "first", "Ann"), ("total", "first", 10)]


async def test_chunks_that_agree_report_no_conflict() -> None:
    (r,) = [r async for r in extract_many(FunctionModel(reads_its_chunk),
                                          [("d", document("Ann", 10))], Invoice,
                                          chunking=Chunking(max_chars=700))]
    assert r.ok and r.chunks is not None and r.chunks.total > 1
    assert r.conflicts == () and r.output.customer == "Ann"
    assert r.confidence["customer"] > CONFLICTED
