"""Adjudication settles a disputed pair; agreement figures and label import in the
browser are for admins."""

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews import rules
from reviews.calibration import sweeps
from reviews.labels import exports, label_reads, labelling
from reviews.models import Adjudication, Label
from reviews.queue import pair_queue
from reviews.queue.queue_filters import QueueFilters
from tests import factories

pytestmark = pytest.mark.django_db
PAIRS = QueueFilters(kind="pair")


def _label(pair, editor, verdict):
    return labelling.label_record(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code="same_text",
        reason="seen",
        region="body",
    )


@pytest.fixture
def judge(db):
    return factories.user_create(username="judy", role="adjudicator")


@pytest.fixture
def admin_user(db):
    return factories.user_create(username="ada", role="admin")


@pytest.fixture
def disputed(pairs, editor, other_editor):
    _label(pairs[0], editor, "duplicate")
    _label(pairs[0], other_editor, "distinct")
    return pairs[0]


def _disputed_ids() -> list[int]:
    return list(
        pair_queue.queue_pairs(filters=PAIRS.replace(status="disputed")).values_list(
            "pk", flat=True
        )
    )


def test_an_adjudicated_pair_leaves_the_disputed_queue_and_keeps_its_labels(
    client, disputed, judge
) -> None:
    assert _disputed_ids() == [disputed.pk]
    client.force_login(judge)
    r = client.post(
        reverse("reviews:pair-adjudicate", args=[disputed.id]),
        {"verdict": "distinct", "reason_code": "different_item", "reason": "two stories"},
        follow=True,
    )
    assert r.status_code == 200
    a = Adjudication.objects.get()
    assert (a.verdict, a.adjudicator, a.reason) == ("distinct", judge, "two stories")
    assert len(a.labels_seen) == 2
    assert _disputed_ids() == []
    assert label_reads.current_labels().filter(pair=disputed).count() == 2
    assert "two stories" in r.content.decode()  # shown in the history


def test_an_editor_cannot_adjudicate(client, disputed, editor) -> None:
    client.force_login(editor)
    r = client.post(
        reverse("reviews:pair-adjudicate", args=[disputed.id]),
        {"verdict": "distinct", "reason_code": "different_item", "reason": "x"},
    )
    assert r.status_code == 403 and not Adjudication.objects.exists()


def test_only_a_disputed_pair_is_adjudicated(pairs, judge) -> None:
    with pytest.raises(rules.ReviewError):
        labelling.pair_adjudicate(
            pair=pairs[1],
            adjudicator=judge,
            verdict="duplicate",
            reason_code="same_text",
            reason="x",
        )


def test_calibration_counts_the_adjudicated_verdict(disputed, judge, settings) -> None:
    # Tied classes: the pair does not count until an adjudicator decides.
    assert not [p for p in sweeps.labeled_pairs() if p.distance == disputed.distance]
    labelling.pair_adjudicate(
        pair=disputed,
        adjudicator=judge,
        verdict="distinct",
        reason_code="different_item",
        reason="two stories",
    )
    counted = [p for p in sweeps.labeled_pairs() if p.distance == disputed.distance]
    assert [p.verdict for p in counted] == ["distinct"]


def test_the_agreement_page_is_for_admins(client, disputed, editor, admin_user, judge) -> None:
    client.force_login(editor)
    assert client.get(reverse("reviews:agreement")).status_code == 403
    labelling.pair_adjudicate(
        pair=disputed,
        adjudicator=judge,
        verdict="distinct",
        reason_code="different_item",
        reason="two stories",
    )
    client.force_login(admin_user)
    r = client.get(reverse("reviews:agreement"))
    assert r.status_code == 200
    overall = r.context["reports"][0]
    rows = {e.editor: e for e in overall.editors}
    assert rows["editor"].with_adjudication == 0.0 and rows["oscar"].with_adjudication == 1.0
    assert [(k.a, k.b, k.pairs) for k in overall.kappas] == [("editor", "oscar", 1)]


def _export_csv() -> str:
    return "".join(exports.export_lines(fmt="csv"))


def test_label_import_in_the_browser_is_all_or_nothing(client, disputed, admin_user) -> None:
    text = _export_csv()
    rows = list(csv.DictReader(io.StringIO(text)))
    for r in rows:
        r["annotator"] = "elsewhere-" + r["annotator"]
    good = io.StringIO()
    writer = csv.DictWriter(good, list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    bad_rows = [dict(rows[0], verdict="maybe"), *rows[1:]]
    bad = io.StringIO()
    writer = csv.DictWriter(bad, list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(bad_rows)
    client.force_login(admin_user)
    before = Label.objects.count()
    r = client.post(
        reverse("reviews:labels-import"),
        {"file": SimpleUploadedFile("labels.csv", bad.getvalue().encode())},
    )
    body = r.content.decode()
    assert r.status_code == 200 and "Nothing was imported" in body and "line 2" in body
    assert Label.objects.count() == before
    r = client.post(
        reverse("reviews:labels-import"),
        {"file": SimpleUploadedFile("labels.csv", good.getvalue().encode())},
    )
    assert "2 labels imported" in r.content.decode()
    assert Label.objects.count() == before + 2


def test_label_import_needs_the_admin_role(client, editor) -> None:
    client.force_login(editor)
    assert client.get(reverse("reviews:labels-import")).status_code == 403
