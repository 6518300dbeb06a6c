"""What was crawled and what is derived from it is permanent in PostgreSQL itself for the
application's role: no DELETE, no TRUNCATE, and an UPDATE only of the columns that
legitimately change (docs/database-permanence.md). The tables' owner is not bound, so a
later migration may still move or reformat these rows (and says so in its docstring).

One generic row function (dedup_site.appendonly.PERMANENT_FUNCTION_SQL) reads each
table's rule from its trigger's arguments; the rules are copied here as they were when
this migration was written (dedup_site.permanence holds today's, and the tests compare
the installed triggers with it). SQLite has no roles and no such triggers."""

from django.db import migrations

from dedup_site.appendonly import permanent, permanent_functions

# (table, kind, mutable columns, sealing column, binds the owner too)
RULES: list[tuple[str, str, tuple[str, ...], str, bool]] = [
    ("ingest_site", "permanent", ("priority", "default_doc_type"), "", False),
    (
        "ingest_crawlbatch",
        "permanent",
        (
            "status",
            "bytes_total",
            "bytes_read",
            "records_read",
            "stored",
            "already_stored",
            "exact_duplicates",
            "skipped",
            "error_count",
            "finished_at",
            "heartbeat_at",
        ),
        "",
        False,
    ),
    ("ingest_batcherror", "append-only", (), "", False),
    (
        "ingest_document",
        "permanent",
        (
            "declared_encoding",
            "detected_encoding",
            "doc_type",
            "doc_type_source",
            "doc_type_evidence",
        ),
        "",
        False,
    ),
    ("ingest_documentbody", "append-only", (), "", False),
    ("ingest_extraction", "append-only", (), "", False),
    ("ingest_embedding", "append-only", (), "", False),
    (
        "ingest_fingerprintmethod",
        "permanent",
        ("is_active", "retired_at", "description"),
        "",
        False,
    ),
    ("ingest_fingerprint", "append-only", (), "", False),
    ("ingest_indexentry", "append-only", (), "", False),
    ("ingest_passageset", "append-only", (), "", False),
    ("ingest_passagetemplate", "append-only", (), "", False),
    ("ingest_passagecommon", "permanent", ("df",), "", False),
    ("ingest_donotmatch", "permanent", ("revoked_at", "revoked_by"), "revoked_at", False),
    (
        "ingest_candidatepair",
        "permanent",
        ("cosine", "channels", "below_floor", "uncertainty", "evidence"),
        "",
        False,
    ),
    (
        "ingest_candidategroup",
        "permanent",
        (
            "kind",
            "representative_id",
            "representative_reason",
            "representative_by",
            "representative_locked",
            "size",
            "diameter",
            "chained",
            "oversized",
            "needs_review",
            "review_note",
            "dissolved",
            "version",
            "updated_at",
        ),
        "",
        False,
    ),
    # The record of method switches: append-only for the owner too, like the other
    # records of decisions.
    ("ingest_methodswitch", "append-only", (), "", True),
]


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0019_doc_type_source_and_crawl_quality"),
    ]

    operations = [
        permanent_functions(),
        *(
            permanent(table, kind=kind, mutable=mutable, sealed_by=sealed, owner_bound=bound)
            for table, kind, mutable, sealed, bound in RULES
        ),
    ]
