"""Chinese and Vietnamese benchmark: the product's own pipeline on real pages and on
reposts made from them (bench/transform_zh_vi.py).

For each fingerprint method given (``--method``, repeatable; default the shipped
ACTIVE_METHOD), a subprocess builds a fresh SQLite database, migrates it and ingests
the development pages of ``--data`` (../shared/data/zh-vi-dev), the generated pages and
the login-wall / JavaScript-shell fixtures through ``ingest.services.batch_ingest`` with
the tasks run eagerly: extraction, fingerprints, the candidate channels (exact, SimHash,
passages, semantic where a model is configured), the pairs and the groups — all under
the settings the product reads from its environment (``--set NAME=VALUE``, e.g.
``--set PASSAGE_CONTAINMENT_MIN=0.4``; the method is ACTIVE_METHOD and
CANDIDATE_METHODS). It then reads what the product stored:

- recall per transformation kind and language, per channel and overall, on the
  generated pairs and on every pair of the development set's pairs.jsonl (natural and
  made); a pair is *nominated* when a candidate pair links the two documents' exact
  families (documents with one normalized main text) above the similarity floor, or the
  two are one family (an exact pair). ``stored`` counts the pairs under the floor too;
- hard negatives (generated pages under one template with different articles, and the
  development set's ``different`` pairs) nominated;
- price changes: nominated, flagged (numbers_differ) and not exact;
- the fixtures: in an exact group, in the review queue, their extraction status.

In this process: extraction F1 on the development pages with gold text (character
4-grams for Chinese, ``\\w+`` word 4-grams for Vietnamese, multisets summed over pages),
the product's ``decode_html`` + ``extract`` beside plain ``trafilatura.extract`` with its
defaults; CPU (process time) per page for Chinese, Vietnamese and English pages
(English: the aeb set of ../shared/data/extraction-dev) by stage: decode + extract, the
method's fingerprints of both branches, passages.

    .venv/bin/python bench/language_bench.py --data ../shared/data/zh-vi-dev \\
        --method simhash64-words-sha256-v1@trafilatura-2-v2 \\
        --method simhash64-cjkbigram-sha256-v1@trafilatura-2-v2

Writes bench/results/<date>-language.md (the tables, then the JSON); ``--out`` names
another file. ``--per-kind`` sets the generated pairs per kind and language (30).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
for path in (str(ROOT), str(BENCH)):
    if path not in sys.path:
        sys.path.insert(0, path)

import transform_zh_vi as T  # noqa: E402


def _shared(name: str) -> Path:
    """../shared/data/<name> beside the checkout (or beside its parent: a worktree)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "data" / name).exists():
            return base / "shared" / "data" / name
    return ROOT.parent / "shared" / "data" / name


DEFAULT_DATA = _shared("zh-vi-dev")
ENGLISH_DATA = _shared("extraction-dev")
SHIPPED_METHOD = "simhash64-mixedscript-sha256-v1@trafilatura-2-doctype-v3"  # the settings default
CHANNELS = ("exact", "simhash", "passages", "semantic")
TARGET_POSITIVE = 0.95
TARGET_KIND = 0.9
TARGET_NEGATIVE = 0.02
BASE_TIME = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)


# --- the corpus (the same in every process) --------------------------------------------


def _plain_text(page: T.DevPage) -> tuple[str, str]:
    """(title, text) of a page by plain trafilatura (defaults), not the product; read
    from the page as decoded by its declared charset (trafilatura's own guess at the
    bytes of a GB2312 page can be another codec's mojibake)."""
    import lxml.html
    import trafilatura

    text = trafilatura.extract(page.html) or ""
    title = ""
    try:
        doc = lxml.html.document_fromstring(page.html)
        h1 = doc.find(".//h1")
        title = (h1.text_content() if h1 is not None else doc.findtext(".//title") or "").strip()
    except Exception:  # noqa: BLE001 - a page without a usable title keeps ""
        pass
    return re.split(r"\s*[_|｜\-–—]\s*", title)[0][:80], text


def _template_ok(page: T.DevPage) -> bool:
    """A template that carries a probe article cleanly (checked with plain trafilatura):
    the probe's text comes out and the template's own article does not."""
    import trafilatura

    lang = page.lang
    if lang == "zh":
        probe = [
            f"第{i}段：这是用于检测页面模板的第{i * 7 + 3}句测试文字，其中编号为{i * 7919}的"
            f"内容只出现一次，其后还有第{i + 1}段。" * 2
            for i in range(4)
        ]
    else:
        probe = [
            f"Đoạn {i}: câu thử nghiệm số {i * 7 + 3} dùng để kiểm tra khuôn mẫu trang, mã "
            f"{i * 7919} chỉ xuất hiện một lần, sau đó là đoạn {i + 1}. " * 2
            for i in range(4)
        ]
    try:
        body = T.transplant(page.html, "标题" if lang == "zh" else "Tiêu đề", probe)
    except ValueError:
        return False
    got = trafilatura.extract(body) or ""
    own = trafilatura.extract(page.body()) or ""
    gp, gg, go = (
        T.grams("\n".join(probe), lang),
        T.grams(got, lang),
        T.grams(own, lang) - T.grams("\n".join(probe), lang),
    )
    if not gp or not gg:
        return False
    return len(gp & gg) / len(gp) >= 0.9 and len(go & gg) <= 0.3 * max(1, len(go))


def corpus_build(data: Path, per_kind: int, seed: int, limit: int | None = None) -> T.Corpus:
    pages = T.load_pages(data)
    kinds = _page_kinds(data)
    usable = [p for p in pages if kinds.get(p.id) not in ("list", "home")]
    arts = T.articles(usable, _plain_text)
    if limit:
        arts = {k: v[:limit] for k, v in arts.items()}
    temps = T.templates(usable, _template_ok)

    def overlap(a: T.Article, b: T.Article) -> bool:
        return T.containment("\n".join(a.paras), "\n".join(b.paras), a.page.lang) > 0.2

    return T.build(arts, temps, per_kind=per_kind, seed=seed, overlap=overlap)


def _page_kinds(data: Path) -> dict[str, str]:
    with gzip.open(data / "pages.jsonl.gz", "rt", encoding="utf-8") as f:
        return {r["id"]: r.get("page_kind") or "" for r in map(json.loads, f)}


# --- the pipeline run (a subprocess per method) ------------------------------------------


def pipeline_env(method: str, db: Path, sets: list[str]) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DATABASE_URL", None)
    env.update(
        DATABASE_URL=f"sqlite:///{db}",
        CELERY_BROKER_URL="",
        DJANGO_SETTINGS_MODULE="dedup_site.settings",
        ACTIVE_METHOD=method,
        CANDIDATE_METHODS=method,
        PYTHONPATH=str(ROOT),
        LANGUAGE_BENCH_DB=str(db),
    )
    env.setdefault("SECRET_KEY", "language-bench-" + "x" * 40)
    env.setdefault("DEBUG", "1")
    for item in sets:
        name, _, value = item.partition("=")
        env[name] = value
    return env


def pipeline_run(args: argparse.Namespace) -> dict[str, Any]:
    """In the subprocess: ingest everything under one method, read the results. Run
    alone (``--pipeline-only FILE``), it sets up its own SQLite database beside FILE
    (never the configured DATABASE_URL)."""
    if "LANGUAGE_BENCH_DB" not in os.environ:
        method = (args.method or [SHIPPED_METHOD])[0]
        db = args.pipeline_only.with_suffix(".sqlite3")
        db.unlink(missing_ok=True)
        os.environ.update(pipeline_env(method, db, args.set))
    import django

    django.setup()
    import logging

    from django.core.management import call_command

    logging.disable(logging.WARNING)
    t0 = time.process_time()
    call_command("migrate", verbosity=0)
    migrate_cpu = time.process_time() - t0

    from django.conf import settings

    from ingest import services
    from ingest.core.readers import RawRecord
    from ingest.models import Document

    data = Path(args.data)
    dev = T.load_pages(data)
    corpus = corpus_build(data, args.per_kind, args.seed, args.limit)
    records: list[tuple[str, str, bytes, int]] = [(p.id, p.url, p.body(), 0) for p in dev]
    records += [(g.key, g.url, g.body, g.fetch_order) for g in corpus.pages]
    records.sort(key=lambda r: r[3])  # stable: dev pages, then each later fetch
    names = {i + 1: r[0] for i, r in enumerate(records)}
    items = [
        RawRecord(
            url=url,
            body=body,
            http_status=200,
            headers={"content-type": "text/html"},
            fetched_at=BASE_TIME + timedelta(seconds=i),
            offset=i + 1,
        )
        for i, (_, url, body, _) in enumerate(records)
    ]
    t1 = time.process_time()
    summary = services.batch_ingest(source="language-bench", fmt="jsonl", items=items)
    ingest_cpu = time.process_time() - t1
    doc_of = {
        names[off or 0]: pk
        for pk, off in Document.objects.filter(batch_id=summary.batch_id).values_list(
            "pk", "batch_offset"
        )
    }
    lang_of = {p.id: p.lang for p in dev} | {g.key: g.lang for g in corpus.pages}
    pairs = [(q.a, q.b, q.lang, q.kind, q.label, "generated") for q in corpus.pairs]
    pairs += [
        (
            q["a"],
            q["b"],
            q["lang"],
            q["kind"],
            q["label"],
            "natural" if q["natural"] else "dev-made",
        )
        for q in T.load_pairs(data)
    ]
    method = settings.ACTIVE_METHOD
    out = _measure(method, pairs, doc_of, corpus, lang_of)
    out["run"] = {
        "method": method,
        "documents": len(doc_of),
        "stored": summary.stored,
        "errors": dict(summary.errors),
        "pipeline_cpu_s": round(ingest_cpu, 1),
        "pipeline_cpu_ms_per_page": round(1000 * ingest_cpu / max(1, len(doc_of)), 1),
        "migrate_cpu_s": round(migrate_cpu, 1),
        "corpus_sha": corpus.digest(),
        "settings": {
            k: getattr(settings, k)
            for k in (
                "ACTIVE_METHOD",
                "CANDIDATE_THRESHOLDS",
                "PASSAGE_CHANNEL",
                "PASSAGE_CONTAINMENT_MIN",
                "PASSAGE_SHARED_MIN",
                "PASSAGE_TEMPLATE_DF",
                "SIMILARITY_FLOORS",
                "EMBEDDING_MODEL",
            )
            if hasattr(settings, k)
        },
        "set": args.set,
    }
    return out


def _measure(
    method_key: str,
    pairs: list[tuple[str, str, str, str, str, str]],
    doc_of: dict[str, int],
    corpus: T.Corpus,
    lang_of: dict[str, str],
) -> dict[str, Any]:
    from ingest.core.channels import names as channel_names
    from ingest.core.methods import method_get
    from ingest.models import (
        CandidateGroup,
        CandidatePair,
        Extraction,
        Fingerprint,
        FingerprintMethod,
        GroupMember,
    )
    from reviews.queue.pair_queue import queue_pairs
    from reviews.queue.queue_filters import QueueFilters

    method = FingerprintMethod.objects.get(key=method_key)
    family: dict[int, str] = dict(
        Fingerprint.objects.filter(method=method, simhash__isnull=False).values_list(
            "document_id", "text_sha256"
        )
    )
    members: dict[str, set[int]] = defaultdict(set)
    for d, sha in family.items():
        members[sha].add(d)

    def fam(d: int) -> set[int]:
        return members[family[d]] if d in family else {d}

    rows: dict[tuple[int, int], tuple[int, bool, bool, bool]] = {
        (a, b): (ch, below, exact, numbers)
        for a, b, ch, below, exact, numbers in CandidatePair.objects.filter(
            method=method
        ).values_list("a_id", "b_id", "channels", "below_floor", "exact", "numbers_differ")
    }
    by_doc: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for a, b in rows:
        by_doc[a].append((a, b))
        by_doc[b].append((a, b))

    def verdict(a: int, b: int) -> dict[str, Any]:
        """nominated (above the floor), stored (any row), channels, exact, revision."""
        if a in family and b in family and family[a] == family[b]:
            return {
                "nominated": True,
                "stored": True,
                "channels": {"exact"},
                "exact": True,
                "numbers": False,
            }
        fa, fb = fam(a), fam(b)
        found = [
            rows[p]
            for d in fa
            for p in by_doc.get(d, [])
            if (p[0] in fa and p[1] in fb) or (p[0] in fb and p[1] in fa)
        ]
        above = [r for r in found if not r[1]]
        chans = {c for r in above for c in channel_names(r[0])}
        return {
            "nominated": bool(above),
            "stored": bool(found),
            "channels": chans,
            "exact": any(r[2] for r in above),
            "numbers": any(r[3] for r in above),
        }

    # The main texts: how much of them two documents share, for the errors (is the
    # extraction or the fingerprint to blame?).
    texts = dict(
        Extraction.objects.filter(
            extractor_version=method_get(method_key).extractor_version
        ).values_list("document_id", "main_text")
    )
    # kind -> counters
    table: dict[tuple[str, str, str, str], Counter[str]] = defaultdict(Counter)
    overlaps: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    missing = 0
    misses: dict[str, list[str]] = defaultdict(list)
    wrong: list[dict[str, Any]] = []  # every pair the product got wrong (--misses)
    template_of = {g.key: g.template for g in corpus.pages}
    detail = {
        (a, b): rest
        for a, b, *rest in CandidatePair.objects.filter(method=method).values_list(
            "a_id",
            "b_id",
            "channels",
            "below_floor",
            "shared_passages",
            "a_in_b",
            "b_in_a",
            "distance",
            "containment",
            "token_set_ratio",
        )
    }
    for ka, kb, lang, kind, label, origin in pairs:
        if ka not in doc_of or kb not in doc_of:
            missing += 1
            continue
        v = verdict(doc_of[ka], doc_of[kb])
        found_rows = detail.get((min(doc_of[ka], doc_of[kb]), max(doc_of[ka], doc_of[kb])))
        c = table[(lang, origin, kind, label)]
        c["pairs"] += 1
        c["nominated"] += v["nominated"]
        c["stored"] += v["stored"]
        for ch in v["channels"]:
            c[ch] += 1
        if label == "revision":
            c["flagged_revision"] += v["nominated"] and v["numbers"] and not v["exact"]
            c["exact_pairs"] += v["exact"]
        positive = label != "different"
        if positive != v["nominated"]:
            ta, tb = texts.get(doc_of[ka], ""), texts.get(doc_of[kb], "")
            overlaps[(lang, origin, kind, label)].append(T.containment(ta, tb, lang))
            if len(misses[kind]) < 5:
                misses[kind].append(f"{ka}~{kb}")
            w = _wrong_pair(ka, kb, lang, origin, kind, label, v, ta, tb, found_rows)
            w["templates"] = [template_of.get(ka, ""), template_of.get(kb, "")]
            wrong.append(w)
    # Fixtures: exact groups, the queue, their extraction status.
    fixtures: dict[str, Any] = {}
    queue_ids: set[int] = set()
    for a, b in queue_pairs(filters=QueueFilters(), with_status=False).values_list("a_id", "b_id"):
        queue_ids.update((a, b))
    exact_grouped = set(
        GroupMember.objects.filter(
            group__in=CandidateGroup.objects.filter(method=method, kind="exact", dissolved=False)
        ).values_list("document_id", flat=True)
    )
    statuses = dict(Extraction.objects.values_list("document_id", "status"))
    for kind, keys in corpus.fixtures.items():
        for lang in ("zh", "vi", "en"):
            ids = [doc_of[k] for k in keys if k.startswith(lang + ":") and k in doc_of]
            fixtures[f"{lang}:{kind}"] = {
                "pages": len(ids),
                "in_exact_group": sum(d in exact_grouped for d in ids),
                "in_queue": sum(d in queue_ids for d in ids),
                "statuses": dict(Counter(statuses.get(d, "?") for d in ids)),
            }
    kinds: list[dict[str, Any]] = [
        {
            "lang": lang,
            "origin": origin,
            "kind": kind,
            "label": label,
            **dict(c),
            "recall" if label != "different" else "nominated_share": round(
                c["nominated"] / c["pairs"], 3
            )
            if c["pairs"]
            else None,
            # The errors' main texts: median share of 5-grams shared (characters for
            # Chinese, words for Vietnamese; the larger of both directions).
            "errors_text_containment_median": round(
                statistics.median(overlaps[(lang, origin, kind, label)]), 3
            )
            if overlaps[(lang, origin, kind, label)]
            else None,
        }
        for (lang, origin, kind, label), c in sorted(table.items())
    ]
    summary: dict[str, Any] = {}
    for lang in ("zh", "vi"):
        pos = [k for k in kinds if k["lang"] == lang and k["label"] != "different"]
        neg_gen = [k for k in kinds if k["lang"] == lang and k["kind"] == "hard_negative"]
        neg_dev = [
            k
            for k in kinds
            if k["lang"] == lang and k["label"] == "different" and k["origin"] != "generated"
        ]
        price = [k for k in kinds if k["lang"] == lang and k["label"] == "revision"]
        n_pos = sum(k["pairs"] for k in pos)
        got = sum(k["nominated"] for k in pos)
        summary[lang] = {
            "positives": n_pos,
            "positives_nominated": got,
            "recall": round(got / n_pos, 3) if n_pos else None,
            "recall_by_channel": {
                ch: round(sum(k.get(ch, 0) for k in pos) / n_pos, 3) if n_pos else None
                for ch in CHANNELS
            },
            "worst_kind": min(
                ((k["recall"], f"{k['origin']}:{k['kind']}") for k in pos if k["pairs"]),
                default=None,
            ),
            "hard_negatives": sum(k["pairs"] for k in neg_gen),
            "hard_negatives_nominated": sum(k["nominated"] for k in neg_gen),
            "dev_negatives": sum(k["pairs"] for k in neg_dev),
            "dev_negatives_nominated": sum(k["nominated"] for k in neg_dev),
            "price_pairs": sum(k["pairs"] for k in price),
            "price_nominated": sum(k["nominated"] for k in price),
            "price_flagged_revision": sum(k.get("flagged_revision", 0) for k in price),
            "price_exact": sum(k.get("exact_pairs", 0) for k in price),
        }
    return {
        "kinds": kinds,
        "summary": summary,
        "fixtures": fixtures,
        "missing_pairs": missing,
        "misses_sample": dict(misses),
        "wrong": wrong,
    }


def _wrong_pair(
    ka: str,
    kb: str,
    lang: str,
    origin: str,
    kind: str,
    label: str,
    v: dict[str, Any],
    ta: str,
    tb: str,
    row: list[Any] | None,
) -> dict[str, Any]:
    """One pair the product got wrong, for ``--misses``: its main texts' lengths and
    5-gram containment, and the candidate row of the two documents if one was stored."""
    out: dict[str, Any] = {
        "lang": lang,
        "origin": origin,
        "kind": kind,
        "label": label,
        "a": ka,
        "b": kb,
        "stored": v["stored"],
        "chars_a": len(ta),
        "chars_b": len(tb),
        "text_containment": round(T.containment(ta, tb, lang), 3),
    }
    if row is not None:
        names = ("channels", "below_floor", "shared", "a_in_b", "b_in_a", "distance")
        out["row"] = dict(zip(names + ("containment", "token_set_ratio"), row, strict=True))
    return out


# --- extraction F1 and CPU per page (this process, no Django) -----------------------------


def _grams_multiset(text: str, lang: str, n: int = 4) -> Counter[tuple[str, ...] | str]:
    if lang == "zh":
        chars = "".join(re.findall(r"\w", text or ""))
        return Counter(chars[i : i + n] for i in range(max(1, len(chars) - n + 1)) if chars)
    ws = re.findall(r"\w+", text or "")
    return Counter(tuple(ws[i : i + n]) for i in range(max(1, len(ws) - n + 1)) if ws)


def extraction_f1(data: Path) -> dict[str, Any]:
    import trafilatura

    from ingest.core.encoding import decode_html
    from ingest.core.extract import EXTRACTOR_VERSION, extract

    sums: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    pages_n: Counter[str] = Counter()
    for p in T.load_pages(data):
        if not p.gold_text:
            continue
        pages_n[p.lang] += 1
        body = p.body()
        ours = extract(decode_html(body, content_type=None).text, url=p.url).main_text
        plain = trafilatura.extract(body, url=p.url or None) or ""
        gold = _grams_multiset(p.gold_text, p.lang)
        for name, pred in (("product", ours), ("trafilatura", plain)):
            g = _grams_multiset(pred, p.lang)
            s = sums[(p.lang, name)]
            s[0] += sum((gold & g).values())
            s[1] += sum((g - gold).values())
            s[2] += sum((gold - g).values())
    out: dict[str, Any] = {
        "trafilatura_version": trafilatura.__version__,
        "extractor": EXTRACTOR_VERSION,
        "unit": {"zh": "character 4-grams (\\w characters)", "vi": "\\w+ word 4-grams"},
    }
    for (lang, name), (tp, fp, fn) in sorted(sums.items()):
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        out.setdefault(lang, {"pages": pages_n[lang]})[name] = {
            "f1": round(f1, 3),
            "precision": round(prec, 3),
            "recall": round(rec, 3),
        }
    return out


def cpu_per_page(data: Path, methods: list[str], english: Path, limit: int | None) -> dict:
    from ingest.core import passages as P
    from ingest.core.encoding import decode_html
    from ingest.core.extract import extract
    from ingest.core.methods import fingerprint_texts

    groups: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
    for p in T.load_pages(data):
        groups[p.lang].append((p.url, p.body()))
    if (english / "manifest.jsonl").exists():
        with open(english / "manifest.jsonl", encoding="utf-8") as f:
            for entry in map(json.loads, f):
                if entry["set"] == "aeb":
                    body = gzip.decompress((english / entry["file"]).read_bytes())
                    groups["en"].append((entry["url"] or "", body))
    out: dict[str, Any] = {}
    for lang, items in sorted(groups.items()):
        items = items[:limit] if limit else items
        texts = []
        t0 = time.process_time()
        for url, body in items:
            r = extract(decode_html(body, content_type=None).text, url=url)
            texts.append((r.main_text, r.full_text))
        t1 = time.process_time()
        row: dict[str, Any] = {
            "pages": len(items),
            "extract_ms": round(1000 * (t1 - t0) / len(items), 2),
        }
        for key in methods:
            s = time.process_time()
            tokens = 0
            for main, full in texts:
                tokens += fingerprint_texts([key], main, min_tokens=3)[key].token_count
                fingerprint_texts([key], full, min_tokens=3)
            row[f"fingerprint_ms[{key}]"] = round(1000 * (time.process_time() - s) / len(items), 3)
            row[f"main_tokens_mean[{key}]"] = round(tokens / len(items), 1)
        s = time.process_time()
        count = 0
        for main, _ in texts:
            count += len(P.passages(main))
        row["passages_ms"] = round(1000 * (time.process_time() - s) / len(items), 3)
        row["passages_mean"] = round(count / len(items), 1)
        out[lang] = row
    return out


# --- report ------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _mark(ok: bool) -> str:
    return "MET" if ok else "MISSED"


def report(result: dict[str, Any]) -> str:
    lines = [f"# Language bench, {result['date']}", "", f"Command: `{result['command']}`", ""]
    lines += [
        f"Load average at start: {result['loadavg']}. Data: `{result['data']}`; "
        f"{result['per_kind']} generated pairs per kind and language, seed {result['seed']}.",
        "",
    ]
    runs = result["runs"]
    lines += [
        "## Targets",
        "",
        "| method | lang | positives nominated | every kind ≥ 0.9 (worst) | "
        "hard negatives nominated | price: nominated / flagged / exact |",
        "|---|---|---|---|---|---|",
    ]
    for key, run in runs.items():
        for lang, s in run["summary"].items():
            if not s["positives"]:
                continue
            worst = s["worst_kind"]
            neg = s["hard_negatives"]
            share = s["hard_negatives_nominated"] / neg if neg else 0.0
            lines.append(
                f"| `{key}` | {lang} | {s['positives_nominated']}/{s['positives']} = "
                f"{_pct(s['recall'])} {_mark((s['recall'] or 0) >= TARGET_POSITIVE)} | "
                f"{_pct(worst[0]) if worst else '–'} {worst[1] if worst else ''} "
                f"{_mark(bool(worst) and worst[0] >= TARGET_KIND)} | "
                f"{s['hard_negatives_nominated']}/{neg} = {share:.3%} "
                f"{_mark(share <= TARGET_NEGATIVE)} (dev `different`: "
                f"{s['dev_negatives_nominated']}/{s['dev_negatives']}) | "
                f"{s['price_nominated']} / {s['price_flagged_revision']} / {s['price_exact']} "
                f"of {s['price_pairs']} |"
            )
    lines += [
        "",
        "## Recall per kind (nominated above the floor; channels that nominated; for the "
        "pairs it got wrong, the median share of 5-grams their main texts share)",
        "",
    ]
    keys = list(runs)
    header = (
        "| lang | origin | kind | label | pairs | "
        + " | ".join(
            f"`{k.split('@')[0]}` nominated (stored) · exact/simhash/passages/semantic"
            for k in keys
        )
        + " |"
    )
    lines += [header, "|" + "---|" * (5 + len(keys))]
    index: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for key, run in runs.items():
        for k in run["kinds"]:
            index[(k["lang"], k["origin"], k["kind"], k["label"])][key] = k
    for (lang, origin, kind, label), per in sorted(index.items()):
        n = next(iter(per.values()))["pairs"]
        cells = []
        for key in keys:
            k = per.get(key)
            if k is None:
                cells.append("–")
                continue
            share = k["nominated"] / k["pairs"]
            chans = "/".join(str(k.get(ch, 0)) for ch in CHANNELS)
            err = k.get("errors_text_containment_median")
            cells.append(
                f"{share:.2f} ({k['stored']}) · {chans}"
                + ("" if err is None else f" · errors' text overlap {err:.2f}")
            )
        lines.append(f"| {lang} | {origin} | {kind} | {label} | {n} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Login walls and JavaScript shells",
        "",
        "| method | fixture | pages | in an exact group | in the queue | statuses |",
        "|---|---|---|---|---|---|",
    ]
    for key, run in runs.items():
        for name, f in run["fixtures"].items():
            lines.append(
                f"| `{key.split('@')[0]}` | {name} | {f['pages']} | {f['in_exact_group']} | "
                f"{f['in_queue']} | {f['statuses']} |"
            )
    ex = result["extraction"]
    lines += [
        "",
        f"## Extraction F1 (pages with gold text; trafilatura "
        f"{ex['trafilatura_version']}, `extract()` defaults)",
        "",
        "| lang | pages | unit | product F1 (P / R) | plain trafilatura F1 (P / R) |",
        "|---|---|---|---|---|",
    ]
    for lang in ("zh", "vi"):
        if lang in ex:
            e = ex[lang]
            lines.append(
                f"| {lang} | {e['pages']} | {ex['unit'][lang]} | {e['product']['f1']} "
                f"({e['product']['precision']} / {e['product']['recall']}) | "
                f"{e['trafilatura']['f1']} ({e['trafilatura']['precision']} / "
                f"{e['trafilatura']['recall']}) |"
            )
    cpu = result["cpu"]
    lines += ["", "## CPU per page (process time, ms; fingerprints = both branches)", ""]
    cols = sorted({c for row in cpu.values() for c in row if c != "pages"})
    lines += ["| lang | pages | " + " | ".join(cols) + " |", "|" + "---|" * (2 + len(cols))]
    for lang, row in cpu.items():
        lines.append(
            f"| {lang} | {row['pages']} | " + " | ".join(str(row.get(c, "")) for c in cols) + " |"
        )
    lines += [
        "",
        "Pipeline CPU (ingest command with eager tasks, SQLite) per page: "
        + ", ".join(
            f"`{k.split('@')[0]}` {r['run']['pipeline_cpu_ms_per_page']} ms "
            f"({r['run']['documents']} documents)"
            for k, r in runs.items()
        ),
        "",
    ]
    lines += [
        "## JSON",
        "",
        "```json",
        json.dumps(result, indent=1, ensure_ascii=False, default=str),
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--method", action="append", help="fingerprint method key (repeatable)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a product setting for the pipeline runs (environment variable)",
    )
    parser.add_argument("--per-kind", type=int, default=30)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--limit", type=int, help="articles per language (smoke runs)")
    parser.add_argument("--english", type=Path, default=ENGLISH_DATA)
    parser.add_argument(
        "--out", type=Path, help="report file (default bench/results/<date>-language.md)"
    )
    parser.add_argument("--json", type=Path, help="also write the JSON alone here")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU and F1 measurements")
    parser.add_argument(
        "--run-json",
        type=Path,
        action="append",
        default=[],
        help="a pipeline run written apart (--pipeline-only FILE, e.g. two methods at once); "
        "its method is not run again",
    )
    parser.add_argument("--pipeline-only", type=Path, help="run one method's pipeline, write FILE")
    parser.add_argument(
        "--misses",
        type=Path,
        help="write every pair the product got wrong here (JSON lines: kind, pages, their "
        "main texts' lengths and 5-gram containment, the candidate row if any)",
    )
    args = parser.parse_args(argv)
    done = {r["run"]["method"]: r for r in (json.loads(p.read_text()) for p in args.run_json)}
    methods = args.method or ([] if done else [SHIPPED_METHOD])
    if args.pipeline_only:
        args.pipeline_only.write_text(json.dumps(pipeline_run(args), default=str))
        return 0
    result: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(
            ["bench/language_bench.py", *(argv if argv is not None else sys.argv[1:])]
        ),
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "data": str(args.data),
        "per_kind": args.per_kind,
        "seed": args.seed,
        "runs": dict(done),
    }
    with tempfile.TemporaryDirectory(prefix="language-bench-") as tmp:
        for i, key in enumerate(k for k in methods if k not in done):
            out = Path(tmp) / f"run{i}.json"
            cmd = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--pipeline-only",
                str(out),
                "--data",
                str(args.data),
                "--per-kind",
                str(args.per_kind),
                "--seed",
                str(args.seed),
                "--method",
                key,
            ]
            cmd += [x for s in args.set for x in ("--set", s)]
            if args.limit:
                cmd += ["--limit", str(args.limit)]
            print(f"pipeline run: {key}", file=sys.stderr, flush=True)
            started = time.monotonic()
            subprocess.run(
                cmd, env=pipeline_env(key, Path(tmp) / f"run{i}.sqlite3", args.set), check=True
            )
            run = json.loads(out.read_text())
            run["run"]["wall_s"] = round(time.monotonic() - started, 1)
            result["runs"][key] = run
    wrong = [w for run in result["runs"].values() for w in run.pop("wrong", [])]
    if args.misses:
        args.misses.write_text("".join(json.dumps(w, ensure_ascii=False) + "\n" for w in wrong))
    if not args.no_cpu:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
        print("extraction F1 and CPU per page", file=sys.stderr, flush=True)
        result["extraction"] = extraction_f1(args.data)
        keys = list(dict.fromkeys([*done, *methods]))
        result["cpu"] = cpu_per_page(args.data, keys, args.english, args.limit)
    else:
        result["extraction"] = {"trafilatura_version": "", "unit": {}}
        result["cpu"] = {}
    text = report(result)
    out_path = args.out or BENCH / "results" / f"{datetime.now(UTC):%Y-%m-%d}-language.md"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False, default=str))
    print(text.split("## JSON")[0])
    print(f"written: {out_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
