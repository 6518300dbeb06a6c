"""Plain factory functions for tests."""

import hashlib
import io
import secrets
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.test import override_settings
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from demo import crawl as democrawl
from demo.crawl import build_demo_crawl, write_warc
from ingest import candidates, passages, services
from ingest.core import embeddings
from ingest.core import passages as passages_core
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.methods import fingerprint_text, method_key
from ingest.core.readers import read_warc
from ingest.core.simhash import to_signed64
from ingest.models import (
    ApiToken,
    CandidateGroup,
    CandidatePair,
    Document,
    DocumentBody,
    Embedding,
    Extraction,
    Fingerprint,
    GroupMember,
    Site,
)
from ingest.services import methods_ensure

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


def passage_document(n: int, host: str, hashes: list[int], fetched_at: datetime) -> Document:
    """Document n of `host` with these passage hashes in the passage index, in order."""
    site, _ = Site.objects.get_or_create(host=host)
    doc = Document.objects.create(
        site=site,
        url=f"https://{host}/{n}",
        fetched_at=fetched_at,
        raw_sha256=f"{n:064x}",
        raw_size=1,
    )
    found = [passages_core.Passage(h, j) for j, h in enumerate(hashes)]
    passages.entries_add([passages.Entry(doc.pk, site.pk, fetched_at, found)])
    return doc


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
    full_text: str | None = None,
) -> Document:
    """A document with an ok extraction and a main/full fingerprint of the active method,
    the SimHash given rather than computed (to set distances exactly); the full-page
    branch is the main text unless given."""
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
        full_text=text if full_text is None else full_text,
        title=title,
        main_tokens=len(text.split()),
    )
    Fingerprint.objects.create(
        document=document,
        method=method,
        simhash=to_signed64(simhash),
        token_count=len(text.split()),
        text_sha256=digest,
        full_simhash=to_signed64(simhash),
    )
    return document


# The recipes the demo cases' checks name (demo/crawl.py), over the current extractor's text.
GOLD_METHODS = [method_key(k) for k in (democrawl.REFERENCE, democrawl.SHINGLE, democrawl.CJK)]


def gold_crawl_ingest(seed: int = 7):
    """Ingest the demo gold crawl (demo/crawl.py) as a WARC, with the fingerprint recipes
    its cases name (GOLD_METHODS) computed at ingest. Returns (page id → document id, case
    name → DemoCase, page id → DemoPage)."""
    pages, cases = build_demo_crawl(seed)
    out = io.BytesIO()
    write_warc(pages, out, seed=seed)
    with override_settings(FINGERPRINT_METHODS=GOLD_METHODS):
        services.batch_ingest(
            source="gold", fmt="warc", items=read_warc(io.BytesIO(out.getvalue()))
        )
    ids = {p.id: Document.objects.get(url=p.url, fetched_at=p.fetched_at).pk for p in pages}
    return ids, {c.case: c for c in cases}, {p.id: p for p in pages}


# Desk test pages: one text, SimHash distances set by hand from BASE.
TEXT = article_text(7, words=150)
BASE = 0x0123456789ABCDEF


def reviewed_document(
    *,
    url: str,
    text: str,
    flips: int = 0,
    html: str | None = None,
    base: int = BASE,
    **kw: Any,
) -> Document:
    """A document whose SimHash is `base` with the `flips` low bits flipped, with a body."""
    doc = indexed_document(url=url, text=text, simhash=base ^ ((1 << flips) - 1), **kw)
    body = html if html is not None else article_html("Lamp", text)
    DocumentBody.objects.create(document=doc, data=DocumentBody.pack(body.encode()))
    return doc


def simhash_of(text: str, key: str | None = None) -> int:
    """The text's SimHash under the method (default the active one); the test fails here
    when the text is too short to have one."""
    value = fingerprint_text(key or settings.ACTIVE_METHOD, text).simhash
    assert value is not None, f"no SimHash for {text[:40]!r}"
    return value


def find(*docs: Document) -> None:
    candidates.candidates_find(document_ids=[d.pk for d in docs])


def pair_of(a: Document, b: Document) -> CandidatePair:
    x, y = sorted((a.pk, b.pk))
    return CandidatePair.objects.get(a_id=x, b_id=y)


def group_of(doc: Document) -> CandidateGroup:
    """The document's candidate group; the test fails here when it is in none (a test
    that expects none asks group_or_none)."""
    group = group_or_none(doc)
    assert group is not None, f"document {doc.pk} is in no candidate group"
    return group


def group_or_none(doc: Document) -> CandidateGroup | None:
    m = GroupMember.objects.filter(document=doc).first()
    return m.group if m else None


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `check` until it holds (a worker in another process does the work)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def embedding_row(
    document: Document,
    *,
    status: str = "covered",
    language: str = "en",
    vector: list[float] | None = None,
    message: str = "",
    model: str = "all-MiniLM-L6-v2",
    attempt: int = 1,
    extractor_version: str = EXTRACTOR_VERSION,
) -> Embedding:
    """A document's Embedding row as the embedding task writes it, without the model: a
    covered row gets `vector` (default: a 4-dimension unit vector) packed as stored."""
    packed = embeddings.pack(vector or [1.0, 0.0, 0.0, 0.0]) if status == "covered" else None
    return Embedding.objects.create(
        document=document,
        model=model,
        text_rule=embeddings.TEXT_RULE,
        extractor_version=extractor_version,
        status=status,
        language=language,
        dims=len(packed) // 2 if packed else 0,
        vector=packed,
        message=message,
        attempt=attempt,
    )
