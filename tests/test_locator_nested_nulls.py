"""A null in a nested document written the examples' way, whose key the
document writes nowhere, is as sure as a found value (the session-19
newcomer's probe, finding 7: a Kubernetes manifest's absent ``namespace:``
was flagged on every real file): a nested format's keys are its fields. Not
where the key is written anywhere (another parent, another document), nor
where a key the examples never write, at the field's depth, holds a value
like the field's; a flat layout keeps its stricter test (``Courier: Evri``
may be the carrier: ``test_locator_trust``)."""

from __future__ import annotations

from pydantic import BaseModel

from agentflow import Example
from agentflow.extraction.confidence import ABSENT, UNLOCATED_NULL, field_confidence
from agentflow.grounding.locator_absence import absence_confirmed
from agentflow.grounding.locators import learn_locators
from agentflow.output.examples import check_examples


class Workload(BaseModel):
    kind: str | None = None
    namespace: str | None = None


WORKLOADS = [
    Example("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shop\n  namespace: store\n"
            "spec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: web\n"
            "        image: shop:1.8\n",
            Workload(kind="Deployment", namespace="store")),
    Example("apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: redis\n  namespace: cache\n"
            "spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: redis\n"
            "        image: redis:7.2\n",
            Workload(kind="StatefulSet", namespace="cache")),
]
DOC = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: redis-master\n  labels:\n"
       "    app: redis\n    tier: backend\nspec:\n  replicas: 1\n  minReadySeconds: 10\n"
       "  # keep one replica\n  template:\n    spec:\n      containers:\n      - name: master\n"
       "        image: redis:e2e\n")


def _null(doc: str) -> float:
    rules = learn_locators(check_examples(WORKLOADS, Workload), Workload)
    kind = (rules["kind"].values(doc) or [None])[0]
    return field_confidence(Workload(kind=kind, namespace=None), doc, {}, rules)[0]["namespace"]


def test_a_nested_key_written_nowhere_is_a_sure_null() -> None:
    rule = learn_locators(check_examples(WORKLOADS, Workload), Workload)["namespace"]
    assert rule.depth == 1 and not rule.shown_empty
    assert absence_confirmed(rule, DOC) and _null(DOC) == ABSENT  # deeper keys are others'


def test_a_nested_null_is_unsure_where_the_key_or_a_like_value_may_be() -> None:
    service = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: edge\n---\n")
    assert _null(service + DOC) < ABSENT  # the key in another document
    flow = DOC.replace("  labels:\n", "  annotations: {namespace: x}\n  labels:\n")
    assert _null(flow) == UNLOCATED_NULL  # the key written in another form
    other = DOC.replace("  minReadySeconds: 10\n", "  tenant: payments\n")
    assert _null(other) == UNLOCATED_NULL  # a key the examples never write, a word like store
    prose = DOC.replace("  minReadySeconds: 10\n", "  deployed to payments\n")
    assert _null(prose) == UNLOCATED_NULL
