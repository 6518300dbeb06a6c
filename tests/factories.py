"""Plain factory functions for tests."""

import hashlib
import io
import secrets
from collections.abc import Iterable
from datetime import UTC, datetime

from django.contrib.auth.models import Group, User
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from ingest.models import ApiToken

WORDS = [
    "river",
    "harbour",
    "lantern",
    "meadow",
    "granite",
    "orchard",
    "falcon",
    "copper",
    "willow",
    "ember",
    "summit",
    "thicket",
    "canyon",
    "beacon",
    "marble",
    "quarry",
    "tundra",
    "saffron",
    "cobalt",
    "juniper",
    "prairie",
    "glacier",
    "harvest",
    "citadel",
    "voyage",
    "anthem",
    "mosaic",
    "orbit",
    "pebble",
    "quill",
    "ripple",
    "sable",
    "tempest",
    "umber",
    "velvet",
    "wander",
    "zephyr",
    "almond",
    "basalt",
    "cedar",
    "delta",
    "fjord",
    "grove",
    "heron",
    "inlet",
]


def user_create(*, username: str, role: str | None = None, password: str = "pw") -> User:
    user = User.objects.create_user(username=username, password=password)
    if role:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def api_token_create(*, user: User, name: str = "test crawler") -> str:
    token = secrets.token_urlsafe(16)
    ApiToken.objects.create(
        name=name, user=user, key_sha256=hashlib.sha256(token.encode()).hexdigest()
    )
    return token


def article_text(seed: int, words: int = 220) -> str:
    """Deterministic pseudo-article: `seed` picks a distinct word sequence."""
    import random

    rng = random.Random(seed)
    paragraphs = []
    remaining = words
    while remaining > 0:
        n = min(remaining, rng.randint(35, 60))
        sentence_words = [rng.choice(WORDS) for _ in range(n)]
        paragraphs.append(" ".join(sentence_words).capitalize() + ".")
        remaining -= n
    return "\n\n".join(paragraphs)


def article_html(title: str, body: str, *, menu: str = "Home News Sport About") -> str:
    paragraphs = "".join(f"<p>{p}</p>" for p in body.split("\n\n"))
    links = "".join(f'<li><a href="/{w.lower()}">{w}</a></li>' for w in menu.split())
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"</head><body><nav><ul>{links}</ul></nav><main><article><h1>{title}</h1>"
        f"{paragraphs}</article></main><footer><p>Copyright 2026 Example Media. "
        "All rights reserved. Contact us.</p></footer></body></html>"
    )


def warc_bytes(
    pages: Iterable[tuple[str, bytes]],
    *,
    gzip_records: bool = True,
    content_type: str = "text/html; charset=utf-8",
    status: str = "200 OK",
    date: datetime | None = None,
) -> bytes:
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=gzip_records)
    when = (date or datetime(2026, 5, 1, 12, 0, tzinfo=UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for url, body in pages:
        headers = StatusAndHeaders(status, [("Content-Type", content_type)], protocol="HTTP/1.1")
        record = writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            http_headers=headers,
            warc_headers_dict={"WARC-Date": when},
        )
        writer.write_record(record)
    return out.getvalue()


def indexed_document(
    *,
    url: str,
    text: str,
    simhash: int,
    site: str = "g.example.com",
    priority: int = 0,
    doc_type: str = "article",
    fetched_at: datetime | None = None,
    title: str = "",
):  # type: ignore[no-untyped-def]
    """A document with an ok extraction and a main/full fingerprint of the active method,
    the SimHash given rather than computed (to set distances exactly)."""
    from django.conf import settings

    from ingest.core.extract import EXTRACTOR_VERSION
    from ingest.core.methods import fingerprint_text
    from ingest.core.simhash import to_signed64
    from ingest.models import Document, Extraction, Fingerprint, Site
    from ingest.services import methods_ensure

    method = methods_ensure()[settings.ACTIVE_METHOD]
    digest = fingerprint_text(settings.ACTIVE_METHOD, text).text_sha256
    site_row, _ = Site.objects.get_or_create(host=site, defaults={"priority": priority})
    raw = text.encode()
    document = Document.objects.create(
        site=site_row,
        url=url,
        fetched_at=fetched_at or datetime(2026, 5, 1, tzinfo=UTC),
        raw_sha256=hashlib.sha256(raw + url.encode()).hexdigest(),
        raw_size=len(raw),
        doc_type=doc_type,
    )
    Extraction.objects.create(
        document=document,
        extractor_version=EXTRACTOR_VERSION,
        status="ok",
        main_text=text,
        full_text=text,
        title=title,
        main_tokens=len(text.split()),
    )
    for branch in ("main", "full"):
        Fingerprint.objects.create(
            document=document,
            method=method,
            branch=branch,
            status="ok",
            simhash=to_signed64(simhash),
            token_count=len(text.split()),
            text_sha256=digest,
        )
    return document


def gold_crawl_ingest(seed: int = 7):  # type: ignore[no-untyped-def]
    """Ingest the demo gold crawl (ingest/core/democrawl.py) as a WARC. Returns (page id →
    document id, case name → DemoCase, page id → DemoPage)."""
    from ingest import services
    from ingest.core.democrawl import build_demo_crawl, write_warc
    from ingest.core.readers import read_warc
    from ingest.models import Document

    pages, cases = build_demo_crawl(seed)
    out = io.BytesIO()
    write_warc(pages, out, seed=seed)
    services.batch_ingest(source="gold", fmt="warc", items=read_warc(io.BytesIO(out.getvalue())))
    ids = {p.id: Document.objects.get(url=p.url, fetched_at=p.fetched_at).pk for p in pages}
    return ids, {c.case: c for c in cases}, {p.id: p for p in pages}
