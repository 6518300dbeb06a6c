"""Twenty tabs of one editor saving a label on one pair at once, against a real
PostgreSQL: one current label at the end, the others a chain of superseded ones."""

import threading

import pytest
from django.db import connections

from reviews.labels import labelling
from reviews.models import Label
from tests import factories
from tests.factories import TEXT, find, pair_of, reviewed_document

pytestmark = pytest.mark.postgres

TABS = 20


@pytest.mark.django_db(transaction=True)
def test_twenty_tabs_of_one_editor_end_with_one_current_label() -> None:
    editor = factories.user_create(username="editor", role="editor")
    a = reviewed_document(url="https://t.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://t.example.com/b", text=TEXT + " two", flips=1)
    find(a, b)
    pair = pair_of(a, b)
    start = threading.Barrier(TABS)
    errors: list[BaseException] = []

    def tab(i: int) -> None:
        try:
            start.wait()
            labelling.label_record(
                pair=pair,
                editor=editor,
                verdict="duplicate" if i % 2 else "distinct",
                reason_code="same_text",
                reason=f"tab {i}",
                region="body",
            )
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=tab, args=(i,)) for i in range(TABS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    labels = list(Label.objects.filter(editor=editor).order_by("id"))
    assert len(labels) == TABS
    assert [x.pk for x in labels if x.superseded_by_id is None] == [labels[-1].pk]
    # One chain: each label superseded by the next one saved.
    assert [x.superseded_by_id for x in labels[:-1]] == [x.pk for x in labels[1:]]
    assert pair.review_state.labels == 1
