"""Thresholds and method keys of the candidate channels: the one place the desk reads
them from (the workers read them here too).

- ``threshold_for`` / ``query_k``: the SimHash distance a doc type nominates within, and
  the radius the band index is searched with (the largest of them);
- ``cosine_threshold`` / ``cosine_pair_threshold``: the semantic channel's cosine;
- ``active_method_key`` / ``candidate_method_keys``: the fingerprint methods searched.
"""

from django.conf import settings

from ingest.index import K_MAX
from ingest.models import FingerprintMethod


def threshold_for(doc_type: str) -> int:
    return min(int(settings.CANDIDATE_THRESHOLDS.get(doc_type, 3)), K_MAX)


def query_k() -> int:
    return min(max(threshold_for(t) for t in settings.DOC_TYPES), K_MAX)


def cosine_threshold(doc_type: str) -> float:
    thresholds = settings.SEMANTIC_THRESHOLDS
    return float(thresholds.get(doc_type, thresholds.get("other", 0.9)))


def cosine_pair_threshold(type_a: str, type_b: str) -> float:
    """Either side's doc type may nominate (as with the SimHash thresholds)."""
    return min(cosine_threshold(type_a), cosine_threshold(type_b))


def active_method_key() -> str:
    """The active method: the database's (a switch is recorded there, see
    reviews.operations.method_upgrades), settings.ACTIVE_METHOD until a method row exists."""
    key = FingerprintMethod.objects.filter(is_active=True).values_list("key", flat=True).first()
    return key or settings.ACTIVE_METHOD


def candidate_method_keys() -> list[str]:
    """Methods searched for candidates: the active one, plus any other method
    CANDIDATE_METHODS names beside ACTIVE_METHOD (settings stay the default of a first
    run: until a switch, the active method is settings.ACTIVE_METHOD). Retired methods
    are never searched."""
    active = active_method_key()
    retired = set(
        FingerprintMethod.objects.filter(retired_at__isnull=False).values_list("key", flat=True)
    )
    extras = [k for k in settings.CANDIDATE_METHODS if k != settings.ACTIVE_METHOD]
    return [active] + [k for k in dict.fromkeys(extras) if k != active and k not in retired]
