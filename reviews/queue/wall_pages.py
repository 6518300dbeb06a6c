"""Pages that are not content (login walls, captchas, bot challenges, error pages: the
extraction statuses of ingest.models.WALL_STATUSES): the queue leaves out their pairs
and groups, and the crawl quality view shows them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from django.db.models import Count, Min, Q, QuerySet

from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import WALL_STATUSES, CandidateGroup, CandidatePair, Extraction

# WALL_STATUSES (ingest.models): extraction statuses of pages that are not content
# (login walls, captchas, bot challenges, error pages): their pairs and groups go to
# the crawl quality view.


def wall_documents() -> QuerySet[Extraction, int]:
    """Ids of documents whose current extraction says they are not content."""
    return Extraction.objects.filter(
        extractor_version=EXTRACTOR_VERSION, status__in=WALL_STATUSES
    ).values_list("document_id", flat=True)


class SiteWalls(TypedDict):
    document__site__host: str
    status: str
    quality: str
    n: int
    message: str


@dataclass
class CrawlQuality:
    by_site: list[SiteWalls]
    groups: list[CandidateGroup]
    pairs: int


def crawl_quality(*, limit: int = 100) -> CrawlQuality:
    """What the queue leaves out as not content: wall pages (blocked, empty, too
    short) counted by site and reason, their groups, and the pairs with a wall side."""
    walls = wall_documents()
    by_site = list(
        Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION, status__in=WALL_STATUSES)
        .values("document__site__host", "status", "quality")
        .annotate(n=Count("pk"), message=Min("message"))
        .order_by("-n", "document__site__host", "status", "quality")[:limit]
    )
    groups = list(
        CandidateGroup.objects.filter(dissolved=False, representative_id__in=walls)
        .select_related("representative")
        .order_by("-size", "id")[:limit]
    )
    pairs = (
        CandidatePair.objects.filter(below_floor=False)
        .filter(Q(a_id__in=walls) | Q(b_id__in=walls))
        .count()
    )
    return CrawlQuality(by_site=by_site, groups=groups, pairs=pairs)
