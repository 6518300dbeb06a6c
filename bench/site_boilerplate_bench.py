"""Templates that span hosts and footers kept in the main text, on real pages: the
product's pipeline with its site boilerplate rule off (templates per host, main texts
read whole) and on (SITE_BOILERPLATE: templates per registrable domain, boilerplate lines
learned from the full-page branch of the site's other pages and dropped).

Data: the real pages of ../shared/data/extraction-dev and wcxb-dev whose registrable
domain has pages under at least two hosts and at least MIN_REAL_PAGES pages in all
(stackexchange.com under four hosts, mozilla.org, amazon.com, …). Per domain:

- its real pages, ingested as they were served (they are the "other pages" the site's
  boilerplate is learned from);
- its template: the blocks of the real pages' full-page branch (the product's
  extractor) that recur on at least three of them, in page order (menus, sidebars,
  footers, sign-up prompts: the site's own words);
- cases, each page a different short real article (the first paragraphs, 90–200 words,
  of the human-checked article texts of extraction-dev's aeb set) under a page made of
  the template's blocks:
  - ``cross_host_template``: articles on the domain's first two hosts, the template's
    blocks inside the article element (a sidebar the extractor keeps in both main
    texts); every pair across the two hosts is a hard negative;
  - ``footer_in_main``: articles on one host, the last blocks of the template (its
    footer) as the article's last paragraphs; every pair is a hard negative;
  - ``copy_cross_host``: one article on both hosts under the template (a positive:
    still to be grouped).

Each run is a fresh SQLite database in a subprocess with the tasks run eagerly (like
bench/language_bench.py), the real pages first, then the cases. A pair is *grouped* when
the two documents are members of one candidate group; *nominated* when a candidate
pair links them above the similarity floor.

    .venv/bin/python bench/site_boilerplate_bench.py [--data DIR] [--out FILE] [--json FILE]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _shared_data() -> Path:
    """../shared/data beside the checkout (or beside its parent: a worktree)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "data").exists():
            return base / "shared" / "data"
    return ROOT.parent / "shared" / "data"


DATA = _shared_data()
METHOD = "simhash64-mixedscript-sha256-v1@trafilatura-2-v2"
MIN_REAL_PAGES = 4
TEMPLATE_MIN_PAGES = 3
TEMPLATE_MAX_WORDS = 400
FOOTER_MAX_WORDS = 150
DOMAINS_MAX = 10
PER_HOST = 3  # cross-host articles per host
FOOTER_PAGES = 4
COPIES = 2
BASE_TIME = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)


def _host(url: str) -> str:
    if url.startswith("//"):
        url = "http:" + url
    return (urlsplit(url).hostname or "").lower()


def real_pages(data: Path = DATA) -> list[dict[str, Any]]:
    out = []
    for base in (data / "extraction-dev", data / "wcxb-dev"):
        manifest = base / "manifest.jsonl"
        if not manifest.exists():
            continue
        for line in manifest.open(encoding="utf-8"):
            r = json.loads(line)
            url = r.get("url") or ""
            if url.startswith("//"):
                url = "http:" + url
            if _host(url):
                out.append({"id": f"{base.name}:{r['id']}", "url": url, "file": base / r["file"]})
    return out


def short_articles(seed: int, data: Path = DATA) -> list[tuple[str, list[str]]]:
    """(title, paragraphs) of 90–200 words from the aeb set's human-checked texts."""
    out = []
    for line in (data / "extraction-dev" / "manifest.jsonl").open(encoding="utf-8"):
        r = json.loads(line)
        if r.get("set") != "aeb":
            continue
        paras = [p.strip() for p in (r.get("gold_text") or "").split("\n") if p.strip()]
        kept: list[str] = []
        words = 0
        for p in paras:
            n = len(p.split())
            if words + n > 200:
                break
            kept.append(p)
            words += n
        if words >= 90:
            out.append((" ".join(kept[0].split()[:8]), kept))
    random.Random(seed).shuffle(out)
    return out


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def page_html(title: str, paras: list[str], inside: list[str], menu: list[str]) -> bytes:
    body = "".join(f"<p>{_esc(p)}</p>" for p in paras)
    side = "".join(f"<p>{_esc(p)}</p>" for p in inside)
    nav = "".join(f'<li><a href="/">{_esc(m)}</a></li>' for m in menu)
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}'
        f"</title></head><body><header><nav><ul>{nav}</ul></nav></header><main><article>"
        f"<h1>{_esc(title)}</h1>{body}<div class='more'>{side}</div></article></main>"
        "</body></html>"
    )
    return html.encode("utf-8")


def build(seed: int, data: Path = DATA) -> dict[str, Any]:
    """The records to ingest (real pages first) and the case pairs."""
    from ingest.core import boilerplate
    from ingest.core.domains import registrable_domain
    from ingest.core.encoding import decode_html
    from ingest.core.extract import extract

    pages = real_pages(data)
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pages:
        by_domain[registrable_domain(_host(p["url"]))].append(p)
    chosen = sorted(
        (
            d
            for d, ps in by_domain.items()
            if len(ps) >= MIN_REAL_PAGES and len({_host(p["url"]) for p in ps}) >= 2
        ),
        key=lambda d: (-len(by_domain[d]), d),
    )[:DOMAINS_MAX]
    articles = short_articles(seed, data)
    records: list[dict[str, Any]] = []
    cases: list[dict[str, Any]] = []
    domains: dict[str, Any] = {}
    for domain in chosen:
        real = by_domain[domain]
        counts: Counter[int] = Counter()
        first_at: dict[int, tuple[int, int, str]] = {}
        for i, p in enumerate(real):
            with gzip.open(p["file"]) as f:
                body = f.read()
            text = decode_html(body, content_type=None).text
            full = extract(text, url=p["url"]).full_text
            seen = set()
            for j, line in enumerate(full.split("\n")):
                k = boilerplate.line_key(line)
                if k is None or k in seen:
                    continue
                seen.add(k)
                counts[k] += 1
                first_at.setdefault(k, (i, j, line))
            records.append({"key": p["id"], "url": p["url"], "body": body})
        lines = [
            first_at[k][2]
            for k in sorted(counts, key=lambda k: first_at[k][:2])
            if counts[k] >= TEMPLATE_MIN_PAGES
        ]
        template: list[str] = []
        for line in lines:
            if sum(len(x.split()) for x in template) + len(line.split()) > TEMPLATE_MAX_WORDS:
                break
            template.append(line)
        footer: list[str] = []
        for line in reversed(lines):
            if sum(len(x.split()) for x in footer) + len(line.split()) > FOOTER_MAX_WORDS:
                break
            footer.insert(0, line)
        if len(template) < 3:
            continue
        hosts = sorted({_host(p["url"]) for p in real}, key=lambda h: (h.count("."), h))[:2]
        menu = [x for x in template if len(x.split()) <= 4][:8]
        domains[domain] = {
            "hosts": hosts,
            "real_pages": len(real),
            "template_lines": len(template),
            "template_words": sum(len(x.split()) for x in template),
            "footer_words": sum(len(x.split()) for x in footer),
        }

        def page(
            key: str,
            host: str,
            art: tuple[str, list[str]],
            inside: list[str],
            menu: list[str] = menu,
        ) -> str:
            records.append(
                {
                    "key": key,
                    "url": f"https://{host}/case/{key.split(':', 1)[1].replace(':', '-')}",
                    "body": page_html(art[0], art[1], inside, menu),
                }
            )
            return key

        cross = {h: [] for h in hosts}
        for h in hosts:
            for i in range(PER_HOST):
                art = articles.pop()
                cross[h].append(page(f"{domain}:cross:{h}:{i}", h, art, template))
        for a in cross[hosts[0]]:
            for b in cross[hosts[1]]:
                cases.append({"a": a, "b": b, "kind": "cross_host_template", "positive": False})
        foot = [
            page(f"{domain}:footer:{i}", hosts[0], articles.pop(), footer)
            for i in range(FOOTER_PAGES)
        ]
        for i, a in enumerate(foot):
            for b in foot[i + 1 :]:
                cases.append({"a": a, "b": b, "kind": "footer_in_main", "positive": False})
        for i in range(COPIES):
            art = articles.pop()
            a = page(f"{domain}:copy:{i}:a", hosts[0], art, template)
            b = page(f"{domain}:copy:{i}:b", hosts[1], art, template)
            cases.append({"a": a, "b": b, "kind": "copy_cross_host", "positive": True})
    return {"records": records, "cases": cases, "domains": domains}


def pipeline(corpus_file: Path) -> dict[str, Any]:
    """In the subprocess: ingest, then read what the product stored."""
    import django

    django.setup()
    import logging

    from django.core.management import call_command

    logging.disable(logging.WARNING)
    call_command("migrate", verbosity=0)
    from django.conf import settings

    from ingest import services
    from ingest.core import channels
    from ingest.core.readers import RawRecord
    from ingest.models import BoilerplateDrop, CandidatePair, Document, GroupMember

    corpus = json.loads(corpus_file.read_text())
    recs = corpus["records"]
    items = [
        RawRecord(
            url=r["url"],
            body=r["body"].encode("latin-1"),
            http_status=200,
            headers={"content-type": "text/html"},
            fetched_at=BASE_TIME + timedelta(seconds=i),
            offset=i + 1,
        )
        for i, r in enumerate(recs)
    ]
    t0 = time.process_time()
    summary = services.batch_ingest(source="site-boilerplate-bench", fmt="jsonl", items=items)
    cpu = time.process_time() - t0
    doc_of = {
        recs[(off or 1) - 1]["key"]: pk
        for pk, off in Document.objects.filter(batch_id=summary.batch_id).values_list(
            "pk", "batch_offset"
        )
    }
    group_of = dict(
        GroupMember.objects.filter(method__key=settings.ACTIVE_METHOD).values_list(
            "document_id", "group_id"
        )
    )
    pairs = {
        (p.a_id, p.b_id): p
        for p in CandidatePair.objects.filter(method__key=settings.ACTIVE_METHOD)
    }
    rows = []
    for c in corpus["cases"]:
        a, b = doc_of.get(c["a"]), doc_of.get(c["b"])
        if a is None or b is None:
            rows.append({**c, "missing": True})
            continue
        pair = pairs.get((min(a, b), max(a, b)))
        grouped = group_of.get(a) is not None and group_of.get(a) == group_of.get(b)
        rows.append(
            {
                **c,
                "grouped": grouped,
                "nominated": bool(pair and pair.channels and not pair.below_floor),
                "channels": channels.names(pair.channels) if pair else [],
                "distance": pair.distance if pair else None,
                "without_boilerplate": (
                    pair.evidence.get("simhash", {}).get("without_boilerplate") if pair else None
                ),
            }
        )
    drops = list(BoilerplateDrop.objects.values_list("lines", flat=True))
    return {
        "cases": rows,
        "documents": len(doc_of),
        "pipeline_cpu_s": round(cpu, 1),
        "drops": {"rows": len(drops), "with_lines": sum(1 for d in drops if d)},
        "site_boilerplate": settings.SITE_BOILERPLATE,
    }


def run(corpus_file: Path, boilerplate_on: bool, tmp: Path) -> dict[str, Any]:
    db = tmp / f"run-{int(boilerplate_on)}.sqlite3"
    out = tmp / f"run-{int(boilerplate_on)}.json"
    env = dict(os.environ)
    env.update(
        DATABASE_URL=f"sqlite:///{db}",
        CELERY_BROKER_URL="",
        DJANGO_SETTINGS_MODULE="dedup_site.settings",
        ACTIVE_METHOD=METHOD,
        CANDIDATE_METHODS=METHOD,
        PYTHONPATH=str(ROOT),
        SITE_BOILERPLATE="1" if boilerplate_on else "0",
    )
    env.setdefault("SECRET_KEY", "site-boilerplate-bench-" + "x" * 40)
    env.setdefault("DEBUG", "1")
    cmd = [sys.executable, __file__, "--pipeline", str(corpus_file), "--result", str(out)]
    subprocess.run(cmd, env=env, check=True)
    return json.loads(out.read_text())


def summarize(result: dict[str, Any]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = defaultdict(Counter)  # type: ignore[arg-type]
    for c in result["cases"]:
        k = out[c["kind"]]
        k["pairs"] += 1
        k["grouped"] += int(bool(c.get("grouped")))
        k["nominated"] += int(bool(c.get("nominated")))
        for ch in c.get("channels") or []:
            k[ch] += 1
    return {k: dict(v) for k, v in out.items()}


def report(res: dict[str, Any]) -> str:
    lines = [
        f"# Site boilerplate bench, {res['date']}",
        "",
        f"Command: `{res['command']}` (load average at start {res['loadavg']}); method "
        f"`{METHOD}`; {res['documents']} documents ({res['real_pages']} real pages, the rest "
        "cases made of real article texts under the real sites' template blocks).",
        "",
        "## Domains",
        "",
        "| domain | hosts used | real pages | template blocks (words) | footer words |",
        "|---|---|---|---|---|",
    ]
    for d, info in res["domains"].items():
        lines.append(
            f"| {d} | {', '.join(info['hosts'])} | {info['real_pages']} | "
            f"{info['template_lines']} ({info['template_words']}) | {info['footer_words']} |"
        )
    lines += [
        "",
        "## Pairs grouped (nominated above the floor; channels)",
        "",
        "| kind | label | pairs | boilerplate rule off: grouped / nominated · exact/simhash/"
        "passages | on: grouped / nominated · exact/simhash/passages |",
        "|---|---|---|---|---|",
    ]
    off, on = res["summary"]["off"], res["summary"]["on"]
    for kind in sorted(set(off) | set(on)):
        o, n = off.get(kind, {}), on.get(kind, {})
        label = "duplicate" if kind.startswith("copy") else "different"

        def cell(s: dict[str, int]) -> str:
            chans = "/".join(str(s.get(c, 0)) for c in ("exact", "simhash", "passages"))
            return f"{s.get('grouped', 0)} / {s.get('nominated', 0)} · {chans}"

        lines.append(f"| {kind} | {label} | {n.get('pairs', 0)} | {cell(o)} | {cell(n)} |")
    lines += [
        "",
        f"Boilerplate records (rule on): {res['runs']['on']['drops']['rows']} documents read, "
        f"{res['runs']['on']['drops']['with_lines']} with lines dropped. Pipeline CPU: off "
        f"{res['runs']['off']['pipeline_cpu_s']} s, on {res['runs']['on']['pipeline_cpu_s']} s "
        f"for {res['documents']} documents.",
        "",
        "## JSON",
        "",
        "```json",
        json.dumps(res, indent=1, ensure_ascii=False, default=str),
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="development data directory")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--pipeline", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pipeline:
        args.result.write_text(json.dumps(pipeline(args.pipeline), default=str))
        return 0
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
    os.environ.setdefault("DEBUG", "1")
    corpus = build(args.seed, args.data)
    res: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(
            ["bench/site_boilerplate_bench.py", *(argv if argv is not None else sys.argv[1:])]
        ),
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "domains": corpus["domains"],
        "documents": len(corpus["records"]),
        "real_pages": sum(1 for r in corpus["records"] if ":case" not in r["url"]),
        "runs": {},
    }
    res["real_pages"] = sum(1 for r in corpus["records"] if "/case/" not in r["url"])
    with tempfile.TemporaryDirectory(prefix="site-boilerplate-") as tmp:
        corpus_file = Path(tmp) / "corpus.json"
        serial = dict(corpus)
        serial["records"] = [{**r, "body": r["body"].decode("latin-1")} for r in corpus["records"]]
        corpus_file.write_text(json.dumps(serial))
        for name, on in (("off", False), ("on", True)):
            print(f"pipeline run, site boilerplate {name}", file=sys.stderr, flush=True)
            res["runs"][name] = run(corpus_file, on, Path(tmp))
    res["summary"] = {name: summarize(r) for name, r in res["runs"].items()}
    text = report(res)
    out = (
        args.out or ROOT / "bench" / "results" / f"{datetime.now(UTC):%Y-%m-%d}-site-boilerplate.md"
    )
    out.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(res, indent=1, default=str))
    print(text.split("## JSON")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
