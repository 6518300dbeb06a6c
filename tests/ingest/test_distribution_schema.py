"""The schema against the plan to spread past one machine (dedup_site/distribution.py,
docs/scaling.md): read from the models, no database needed."""

from django.apps import apps
from django.db import models

from dedup_site import distribution as dist


def _column(model: type[models.Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field), f"{model.__name__}.{name} is a relation, no column"
    return str(field.column)


def _columns(model: type[models.Model], names: tuple[str, ...] | list[str]) -> set[str]:
    return {_column(model, n) for n in names}


def _pk_columns(model: type[models.Model]) -> set[str]:
    pk = model._meta.pk
    assert pk is not None
    if isinstance(pk, models.CompositePrimaryKey):
        return {_column(model, f.name) for f in pk.fields}
    return {str(pk.column)}


def _by_table() -> dict[str, type[models.Model]]:
    return {m._meta.db_table: m for m in apps.get_models()}


def violations() -> set[tuple[str, str, str]]:
    tables = _by_table()
    colocated = {t: group for group in dist.COLOCATED for t in group}
    found: set[tuple[str, str, str]] = set()
    for table, column in dist.DISTRIBUTED.items():
        model = tables[table]
        if column not in _pk_columns(model):
            found.add((table, "primary key", ",".join(sorted(_pk_columns(model)))))
        for constraint in model._meta.constraints:
            if (
                isinstance(constraint, models.UniqueConstraint)
                and constraint.fields
                and column not in _columns(model, list(constraint.fields))
            ):
                found.add((table, "unique", str(constraint.name)))
        for field in model._meta.concrete_fields:
            if field.unique and not field.primary_key and field.column != column:
                found.add((table, "unique", str(field.column)))
            # A relation without a database constraint is the writer's check, not a
            # foreign key Citus must keep (documents are never deleted).
            if not isinstance(field, models.ForeignKey) or not field.db_constraint:  # type: ignore[attr-defined]
                continue
            target = field.related_model._meta.db_table
            if target in dist.REFERENCE:
                continue
            target_column = field.target_field.column
            kept = (
                target in dist.DISTRIBUTED
                and colocated.get(table) is not None
                and target in colocated[table]
                and field.column == column
                and target_column == dist.DISTRIBUTED[target]
            )
            if not kept:
                found.add((table, "foreign key", str(field.column)))
    return found


def test_the_distribution_plan_names_real_tables_and_columns() -> None:
    tables = _by_table()
    for table, column in dist.DISTRIBUTED.items():
        assert column in {f.column for f in tables[table]._meta.concrete_fields}, table
    for table in dist.REFERENCE:
        assert table in tables
    assert set().union(*dist.COLOCATED) == set(dist.DISTRIBUTED)


def test_a_relation_across_shards_is_a_database_foreign_key_no_more() -> None:
    """The relations the plan cannot keep as foreign keys are the writers' checks:
    still relations in Django (joins, the admin), without a constraint."""
    tables = _by_table()
    for table, name in (
        ("ingest_candidatepair", "b"),
        ("ingest_candidategroup", "representative"),
        ("ingest_groupmember", "document"),
    ):
        field = tables[table]._meta.get_field(name)
        assert isinstance(field, models.ForeignKey)
        assert not field.db_constraint, (table, name)  # type: ignore[attr-defined]


def test_keys_and_foreign_keys_keep_to_the_distribution_exactly_as_listed() -> None:
    """Every large table's primary key and unique constraints include its distribution
    column, and no foreign key joins two large tables across shards — except the
    documented violations, which must match exactly (a new one fails; a fixed one
    leaves the list)."""
    assert violations() == dist.KNOWN_VIOLATIONS
