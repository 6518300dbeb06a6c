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
# and the fix in a comment. Met since ingest 0030: memberships keyed by (group_id,
# document_id), without a serial id; one group per method and document kept by the
# writers under the method's grouping lock (ingest.models.memberships_lock) instead of
# a unique index across shards; a pair's `b_id`, a group's `representative_id` and a
# member's `document_id` are the writers' checks (db_constraint=False: documents are
# never deleted, nothing dangles).
KNOWN_VIOLATIONS: frozenset[tuple[str, str, str]] = frozenset(
    {
        # These four keep a serial id that something reads as a counter or an address,
        # and Django keeps an auto-numbered column only as the whole primary key:
        # - an extraction's id is the queue tally's wall watermark (reviews.queue.
        #   queue_tally.walls, pair_states: the walls found since the last count);
        # - a fingerprint's id is the pair states' watermark of newly fingerprinted
        #   snapshots (reviews.queue.pair_states: fingerprints arrive out of document
        #   order, so the document id cannot stand in);
        # - an embedding's id is the approximate index's watermark and order
        #   (ingest.vectors);
        # - a pair's id is the desk's address of the pair (its URLs), the key five of
        #   the coordinator's tables point to (labels, claims, calibration samples,
        #   pair states, adjudications) and the queue's last order column.
        # Fix: key (document_id, id) / (a_id, id) with `id` a column the database
        # numbers outside the key (PostgreSQL keeps the identity column when the
        # primary key is dropped; SQLite needs the writer to number it), and for pairs
        # the coordinator's foreign keys as `to_field="id"`, db_constraint=False.
        ("ingest_extraction", "primary key", "id"),
        ("ingest_fingerprint", "primary key", "id"),
        ("ingest_embedding", "primary key", "id"),
        ("ingest_candidatepair", "primary key", "id"),
    }
)
