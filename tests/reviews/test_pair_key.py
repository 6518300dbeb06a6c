"""Candidate pairs are keyed by (a, method, b), with the distribution column (dedup_site/
distribution.py, ingest 0041), and keep their serial `id` beside the key: the pair's
address, numbered by the database and indexed, not unique. The coordinator's relations
to a pair name that `id` without a database foreign key (ingest.models.PairRelation,
reviews 0015), and still resolve both ways."""

import copy
from typing import Any

import pytest
from django.db import IntegrityError, connection, models, transaction

from ingest.models import CandidatePair, PairOneToOne, PairRelation
from reviews.labels import labelling
from reviews.models import Adjudication, CalibrationSample, Claim, Label, PairState

pytestmark = pytest.mark.django_db

RELATIONS = (
    (Label, "labels"),
    (Claim, "claims"),
    (CalibrationSample, "calibration_samples"),
    (Adjudication, "adjudications"),
    (PairState, "review_state"),
)


def test_the_key_is_a_method_b_and_the_id_is_a_numbered_column_beside_it(pair) -> None:
    assert pair.pk == (pair.a_id, pair.method_id, pair.b_id)
    assert isinstance(pair.id, int)
    assert CandidatePair.objects.get(id=pair.id) == pair
    field = CandidatePair._meta.get_field("id")
    assert isinstance(field, models.BigIntegerField)
    assert not field.unique and not field.primary_key


def test_the_relations_to_a_pair_name_its_id_without_a_database_constraint() -> None:
    for model, _ in RELATIONS:
        field = model._meta.get_field("pair")
        assert isinstance(field, PairRelation), model
        assert isinstance(field, PairOneToOne) == (model is PairState)
        assert field.target_field.name == "id", model
        stored: Any = field  # django-stubs know no db_constraint on a ForeignKey
        assert not stored.db_constraint, model
        assert not field.check(), model


def test_the_relation_check_answers_only_for_a_relation_without_a_constraint() -> None:
    """With a database constraint the `id` is Django's check again (fields.E311):
    PostgreSQL keeps no foreign key to a column that is not unique."""
    field: Any = copy.copy(Label._meta.get_field("pair"))
    assert isinstance(field, PairRelation)
    assert field._check_unique_target() == []
    field.db_constraint = True  # type: ignore[attr-defined]
    assert [e.id for e in field._check_unique_target()] == ["fields.E311"]


def test_labels_and_states_on_a_pair_resolve_both_ways(pair, editor) -> None:
    label = labelling.label_record(
        pair=pair,
        editor=editor,
        verdict="duplicate",
        reason_code="same_text",
        reason="same body",
        region="body",
    )
    assert label.pair_id == pair.id
    stored = Label.objects.select_related("pair").get(id=label.id)
    assert stored.pair == pair and stored.pair.a_id == pair.a_id
    assert list(pair.labels.all()) == [label]
    assert list(CandidatePair.objects.filter(labels__verdict="duplicate")) == [pair]
    assert list(Label.objects.filter(pair__a=pair.a_id, pair__b=pair.b_id)) == [label]
    assert PairState.objects.get(pair=pair).labels == 1
    assert CandidatePair.objects.get(id=pair.id).review_state.labels == 1
    prefetched = CandidatePair.objects.prefetch_related("labels").get(id=pair.id)
    assert [x.id for x in prefetched.labels.all()] == [label.id]


def test_a_second_pair_of_the_same_documents_and_method_is_refused_by_the_key(pair) -> None:
    row = CandidatePair.objects.get(id=pair.id)
    row.id = None
    row._state.adding = True
    with pytest.raises(IntegrityError), transaction.atomic():
        row.save()


@pytest.mark.postgres
def test_the_catalogue_holds_the_key_the_id_index_and_no_foreign_key_to_pairs(db) -> None:
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT array_agg(a.attname ORDER BY k.n) FROM pg_constraint c
            CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
            WHERE c.conrelid = 'ingest_candidatepair'::regclass AND c.contype = 'p'
            """
        )
        assert cursor.fetchone()[0] == ["a_id", "method_id", "b_id"]
        cursor.execute(
            """
            SELECT i.relname, x.indisunique FROM pg_index x
            JOIN pg_class i ON i.oid = x.indexrelid
            JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
            WHERE x.indrelid = 'ingest_candidatepair'::regclass AND x.indnkeyatts = 1
              AND a.attname = 'id'
            """
        )
        assert cursor.fetchall() == [("pair_id", False)]
        cursor.execute(
            "SELECT attidentity, attnotnull FROM pg_attribute "
            "WHERE attrelid = 'ingest_candidatepair'::regclass AND attname = 'id'"
        )
        assert cursor.fetchone() == ("d", True)
        cursor.execute(
            "SELECT count(*) FROM pg_constraint WHERE contype IN ('u', 'f') "
            "AND (confrelid = 'ingest_candidatepair'::regclass "
            "OR (conrelid = 'ingest_candidatepair'::regclass AND contype = 'u'))"
        )
        assert cursor.fetchone()[0] == 0


@pytest.mark.postgres
def test_postgresql_refuses_a_second_insert_of_one_key(pair) -> None:
    """Past the ORM: a copy of the row (its `id` numbered anew by the identity) is
    refused by the key."""
    columns = ", ".join(
        str(f.column) for f in CandidatePair._meta.concrete_fields if f.column != "id"
    )
    with connection.cursor() as cursor, pytest.raises(IntegrityError), transaction.atomic():
        cursor.execute(
            f"INSERT INTO ingest_candidatepair ({columns}) "
            f"SELECT {columns} FROM ingest_candidatepair WHERE id = %s",
            [pair.id],
        )
    assert CandidatePair.objects.filter(a=pair.a_id, b=pair.b_id).count() == 1
