"""The last key that broke the distribution plan (dedup_site/distribution.py,
docs/scaling.md "Past one machine: Citus"): candidate pairs are keyed by the unique
they had, (a_id, method_id, b_id), which leads with the distribution column, and keep
their serial `id` beside the key, numbered as before (PostgreSQL keeps the identity
column when the key is dropped; on SQLite the writer numbers it, ingest.models.
NumberedModel), with a plain index where the old primary key was: the pair's address
(the desk's URLs, the five relations of reviews 0015) and the queue's last order column.
A table has as many indexes as before.

The relations that pointed at the old key lost their foreign keys in reviews 0015,
which runs first; on PostgreSQL a foreign key still pointing at the table stops the
migration, named, before anything changes.

On PostgreSQL the table is changed in place as its owner (no row trigger fires on
ALTER TABLE: the permanent rule of ingest 0020 stays as it is, and the grants stay with
the table). PostgreSQL makes a primary key of an existing index only when no constraint
owns it (ADD CONSTRAINT ... PRIMARY KEY USING INDEX refuses the index of a UNIQUE
constraint), and `pair_once_per_method` is a constraint (ingest 0030): the key's btree
is built once here, and the `id` index too (the old key's went with its constraint);
both in the migration's transaction, under the table's lock. On SQLite the table is
rebuilt with its rows. The reverse is given for PostgreSQL.
"""

from typing import Any

from django.db import migrations, models

import ingest.models

TABLE = "ingest_candidatepair"
KEY = ("a_id", "method_id", "b_id")
UNIQUE = "pair_once_per_method"
ID_INDEX = "pair_id"


def _columns(columns: tuple[str, ...]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


def _referring(cursor: Any) -> list[str]:
    cursor.execute(
        "SELECT conrelid::regclass::text || '.' || conname FROM pg_constraint "
        "WHERE contype = 'f' AND confrelid = %s::regclass ORDER BY 1",
        [TABLE],
    )
    return [name for (name,) in cursor.fetchall()]


def key_composite(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        schema_editor._remake_table(apps.get_model("ingest", "CandidatePair"))
        return
    with schema_editor.connection.cursor() as cursor:
        referring = _referring(cursor)
        if referring:
            raise RuntimeError(
                f"foreign keys still point at {TABLE} (its key changes): "
                + ", ".join(referring)
            )
        cursor.execute(f'ALTER TABLE "{TABLE}" DROP CONSTRAINT "{TABLE}_pkey"')
        cursor.execute(f'ALTER TABLE "{TABLE}" DROP CONSTRAINT "{UNIQUE}"')
        cursor.execute(
            f'ALTER TABLE "{TABLE}" ADD CONSTRAINT "{TABLE}_pkey" PRIMARY KEY ({_columns(KEY)})'
        )
        cursor.execute(f'CREATE INDEX "{ID_INDEX}" ON "{TABLE}" ("id")')


def key_serial(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        raise NotImplementedError("ingest 0041 is not reversible on SQLite")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX "{ID_INDEX}"')
        cursor.execute(f'ALTER TABLE "{TABLE}" DROP CONSTRAINT "{TABLE}_pkey"')
        cursor.execute(f'ALTER TABLE "{TABLE}" ADD CONSTRAINT "{TABLE}_pkey" PRIMARY KEY ("id")')
        cursor.execute(f'ALTER TABLE "{TABLE}" ADD CONSTRAINT "{UNIQUE}" UNIQUE ({_columns(KEY)})')


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0040_fingerprint_status_derived"),
        # The relations to the pairs' old key lose their foreign keys first.
        ("reviews", "0015_pair_relations_by_id"),
    ]

    operations = [
        # The key: the state here, the table in key_composite.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(model_name="candidatepair", name=UNIQUE),
                migrations.AlterField(
                    model_name="candidatepair",
                    name="id",
                    field=models.BigIntegerField(
                        db_default=ingest.models.DatabaseNumbered(), editable=False
                    ),
                ),
                migrations.AddField(
                    model_name="candidatepair",
                    name="pk",
                    field=models.CompositePrimaryKey(
                        "a",
                        "method",
                        "b",
                        blank=True,
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                migrations.AddIndex(
                    model_name="candidatepair",
                    index=models.Index(fields=["id"], name=ID_INDEX),
                ),
            ],
        ),
        migrations.RunPython(key_composite, key_serial),
    ]
