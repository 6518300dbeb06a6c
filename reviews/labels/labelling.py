"""Labels and adjudications. Append-only: a relabel supersedes the editor's previous label
on the same documents, an undo appends a retraction; a "distinct" label records a
do-not-match constraint, so workers never group the two again."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils import timezone

from dedup_site.transactions import conflict_retry
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.models import CandidatePair, DoNotMatch
from reviews.core.words import Said, gettext_noop
from reviews.labels import label_reads
from reviews.models import Adjudication, Label, label_subject, label_subject_lock
from reviews.queue.claiming import claims_release
from reviews.queue.pair_states import pair_states_refresh
from reviews.rules import ReviewError, actor_for


@conflict_retry
def label_record(
    *,
    pair: CandidatePair,
    editor: User,
    verdict: str,
    reason_code: str,
    reason: str,
    region: str,
    purpose: str = Label.Purpose.REVIEW,
) -> Label:
    """Append a label stamped with the pair's method and the extractor version; the
    editor's previous label on the same documents (on this pair or another method's) is
    superseded, never edited. A "distinct" label also records a do-not-match
    constraint, so workers never group the two again."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    label_subject_lock(label_subject(pair.a_id, pair.b_id))
    label = Label.objects.create(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code=reason_code,
        reason=reason.strip(),
        region=region,
        purpose=purpose,
        method_key=pair.method.key,
        extractor_version=EXTRACTOR_VERSION,
    )
    superseded = supersede_previous(label)
    if verdict == Label.Verdict.DISTINCT:
        DoNotMatch.objects.get_or_create(
            a_id=min(pair.a_id, pair.b_id),
            b_id=max(pair.a_id, pair.b_id),
            revoked_at=None,
            defaults={
                "source": "label",
                "reason": f"{reason_code}: {reason.strip()}"[:2000],
                "actor": actor_for(editor),
            },
        )
    claims_release(editor=editor, pair=pair)
    pair_states_refresh(pair_ids=sorted({pair.id, *superseded}))
    return label


def supersede_previous(label: Label) -> list[int]:
    """Point the editor's older current labels on the label's subject at `label` (the
    caller holds the subject's lock, taken before `label` was inserted, so every one of
    them is older). Returns the pairs they were on."""
    stale = Label.objects.of_subject(label.subject).filter(
        editor_id=label.editor_id, superseded_by=None, pk__lt=label.pk
    )
    pairs = sorted(set(stale.values_list("pair_id", flat=True)))
    stale.update(superseded_by=label)
    return pairs


@conflict_retry
def label_undo(*, editor: User, pair: CandidatePair | None = None) -> Label | None:
    """Withdraw the editor's last current label (on `pair`, or anywhere): a retraction is
    appended and supersedes it. When it was the pair's last current "distinct" label,
    the do-not-match that label wrote is revoked (the row stays, marked with the
    retraction), so an accidental "distinct" does not keep the documents apart for
    ever. Returns the label withdrawn."""
    qs = label_reads.current_labels().filter(editor=editor).select_related("pair")
    if pair is not None:
        subject = label_subject(pair.a_id, pair.b_id)
        label_subject_lock(subject)
        last = qs.filter(subject.q()).first()
    else:
        last = qs.order_by("-created_at", "-id").first()
        if last is None:
            return None
        label_subject_lock(last.subject)
        # Read again under the lock: another tab may have superseded it meanwhile.
        last = qs.filter(last.subject.q()).first()
    if last is None:
        return None
    undo = Label.objects.create(
        pair=last.pair,
        editor=editor,
        verdict=last.verdict,
        reason_code=last.reason_code,
        reason=f"undo of label {last.pk}",
        region=last.region,
        purpose=last.purpose,
        method_key=last.method_key,
        extractor_version=last.extractor_version,
        retraction=True,
    )
    superseded = supersede_previous(undo)
    if last.verdict == Label.Verdict.DISTINCT:
        still_distinct = (
            label_reads.current_labels()
            .filter(last.subject.q(), verdict=Label.Verdict.DISTINCT, retraction=False)
            .exists()
        )
        if not still_distinct:
            DoNotMatch.objects.filter(
                a_id=min(last.pair.a_id, last.pair.b_id),
                b_id=max(last.pair.a_id, last.pair.b_id),
                source="label",
                revoked_at__isnull=True,
            ).update(revoked_at=timezone.now(), revoked_by=f"label:{undo.pk}")
    pair_states_refresh(pair_ids=sorted({last.pair_id, *superseded}))
    return last


@conflict_retry
def pair_adjudicate(
    *, pair: CandidatePair, adjudicator: User, verdict: str, reason_code: str, reason: str
) -> Adjudication:
    """Give a disputed pair its final label. The editors' labels stay (the history keeps
    every one); the pair leaves the disputed queue and calibration counts this verdict."""
    if not reason.strip():
        raise ReviewError(Said(gettext_noop("a reason is required")))
    # The labels of the two documents, whichever method's pair they were given on.
    subject = label_subject(pair.a_id, pair.b_id)
    current = list(label_reads.current_labels().filter(subject.q()).values_list("id", "verdict"))
    if len({v for _, v in current}) < 2 and not label_reads.subject_adjudications(pair).exists():
        raise ReviewError(Said(gettext_noop("only a disputed pair is adjudicated")))
    adjudication = Adjudication.objects.create(
        pair=pair,
        adjudicator=adjudicator,
        verdict=verdict,
        reason_code=reason_code,
        reason=reason.strip(),
        labels_seen=sorted(i for i, _ in current),
    )
    claims_release(editor=adjudicator, pair=pair)
    pair_states_refresh(pair_ids=[pair.id])
    return adjudication
