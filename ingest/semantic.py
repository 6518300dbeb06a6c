"""The semantic channel's services: embeddings of processed documents, then nomination of
their nearest neighbours as candidate pairs (ingest/vectors.py has the index design).

Runs on the embeddings queue (settings.EMBEDDING_QUEUE), apart from the other pipeline
steps, so that a deployment can give it other machines or a GPU. Idempotent: a document
has one outcome row per model, text rule and extractor version; a retry embeds
nothing twice and nominates nothing twice. A model failure is an `error` row, and the
next run that meets the document tries again with a new row (the failed one stays, the
attempts are numbered), up to EMBEDDING_ATTEMPTS in all.
"""

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

from dedup_site import dispatch
from ingest import candidates, embedder, vectors
from ingest.channels import thresholds
from ingest.core import ann
from ingest.core import embeddings as core
from ingest.models import Document, Embedding, Extraction, FingerprintMethod

log = logging.getLogger(__name__)

MESSAGE_MAX = 500


def embeddings_enqueue(document_ids: Sequence[int]) -> None:
    """Hand processed documents to the embedding workers (after commit), in batches of
    EMBEDDING_BATCH; nothing when the channel is off."""
    if not document_ids or not embedder.channel_state().on:
        return
    size = max(1, settings.EMBEDDING_BATCH)
    for start in range(0, len(document_ids), size):
        dispatch.on_commit("embeddings_compute", list(document_ids[start : start + size]))


@dataclass
class EmbedSummary:
    created: dict[str, int]  # rows created per status
    pairs_created: int = 0
    pairs_updated: int = 0
    # The process's index was still incomplete after its catch-up budget: the vectors
    # are stored, nothing was nominated; the caller runs the same batch again later.
    deferred: bool = False


def embeddings_compute(*, document_ids: Sequence[int]) -> EmbedSummary:
    """Embed the documents' current main text (those without a row yet), store one row
    each, then nominate their nearest neighbours and set the cosine of their pairs.

    Documents outside EMBEDDING_LANGUAGES get a `not_covered` row, an empty main text an
    `empty` row; a model failure gives `error` rows with the message, and the rest of the
    batch goes on. Documents not extracted yet get nothing (a later run embeds them).
    When this process's index cannot be completed within EMBEDDING_CATCHUP_SECONDS, the
    summary says `deferred` and nothing is nominated: running the same batch again later
    stores nothing twice and nominates from a complete index."""
    state = embedder.channel_state()
    if not state.on:
        raise embedder.ChannelOff(state.reason)
    where = vectors.Space(embedder.model_key())
    created = _rows_store(where, document_ids)
    summary = EmbedSummary(created=created)
    # After our rows committed: search with the other workers' committed rows too.
    try:
        summary.pairs_created, summary.pairs_updated = nominate(
            where=where, document_ids=document_ids, seconds=settings.EMBEDDING_CATCHUP_SECONDS
        )
    except vectors.IndexIncomplete as exc:
        log.info("nomination of %d documents deferred: %s", len(document_ids), exc)
        summary.deferred = True
    return summary


@dataclass(frozen=True)
class Attempts:
    """Where documents stand in a space: those with an outcome (a row that is not
    `error`), and the failed attempts of the others."""

    done: dict[int, str]  # document → the status of its outcome
    failed: dict[int, int]  # document → attempts that failed so far
    failed_rows: int = 0  # error rows in all, earlier tries of documents since done included

    def next_attempt(self, document_id: int) -> int | None:
        """The number of the document's next try; None when it has an outcome or has
        used its EMBEDDING_ATTEMPTS."""
        if document_id in self.done:
            return None
        tried = self.failed.get(document_id, 0)
        return tried + 1 if tried < settings.EMBEDDING_ATTEMPTS else None


def attempts_of(where: vectors.Space, document_ids: Sequence[int] | None = None) -> Attempts:
    """The space's rows of these documents (None: of every document), read once."""
    rows = Embedding.objects.filter(where.rows())
    if document_ids is not None:
        rows = rows.filter(document_id__in=list(document_ids))
    done: dict[int, str] = {}
    failed: dict[int, int] = {}
    failed_rows = 0
    for d, status, attempt in rows.values_list("document_id", "status", "attempt"):
        if status == Embedding.Status.ERROR:
            failed[d] = max(failed.get(d, 0), attempt)
            failed_rows += 1
        else:
            done[d] = status
    return Attempts(done=done, failed=failed, failed_rows=failed_rows)


def _rows_store(where: vectors.Space, document_ids: Sequence[int]) -> dict[str, int]:
    attempts = attempts_of(where, document_ids)
    attempt_of = {d: attempts.next_attempt(d) for d in dict.fromkeys(document_ids)}
    todo = [d for d, n in attempt_of.items() if n is not None]
    extractions = {
        e["document_id"]: e
        for e in Extraction.objects.filter(
            document_id__in=todo, extractor_version=where.extractor_version
        ).values("document_id", "main_text", "language")
    }
    rows: list[Embedding] = []
    to_embed: list[tuple[int, str, str]] = []

    def embedding(document_id: int, language: str, status: str, **facts: Any) -> Embedding:
        return Embedding(
            document_id=document_id,
            model=where.model,
            text_rule=where.text_rule,
            extractor_version=where.extractor_version,
            language=language,
            status=status,
            attempt=attempt_of[document_id] or 1,
            **facts,
        )

    for d in todo:
        e = extractions.get(d)
        if e is None:
            continue
        language = core.primary_language(e["language"] or "")
        if core.coverage(language, settings.EMBEDDING_LANGUAGES) == core.NOT_COVERED:
            message = f"language {language!r} is not covered by the model"
            rows.append(embedding(d, language, Embedding.Status.NOT_COVERED, message=message))
        elif not (e["main_text"] or "").strip():
            rows.append(embedding(d, language, Embedding.Status.EMPTY))
        else:
            to_embed.append((d, language, e["main_text"]))
    if to_embed:
        for d, language, packed, error in _embed([t for _, _, t in to_embed], to_embed):
            if packed is None:
                rows.append(embedding(d, language, Embedding.Status.ERROR, message=error))
            else:
                covered = Embedding.Status.COVERED
                rows.append(embedding(d, language, covered, dims=len(packed) // 2, vector=packed))
    with transaction.atomic():
        Embedding.objects.bulk_create(rows, ignore_conflicts=True)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    return counts


def _embed(
    texts: list[str], items: list[tuple[int, str, str]]
) -> list[tuple[int, str, bytes | None, str]]:
    """(document, language, vector or None, error message) per item. A failing batch is
    retried one text at a time, so one bad text costs only its own vector."""
    try:
        packed = embedder.embed_documents(texts)
        return [(d, lang, v, "") for (d, lang, _), v in zip(items, packed, strict=True)]
    except embedder.ChannelOff:
        raise
    except Exception as exc:  # the model's failure is the row's message, not the task's
        log.warning("embedding batch of %d failed (%s); one by one", len(texts), exc)
    out: list[tuple[int, str, bytes | None, str]] = []
    for d, lang, text in items:
        try:
            out.append((d, lang, embedder.embed_documents([text])[0], ""))
        except embedder.ChannelOff:
            raise
        except Exception as exc:
            out.append((d, lang, None, f"{type(exc).__name__}: {exc}"[:MESSAGE_MAX]))
    return out


def nominate(
    *, where: vectors.Space, document_ids: Sequence[int], seconds: float | None = None
) -> tuple[int, int]:
    """Pairs of these documents with their nearest neighbours (SEMANTIC_NEIGHBOURS,
    within the lookback window) at or above the doc type's cosine threshold, built by
    the candidate pair builder under each searched method; then the cosine of their
    pairs that lack one. Returns (pairs created, pairs updated). With `seconds`, the
    index's catch-up stops after that time: if the index is then still incomplete,
    raises vectors.IndexIncomplete before anything is written (a partial index would
    miss neighbours that later runs would never look for again)."""
    own = vectors.vectors_for(list(document_ids), where)
    if not own:
        return 0, 0
    index = vectors.process_index(where, seconds=seconds)
    if not index.complete:
        raise vectors.IndexIncomplete(f"{len(index)} vectors indexed so far in this process")
    rows = list(
        Document.objects.filter(pk__in=list(own)).values_list("pk", "doc_type", "fetched_at")
    )
    docs = {pk: doc_type for pk, doc_type, _ in rows}
    fetched = {pk: fetched_at for pk, _, fetched_at in rows}
    hits: dict[int, list[ann.Neighbour]] = {}
    for d, packed in own.items():
        found = index.nearest(
            core.unpack(packed), settings.SEMANTIC_NEIGHBOURS + 1, around=fetched.get(d)
        )
        hits[d] = [n for n in found if n.document_id != d][: settings.SEMANTIC_NEIGHBOURS]
    others = {n.document_id for ns in hits.values() for n in ns}
    types = {**docs, **dict(Document.objects.filter(pk__in=others).values_list("pk", "doc_type"))}
    stored = {**own, **vectors.vectors_for(others, where)}
    neighbours: dict[int, list[int]] = {}
    for d, ns in hits.items():
        scored = []
        for n in ns:
            # The index's float16 distance nominates; the stored vectors decide.
            cosine = vectors.pair_cosine(stored, d, n.document_id)
            cut = thresholds.cosine_pair_threshold(
                types.get(d, "other"), types.get(n.document_id, "other")
            )
            if cosine is not None and cosine >= cut:
                scored.append((-cosine, n.document_id))
        neighbours[d] = [other for _, other in sorted(scored)]
    created = updated = 0
    for key in thresholds.candidate_method_keys():
        method = FingerprintMethod.objects.filter(key=key).first()
        if method is None:
            continue
        new_pairs = candidates.semantic_pairs_find(method=method, neighbours=neighbours)
        created += len(new_pairs)
        filled = candidates.pairs_cosine_update(method=method, document_ids=list(document_ids))
        updated += filled
        if new_pairs or filled:
            candidates.groups_update(method=method, document_ids=document_ids, new_pairs=new_pairs)
    return created, updated


def embeddings_backfill(*, limit: int | None = None) -> int:
    """Hand every extracted document without an outcome in the configured space to the
    embedding workers: those without a row, and those whose tries all failed while
    fewer than EMBEDDING_ATTEMPTS were made. Returns how many documents were handed on."""
    state = embedder.channel_state()
    if not state.on:
        raise embedder.ChannelOff(state.reason)
    where = vectors.Space(embedder.model_key())
    rows = Embedding.objects.filter(where.rows())
    done = rows.exclude(status=Embedding.Status.ERROR).values("document_id")
    given_up = rows.filter(
        status=Embedding.Status.ERROR, attempt__gte=settings.EMBEDDING_ATTEMPTS
    ).values("document_id")
    ids = list(
        Extraction.objects.filter(extractor_version=where.extractor_version)
        .exclude(document_id__in=done)
        .exclude(document_id__in=given_up)
        .order_by("document_id")
        .values_list("document_id", flat=True)[:limit]
    )
    embeddings_enqueue(ids)
    return len(ids)


def embeddings_snapshot(*, seconds: float | None = None) -> vectors.SnapshotResult | None:
    """Write this process's index of the configured space as its snapshot, after a
    catch-up of `seconds` at most (None: to completion). None when the channel is off."""
    if not embedder.channel_state().on:
        return None
    return vectors.index_snapshot(seconds=seconds)


@dataclass(frozen=True)
class EmbeddingCounts:
    """Documents per status of their latest row in the configured space."""

    statuses: dict[str, int]
    failed_attempts: int = 0  # error rows in all, a document's earlier tries included
    given_up: int = 0  # documents in `error` after EMBEDDING_ATTEMPTS tries: no more


def embedding_counts() -> EmbeddingCounts:
    """Where the configured space stands (empty when no model is configured): each
    document counted once, by its outcome or else its latest failed attempt."""
    where = vectors.space()
    if where is None:
        return EmbeddingCounts(statuses={})
    attempts = attempts_of(where)
    statuses = dict(Counter(attempts.done.values()))
    still_failed = {d: n for d, n in attempts.failed.items() if d not in attempts.done}
    if still_failed:
        statuses[Embedding.Status.ERROR] = len(still_failed)
    given_up = sum(1 for n in still_failed.values() if n >= settings.EMBEDDING_ATTEMPTS)
    return EmbeddingCounts(
        statuses=statuses, failed_attempts=attempts.failed_rows, given_up=given_up
    )


# --- recall of the approximate search ----------------------------------------------------


@dataclass(frozen=True)
class Recall:
    vectors: int
    queries: int
    k: int
    recall: float
    ann_ms: float
    exact_ms: float


def recall_check(*, sample: int = 200, k: int = 10, seed: int = 0) -> Recall | None:
    """recall@k of this process's approximate index against exact cosine on the same
    stored vectors, for `sample` stored documents as queries. None without vectors."""
    where = vectors.space()
    if where is None:
        return None
    index = vectors.process_index(where)
    rows = list(
        Embedding.objects.filter(where.rows(), status=Embedding.Status.COVERED)
        .order_by("document_id")
        .exclude(vector=None)
        .values_list("document_id", "vector")
    )
    if not rows or index.index is None:
        return None
    ids = np.array([d for d, _ in rows], dtype=np.int64)
    matrix = np.stack([core.unpack(bytes(v or b"")) for _, v in rows])
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(ids), size=min(sample, len(ids)), replace=False)
    t0 = time.perf_counter()
    approx = [[n.document_id for n in ann.search(index.index, matrix[i], k)] for i in picked]
    t1 = time.perf_counter()
    exact_rows = ann.exact_neighbours(matrix, matrix[picked], k)
    t2 = time.perf_counter()
    row_of = {int(d): r for r, d in enumerate(ids)}
    # Scored on the same stored vectors: ties (copies of one text) count as found.
    approx_scores = [
        [float(matrix[row_of[d]] @ matrix[i]) for d in found if d in row_of]
        for found, i in zip(approx, picked, strict=True)
    ]
    exact_scores = [
        [float(matrix[j] @ matrix[i]) for j in row]
        for row, i in zip(exact_rows, picked, strict=True)
    ]
    return Recall(
        vectors=len(ids),
        queries=len(picked),
        k=min(k, len(ids)),
        recall=ann.recall_with_ties(approx_scores, exact_scores),
        ann_ms=(t1 - t0) * 1000 / max(1, len(picked)),
        exact_ms=(t2 - t1) * 1000 / max(1, len(picked)),
    )
