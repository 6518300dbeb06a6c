"""Short copies: recall of short copies (100–300 words) and nominated same-template
negatives, by the passage channel's rules before and after the short-copy rule
(``ingest/core/shortcopy.py``), and the same rules on the human-judged copycat pairs.

No database: the channels' rules are the product's pure functions (ingest/core), the
lookup is the passage index's (a document keeps its STORED_MAX smallest passages,
a query looks up its QUERY_MAX smallest, at least PASSAGE_SHARED_MIN shared find a
pair, two when a side has up to eight passages: ``lookup_min``; template
passages of a site never count), as in ``bench/passages_bench.py``.

Corpus, from the real article texts (``gold_text``) of ``extraction-dev`` (pages not
in Chinese or Japanese), every document under one of ``--sites`` site templates (menu
line, byline, subscription prompt and related links leaked into the main text):

  excerpt   a 120–250-word run of an article (of at least 150 words), with light
            wire-desk edits (one word in 20–30 replaced, dropped or added), beside
            the copying site's own paragraph of context (a paragraph of another
            article, 40–100 words) and a credit line;
  reprint   a short article (an article of 150–300 words, or the first paragraphs of a
            longer one cut to 150–300 words) reprinted whole under another site's
            framing (an introduction of its own, a credit line), one word in 30–40
            edited;
  original  the articles and short articles themselves, each on a site of its own.

Positives: each copy with its original. Negatives: every pair of documents of
different articles under the same site template (a site's short pages included), the
hard case for a rule that looks at short texts. Template passages: per site, passages
on at least PASSAGE_TEMPLATE_DF pages. Channels: exact, SimHash (k = 3 on the
reference method), passages (today's rule: ≥ PASSAGE_SHARED_MIN shared and
containment ≥ PASSAGE_CONTAINMENT_MIN), and passages + the short-copy rule.

    .venv/bin/python bench/short_copies_bench.py [--data DIR] [--sites N] [--seed S]
        [--json OUT]

``--data`` is the development data directory (default ``../shared/data``); it must hold
``extraction-dev/`` and ``copycat-judgments/``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _path in (BENCH, ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import passages_bench  # noqa: E402
from passages_bench import (  # noqa: E402
    CONTAINMENT_MIN,
    DATA,
    KEY,
    SHARED_MIN,
    SIMHASH_K,
    TEMPLATE_DF,
    paragraphs,
    roc_auc,
    site_template,
)

from ingest.core import passages as P  # noqa: E402
from ingest.core.extract import guess_language  # noqa: E402
from ingest.core.guards import similarity  # noqa: E402
from ingest.core.methods import fingerprint_text, normalize_for  # noqa: E402
from ingest.core.shortcopy import ShortRule, shared_needed, short_copy  # noqa: E402
from ingest.core.simhash import hamming  # noqa: E402


def lookup_min(query: int, stored: int) -> int:
    """The fewest shared passages the product's lookup keeps a hit with, for a query of
    ``query`` passages and a hit of ``stored`` (ingest.passages.hit_shared_min): the
    channel's minimum, two when either text has up to eight passages."""
    floor = SHIPPED.containment_min
    short = min(shared_needed(query, SHARED_MIN, floor), shared_needed(stored, SHARED_MIN, floor))
    # The storage's own minimum (passages_bench.lookup_min) when it asks for fewer.
    return min(passages_bench.lookup_min(), short)


# The data, method and shipped passage defaults are passages_bench's.
SHIPPED = ShortRule()  # PASSAGE_SHORT_* defaults
# Rules shown beside the shipped one: (passages_max, shingle_min, containment_min).
SWEEP = [
    (pm, sm, cm) for pm in (16, 24, 32) for sm in (0.35, 0.4, 0.45, 0.5, 0.6) for cm in (0.0, 0.25)
]


@dataclass
class Doc:
    id: int
    article: int  # the article whose text the document carries
    story: int  # the long article it comes from (a short article cut from it shares it)
    kind: str  # "original" | "short" | "excerpt" | "reprint"
    site: int
    text: str
    words: int  # words of the copied text (the copy's own part: excerpt or article)


def _edit(words: list[str], rate_low: int, rate_high: int, vocab: list[str], rng: random.Random):
    """One word in rate_low–rate_high replaced, dropped or a word added (a wire desk's
    light edits: a changed word, a cut, an added adjective)."""
    out: list[str] = []
    every = rng.uniform(rate_low, rate_high)
    for w in words:
        if rng.random() < 1 / every:
            op = rng.randrange(3)
            if op == 0:
                out.append(rng.choice(vocab))
            elif op == 1:
                continue
            else:
                out.extend((w, rng.choice(vocab)))
        else:
            out.append(w)
    return out


def _cut(text: str, low: int, high: int) -> str | None:
    """The first paragraphs of ``text`` holding ``low``–``high`` words (None if none)."""
    out: list[str] = []
    n = 0
    for p in paragraphs(text):
        size = len(p.split())
        if n + size > high:
            if n >= low:
                break
            out.append(" ".join(p.split()[: high - n]))
            n = high
            break
        out.append(p)
        n += size
    return "\n".join(out) if n >= low else None


def load_articles(data: Path) -> list[str]:
    with open(data / "extraction-dev" / "manifest.jsonl") as f:
        rows = [json.loads(line) for line in f]
    out = []
    seen: set[str] = set()
    for r in rows:
        text = r["gold_text"]
        if text in seen:  # one article stored twice is one article
            continue
        seen.add(text)
        if len(text.split()) >= 150 and guess_language(text) not in ("zh", "ja", "ko", "und"):
            out.append(text)
    return out


def build_corpus(
    data: Path,
    sites: int,
    seed: int,
    excerpt_words: tuple[int, int] = (120, 250),
    short_words: tuple[int, int] = (150, 300),
) -> list[Doc]:
    """The corpus above; ``excerpt_words`` and ``short_words``: the copied excerpts' and
    the short articles' sizes (``--briefs``: 40–90 words each, texts of two to five
    passages)."""
    rng = random.Random(seed)
    loaded = load_articles(data)
    # One article in five is only ever the copying sites' own context, never copied: a
    # negative pair never shares a paragraph of context with an original.
    pool = loaded[::5]
    articles = [t for i, t in enumerate(loaded) if i % 5]
    vocab = sorted({w for g in articles[:40] for w in re.findall(r"[a-z]{4,9}", g)})
    templates = [site_template(s, rng, vocab) for s in range(sites)]
    docs: list[Doc] = []

    def add(article: int, story: int, kind: str, site: int, body: str, words: int) -> None:
        head, foot = templates[site]
        docs.append(Doc(len(docs), article, story, kind, site, head + body + foot, words))

    # The copying sites' own paragraphs: the pool cut into runs of 40–100 words, each
    # used once (two copies never share their context).
    chunks: list[str] = []
    for other in pool:
        ws = other.split()
        i = 0
        while len(ws) - i >= 40:
            size = rng.randint(40, 100)
            chunks.append(" ".join(ws[i : i + size]))
            i += size
    rng.shuffle(chunks)

    def context() -> str:
        """A paragraph (40–100 words) of a pool article: the copying site's own text."""
        return chunks.pop()

    for a, text in enumerate(articles):
        own, short_site, copy_site, reprint_site = rng.sample(range(sites), 4)
        add(a, a, "original", own, text, len(text.split()))
        ws = text.split()
        size = rng.randint(excerpt_words[0], min(excerpt_words[1], len(ws)))
        start = rng.randint(0, len(ws) - size)
        excerpt = _edit(ws[start : start + size], 20, 30, vocab, rng)
        credit = rng.choice(("(Reuters)", "— AP", "Source: wire services", "(AFP)"))
        body = f"{context()}\n{' '.join(excerpt)} {credit}"
        if rng.random() < 0.5:
            body = f"{' '.join(excerpt)} {credit}\n{context()}"
        add(a, a, "excerpt", copy_site, body, size)
        low, high = short_words
        short = text if low <= len(ws) <= high else _cut(text, low, high)
        if short is None:
            continue
        if short != text:
            # The short article is a document of its own (its original); the long one
            # above stays an original of another article id.
            a_short = len(articles) + a
            add(a_short, a, "short", short_site, short, len(short.split()))
        else:
            a_short = a
        edited = "\n".join(
            " ".join(_edit(p.split(), 30, 40, vocab, rng)) for p in paragraphs(short)
        )
        intro = context()
        line = rng.choice(
            (
                "This article first appeared on our partner site.",
                "Republished with permission.",
                "Reprinted under a content-sharing agreement.",
            )
        )
        add(a_short, a, "reprint", reprint_site, f"{intro}\n{edited}\n{line}", len(short.split()))
    return docs


def shingle_containment(a: str, b: str) -> float:
    return similarity(normalize_for(KEY, a), normalize_for(KEY, b)).containment


def evaluate(docs: list[Doc]) -> dict[str, object]:
    t0 = time.process_time()
    prints = {d.id: fingerprint_text(KEY, d.text, min_tokens=3) for d in docs}
    ps = {d.id: P.passages(d.text) for d in docs}
    stored = {d.id: passages_bench.stored_set(d.text, ps[d.id]) for d in docs}
    df: dict[int, Counter[int]] = defaultdict(Counter)
    for d in docs:
        df[d.site].update(stored[d.id])
    template: set[int] = set()
    for counts in df.values():
        template |= P.templates(dict(counts), TEMPLATE_DF)
    postings: dict[int, list[int]] = defaultdict(list)
    for d in docs:
        for h in stored[d.id] - template:
            postings[h].append(d.id)
    # Pairs the passage index finds (the lookup the product makes before any rule).
    found: dict[tuple[int, int], P.Overlap] = {}
    for d in docs:
        query = passages_bench.query_set(d.text, ps[d.id]) - template
        hits: Counter[int] = Counter()
        for h in query:
            for other in postings[h]:
                if other < d.id:
                    hits[other] += 1
        for other, shared in hits.items():
            if shared >= lookup_min(len(P.hash_set(ps[d.id])), len(stored[other])):
                found[(other, d.id)] = P.overlap(ps[other], ps[d.id], ignore=template)
    by_id = {d.id: d for d in docs}
    sims = {pair: shingle_containment(by_id[pair[0]].text, by_id[pair[1]].text) for pair in found}
    elapsed = time.process_time() - t0

    def simhash(a: Doc, b: Doc) -> bool:
        pa, pb = prints[a.id], prints[b.id]
        if pa.simhash is None or pb.simhash is None:
            return False
        return pa.text_sha256 == pb.text_sha256 or hamming(pa.simhash, pb.simhash) <= SIMHASH_K

    def today(pair: tuple[int, int]) -> bool:
        ov = found.get(pair)
        return ov is not None and P.nominates(
            ov, containment_min=CONTAINMENT_MIN, shared_min=SHARED_MIN
        )

    def with_rule(pair: tuple[int, int], rule: ShortRule) -> bool:
        ov = found.get(pair)
        if ov is None:
            return False
        return today(pair) or short_copy(ov, shingle_containment=sims[pair], rule=rule)

    originals = {
        d.article: d for d in docs if d.kind in ("original", "short") and d.article is not None
    }
    positives = [
        (originals[d.article], d, d.kind) for d in docs if d.kind in ("excerpt", "reprint")
    ]
    by_site: dict[int, list[Doc]] = defaultdict(list)
    for d in docs:
        by_site[d.site].append(d)
    negatives = [
        (a, b)
        for site_docs in by_site.values()
        for i, a in enumerate(site_docs)
        for b in site_docs[i + 1 :]
        if a.story != b.story
    ]

    def key(a: Doc, b: Doc) -> tuple[int, int]:
        return (min(a.id, b.id), max(a.id, b.id))

    def score(rule: ShortRule | None) -> dict[str, object]:
        def channel(a: Doc, b: Doc) -> bool:
            pair = key(a, b)
            return today(pair) if rule is None else with_rule(pair, rule)

        recall: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        combined: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for orig, copy, kind in positives:
            hit = channel(orig, copy)
            recall[kind][0] += hit
            recall[kind][1] += 1
            combined[kind][0] += hit or simhash(orig, copy)
            combined[kind][1] += 1
        neg = sum(channel(a, b) for a, b in negatives)
        short_neg = [(a, b) for a, b in negatives if min(a.words, b.words) <= 300]
        neg_short = sum(channel(a, b) for a, b in short_neg)
        total = [sum(v[0] for v in recall.values()), sum(v[1] for v in recall.values())]
        return {
            "recall_by_kind": {k: round(h / n, 3) for k, (h, n) in sorted(recall.items())},
            "recall": round(total[0] / total[1], 3),
            "recall_with_simhash": round(
                sum(v[0] for v in combined.values()) / max(1, total[1]), 3
            ),
            "negatives_nominated": neg,
            "negatives_nominated_share": round(neg / max(1, len(negatives)), 5),
            "short_negatives": len(short_neg),
            "short_negatives_nominated": neg_short,
        }

    pos_sizes = Counter(kind for _, _, kind in positives)
    words = sorted(copy.words for _, copy, _ in positives)
    found_neg = sum(key(a, b) in found for a, b in negatives)
    pos_cont = [found[key(o, c)].containment for o, c, _ in positives if key(o, c) in found]
    neg_cont = [found[key(a, b)].containment for a, b in negatives if key(a, b) in found]
    pos_sh = [sims[key(o, c)] for o, c, _ in positives if key(o, c) in found]
    neg_sh = [sims[key(a, b)] for a, b in negatives if key(a, b) in found]
    return {
        "documents": len(docs),
        "positives": dict(pos_sizes),
        "copied_words_min_median_max": [words[0], words[len(words) // 2], words[-1]],
        "negative_pairs": len(negatives),
        "template_passages": len(template),
        "pairs_found_by_index": {
            "positives": sum(key(o, c) in found for o, c, _ in positives),
            "negatives": found_neg,
        },
        "auc_on_found_pairs": {
            "winnowed_containment": round(roc_auc(pos_cont, neg_cont), 3),
            "shingle_containment": round(roc_auc(pos_sh, neg_sh), 3),
        },
        "today": score(None),
        "short_rule_shipped": score(SHIPPED),
        "sweep": {
            f"passages<={pm} shingles>={sm} containment>={cm}": {
                k: v
                for k, v in score(ShortRule(pm, sm, SHARED_MIN, cm)).items()
                if k in ("recall", "negatives_nominated", "short_negatives_nominated")
            }
            for pm, sm, cm in SWEEP
        },
        "cpu_s_features": round(elapsed, 1),
    }


def copycat(data: Path) -> dict[str, object]:
    """The passage channel on the copycat pairs, today's rule and with the short rule:
    pairs the index would find (≥ SHARED_MIN shared of the stored passages) and
    nominated, labels 2–3 (positives) against 0.5 (different pages), all and the short
    pairs (shorter side ≤ SHIPPED.passages_max passages)."""
    with gzip.open(data / "copycat-judgments" / "judgments.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    out: dict[str, dict[str, int]] = {
        side: Counter()
        for side in ("pos", "neg")  # type: ignore[misc]
    }
    for r in rows:
        side = "pos" if r["label"] in ("2", "3") else "neg" if r["label"] == "0.5" else None
        if side is None:
            continue
        a, b = r["a_text"], r["b_text"]
        pa, pb = P.passages(a), P.passages(b)
        ov = P.overlap(pa, pb)
        short = 0 < min(ov.size_a, ov.size_b) <= SHIPPED.passages_max
        out[side]["pairs"] += 1
        out[side]["short"] += short
        sa = passages_bench.stored_set(a, pa)
        sb = passages_bench.query_set(b, pb)
        if len(sa & sb) < lookup_min(len(sb), len(sa)):
            continue
        old = P.nominates(ov, containment_min=CONTAINMENT_MIN, shared_min=SHARED_MIN)
        new = old or short_copy(ov, shingle_containment=shingle_containment(a, b), rule=SHIPPED)
        out[side]["today"] += old
        out[side]["with_short_rule"] += new
        out[side]["short_today"] += old and short
        out[side]["short_with_short_rule"] += new and short
    return {side: dict(c) for side, c in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="development data directory")
    parser.add_argument("--sites", type=int, default=12, help="site templates")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--storage",
        default=P.COARSE.key,
        help="the index's storage: a shipped key or mod=M,whole=N,limit=L,lookup=S,window=W "
        "(default: the storage of the passage methods new databases start on)",
    )
    parser.add_argument(
        "--briefs",
        action="store_true",
        help="excerpts and short articles of 40-90 words (two to five passages)",
    )
    args = parser.parse_args()
    passages_bench.STORAGE = passages_bench.parse_storage(args.storage)
    sizes = ((40, 90), (40, 90)) if args.briefs else ((120, 250), (150, 300))
    docs = build_corpus(args.data, args.sites, args.seed, *sizes)
    out = {
        "storage": args.storage,
        "shipped": {
            "passage_containment_min": CONTAINMENT_MIN,
            "passage_shared_min": SHARED_MIN,
            "passage_template_df": TEMPLATE_DF,
            "short_rule": SHIPPED.__dict__,
        },
        "sites": args.sites,
        "briefs": args.briefs,
        "seed": args.seed,
        "short_copies": evaluate(docs),
        "copycat": copycat(args.data),
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
