"""Read-only queries of the labels: the current ones, what an editor's labels settle,
the defaults of their next label, a pair's adjudications."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import OuterRef, QuerySet

from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidatePair
from reviews.models import Adjudication, Label


def current_labels() -> QuerySet[Label]:
    return Label.objects.filter(superseded_by__isnull=True, retraction=False)


def subject_adjudications(pair: CandidatePair) -> QuerySet[Adjudication]:
    """The adjudications of the pair's two documents, on this pair or on another
    method's pair of them."""
    return Adjudication.objects.filter(pair__a_id=pair.a_id, pair__b_id=pair.b_id)


def labels_settled_by(*, editor: User) -> QuerySet[Label]:
    """The editor's current labels under the current extractor on an outer pair's two
    documents (`a_id`, `b_id` of OuterRef), given on it or on another method's pair."""
    return current_labels().filter(
        doc_low=OuterRef("a_id"),
        doc_high=OuterRef("b_id"),
        editor=editor,
        extractor_version=EXTRACTOR_VERSION,
    )


def label_defaults(*, user: User) -> dict[str, str]:
    """Region and purpose keep the value of the editor's last label."""
    last = (
        Label.objects.filter(editor=user, retraction=False)
        .order_by("-created_at", "-id")
        .values("region", "purpose")
        .first()
    )
    return {"region": last["region"], "purpose": last["purpose"]} if last else {}


def previous_pair_id(*, user: User, pair: CandidatePair) -> int | None:
    """The pair the editor labelled last before coming here (the `k` key)."""
    if not user.is_authenticated:
        return None
    return (
        Label.objects.filter(editor=user)
        .exclude(pair=pair)
        .order_by("-created_at", "-id")
        .values_list("pair_id", flat=True)
        .first()
    )


def my_last_label(*, user: User) -> Label | None:
    return current_labels().filter(editor=user).order_by("-created_at", "-id").first()
