"""Does the pair cap (CANDIDATES_PER_DOCUMENT_MAX) lose recall on the language bench?

Compares language-bench pipeline runs (``bench/language_bench.py --pipeline-only FILE``
under ``CANDIDATES_PER_DOCUMENT_MAX=K``; the SQLite database is kept beside FILE) pair by
pair against the first one named: each labelled pair (generated and zh-vi-dev pairs.jsonl)
*nominated* by the bench's rule (a pair above the floor between the two exact families, or
one family) and *grouped* (both in one group), every stored pair, and the groups.

    CANDIDATES_PER_DOCUMENT_MAX=200 .venv/bin/python bench/language_bench.py \\
        --data ../shared/data/zh-vi-dev --pipeline-only /tmp/pc/lang-200.json
    .venv/bin/python bench/experiments/pair_cap_compare.py 200=/tmp/pc/lang-200.sqlite3 \\
        16=/tmp/pc/lang-16.sqlite3 [--data DIR]

Answer recorded in bench/results/2026-12-03-pair-cap.md.
"""

import argparse
import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import language_bench as L  # noqa: E402
import transform_zh_vi as T  # noqa: E402

Pair = tuple[int, int]


def components(edges: list[Pair]) -> set[frozenset[int]]:
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[root(a)] = root(b)
    out: dict[int, set[int]] = defaultdict(set)
    for x in list(parent):
        out[root(x)].add(x)
    return {frozenset(s) for s in out.values()}


def read(db: str, names: dict[int, str], labelled: list[tuple[str, ...]]) -> dict[str, object]:
    c = sqlite3.connect(db)
    doc_of = {names[o]: pk for pk, o in c.execute("select id, batch_offset from ingest_document")}
    fam = dict(
        c.execute("select document_id, text_sha256 from ingest_fingerprint where status = 'ok'")
    )
    pairs = {
        (a, b): bf
        for a, b, bf in c.execute("select a_id, b_id, below_floor from ingest_candidatepair")
    }
    groups: dict[tuple[str, int], set[int]] = defaultdict(set)
    for g, kind, d in c.execute(
        "select g.id, g.kind, m.document_id from ingest_groupmember m"
        " join ingest_candidategroup g on g.id = m.group_id where g.dissolved = 0"
    ):
        groups[(kind, g)].add(d)
    near_of = {d: g for (kind, g), s in groups.items() if kind == "near" for d in s}
    above = {frozenset((fam.get(a, a), fam.get(b, b))) for (a, b), bf in pairs.items() if not bf}
    verdicts = {}
    for ka, kb, lang, kind, label in labelled:
        if ka in doc_of and kb in doc_of:
            x, y = doc_of[ka], doc_of[kb]
            fx, fy = fam.get(x, x), fam.get(y, y)
            nominated = fx == fy or frozenset((fx, fy)) in above
            grouped = fx == fy or (x in near_of and near_of.get(x) == near_of.get(y))
            verdicts[(ka, kb)] = (lang, kind, label, nominated, grouped)
    return {
        "documents": len(doc_of),
        "pairs": pairs,
        "verdicts": verdicts,
        "groups": {frozenset(s) for s in groups.values()},
        "components": components([p for p, bf in pairs.items() if not bf]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="K=SQLITE (the first is the baseline)")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "zh-vi-dev")
    parser.add_argument("--per-kind", type=int, default=30)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    dev = T.load_pages(args.data)
    corpus = L.corpus_build(args.data, args.per_kind, args.seed)
    records = [(p.id, 0) for p in dev] + [(g.key, g.fetch_order) for g in corpus.pages]
    records.sort(key=lambda r: r[1])  # the order the bench ingests them in
    names = {i + 1: r[0] for i, r in enumerate(records)}
    labelled = [(q.a, q.b, q.lang, q.kind, q.label) for q in corpus.pairs]
    labelled += [
        (q["a"], q["b"], q["lang"], q["kind"], q["label"]) for q in T.load_pairs(args.data)
    ]
    runs = [(k, read(db, names, labelled)) for k, db in (r.split("=", 1) for r in args.runs)]
    _, base = runs[0]
    print(
        "| K | pairs stored (a document) | stored pairs not in the baseline | labelled pairs"
        " changed (nominated / grouped) | zh positives nominated / grouped | vi positives"
        " nominated / grouped | zh negatives nominated / grouped | vi negatives nominated /"
        " grouped | groups, same as the baseline | components of the pairs, same |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    changed: list[str] = []
    for k, run in runs:
        c: Counter[tuple[str, str, str]] = Counter()
        moved = Counter[str]()
        for key, (lang, kind, label, nom, grp) in run["verdicts"].items():  # type: ignore[attr-defined]
            side = "neg" if label == "different" else "pos"
            c[(lang, side, "n")] += nom
            c[(lang, side, "g")] += grp
            b = base["verdicts"][key]  # type: ignore[index]
            if (nom, grp) != (b[3], b[4]):
                moved["n"] += nom != b[3]
                moved["g"] += grp != b[4]
                changed.append(
                    f"K={k} {key[0]} ~ {key[1]} {lang} {kind} {label}:"
                    f" nominated {b[3]} -> {nom}, grouped {b[4]} -> {grp}"
                )
        n = run["documents"]
        pairs = run["pairs"]
        new = len(set(pairs) - set(base["pairs"]))  # type: ignore[arg-type]
        print(
            f"| {k} | {len(pairs)} ({len(pairs) / n:.2f}) | {new} |"
            f" {moved['n']} / {moved['g']} |"
            + "".join(
                f" {c[(lang, s, 'n')]} / {c[(lang, s, 'g')]} |"
                for s in ("pos", "neg")
                for lang in ("zh", "vi")
            )
            + f" {len(run['groups'])}, {'yes' if run['groups'] == base['groups'] else 'no'} |"  # type: ignore[arg-type]
            + f" {'yes' if run['components'] == base['components'] else 'no'} |"
        )
    print()
    for line in changed:
        print("-", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
