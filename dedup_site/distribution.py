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

# (table, what, detail) of each rule the schema breaks today, with the reason it stays
# and the fix in a comment: none since ingest 0041. Met since ingest 0030: memberships
# keyed by (group_id, document_id), without a serial id; one group per method and
# document kept by the writers under the method's grouping lock (ingest.models.
# memberships_lock) instead of a unique index across shards; a pair's `b_id`, a group's
# `representative_id` and a member's `document_id` are the writers' checks
# (db_constraint=False: documents are never deleted, nothing dangles). Met since ingest
# 0033: a document's snapshot (url, fetched_at, raw_sha256) is stored once by the
# ingest, which looks it up by its digest under the digest's advisory lock
# (ingest.models.snapshots_lock), not by a unique index; extractions, fingerprints and
# embeddings are keyed by the unique they had, which leads with the document, and keep
# their serial `id` beside the key, numbered by the database (an identity column on
# PostgreSQL, the writer on SQLite: ingest.models.NumberedModel) and indexed, not
# unique: the readers' watermarks. Met since ingest 0041: pairs are keyed by the unique
# they had, (a_id, method_id, b_id), and keep their serial `id` beside the key the same
# way, indexed, not unique: the pair's address (the desk's URLs, the queue's last order
# column). The coordinator's five relations to a pair (labels, claims, calibration
# samples, pair states, adjudications) name that `id` (`to_field="id"`) without a
# database foreign key (reviews 0015: Citus keeps none from a coordinator table to a
# distributed one, PostgreSQL none to a column that is not unique); their field class,
# ingest.models.PairRelation, answers Django's check that a `to_field` be unique for a
# column the database numbers. Pairs are never deleted: nothing dangles.
KNOWN_VIOLATIONS: frozenset[tuple[str, str, str]] = frozenset()
