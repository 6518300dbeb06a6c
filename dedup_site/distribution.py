"""How the tables would spread past one machine (Citus; docs/scaling.md), in one place:
the column each large table is distributed by, the small tables every node holds a copy
of, and what stays on the coordinator. `tests/ingest/test_distribution_schema.py` reads
the models against it: a distributed table's primary key and unique constraints must
include its distribution column, and a foreign key between two distributed tables must
join their distribution columns (Citus keeps only co-located foreign keys).

What the schema does not meet yet is listed in `KNOWN_VIOLATIONS`, each with the change
that removes it; the test checks that list exactly, so a new violation fails and a
fixed one must leave the list. A leaf module: it imports nothing of the apps.
"""

# Large tables (rows grow with the crawl) → distribution column. Everything about one
# document lives on the shard of its id; pairs on the shard of their first document;
# memberships with their group.
DISTRIBUTED: dict[str, str] = {
    "ingest_document": "id",
    "ingest_documentbody": "document_id",
    "ingest_extraction": "document_id",
    "ingest_fingerprint": "document_id",
    "ingest_embedding": "document_id",
    "ingest_indexentry": "document_id",
    "ingest_passageset": "document_id",
    "ingest_candidatepair": "a_id",
    "ingest_candidategroup": "id",
    "ingest_groupmember": "group_id",
}

# Co-location groups: tables whose distribution columns hold the same values (a
# document id) share shards, so a foreign key between them stays on one node.
COLOCATED: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "ingest_document",
            "ingest_documentbody",
            "ingest_extraction",
            "ingest_fingerprint",
            "ingest_embedding",
            "ingest_indexentry",
            "ingest_passageset",
            "ingest_candidatepair",
        }
    ),
    frozenset({"ingest_candidategroup", "ingest_groupmember"}),
)

# Small tables every node holds whole (Citus reference tables): joined from any shard.
REFERENCE: tuple[str, ...] = (
    "ingest_site",
    "ingest_archivefile",
    "ingest_fingerprintmethod",
    "ingest_crawlbatch",
    "ingest_passagetemplate",
    "ingest_passagecommon",
)

# Everything else stays on the coordinator: what people decided (labels, decisions,
# adjudications, proposals, do-not-match), the audit records (method switches, site
# priority changes), tallies, leases, job state and figures.

# (table, what, detail) of each rule the schema breaks today, with the fix in a comment.
KNOWN_VIOLATIONS: frozenset[tuple[str, str, str]] = frozenset(
    {
        # Fix: unique (id, url, fetched_at, raw_sha256), or check the snapshot's
        # uniqueness by a lookup on its digest before insert.
        ("ingest_document", "unique", "document_snapshot_once"),
        # Fix for these four: a composite primary key (document_id, id) / (a_id, id) /
        # (group_id, id), as IndexEntry and PassageSet already have.
        ("ingest_extraction", "primary key", "id"),
        ("ingest_fingerprint", "primary key", "id"),
        ("ingest_embedding", "primary key", "id"),
        ("ingest_candidatepair", "primary key", "id"),
        ("ingest_groupmember", "primary key", "id"),
        # One group per method and document is a rule about a document, not a group:
        # checked by the grouping (which locks the documents it regroups) once
        # memberships are distributed by group.
        ("ingest_groupmember", "unique", "one_group_per_method"),
        # The second document of a pair, a group's representative and a member's
        # document live on other shards: the foreign keys become checks by the writer
        # (documents are never deleted: nothing can dangle).
        ("ingest_candidatepair", "foreign key", "b_id"),
        ("ingest_candidategroup", "foreign key", "representative_id"),
        ("ingest_groupmember", "foreign key", "document_id"),
    }
)
