"""`field__any_of=ids` answers what `field__in=ids` answers (one array parameter on
PostgreSQL, IN elsewhere), for primary keys, foreign keys, exclusions and no ids."""

import pytest

from ingest.models import Document, Fingerprint, int_array
from tests import factories

pytestmark = pytest.mark.django_db


def test_any_of_answers_what_in_answers() -> None:
    docs = [
        factories.indexed_document(url=f"https://any.example/{i}", text=f"text {i}", simhash=i)
        for i in range(6)
    ]
    ids = [d.pk for d in docs]
    for subset in ([], ids[:1], ids[1:4], ids, [*ids, 10**12]):
        assert set(Document.objects.filter(pk__any_of=subset)) == set(
            Document.objects.filter(pk__in=subset)
        )
        assert sorted(
            Fingerprint.objects.filter(document_id__any_of=subset).values_list("pk", flat=True)
        ) == sorted(Fingerprint.objects.filter(document_id__in=subset).values_list("pk", flat=True))
        assert set(Document.objects.exclude(pk__any_of=subset)) == set(
            Document.objects.exclude(pk__in=subset)
        )
    # Any iterable of ints, as __in takes.
    assert Document.objects.filter(pk__any_of=(i for i in ids[:2])).count() == 2
    assert Document.objects.filter(pk__any_of=set(ids[:3])).count() == 3


def test_int_array_literal() -> None:
    assert int_array([]) == "{}"
    assert int_array([3, -2, 2**63 - 1]) == "{3,-2,9223372036854775807}"
