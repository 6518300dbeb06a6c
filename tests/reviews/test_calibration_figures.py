"""The calibration page reads figures computed ahead: they are the figures a computation
from scratch gives, for every filter; the page says how fresh they are; the beat task
and `calibrate --recompute` store them."""

import io
import random
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from ingest.models import CandidatePair, Document, Site
from ingest.services import methods_ensure
from reviews import tasks
from reviews.calibration import stored_figures, sweeps
from reviews.labels import labelling
from reviews.models import CalibrationFigures
from tests import factories

pytestmark = pytest.mark.django_db

VERDICTS = ["duplicate", "duplicate", "near_duplicate", "distinct", "distinct", "revision"]


def _corpus(seed: int, *, n_docs: int = 36, n_pairs: int = 60, n_labels: int = 50) -> None:
    """Random pairs over two methods and three doc types (some with a cosine), labelled
    by three editors (some pairs twice, some relabelled), with a calibration sample."""
    rng = random.Random(seed)
    methods = list(methods_ensure().values())[:2]
    sites = [
        Site.objects.create(host=f"s{i}.example.com", priority=rng.choice([0, 5, 10]))
        for i in range(3)
    ]
    base = datetime(2026, 5, 1, tzinfo=UTC)
    types = ["article", "product", "short"]
    docs = Document.objects.bulk_create(
        [
            Document(
                site=sites[i % 3],
                url=f"https://s{i % 3}.example.com/{i}",
                fetched_at=base + timedelta(minutes=i),
                raw_sha256=f"{seed:08x}{i:056x}",
                raw_size=100,
                doc_type=types[i % 3],
            )
            for i in range(n_docs)
        ]
    )
    seen: set[tuple[int, int, int]] = set()
    rows: list[CandidatePair] = []
    while len(rows) < n_pairs:
        x, y = rng.sample(docs, 2)
        a, b = (x, y) if x.pk < y.pk else (y, x)
        method = rng.choice(methods)
        if (a.pk, b.pk, method.pk) in seen:
            continue
        seen.add((a.pk, b.pk, method.pk))
        rows.append(
            CandidatePair(
                method=method,
                a=a,
                b=b,
                doc_type=rng.choice(types),
                distance=rng.randrange(0, 9),
                exact=False,
                ratio=90.0,
                token_set_ratio=rng.uniform(40, 100),
                length_ratio=1.0,
                containment=0.5,
                numbers_differ=False,
                ids_differ=False,
                title_differs=False,
                cosine=rng.uniform(0.5, 1.0) if rng.random() < 0.6 else None,
                uncertainty=0,
                below_floor=rng.random() < 0.1,
            )
        )
    CandidatePair.objects.bulk_create(rows)
    pairs = list(CandidatePair.objects.order_by("id"))
    editors = [factories.user_create(username=f"ed{seed}-{i}", role="editor") for i in range(3)]
    sweeps.calibration_sample_make(per_band=3, seed=seed)
    for _ in range(n_labels):
        labelling.label_record(
            pair=rng.choice(pairs),
            editor=rng.choice(editors),
            verdict=rng.choice(VERDICTS),
            reason_code="other",
            reason="r",
            region="body",
        )


def _filters() -> list[tuple[str, str]]:
    methods = sorted(set(CandidatePair.objects.values_list("method__key", flat=True)))
    types = ["", "article", "product", "short", "listing"]
    return [(t, m) for t in types for m in ["", *methods]]


def _page(client, **query: str) -> str:
    html = client.get(reverse("reviews:calibration"), query).content.decode()
    html = re.sub(r'<p class="calibration-freshness.*?</p>', "", html, flags=re.S)
    # Per response: the pre-label histograms' time (computed for the call, none stored
    # here), the CSP nonce and the CSRF token.
    html = re.sub(r"Computed \d{4}-\d\d-\d\d \d\d:\d\d UTC\.", "", html)
    html = re.sub(r'nonce="[^"]*"', "", html)
    html = re.sub(r'csrfmiddlewaretoken" value="[^"]*"', "", html)
    return re.sub(r'x-csrftoken": "[^"]*"', "", html)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_stored_figures_are_those_computed_from_scratch(seed, client, editor) -> None:
    _corpus(seed)
    stored_rows = stored_figures.figures_recompute()
    assert stored_rows == CalibrationFigures.objects.count() > 1
    client.force_login(editor)
    compared = 0
    for doc_type, method in _filters():
        stored = stored_figures.figures_stored(doc_type=doc_type, method=method)
        fresh = stored_figures.figures_fresh(doc_type=doc_type, method=method)
        assert stored is not None and stored.computed_at is not None
        assert [v.report for v in stored.views] == [v.report for v in fresh.views]
        assert [v.histogram for v in stored.views] == [v.histogram for v in fresh.views]
        assert [v.pr_curve for v in stored.views] == [v.pr_curve for v in fresh.views]
        assert stored.actions == fresh.actions
        assert stored.cosine == fresh.cosine
        compared += len(fresh.views) + len(fresh.cosine)
    assert compared > 10  # the corpus gives every kind of figure something to show
    # The page shows the same from the stored rows as from a computation for the request.
    shown = {f: _page(client, doc_type=f[0], method=f[1]) for f in _filters()[:4]}
    CalibrationFigures.objects.all().delete()
    for (doc_type, method), html in shown.items():
        assert _page(client, doc_type=doc_type, method=method) == html


def test_the_page_reads_the_stored_figures_and_says_how_fresh_they_are(
    client, editor, pairs
) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:calibration"))
    assert "Figures computed for this request (none stored yet)." in r.content.decode()
    stored_figures.figures_recompute()
    html = client.get(reverse("reviews:calibration")).content.decode()
    assert "no label stored since" in html
    assert "No labelled pairs" in html
    labelling.label_record(
        pair=pairs[0],
        editor=editor,
        verdict="duplicate",
        reason_code="other",
        reason="r",
        region="body",
    )
    html = client.get(reverse("reviews:calibration")).content.decode()
    # Stored before the label: the page says so rather than counting it.
    assert "1 label stored since, not counted yet" in html and "No labelled pairs" in html
    tasks.calibration_figures_recompute()
    html = client.get(reverse("reviews:calibration")).content.decode()
    assert "no label stored since" in html and "No labelled pairs" not in html


def test_figures_stored_under_other_settings_are_not_shown(pairs, editor) -> None:
    labelling.label_record(
        pair=pairs[0],
        editor=editor,
        verdict="duplicate",
        reason_code="other",
        reason="r",
        region="body",
    )
    stored_figures.figures_recompute()
    assert stored_figures.figures_stored() is not None
    with override_settings(CALIBRATION_COST_FALSE_MERGE=3.0):
        assert stored_figures.figures_stored() is None
        assert stored_figures.figures().computed_at is None  # computed for the call


def test_calibrate_recompute_stores_what_the_page_shows(client, pairs, editor) -> None:
    labelling.label_record(
        pair=pairs[0],
        editor=editor,
        verdict="duplicate",
        reason_code="other",
        reason="r",
        region="body",
    )
    out = io.StringIO()
    call_command("calibrate", "--recompute", stdout=out)
    assert "rows of the calibration page's figures" in out.getvalue()
    stored = stored_figures.figures_stored()
    assert stored is not None
    assert [v.report for v in stored.views] == sweeps.calibration_reports()


def test_the_beat_schedule_recomputes_the_figures() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["calibration-figures"]
    assert entry["task"] == "reviews.tasks.calibration_figures_recompute"
    assert entry["schedule"] == settings.CALIBRATION_FIGURES_EVERY_SECONDS


def test_stored_figures_keep_the_cores_sentences_for_translation() -> None:
    """A recommendation's reason read back from the stored figures is the core's sentence
    with its template and values, as a fresh one is, so the page translates it."""
    from django.utils import translation

    from reviews.core.words import Said
    from reviews.templatetags.desk_words import desk_words

    _corpus(3)
    stored_figures.figures_recompute()
    stored = stored_figures.figures_stored()
    fresh = stored_figures.figures_fresh()
    assert stored is not None
    reasons = [r.reason for v in stored.views for r in v.report.recommendations]
    fresh_reasons = [r.reason for v in fresh.views for r in v.report.recommendations]
    assert reasons and reasons == fresh_reasons
    assert all(isinstance(r, Said) for r in reasons)
    with translation.override("vi"):
        assert [desk_words(r) for r in reasons] == [desk_words(r) for r in fresh_reasons]
        assert any(desk_words(r) != str(r) for r in reasons)  # shown in Vietnamese
