"""Review desk records. Labels and decisions are append-only:
a relabel or an undo supersedes, never edits or deletes."""

from collections.abc import Iterable
from typing import Any, NamedTuple

from django.conf import settings
from django.db import connection, models
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from ingest.models import PairOneToOne, PairRelation


class AppendOnlyError(Exception):
    """An append-only record was about to be edited or deleted."""


class LabelSubject(NamedTuple):
    """What a label is about: the unordered pair of documents, whatever method's pair
    row it was given on. An editor holds at most one current label per subject (in
    PostgreSQL a deferred exclusion constraint on the label's copy of it, reviews
    migration 0011), and a label is superseded only by a newer one of the same editor
    on the same subject."""

    low: int
    high: int

    def q(self) -> models.Q:
        """The labels of this subject, as a filter."""
        return models.Q(doc_low=self.low, doc_high=self.high)


def label_subject(a_id: int, b_id: int) -> LabelSubject:
    """The subject of a label on the pair of documents `a_id`, `b_id` (in any order)."""
    return LabelSubject(min(a_id, b_id), max(a_id, b_id))


def label_subject_lock(subject: LabelSubject) -> None:
    """Wait for, then hold until the transaction ends, the lock of one subject: what
    serialises two labels on the same documents (two tabs of one editor, or a label
    carried to another method's pair). PostgreSQL only: SQLite has one writer at a time."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"label subject {subject.low} {subject.high}"],
        )


class LabelQuerySet(models.QuerySet):
    def of_subject(self, subject: LabelSubject) -> "LabelQuerySet":
        return self.filter(subject.q())

    def bulk_create(self, objs: Iterable[Any], *args: Any, **kwargs: Any) -> list[Any]:
        # save() is not called: the subject is copied from the pair here.
        rows = list(objs)
        for row in rows:
            row.doc_low, row.doc_high = label_subject(row.pair.a_id, row.pair.b_id)
        return super().bulk_create(rows, *args, **kwargs)

    def update(self, **kwargs: object) -> int:
        # The only edit allowed: pointing a label at the one that supersedes it.
        if set(kwargs) - {"superseded_by", "superseded_by_id"}:
            raise AppendOnlyError("labels are append-only: only superseded_by may be set")
        # A superseded label stays superseded.
        return models.QuerySet.update(self.filter(superseded_by__isnull=True), **kwargs)

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("labels are append-only: they are never deleted")


class DecisionQuerySet(models.QuerySet):
    def update(self, **kwargs: object) -> int:
        raise AppendOnlyError("decisions are append-only")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("decisions are append-only")


class Label(models.Model):
    # Stored as the code (the value); the label is what the desk shows, translated.
    class Verdict(models.TextChoices):
        DUPLICATE = "duplicate", _("duplicate")
        NEAR_DUPLICATE = "near_duplicate", _("near-duplicate")
        REVISION = "revision", _("revision")
        DISTINCT = "distinct", _("distinct")
        UNSURE = "unsure", _("unsure")

    class Region(models.TextChoices):
        TITLE = "title", pgettext_lazy("region of a page", "Title")
        BODY = "body", pgettext_lazy("region of a page", "Body")
        NUMBERS = "numbers", pgettext_lazy("region of a page", "Numbers")
        BOILERPLATE = "boilerplate", pgettext_lazy("region of a page", "Boilerplate")
        OTHER = "other", pgettext_lazy("region of a page", "Other")

    class Purpose(models.TextChoices):
        REVIEW = "review", pgettext_lazy("purpose of a label", "Review")
        CALIBRATION = "calibration", pgettext_lazy("purpose of a label", "Calibration")
        HOLDOUT = "holdout", pgettext_lazy("purpose of a label", "Holdout")

    class ReasonCode(models.TextChoices):
        SAME_TEXT = "same_text", _("same text")
        COSMETIC = "cosmetic", _("cosmetic change only (markup, whitespace, timestamp)")
        SYNDICATED = "syndicated", _("syndicated copy (new headline or byline)")
        UPDATED = "updated", _("updated content (meaningful edit)")
        NUMBERS_DIFFER = "numbers_differ", _("prices, numbers or ids differ")
        DIFFERENT_ITEM = "different_item", _("different item or story")
        SHARED_TEMPLATE = "shared_template", _("only the template or boilerplate is shared")
        LOGIN_WALL = "login_wall", _("login wall or error page")
        UNCLEAR = "unclear", _("cannot tell")
        OTHER = "other", _("other (see text)")

    pair = PairRelation(
        "ingest.CandidatePair",
        to_field="id",
        db_constraint=False,
        on_delete=models.PROTECT,
        related_name="labels",
    )
    editor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="labels"
    )
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    reason_code = models.CharField(max_length=24, choices=ReasonCode.choices)
    reason = models.TextField()
    region = models.CharField(max_length=12, choices=Region.choices)
    purpose = models.CharField(max_length=12, choices=Purpose.choices, default=Purpose.REVIEW)
    method_key = models.CharField(max_length=64)
    extractor_version = models.CharField(max_length=64)
    retraction = models.BooleanField(
        default=False, help_text="An undo: withdraws the label it supersedes."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    superseded_by = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supersedes"
    )
    source_labeled_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Imported labels: when the label was given in the other install "
        "(created_at is when it was imported).",
    )
    # The label's subject (LabelSubject), copied from its pair when it is stored (on
    # PostgreSQL by a trigger, whatever the client writes).
    doc_low = models.BigIntegerField(help_text="The pair's lower document id.")
    doc_high = models.BigIntegerField(help_text="The pair's higher document id.")

    objects = LabelQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["pair", "superseded_by"]),
            models.Index(fields=["doc_low", "doc_high"], name="label_subject"),
        ]

    def __str__(self) -> str:
        what = "undo" if self.retraction else self.verdict
        return f"{what} on {self.pair_id} by {self.editor_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            stored = type(self).objects.get(pk=self.pk)
            for f in self._meta.concrete_fields:
                if f.attname == "superseded_by_id":
                    continue
                if getattr(stored, f.attname) != getattr(self, f.attname):
                    raise AppendOnlyError(f"labels are append-only: {f.name} cannot change")
            if stored.superseded_by_id is not None:
                raise AppendOnlyError("a superseded label stays superseded")
        else:
            self.doc_low, self.doc_high = label_subject(self.pair.a_id, self.pair.b_id)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("labels are append-only: they are never deleted")

    @property
    def verdict_label(self) -> str:
        return str(self.Verdict(self.verdict).label)

    @property
    def note(self) -> str:
        """The editor's own words: blank where the reason is only its preset's text."""
        return "" if self.reason == preset_reason_text(self.reason_code) else self.reason

    @property
    def subject(self) -> LabelSubject:
        return LabelSubject(self.doc_low, self.doc_high)


def preset_reason_text(code: str) -> str:
    """The text stored as a label's reason when the editor wrote no note: the preset's
    English label, whatever the desk's language, so stored labels do not depend on it."""
    try:
        choice = Label.ReasonCode(code)
    except ValueError:
        return ""
    with translation.override("en"):
        return str(choice.label)


class Claim(models.Model):
    """A lease on a queue item: Next hands it to one editor until it expires."""

    class Kind(models.TextChoices):
        PAIR = "pair"
        GROUP = "group"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    pair = PairRelation(
        "ingest.CandidatePair",
        to_field="id",
        db_constraint=False,
        on_delete=models.PROTECT,
        null=True,
        related_name="claims",
    )
    group = models.ForeignKey(
        "ingest.CandidateGroup", on_delete=models.PROTECT, null=True, related_name="claims"
    )
    editor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="claims"
    )
    claimed_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind="pair", pair__isnull=False, group__isnull=True)
                | models.Q(kind="group", group__isnull=False, pair__isnull=True),
                name="claim_one_item",
            ),
        ]
        indexes = [models.Index(fields=["expires_at", "released_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.pair_id or self.group_id} by {self.editor_id}"

    def get_absolute_url(self) -> str:
        if self.kind == self.Kind.PAIR:
            return reverse("reviews:pair-detail", args=[self.pair_id])
        return reverse("reviews:group-detail", args=[self.group_id])


class Decision(models.Model):
    """Every split, merge and representative change, on the record."""

    class Action(models.TextChoices):
        SPLIT = "split"
        DETACH = "detach"
        SET_REPRESENTATIVE = "set_representative"
        MERGE = "merge"
        AUTO_MERGE = "auto_merge"
        # A person accepts the group as it stands ("Accept the group"); nothing moves.
        ACCEPT = "accept"
        RESTORE = "restore"
        # A losing concurrent attempt: recorded, never applied (see reviews.decisions).
        CONFLICT = "conflict"

    action = models.CharField(max_length=24, choices=Action.choices)
    group = models.ForeignKey(
        "ingest.CandidateGroup", on_delete=models.PROTECT, related_name="decisions"
    )
    new_group = models.ForeignKey(
        "ingest.CandidateGroup",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    document_ids = models.JSONField(help_text="The documents the decision moved or chose.")
    method_key = models.CharField(max_length=64)
    distance = models.SmallIntegerField(
        null=True, blank=True, help_text="Largest main-text distance the decision concerns."
    )
    reason_code = models.CharField(max_length=32)
    reason = models.TextField()
    actor = models.CharField(max_length=150, help_text="person:<username> or rule:<name>")
    membership_before = models.JSONField()
    membership_after = models.JSONField()
    group_version = models.IntegerField(help_text="The group's version after the decision.")
    guards = models.JSONField(
        default=dict, blank=True, help_text="Guards of the pairs concerned, at the time."
    )
    reverts = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reverted_by",
        help_text="A restore: the decision it reverts.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = DecisionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} on group {self.group_id} by {self.actor}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("decisions are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("decisions are append-only")


class MergeProposal(models.Model):
    """Semi-automatic merging: a rule proposes, an editor approves or rejects. The
    approval (or the rejection) is what goes on the decision log."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"
        STALE = "stale"

    group = models.ForeignKey(
        "ingest.CandidateGroup", on_delete=models.PROTECT, related_name="merge_proposals"
    )
    group_version = models.IntegerField()
    document_ids = models.JSONField()
    doc_type = models.CharField(max_length=16)
    rule = models.CharField(max_length=64)
    basis = models.CharField(max_length=8, help_text="exact or near")
    method_key = models.CharField(max_length=64)
    distance = models.SmallIntegerField(null=True, blank=True)
    guards = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)
    decision = models.ForeignKey(
        Decision, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["status", "group"])]

    def __str__(self) -> str:
        return f"{self.rule} proposes group {self.group_id} ({self.status})"


class ReviewerPreference(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_preference"
    )
    blind_mode = models.BooleanField(
        default=False, help_text="Hide distances and scores while labeling."
    )
    language = models.CharField(
        max_length=16,
        blank=True,
        help_text="The desk's language for this editor (a code of LANGUAGES); blank: the "
        "browser's Accept-Language, else LANGUAGE_CODE.",
    )
    time_zone = models.CharField(
        max_length=64,
        blank=True,
        help_text="The time zone the desk shows dates in (one of DESK_TIME_ZONES); blank: UTC.",
    )

    def __str__(self) -> str:
        return f"preferences of {self.user_id}"


class CalibrationSample(models.Model):
    """A pair drawn into the calibration sample: stratified by distance band, with its
    sampling weight (band size / pairs taken), used in the estimates and the export."""

    pair = PairRelation(
        "ingest.CandidatePair",
        to_field="id",
        db_constraint=False,
        on_delete=models.PROTECT,
        related_name="calibration_samples",
    )
    weight = models.FloatField()
    seed = models.IntegerField()
    band = models.CharField(max_length=16, help_text='Distance band, e.g. "1-2".')
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["pair", "created_at"])]

    def __str__(self) -> str:
        return f"pair {self.pair_id} in band {self.band} (weight {self.weight:g})"


class PairState(models.Model):
    """What the queue needs to know of a pair's labels, kept up to date by the label
    services (reviews.queue.pair_states) so that the queue never scans labels: derived data,
    rebuilt from the labels at any time."""

    pair = PairOneToOne(
        "ingest.CandidatePair",
        to_field="id",
        db_constraint=False,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="review_state",
    )
    labels = models.IntegerField(default=0, help_text="Current labels (not withdrawn).")
    verdicts = models.IntegerField(default=0, help_text="Distinct verdicts among them.")
    extractor_version = models.CharField(
        max_length=64,
        blank=True,
        help_text='The extractor version of the current labels: "" none, "*" several.',
    )
    recrawled = models.BooleanField(
        default=False,
        help_text="A newer snapshot of a side's URL has another main text (labels stale).",
    )
    adjudicated_verdict = models.CharField(
        max_length=16, blank=True, help_text="The latest adjudication's verdict, if any."
    )
    # The pair's own facts the queue counts by (copied; a late cosine changes the
    # channels and `queued`, and reviews.queue.queue_tally refreshes the copy then), so
    # that the counts of labelled pairs read this table alone.
    method_ref = models.IntegerField(default=0, help_text="The pair's method id.")
    side_a = models.BigIntegerField(default=0, help_text="The pair's document a.")
    side_b = models.BigIntegerField(default=0, help_text="The pair's document b.")
    doc_type = models.CharField(max_length=16, blank=True)
    distance = models.SmallIntegerField(default=0)
    channels = models.SmallIntegerField(default=0)
    guards = models.SmallIntegerField(
        default=0, help_text="Bits: 1 numbers differ, 2 ids differ, 4 title differs."
    )
    queued = models.BooleanField(
        default=False, help_text="Neither exact nor under the floor: a pair the queue serves."
    )
    distinct_labels = models.IntegerField(
        default=0, help_text='Current "distinct" labels (a group holding both sides is disputed).'
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["side_a", "side_b"],
                condition=models.Q(distinct_labels__gt=0),
                name="pair_state_distinct",
            )
        ]

    def __str__(self) -> str:
        return f"pair {self.pair_id}: {self.labels} labels, {self.verdicts} verdicts"


class QueueTally(models.Model):
    """Candidate pairs the queue can serve (neither exact nor under the floor, no side a
    wall page), counted by the facts its filters count by, up to a watermark
    (reviews.queue.queue_tally): the queue's counts add the pairs since and take the labelled
    ones from PairState, instead of counting every pair on every page. Derived data,
    rebuilt at any time."""

    method_ref = models.IntegerField()
    doc_type = models.CharField(max_length=16)
    distance = models.SmallIntegerField()
    channels = models.SmallIntegerField()
    guards = models.SmallIntegerField(help_text="Bits as PairState.guards.")
    n = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["method_ref", "doc_type", "distance", "channels", "guards"],
                name="queue_tally_once",
            )
        ]

    def __str__(self) -> str:
        return f"{self.doc_type} d={self.distance} c={self.channels} g={self.guards}: {self.n}"


# The facts a label tally row counts by, in the order of reviews.queue.pair_states.LabelKey.
LABEL_TALLY_KEY = ("method_ref", "doc_type", "distance", "channels", "guards", "disputed", "stale")


class LabelTally(models.Model):
    """Labelled review states the queue can serve (labels, neither exact nor under the
    floor, no side a wall page up to the queue tally's wall watermark), counted by the
    facts the queue's filters count by and by disputed / stale. Kept by the one writer
    of the states (reviews.queue.pair_states) in the transaction that writes them, so that the
    queue's counts never group the states; derived data, recounted at any time."""

    method_ref = models.IntegerField()
    doc_type = models.CharField(max_length=16)
    distance = models.SmallIntegerField()
    channels = models.SmallIntegerField()
    guards = models.SmallIntegerField(help_text="Bits as PairState.guards.")
    disputed = models.BooleanField()
    stale = models.BooleanField()
    n = models.IntegerField(default=0)

    KEY = LABEL_TALLY_KEY

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=list(LABEL_TALLY_KEY),
                name="label_tally_once",
            )
        ]

    def __str__(self) -> str:
        return f"{self.doc_type} d={self.distance} labelled: {self.n}"


class Watermark(models.Model):
    """How far an incremental job has read (e.g. the last fingerprint looked at).
    Locked and written only through reviews.queue.watermarks (one lock order)."""

    name = models.CharField(max_length=64, primary_key=True)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name} at {self.value}"


class Adjudication(models.Model):
    """The final label of a disputed pair, given by an adjudicator (or an admin). The
    editors' labels stay as they are (the history keeps every one); the pair leaves the
    disputed queue and calibration counts this verdict. Append-only: a later
    adjudication of the pair supersedes an earlier one."""

    pair = PairRelation(
        "ingest.CandidatePair",
        to_field="id",
        db_constraint=False,
        on_delete=models.PROTECT,
        related_name="adjudications",
    )
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="adjudications"
    )
    verdict = models.CharField(max_length=16, choices=Label.Verdict.choices)
    reason_code = models.CharField(max_length=24, choices=Label.ReasonCode.choices)
    reason = models.TextField()
    labels_seen = models.JSONField(
        default=list, help_text="The current labels (ids) the adjudicator decided between."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = DecisionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.verdict} on {self.pair_id} by {self.adjudicator_id} (adjudicated)"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("adjudications are append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("adjudications are append-only")

    @property
    def verdict_label(self) -> str:
        return str(Label.Verdict(self.verdict).label)

    @property
    def note(self) -> str:
        """The adjudicator's own words: blank where the reason is only its preset's text."""
        return "" if self.reason == preset_reason_text(self.reason_code) else self.reason


class PrelabelDistribution(models.Model):
    """Score histograms of one doc type, method and score before labels: a stratified
    random sample of document pairs and the candidate pairs, with the suggested starting
    threshold (reviews/core/prelabel_math.py). Recomputed by a beat task; a recompute
    replaces the rows."""

    method_key = models.CharField(max_length=64)
    doc_type = models.CharField(max_length=16)
    score = models.CharField(max_length=32, help_text='Score name, e.g. "simhash_distance".')
    documents = models.IntegerField(help_text="Documents the random pairs were drawn from.")
    sites = models.IntegerField()
    sample_pairs = models.IntegerField(help_text="Random pairs drawn (site-stratified).")
    candidate_pairs = models.IntegerField()
    sample_counts = models.JSONField(default=list, help_text="Random pairs per score bin.")
    candidate_counts = models.JSONField(default=list, help_text="Candidate pairs per bin.")
    threshold = models.FloatField(null=True, blank=True, help_text="Suggested; None: none.")
    reason = models.TextField(blank=True)
    suggestion_method = models.CharField(max_length=100)
    seed = models.IntegerField()
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["method_key", "doc_type", "score"], name="prelabel_one_per_score"
            )
        ]
        ordering = ["method_key", "doc_type", "score"]

    def __str__(self) -> str:
        return f"{self.doc_type} · {self.method_key} · {self.score}"


class CalibrationFigures(models.Model):
    """What the calibration page shows, computed ahead by a beat task
    (reviews/calibration/stored_figures.py) so that the page reads rows instead of sweeping
    every label on each request. One row per part of the page and its breakdown: a
    sweep or an action report, the score it is over (the channel), the doc type, the
    method (blank: every method pooled) and the language (blank: every language). A
    recompute replaces the rows; ``computed_at`` and the label watermark say how fresh
    they are."""

    kind = models.CharField(max_length=16, help_text='"sweep", "actions" or "stamp".')
    score = models.CharField(max_length=32, blank=True, help_text='e.g. "simhash_distance".')
    doc_type = models.CharField(max_length=16, blank=True)
    method_key = models.CharField(max_length=64, blank=True)
    language = models.CharField(max_length=16, blank=True)
    payload = models.JSONField(default=dict)
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "score", "doc_type", "method_key", "language"],
                name="calibration_figures_one_per_key",
            )
        ]
        ordering = ["kind", "score", "doc_type", "method_key", "language"]

    def __str__(self) -> str:
        return f"{self.kind} · {self.score} · {self.doc_type} · {self.method_key}"
