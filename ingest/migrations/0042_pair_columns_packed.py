"""The candidate pairs' columns in the order that packs their rows, on PostgreSQL: the
8-byte columns first, then 4, 2 and 1, then the variable-length ones.

The pair table grew column by column (a dropped one among them), so its rows carried
padding between columns: 128 bytes a stored pair of the scale bench where its values
need 117 (a 32-byte header with the null bitmap of its 26 columns, 85 bytes of values
with a doc type of 7 characters), which PostgreSQL aligns to 120. The rows are copied in
the order of their `id` (`_table_rebuild`: keys, checks, foreign keys, indexes, the
permanence triggers, the grants and the numbering kept, as the table's owner). No
foreign key points here since reviews 0015. SQLite (the embedded default) has no such
padding to save: nothing changes there. The reverse copies the rows back into the
order the table had grown to (without the dropped column).
"""

import importlib
from typing import Any

from django.db import migrations

rebuild = importlib.import_module("ingest.migrations._table_rebuild")

TABLE = "ingest_candidatepair"
ORDER = (
    # 8 bytes
    "id",
    "a_id",
    "b_id",
    "created_at",
    "cosine",
    # 4 bytes
    "ratio",
    "token_set_ratio",
    "length_ratio",
    "containment",
    "a_in_b",
    "b_in_a",
    "shared_passages",
    # 2 bytes
    "method_id",
    "distance",
    "full_distance",
    "band",
    "channels",
    "uncertainty",
    # 1 byte
    "exact",
    "numbers_differ",
    "ids_differ",
    "title_differs",
    "below_floor",
    # variable: short text, then the JSON ones (mostly NULL)
    "doc_type",
    "guard_details",
    "evidence",
)


# The order the table had grown to (ingest 0002 to 0041), less `xor` (dropped by 0030).
BEFORE = (
    "id",
    "doc_type",
    "distance",
    "full_distance",
    "band",
    "exact",
    "ratio",
    "token_set_ratio",
    "length_ratio",
    "containment",
    "numbers_differ",
    "ids_differ",
    "title_differs",
    "guard_details",
    "below_floor",
    "created_at",
    "a_id",
    "b_id",
    "method_id",
    "a_in_b",
    "b_in_a",
    "channels",
    "evidence",
    "shared_passages",
    "uncertainty",
    "cosine",
)


def _run(order: tuple[str, ...]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        with schema_editor.connection.cursor() as cursor:
            rebuild.table_rebuild(cursor, TABLE, order, order_by="id")

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0041_pair_composite_key"),
    ]

    operations = [
        migrations.RunPython(_run(ORDER), _run(BEFORE)),
    ]
