"""A real worker turns an ingested WARC into candidate pairs and groups (PostgreSQL)."""

import io

import pytest

from demo.crawl import build_demo_crawl, write_warc
from ingest import services
from ingest.core.methods import DEFAULT_KEY
from ingest.core.readers import read_warc
from ingest.models import CandidateGroup, CandidatePair, Document, GroupMember, IndexEntry
from tests.factories import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.postgres]


def test_a_worker_computes_candidates_and_groups_for_an_ingested_warc(worker) -> None:
    pages, _ = build_demo_crawl()
    out = io.BytesIO()
    write_warc(pages, out)
    summary = services.batch_ingest(
        source="demo", fmt="warc", items=read_warc(io.BytesIO(out.getvalue()))
    )
    assert summary.stored == len(pages)

    def all_indexed() -> bool:
        from ingest.models import Fingerprint

        want = Fingerprint.objects.filter(method__key=DEFAULT_KEY, simhash__isnull=False).count()
        return want > 0 and IndexEntry.objects.count() == want

    wait_until(all_indexed, 120, "every indexable document in the band index")
    first = {p.id: p for p in pages}
    a = Document.objects.get(url=first["news-a1"].url, fetched_at=first["news-a1"].fetched_at)
    b = Document.objects.get(
        url=first["news-a1-copy"].url, fetched_at=first["news-a1-copy"].fetched_at
    )
    lo, hi = sorted((a.pk, b.pk))
    wait_until(
        lambda: GroupMember.objects.filter(document_id__in=[lo, hi]).count() == 2,
        60,
        "the verbatim copies to be grouped",
    )
    pair = CandidatePair.objects.get(a_id=lo, b_id=hi)
    assert pair.exact and pair.distance == 0
    group = GroupMember.objects.get(document_id=lo).group
    assert group == GroupMember.objects.get(document_id=hi).group
    assert group.kind == CandidateGroup.Kind.EXACT
    assert group.representative_reason
