"""The band index's two btrees become covering: each also carries the SimHash, the
document id and the fetch time (INCLUDE), so a band lookup reads the rows it nominates
from the index alone (an index-only scan, one branch per half: ingest/index.py) instead
of visiting each in the table. At 10M documents a k = 6 lookup nominates ~25,000 rows;
read from the table they cost more than the probes (docs/scaling.md, "The band index
at 10M"). The keys do not change (scheme b32x2, the functions of migration 0003).

On PostgreSQL the index is made on the partitioned table (ingest 0026): PostgreSQL
builds it on every partition, and a partition made later (dedup_partition_ensure) gets
it too. The rebuild locks the table against writes while it runs (about a minute per
index at 10M rows on two cores). Index-only scans skip the table for pages the
visibility map marks all-visible: autovacuum sets it after inserts; VACUUM after a bulk
load sets it at once. SQLite (the embedded default) has no such index: it scans.
"""

from typing import Any

from django.db import migrations

KEYS = ("dedup_band_key_0", "dedup_band_key_1")


def _create(include: str) -> list[str]:
    return [
        f"CREATE INDEX ingest_indexentry_{key} ON ingest_indexentry (method, {key}(simhash))"
        + include
        for key in KEYS
    ]


DROP = [f"DROP INDEX IF EXISTS ingest_indexentry_{key}" for key in KEYS]
COVERING = _create(" INCLUDE (simhash, document_id, fetched_at)")
PLAIN = _create("")


def _run(statements: list[str]) -> Any:
    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0028_pair_evidence_kept_once"),
    ]

    operations = [
        migrations.RunPython(_run(DROP + COVERING), _run(DROP + PLAIN)),
    ]
