"""What each table of both apps may lose or change, in one table: the database rules the
migrations install (dedup_site.appendonly), the grants `manage.py db_app_role` gives the
application's role, and the test that every table has a rule all read it.

Three rules (docs/database-permanence.md says why each table has its rule):

- APPEND_ONLY: rows are inserted, never updated, deleted or truncated.
- PERMANENT: rows are never deleted or truncated; an UPDATE may change only the columns
  named `mutable` (every other column, one added later included, stays as inserted);
  with `sealed_by`, a row whose `sealed_by` column is set is not changed any more (a
  revocation is set once).
- FREE: derived or operational data the application rewrites and deletes (tallies,
  leases, job state): no database rule.

`owner_bound`: the rule binds the tables' owner too (the records of what people decided,
kept from before this table existed), except in a migration that declares a rewrite
(`appendonly.owner_rewrite`). Otherwise it binds every role that does not own the table,
which is the application's role: the owner's migrations change such rows freely and say
so in their own docstring.

A migration copies the rules it installs (a migration must not change meaning when this
table does); the test `tests/reviews/test_permanence_db.py` checks the installed triggers
against this table.
"""

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    APPEND_ONLY = "append-only"
    PERMANENT = "permanent"
    FREE = "free"


@dataclass(frozen=True)
class Rule:
    kind: Kind
    mutable: tuple[str, ...] = ()
    sealed_by: str = ""
    owner_bound: bool = False

    @property
    def guarded(self) -> bool:
        return self.kind != Kind.FREE


APPEND = Rule(Kind.APPEND_ONLY)
FREE = Rule(Kind.FREE)


def permanent(*mutable: str, sealed_by: str = "") -> Rule:
    return Rule(Kind.PERMANENT, tuple(mutable), sealed_by)


RULES: dict[str, Rule] = {
    # --- ingest: what was crawled and what is derived from it -------------------------
    "ingest_site": permanent("priority", "default_doc_type"),
    "ingest_crawlbatch": permanent(
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
    "ingest_batcherror": APPEND,
    # Decoding a document learns its encodings and may classify it as short.
    "ingest_document": permanent(
        "declared_encoding", "detected_encoding", "doc_type", "doc_type_source", "doc_type_evidence"
    ),
    # A body's pointer into the archive is written with its row.
    "ingest_documentbody": APPEND,
    # An archive file is sealed once: its size and digest set with `sealed_at`, then fixed.
    "ingest_archivefile": permanent("sealed_at", "size", "sha256", sealed_by="sealed_at"),
    "ingest_extraction": APPEND,
    "ingest_embedding": APPEND,
    "ingest_fingerprintmethod": permanent("is_active", "retired_at", "description"),
    "ingest_fingerprint": APPEND,
    "ingest_apitoken": FREE,
    "ingest_indexentry": APPEND,
    "ingest_passageset": APPEND,
    "ingest_minhashset": APPEND,
    "ingest_passagetemplate": APPEND,
    "ingest_passagecommon": permanent("df"),
    # What a site's boilerplate removed from a main text: a later pass adds a row.
    "ingest_boilerplatedrop": APPEND,
    "ingest_donotmatch": permanent("revoked_at", "revoked_by", sealed_by="revoked_at"),
    # A late cosine adds the semantic channel; the queue's rank follows the thresholds.
    "ingest_candidatepair": permanent(
        "cosine", "channels", "below_floor", "uncertainty", "evidence"
    ),
    "ingest_candidategroup": permanent(
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
    "ingest_groupmember": FREE,
    "ingest_dailyrollup": FREE,
    "ingest_taskrun": FREE,
    "ingest_refingerprintrun": FREE,
    "ingest_methodswitch": Rule(Kind.APPEND_ONLY, owner_bound=True),
    "ingest_siteprioritychange": Rule(Kind.APPEND_ONLY, owner_bound=True),
    # --- reviews: what people decided -------------------------------------------------
    # A label's one edit: superseded_by, once, by a newer label of the same editor on the
    # same documents (its own trigger, reviews migration 0010).
    "reviews_label": Rule(
        Kind.PERMANENT, ("superseded_by_id",), "superseded_by_id", owner_bound=True
    ),
    "reviews_claim": FREE,
    "reviews_decision": Rule(Kind.APPEND_ONLY, owner_bound=True),
    "reviews_mergeproposal": permanent(
        "status",
        "decided_by",
        "decided_at",
        "decision_reason",
        "decision_id",
        sealed_by="decided_at",
    ),
    "reviews_reviewerpreference": FREE,
    "reviews_calibrationsample": APPEND,
    "reviews_pairstate": FREE,
    "reviews_queuetally": FREE,
    "reviews_labeltally": FREE,
    "reviews_watermark": FREE,
    "reviews_adjudication": Rule(Kind.APPEND_ONLY, owner_bound=True),
    "reviews_prelabeldistribution": FREE,
    # Computed ahead from the labels by the beat task and recomputed whole: derived.
    "reviews_calibrationfigures": FREE,
}

# Tables whose triggers predate the generic one (each its own function): the test checks
# their rule by trying statements, not by reading trigger arguments.
OWN_TRIGGERS = (
    "reviews_label",
    "reviews_decision",
    "reviews_adjudication",
    "ingest_siteprioritychange",
)
