"""Calibration: which labels count, sampling weights, the page, the commands."""

import io

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from ingest.models import CandidatePair
from reviews.calibration import sweeps
from reviews.labels import labelling
from reviews.models import CalibrationSample
from tests import factories
from tests.factories import find, reviewed_document

pytestmark = pytest.mark.django_db


def label(pair, editor, verdict: str, reason: str = "r"):
    return labelling.label_record(
        pair=pair, editor=editor, verdict=verdict, reason_code="other", reason=reason, region="body"
    )


@pytest.mark.parametrize(
    ("verdicts", "counted"),
    [
        (["duplicate"], "duplicate"),
        (["duplicate", "near_duplicate", "distinct"], "duplicate"),
        (["near_duplicate", "near_duplicate", "duplicate"], "near_duplicate"),
        (["duplicate", "distinct"], None),  # a tie between the classes: disputed, left out
        (["distinct", "unsure", "revision"], "distinct"),
        (["unsure", "revision"], None),
    ],
)
def test_several_editors_count_by_majority_class(verdicts, counted) -> None:
    assert sweeps.pair_verdict(verdicts) == counted


def test_only_current_labels_count(pairs, editor, other_editor) -> None:
    p0, p1, p2 = pairs
    label(p0, editor, "distinct")
    label(p0, editor, "duplicate")  # supersedes the distinct
    label(p1, editor, "duplicate")
    label(p1, other_editor, "distinct")  # tie: disputed
    label(p2, editor, "duplicate")
    labelling.label_undo(editor=editor, pair=p2)  # withdrawn
    counted = sweeps.labeled_pairs()
    assert [(p.distance, p.verdict) for p in counted] == [(p0.distance, "duplicate")]
    assert counted[0].split == sweeps.pair_split(p0)


def test_sampling_weights_enter_the_estimates(pairs, editor) -> None:
    label(pairs[0], editor, "duplicate")
    CalibrationSample.objects.create(pair=pairs[0], weight=2.0, seed=1, band="3-4")
    CalibrationSample.objects.create(pair=pairs[0], weight=7.5, seed=2, band="3-4")
    (p,) = sweeps.labeled_pairs()
    assert p.weight == 7.5  # the latest sample


def test_the_sample_is_stratified_by_band_with_weights(db) -> None:
    text = factories.article_text(5, words=120)
    docs = [
        reviewed_document(url=f"https://s.example.com/{i}", text=f"{text} {i}", flips=i % 6)
        for i in range(7)
    ]
    find(*docs)
    n = CandidatePair.objects.count()
    assert n > 5
    drawn = sweeps.calibration_sample_make(per_band=1, seed=4)
    bands = {s.band for s in drawn}
    assert len(drawn) == len(bands)  # one per band
    per_band: dict[str, int] = {}
    for pair in CandidatePair.objects.all():
        band = sweeps.band_of(pair.distance)
        per_band[band] = per_band.get(band, 0) + 1
    assert {s.band: s.weight for s in drawn} == {b: float(per_band[b]) for b in bands}
    again = sweeps.calibration_sample_make(per_band=1, seed=4)
    assert [s.pair_id for s in again] == [s.pair_id for s in drawn]  # reproducible


def test_the_page_shows_tables_charts_and_the_warning(client, pairs, editor) -> None:
    label(pairs[0], editor, "duplicate")
    label(pairs[1], editor, "distinct")
    label(pairs[2], editor, "near_duplicate")
    client.force_login(editor)
    r = client.get(reverse("reviews:calibration"), {"sections": "all"})
    assert r.status_code == 200
    html = r.content.decode()
    # The report's histogram and PR curve (the pre-label histograms come before it).
    assert html.split('id="report-1"')[1].split('id="cosine"')[0].count("<svg") == 2
    assert "<polyline" in html and 'class="bar series-duplicate"' in html
    assert "Too few labels" in html and "not a rate for this corpus" in html
    assert "send to review" in html and "merge automatically" in html
    assert html.count("<tr") >= 17  # thresholds 0..16
    # The site CSP forbids inline styles and scripts.
    assert "style=" not in html and "<script>" not in html
    assert 'id="report-1"' in html


def test_the_page_filters_and_says_when_there_is_nothing(client, pairs, editor) -> None:
    label(pairs[0], editor, "duplicate")
    client.force_login(editor)
    r = client.get(reverse("reviews:calibration"), {"doc_type": "product"})
    assert "No labelled pairs for this filter" in r.content.decode()
    r = client.get(reverse("reviews:calibration"), {"doc_type": "<script>", "method": "x"})
    assert r.status_code == 200 and "<script>" not in r.content.decode().split("<main>")[1]


@override_settings(CALIBRATION_MIN_PER_CLASS=0)
def test_enough_labels_gives_no_warning(client, pairs, editor) -> None:
    for p in pairs:
        label(p, editor, "duplicate")
    assert [r.warnings for r in sweeps.calibration_reports()] == [[]]
    client.force_login(editor)
    assert "Too few labels" not in client.get(reverse("reviews:calibration")).content.decode()


def test_an_editor_draws_a_sample_from_the_page(client, pairs, editor, auditor) -> None:
    client.force_login(auditor)
    r = client.post(reverse("reviews:calibration-sample-create"), {"per_band": "1"})
    assert r.status_code == 403
    client.force_login(editor)
    r = client.post(reverse("reviews:calibration-sample-create"), {"per_band": "1", "seed": "2"})
    assert r.status_code == 302 and r["Location"] == reverse("reviews:calibration-sample")
    assert CalibrationSample.objects.exists()
    r = client.get(reverse("reviews:calibration-sample"))
    html = r.content.decode()
    assert "unlabeled" in html
    assert reverse("reviews:pair-detail", args=[CalibrationSample.objects.first().pair_id]) in html  # type: ignore[union-attr]


def test_the_sample_list_escapes_crawled_urls(client, editor) -> None:
    text = factories.article_text(9, words=120)
    a = reviewed_document(url="https://x.example.com/<script>alert(1)</script>", text=text)
    b = reviewed_document(url="https://x.example.com/b", text=text + " x", flips=1)
    find(a, b)
    sweeps.calibration_sample_make(per_band=5, seed=1)
    client.force_login(editor)
    html = client.get(reverse("reviews:calibration-sample")).content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)" in html


def test_the_page_needs_a_role(client, pairs) -> None:
    assert client.get(reverse("reviews:calibration")).status_code == 302
    client.force_login(factories.user_create(username="nobody"))
    assert client.get(reverse("reviews:calibration")).status_code == 403


def test_calibrate_command_prints_the_sweep(pairs, editor) -> None:
    label(pairs[0], editor, "duplicate")
    label(pairs[1], editor, "distinct")
    out = io.StringIO()
    call_command("calibrate", "--doc-type", "article", stdout=out)
    text = out.getvalue()
    assert "== doc type article" in text
    assert "precision" in text and "recall" in text
    assert len([x for x in text.splitlines() if x[:3].strip().isdigit()]) == 17
    assert "recommended for send_to_review" in text
    assert "recommended for merge_automatically" in text
    assert "warning: fewer than 30" in text
    out = io.StringIO()
    call_command("calibrate", "--method", "none", stdout=out)
    assert "No labelled pairs yet" in out.getvalue()


def test_make_calibration_sample_command(pairs) -> None:
    out = io.StringIO()
    call_command("make_calibration_sample", "--per-band", "1", "--seed", "5", stdout=out)
    assert "pair(s) sampled" in out.getvalue()
    assert CalibrationSample.objects.filter(seed=5).exists()


def test_the_page_sample_form_keeps_the_doc_type_filter(client, pairs, editor) -> None:
    client.force_login(editor)
    client.post(reverse("reviews:calibration-sample-create"), {"per_band": "5", "doc_type": "x"})
    assert CalibrationSample.objects.count() == 3  # an unknown doc type: no filter
    client.post(
        reverse("reviews:calibration-sample-create"), {"per_band": "5", "doc_type": "product"}
    )
    assert CalibrationSample.objects.count() == 3  # the pairs are articles


def _row(sweep, threshold: float):
    return next(r for r in sweep.rows if r.threshold == threshold)


def test_the_cosine_is_swept_on_both_splits(client, pairs, editor, settings) -> None:
    settings.SEMANTIC_THRESHOLDS = {**settings.SEMANTIC_THRESHOLDS, "article": 0.9}
    p0, p1, p2 = pairs
    label(p0, editor, "duplicate")
    label(p1, editor, "distinct")
    label(p2, editor, "duplicate")
    client.force_login(editor)
    html = client.get(reverse("reviews:calibration"), {"sections": "all"}).content.decode()
    assert "No labelled pair has a cosine yet" in html
    assert "-cosine" not in html.split('id="cosine"')[0]  # no action report either
    CandidatePair.objects.filter(id=p0.id).update(cosine=0.95)
    CandidatePair.objects.filter(id=p1.id).update(cosine=0.6)  # p2: a side without a vector
    (sweep,) = sweeps.cosine_sweeps()
    assert (sweep.doc_type, sweep.configured) == ("article", 0.9)
    assert (sweep.counted, sweep.without_cosine) == (2, 1)

    def both(row, field: str) -> float:
        return getattr(row.calibration, field) + getattr(row.holdout, field)

    at_configured, at_low = _row(sweep, 0.9), _row(sweep, 0.5)
    assert (both(at_configured, "tp"), both(at_configured, "fp")) == (1, 0)
    assert (both(at_low, "tp"), both(at_low, "fp")) == (1, 1)
    assert both(_row(sweep, 0.975), "tp") == 0
    html = client.get(reverse("reviews:calibration"), {"sections": "all"}).content.decode()
    assert 'id="cosine-article"' in html and "nominating at cosine ≥ 0.9" in html
    assert 'id="actions-1-cosine"' in html  # errors per action over the cosine
    out = io.StringIO()
    call_command("calibrate", stdout=out)
    assert "embedding cosine (same when ≥ c)" in out.getvalue()
