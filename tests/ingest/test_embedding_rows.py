"""Embedding rows as the database keeps them: one outcome per document and space, the
failed tries beside it, one row per try (two workers retrying at once store one)."""

import pytest
from django.db import IntegrityError, transaction

from tests import factories

pytestmark = pytest.mark.django_db


def test_the_database_keeps_one_outcome_and_one_row_per_try() -> None:
    doc = factories.indexed_document(url="https://e.example.com/a", text="A story.", simhash=0)
    factories.embedding_row(doc, status="error", message="first", attempt=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        factories.embedding_row(doc, status="error", message="a racing worker", attempt=1)
    factories.embedding_row(doc, status="error", message="second", attempt=2)
    factories.embedding_row(doc, attempt=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        factories.embedding_row(doc, status="empty", attempt=4)
    # Another model's row is another space.
    factories.embedding_row(doc, model="paraphrase-multilingual-MiniLM-L12-v2")
