"""The review queue reads the groups a review status can hold through their partial
index (ingest 0043, `group_flagged`), not by a scan of every group: at 10M documents
that scan of ~259k groups was most of the queue page (docs/scaling.md)."""

from typing import Any

import pytest
from django.db import connection

from ingest.models import CandidateGroup, FingerprintMethod
from reviews.queue.group_queue import queue_group_facts
from reviews.queue.queue_filters import QueueFilters

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def _groups(method: FingerprintMethod, n: int, flagged_every: int) -> None:
    CandidateGroup.objects.bulk_create(
        CandidateGroup(
            method=method,
            kind=CandidateGroup.Kind.NEAR,
            rule="test",
            size=2,
            needs_review=i % flagged_every == 0,
        )
        for i in range(n)
    )


def _statements(run) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []

    def record(execute, sql, params, many, context):
        seen.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        run()
    return seen


def _plan(sql: str, params: Any) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize("disputed_count", [0, 2])
def test_the_queue_reads_only_the_flagged_groups(disputed_count: int) -> None:
    method = FingerprintMethod.objects.create(key="plan-test", params={})
    _groups(method, 20_000, flagged_every=200)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_candidategroup")
    flagged = set(CandidateGroup.objects.filter(needs_review=True).values_list("pk", flat=True))
    unflagged = CandidateGroup.objects.filter(needs_review=False).order_by("pk")
    disputed = list(unflagged.values_list("pk", flat=True)[:disputed_count])
    seen = _statements(lambda: queue_group_facts(filters=QueueFilters(), disputed=disputed))
    (sql, params) = next((s, p) for s, p in seen if "WITH g " in s)
    plan = _plan(sql, params)
    assert "group_flagged" in plan, plan
    assert "Seq Scan on ingest_candidategroup" not in plan, plan
    # The index answers what the scan did: the flagged groups and the disputed ones.
    found = {g.pk for g in queue_group_facts(filters=QueueFilters(), disputed=disputed)}
    assert found == flagged | set(disputed)
    assert len(flagged) == 100
