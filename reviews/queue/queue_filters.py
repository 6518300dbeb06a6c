"""The review queue's filters (doc type, site, distance, guard, channel, status, method,
kind) and the values each one offers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef

from ingest.core import channels
from ingest.models import CandidatePair, FingerprintMethod, Site

STATUSES = ("unlabeled", "disputed", "stale")


GUARDS = ("numbers_differ", "ids_differ", "title_differs")


KINDS = ("pair", "group")


@dataclass(frozen=True)
class QueueFilters:
    doc_type: str = ""
    site: str = ""
    distance_min: int | None = None
    distance_max: int | None = None
    guard: str = ""
    channel: str = ""  # a candidate channel that nominated the pair (ingest/core/channels)
    status: str = ""  # "" = needs review (unlabeled, disputed or stale)
    method: str = ""
    kind: str = ""  # "" = pairs and groups

    def replace(self, **kwargs: Any) -> QueueFilters:
        values = {**self.__dict__, **kwargs}
        return QueueFilters(**values)

    def as_query(self) -> dict[str, str]:
        out = {}
        for key, value in self.__dict__.items():
            if value not in ("", None):
                out[key] = str(value)
        return out


def filter_choices() -> dict[str, list[str]]:
    return {
        "sites": list(Site.objects.values_list("host", flat=True)),
        "methods": list(
            FingerprintMethod.objects.filter(
                Exists(CandidatePair.objects.filter(method=OuterRef("pk")))
            ).values_list("key", flat=True)
        ),
        "doc_types": list(settings.DOC_TYPES),
        "statuses": list(STATUSES),
        "guards": list(GUARDS),
        "channels": list(channels.ACTIVE),
    }
