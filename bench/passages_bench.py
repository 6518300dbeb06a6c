"""Partial-copy benchmark: recall of copies and nominated same-template negatives per
candidate channel (exact, SimHash, passages) and combined, at the shipped thresholds;
ROC AUC of each channel's score on the human-judged copycat pairs.

No database: the channels' rules are the product's pure functions (ingest/core), with
the shipped settings read from dedup_site/settings.py defaults below.

Corpus, from the real article texts of ../shared/data/extraction-dev (gold_text):
for each article of at least 120 words, the original and five copies —
  excerpt1   one contiguous run keeping 30–70% of the words,
  excerptN   two or three runs keeping 30–70% in all,
  wrapped    another article's first and last paragraphs around the whole text
             (another site's introduction and closing lines),
  reordered  the paragraphs shuffled,
  rewritten  a few sentences (about one in six) rewritten (words dropped and swapped),
each under a different site template: the site's menu line, byline, subscription
prompt and related-links list leaked into the main text (what extraction leaves in on
real pages). Negatives: every pair of documents of different articles under the same
template. Template passages: per site, passages on at least PASSAGE_TEMPLATE_DF pages.

    .venv/bin/python bench/passages_bench.py [--data DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ingest.core import passages as P  # noqa: E402
from ingest.core.guards import similarity  # noqa: E402
from ingest.core.methods import fingerprint_text, normalize_for  # noqa: E402
from ingest.core.simhash import hamming  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
KEY = "simhash64-words-sha256-v1"
# Shipped defaults (dedup_site/settings.py).
SIMHASH_K = 3  # CANDIDATE_THRESHOLDS["article"]
CONTAINMENT_MIN = 0.5  # PASSAGE_CONTAINMENT_MIN
SHARED_MIN = 3  # PASSAGE_SHARED_MIN
TEMPLATE_DF = 10  # PASSAGE_TEMPLATE_DF
SITES = 12
# The passage index's storage (ingest/core/passages.py, Storage): the shipped one, or a
# variant named on the command line (--storage, see parse_storage).
STORAGE: P.Storage = P.WHOLE
# A variant whose lookup asks with every k-gram hash of the text in the storage's residue
# class (not only its winnowed passages): a stored passage is found wherever it lies in
# the shared text, whichever passages the query's own winnowing picked there.
QUERY_KGRAMS = False
KINDS = ("excerpt1", "excerptN", "wrapped", "reordered", "rewritten")

_SENT = re.compile(r"(?<=[.!?])\s+")


def site_template(site: int, rng: random.Random, vocab: list[str]) -> tuple[str, str]:
    """(header, footer) lines a site's template leaks into the main text."""

    def phrase(n: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(n)).capitalize()

    menu = " | ".join(phrase(1) for _ in range(9))
    byline = f"By {phrase(2)} Staff Writer, The {phrase(2)} Daily"
    subscribe = f"Subscribe to the {phrase(3)} newsletter for {phrase(6)}."
    related = "Related: " + " · ".join(phrase(5) for _ in range(4))
    return f"{menu}\n{byline}\n", f"\n{subscribe}\n{related}\nSite {site} © 2026"


def paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n") if p.strip()]


def copy_of(kind: str, text: str, other: str, rng: random.Random) -> str:
    ws = text.split()
    if kind == "excerpt1":
        keep = int(len(ws) * rng.uniform(0.3, 0.7))
        start = rng.randint(0, len(ws) - keep)
        return " ".join(ws[start : start + keep])
    if kind == "excerptN":
        keep = int(len(ws) * rng.uniform(0.3, 0.7))
        parts = rng.choice((2, 3))
        size = keep // parts
        slots = len(ws) // parts
        out = []
        for i in range(parts):
            start = i * slots + rng.randint(0, max(0, slots - size))
            out.append(" ".join(ws[start : start + size]))
        return "\n".join(out)
    if kind == "wrapped":
        op = paragraphs(other)
        return f"{op[0]}\n{text}\n{op[-1]}"
    if kind == "reordered":
        ps = paragraphs(text)
        if len(ps) < 3:  # one block: cut it into sentence groups first
            ss = _SENT.split(text)
            step = max(1, len(ss) // 5)
            ps = [" ".join(ss[i : i + step]) for i in range(0, len(ss), step)]
        rng.shuffle(ps)
        return "\n".join(ps)
    if kind == "rewritten":
        ss = _SENT.split(text)
        for i in range(len(ss)):
            if rng.random() < 1 / 6:
                w = ss[i].split()
                w = [x for j, x in enumerate(w) if j % 4 != 1]  # drop every 4th word
                if len(w) > 3:
                    j = rng.randrange(len(w) - 1)
                    w[j], w[j + 1] = w[j + 1], w[j]
                ss[i] = " ".join(w)
        return " ".join(ss)
    raise ValueError(kind)


@dataclass
class Doc:
    id: int
    article: int
    kind: str
    site: int
    text: str
    kept: float  # share of the article's words the copy keeps


def build_corpus(seed: int = 7, data: Path = DATA) -> list[Doc]:
    rng = random.Random(seed)
    with open(data / "extraction-dev" / "manifest.jsonl") as f:
        rows = [json.loads(line) for line in f]
    golds = [r["gold_text"] for r in rows if len(r["gold_text"].split()) >= 120]
    vocab = sorted({w for g in golds[:40] for w in re.findall(r"[a-z]{4,9}", g)})
    templates = [site_template(s, rng, vocab) for s in range(SITES)]
    docs: list[Doc] = []
    for a, text in enumerate(golds):
        sites = rng.sample(range(SITES), 1 + len(KINDS))
        other = golds[(a + 1 + rng.randrange(len(golds) - 1)) % len(golds)]
        variants = [("original", text)] + [(k, copy_of(k, text, other, rng)) for k in KINDS]
        n_words = len(text.split())
        for (kind, body), site in zip(variants, sites, strict=True):
            head, foot = templates[site]
            kept = min(
                1.0, len(set(body.split()) & set(text.split())) / max(1, len(set(text.split())))
            )
            if kind.startswith("excerpt"):
                kept = len(body.split()) / n_words
            docs.append(Doc(len(docs), a, kind, site, head + body + foot, kept))
    return docs


def roc_auc(pos: list[float], neg: list[float]) -> float:
    """Probability a positive scores above a negative (ties count half)."""
    if not pos or not neg:
        return float("nan")
    scores = np.array(pos + neg)
    order = scores.argsort(kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    r_pos = ranks[: len(pos)].sum()
    return float((r_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def recall_at_fp(pos: list[float], neg: list[float], fp: float = 0.01) -> float:
    """Recall at the threshold letting through at most `fp` of the negatives."""
    ns = sorted(neg, reverse=True)
    allowed = int(fp * len(ns))
    cut = ns[allowed] if allowed < len(ns) else float("-inf")
    return sum(1 for p in pos if p > cut) / len(pos)


def parse_storage(spec: str) -> P.Storage:
    """A storage from ``key`` (a shipped one) or
    ``window=W,whole=N,mod=M,limit=L,lookup=S[,kq=1]`` (kq: the lookup asks with every
    k-gram in the residue class, QUERY_KGRAMS)."""
    global QUERY_KGRAMS
    QUERY_KGRAMS = False
    if "=" not in spec:
        return P.STORAGES[spec]
    fields = dict(item.split("=") for item in spec.split(","))
    QUERY_KGRAMS = bool(int(fields.pop("kq", 0)))
    storage = P.Storage(
        spec,
        window=int(fields.pop("window", 0)),
        modulus=int(fields.pop("mod", 1)),
        whole_max=int(fields.pop("whole", 0)),
        limit=int(fields.pop("limit", P.STORED_MAX)),
        lookup_min=int(fields.pop("lookup", 0)),
    )
    if fields:
        raise ValueError(f"unknown storage fields {sorted(fields)}")
    return storage


def stored_set(text: str, found: list[P.Passage]) -> set[int]:
    """What the index keeps of a document (STORAGE)."""
    return set(STORAGE.stored(found))


def query_set(text: str, found: list[P.Passage]) -> set[int]:
    """What a document's lookup asks for (QUERY_KGRAMS: its k-grams in the class)."""
    if QUERY_KGRAMS:
        m = STORAGE.modulus
        in_class = {h for h in P.kgram_hashes(P.tokens(text)).tolist() if h % m == 0}
        return in_class | P.hash_set(found)
    return set(P.smallest(P.hash_set(found), P.QUERY_MAX))


def lookup_min() -> int:
    return STORAGE.shared_min(SHARED_MIN)


def partial_copy(docs: list[Doc]) -> dict[str, object]:
    t0 = time.process_time()
    prints = {d.id: fingerprint_text(KEY, d.text, min_tokens=3) for d in docs}
    t1 = time.process_time()
    ps = {d.id: P.passages(d.text) for d in docs}
    t2 = time.process_time()
    stored = {d.id: stored_set(d.text, ps[d.id]) for d in docs}
    df: dict[int, Counter[int]] = defaultdict(Counter)
    for d in docs:
        df[d.site].update(stored[d.id])
    template = set()
    for counts in df.values():
        template |= P.templates(dict(counts), TEMPLATE_DF)
    postings: dict[int, list[int]] = defaultdict(list)
    for d in docs:  # documents arrive in id order; each queries the ones before it
        for h in stored[d.id] - template:
            postings[h].append(d.id)

    def passage_pairs() -> dict[tuple[int, int], P.Overlap]:
        out = {}
        for d in docs:
            query = query_set(d.text, ps[d.id]) - template
            hits: Counter[int] = Counter()
            for h in query:
                for other in postings[h]:
                    if other < d.id:
                        hits[other] += 1
            for other, shared in hits.items():
                if shared >= lookup_min():
                    ov = P.overlap(ps[other], ps[d.id], ignore=template)
                    if P.nominates(ov, containment_min=CONTAINMENT_MIN, shared_min=SHARED_MIN):
                        out[(other, d.id)] = ov
        return out

    t3 = time.process_time()
    nominated_passages = passage_pairs()
    t4 = time.process_time()
    by_article: dict[int, list[Doc]] = defaultdict(list)
    for d in docs:
        by_article[d.article].append(d)

    def channels(a: Doc, b: Doc) -> set[str]:
        pa, pb = prints[a.id], prints[b.id]
        out = set()
        if pa.text_sha256 == pb.text_sha256:
            out.add("exact")
        both = pa.simhash is not None and pb.simhash is not None
        if both and hamming(pa.simhash, pb.simhash) <= SIMHASH_K:  # type: ignore[arg-type]
            out.add("simhash")
        if (min(a.id, b.id), max(a.id, b.id)) in nominated_passages:
            out.add("passages")
        return out

    names = ("exact", "simhash", "passages", "combined")
    recall: dict[str, dict[str, list[int]]] = {k: {n: [0, 0] for n in names} for k in KINDS}
    for group in by_article.values():
        original = next(d for d in group if d.kind == "original")
        for copy in group:
            if copy.kind == "original" or copy.kept < 0.3:
                continue
            got = channels(original, copy)
            for n in names:
                hit = bool(got) if n == "combined" else n in got
                recall[copy.kind][n][0] += hit
                recall[copy.kind][n][1] += 1
    by_site: dict[int, list[Doc]] = defaultdict(list)
    for d in docs:
        by_site[d.site].append(d)
    negatives = 0
    neg_hits = Counter()
    for site_docs in by_site.values():
        for i, a in enumerate(site_docs):
            for b in site_docs[i + 1 :]:
                if a.article == b.article:
                    continue
                negatives += 1
                got = channels(a, b)
                for n in got:
                    neg_hits[n] += 1
                if got:
                    neg_hits["combined"] += 1
    totals = {
        n: [sum(recall[k][n][0] for k in KINDS), sum(recall[k][n][1] for k in KINDS)] for n in names
    }
    sizes = [len(stored[d.id]) for d in docs]
    return {
        "documents": len(docs),
        "articles": len(by_article),
        "sites": SITES,
        "template_passages": len(template),
        "recall_by_kind": {
            k: {n: round(h / t, 3) if t else None for n, (h, t) in v.items()}
            for k, v in recall.items()
        },
        "copies_by_kind": {k: recall[k]["combined"][1] for k in KINDS},
        "recall": {n: round(h / t, 3) for n, (h, t) in totals.items()},
        "negative_pairs": negatives,
        "negatives_nominated": {n: neg_hits[n] for n in names},
        "negatives_nominated_share": {n: round(neg_hits[n] / negatives, 5) for n in names},
        "passages_per_doc_mean": round(float(np.mean(sizes)), 1),
        "passages_per_doc_p95": int(np.percentile(sizes, 95)),
        "cpu_ms_per_doc_simhash": round(1000 * (t1 - t0) / len(docs), 3),
        "cpu_ms_per_doc_passages": round(1000 * (t2 - t1) / len(docs), 3),
        "cpu_ms_query_all": round(1000 * (t4 - t3), 1),
    }


def copycat(data: Path = DATA) -> dict[str, object]:
    with gzip.open(data / "copycat-judgments" / "judgments.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    pos_labels, neg_labels = {"2", "3"}, {"0.5"}
    scores: dict[str, dict[str, list[float]]] = {
        n: {"pos": [], "neg": []} for n in ("exact", "simhash", "passages", "token_set_ratio")
    }
    for r in rows:
        label = r["label"]
        if label in pos_labels:
            side = "pos"
        elif label in neg_labels:
            side = "neg"
        else:
            continue
        a, b = r["a_text"], r["b_text"]
        fa, fb = fingerprint_text(KEY, a, min_tokens=3), fingerprint_text(KEY, b, min_tokens=3)
        scores["exact"][side].append(float(fa.text_sha256 == fb.text_sha256))
        d = 64 if fa.simhash is None or fb.simhash is None else hamming(fa.simhash, fb.simhash)
        scores["simhash"][side].append(-float(d))  # higher is closer
        ov = P.overlap(P.passages(a), P.passages(b))
        scores["passages"][side].append(ov.containment)
        sim = similarity(normalize_for(KEY, a), normalize_for(KEY, b))
        scores["token_set_ratio"][side].append(sim.token_set_ratio)
    return {
        "positives": len(scores["exact"]["pos"]),
        "negatives": len(scores["exact"]["neg"]),
        "auc": {n: round(roc_auc(v["pos"], v["neg"]), 3) for n, v in scores.items()},
        "recall_at_1pct_fp": {
            n: round(recall_at_fp(v["pos"], v["neg"]), 3) for n, v in scores.items()
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="development data directory")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--storage",
        default=P.COARSE.key,
        help="the index's storage: a shipped key or mod=M,whole=N,limit=L,lookup=S,window=W "
        "(default: the storage of the passage methods new databases start on)",
    )
    args = parser.parse_args()
    global STORAGE
    STORAGE = parse_storage(args.storage)
    docs = build_corpus(data=args.data)
    out = {
        "method": P.METHOD,
        "storage": args.storage,
        "shipped": {
            "simhash_k_article": SIMHASH_K,
            "passage_containment_min": CONTAINMENT_MIN,
            "passage_shared_min": SHARED_MIN,
            "passage_template_df": TEMPLATE_DF,
        },
        "partial_copy": partial_copy(docs),
        "copycat": copycat(args.data),
        "corpus_sha": hashlib.sha256("".join(d.text for d in docs).encode()).hexdigest()[:12],
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
