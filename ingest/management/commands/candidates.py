import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from ingest import candidates, index, passages, semantic
from ingest.channels import registry
from ingest.channels.base import RecallCheck
from ingest.models import Fingerprint, FingerprintMethod, IndexEntry, PassageSet


class Command(BaseCommand):
    help = (
        "Candidate index tools. --warm reads the band index into memory; --recall-check "
        "compares the band index, the passage index, the semantic index and every "
        "channel's own index (MinHash) with brute force on what is stored; --rebuild "
        "searches every fingerprinted document again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--recall-check", action="store_true")
        parser.add_argument(
            "--warm",
            action="store_true",
            help="read the band index's btrees into memory (after a restart or a bulk load)",
        )
        parser.add_argument("--rebuild", action="store_true")
        parser.add_argument("--method", default=settings.ACTIVE_METHOD)
        parser.add_argument("--sample", type=int, default=0, help="queries (0: every entry)")
        parser.add_argument(
            "-k", type=int, default=None, help="distance (default: the largest threshold)"
        )
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args: object, **options: Any) -> None:
        if options["warm"]:
            started = time.monotonic()
            read = index.band_index_warm()
            self.stdout.write(
                f"band index: {read} entries read in {time.monotonic() - started:.1f}s"
            )
            if not (options["rebuild"] or options["recall_check"]):
                return
        method = FingerprintMethod.objects.filter(key=options["method"]).first()
        if method is None:
            raise CommandError(f"no fingerprints for method {options['method']!r}")
        if options["rebuild"]:
            self._rebuild(method)
        if options["recall_check"]:
            k = options["k"] if options["k"] is not None else candidates.query_k()
            self._recall(method, int(k), int(options["sample"]), int(options["seed"]))
        if not (options["rebuild"] or options["recall_check"]):
            raise CommandError("say what to do: --recall-check and/or --rebuild")

    def _rebuild(self, method: FingerprintMethod) -> None:
        ids = list(
            Fingerprint.objects.filter(method=method, simhash__isnull=False)
            .order_by("document_id")
            .values_list("document_id", flat=True)
        )
        started = time.monotonic()
        for start in range(0, len(ids), 500):
            candidates.candidates_find(document_ids=ids[start : start + 500])
        self.stdout.write(f"searched {len(ids)} documents in {time.monotonic() - started:.1f}s")

    def _recall(self, method: FingerprintMethod, k: int, sample: int, seed: int) -> None:
        entries = list(
            IndexEntry.objects.filter(method=method.pk).values_list("document_id", "simhash")
        )
        if not entries:
            raise CommandError("the index is empty for this method")
        queries = _sample(entries, sample, seed)
        run = _compare(
            [(d, simhash & MASK64) for d, simhash in queries],
            lambda d, v: index.query(method_id=method.pk, value=v, k=k, exclude_document=d),
            lambda v: index.brute_force(method_id=method.pk, value=v, k=k),
        )
        index_pairs, brute_pairs, t_index, t_brute, recall = run
        mode = (
            "band index (GIN)"
            if index.uses_band_index()
            else "scan (no band index on this database)"
        )
        self.stdout.write(
            "\n".join(
                [
                    f"method {method.key}, k = {k}, {len(entries)} indexed, {len(queries)} queries",
                    f"index: {mode}",
                    f"pairs found by the index:     {len(index_pairs)}  ({t_index * 1000:.1f} ms)",
                    f"pairs found by brute force:   {len(brute_pairs)}  ({t_brute * 1000:.1f} ms)",
                    f"recall: {recall:.3f}",
                ]
            )
        )
        passage_recall = self._passage_recall(sample, seed, passages.method_for(method.key))
        semantic_recall = self._semantic_recall(sample, seed)
        # Every channel with an index of its own declares its check (a new channel needs
        # nothing here).
        checks: dict[str, RecallCheck] = {}
        for channel in registry.channels():
            check = channel.recall_check(method, sample=sample, seed=seed)
            if check is not None:
                self.stdout.write("\n".join(check.lines))
                checks[channel.name] = check
        if recall < 1.0:
            raise CommandError(f"recall {recall:.3f} < 1.000: the index missed pairs")
        if passage_recall < 1.0:
            raise CommandError(
                f"passage recall {passage_recall:.3f} < 1.000: the passage index missed pairs"
            )
        if semantic_recall is not None and semantic_recall < SEMANTIC_RECALL_MIN:
            raise CommandError(
                f"semantic recall@{settings.SEMANTIC_NEIGHBOURS} {semantic_recall:.4f} "
                f"< {SEMANTIC_RECALL_MIN}"
            )
        for name, check in checks.items():
            if not check.ok:
                raise CommandError(
                    f"{name} recall {check.recall:.3f} < {check.minimum}: its index missed pairs"
                )

    def _semantic_recall(self, sample: int, seed: int) -> float | None:
        """recall@k of the approximate vector index against exact cosine on the same
        stored vectors (the approximate index nominates; it may miss a few)."""
        k = settings.SEMANTIC_NEIGHBOURS
        found = semantic.recall_check(sample=sample or 1000, k=k, seed=seed)
        if found is None:
            self.stdout.write("semantic: no stored vectors under the configured model")
            return None
        self.stdout.write(
            f"semantic: {found.vectors} vectors, {found.queries} queries, "
            f"recall@{found.k} of the approximate index against exact cosine: "
            f"{found.recall:.4f} ({found.ann_ms:.2f} ms / {found.exact_ms:.2f} ms per query)"
        )
        return found.recall

    def _passage_recall(self, sample: int, seed: int, passage_method: int) -> float:
        """The passage index against a scan of the same stored passage sets: every
        document's stored set is a query; a pair counts once."""
        entries = list(
            PassageSet.objects.filter(method=passage_method).values_list("document_id", "hashes")
        )
        if not entries:
            self.stdout.write("passages: the passage index is empty")
            return 1.0
        queries = _sample(entries, sample, seed)
        run = _compare(
            [(d, [h & MASK64 for h in stored]) for d, stored in queries],
            lambda d, hashes: passages.lookup(
                hashes=hashes, exclude_document=d, method=passage_method
            ),
            lambda hashes: passages.brute_force(hashes=hashes, method=passage_method),
        )
        index_pairs, brute_pairs, t_index, t_brute, recall = run
        mode = (
            "GIN over the buckets of a bigint[]"
            if passages.uses_gin()
            else "scan (no GIN on this database)"
        )
        self.stdout.write(
            "\n".join(
                [
                    f"passages {passages.method_name(passage_method)}: {len(entries)} indexed, "
                    f"{len(queries)} queries, at least "
                    f"{passages.lookup_shared_min(passage_method)} shared",
                    f"passage index: {mode}",
                    f"pairs found by the passage index: {len(index_pairs)}  "
                    f"({t_index * 1000:.1f} ms)",
                    f"pairs found by brute force:       {len(brute_pairs)}  "
                    f"({t_brute * 1000:.1f} ms)",
                    f"passage recall: {recall:.3f}",
                ]
            )
        )
        return recall


MASK64 = (1 << 64) - 1
# The approximate vector index's target (docs/channels.md, "Semantic channel").
SEMANTIC_RECALL_MIN = 0.99
Pairs = set[tuple[int, int]]


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def _sample[T](entries: list[T], sample: int, seed: int) -> list[T]:
    """Every entry, or a seeded sample of `sample` of them."""
    if not sample or sample >= len(entries):
        return entries
    return random.Random(seed).sample(entries, sample)


def _compare[Q](
    queries: list[tuple[int, Q]],
    lookup: Callable[[int, Q], Iterable[Any]],
    brute_force: Callable[[Q], Iterable[Any]],
) -> tuple[Pairs, Pairs, float, float, float]:
    """Each query through the index and through brute force: the pairs each finds, the
    time each took, and the index's recall against brute force (a pair counts once)."""
    index_pairs: Pairs = set()
    brute_pairs: Pairs = set()
    t_index = t_brute = 0.0
    for document_id, query in queries:
        t0 = time.perf_counter()
        hits = lookup(document_id, query)
        t1 = time.perf_counter()
        brute = brute_force(query)
        t2 = time.perf_counter()
        t_index += t1 - t0
        t_brute += t2 - t1
        index_pairs |= {_pair(document_id, h.document_id) for h in hits}
        brute_pairs |= {
            _pair(document_id, h.document_id) for h in brute if h.document_id != document_id
        }
    found = len(index_pairs & brute_pairs)
    recall = found / len(brute_pairs) if brute_pairs else 1.0
    return index_pairs, brute_pairs, t_index, t_brute, recall
