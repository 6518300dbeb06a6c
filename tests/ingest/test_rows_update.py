"""rows_update: the fields of many rows written in one statement on PostgreSQL (a save
each elsewhere), every value as the rows hold it."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest.models import CandidateGroup, FingerprintMethod, rows_update
from tests import factories

pytestmark = pytest.mark.django_db


def test_every_field_of_every_row_is_written_as_given() -> None:
    doc = factories.indexed_document(
        url="https://r.example.com/1", text="Some words here.", simhash=1
    )
    method = FingerprintMethod.objects.get(is_active=True)
    groups = CandidateGroup.objects.bulk_create(
        [CandidateGroup(method=method, kind="near", rule="connected") for _ in range(3)]
    )
    untouched = CandidateGroup.objects.create(method=method, kind="near", rule="connected")
    groups[0].representative_id = doc.pk
    groups[0].review_note = "a person's note with 'quotes', \\ and\nlines; DROP TABLE x"
    groups[0].diameter = None
    groups[1].diameter = 7
    groups[1].needs_review = True
    groups[2].size = 12
    groups[2].kind = "exact"
    names = ["representative", "review_note", "diameter", "needs_review", "size", "kind"]
    with CaptureQueriesContext(connection) as ctx:
        rows_update(groups, names)
    if connection.vendor == "postgresql":
        assert len(ctx.captured_queries) == 1
    stored = {
        g.pk: g
        for g in CandidateGroup.objects.filter(pk__in=[g.pk for g in groups] + [untouched.pk])
    }
    for g in groups:
        s = stored[g.pk]
        assert (s.representative_id, s.review_note, s.diameter, s.needs_review, s.size, s.kind) == (
            g.representative_id,
            g.review_note,
            g.diameter,
            g.needs_review,
            g.size,
            g.kind,
        )
    assert (stored[untouched.pk].size, stored[untouched.pk].review_note) == (0, "")
