"""Calibration per action and before labels: the desk's data, the page, the JSON, the
beat task."""

import io
import json

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from reviews import tasks
from reviews.calibration import prelabel
from reviews.labels import labelling
from reviews.management.commands.calibrate import calibration_json
from reviews.models import PrelabelDistribution
from tests import factories
from tests.factories import TEXT, find, pair_of, reviewed_document

pytestmark = pytest.mark.django_db

THRESHOLDS_4 = {"article": 4, "product": 3, "short": 2, "listing": 3, "other": 3}


def label(pair, editor, verdict: str):
    return labelling.label_record(
        pair=pair, editor=editor, verdict=verdict, reason_code="other", reason="r", region="body"
    )


@pytest.fixture
def chained(db):
    """a–b 2 bits, b–c 2 bits, a–c 4 bits (all three candidate pairs at threshold 4); a is
    on the site with the highest priority, so it is the representative."""
    with override_settings(CANDIDATE_THRESHOLDS=THRESHOLDS_4):
        a = reviewed_document(
            url="https://top.example.com/a", text=TEXT + " one", site="top.example.com", priority=10
        )
        b = reviewed_document(url="https://news.example.com/b", text=TEXT + " two", flips=2)
        c = reviewed_document(url="https://news.example.com/c", text=TEXT + " three", flips=4)
        find(a, b, c)
    return a, b, c


def test_a_chain_is_a_wrong_merge_action_that_the_pair_sweep_does_not_count(
    chained, editor
) -> None:
    a, b, c = chained
    label(pair_of(a, c), editor, "distinct")
    label(pair_of(a, b), editor, "duplicate")
    payload = calibration_json()
    (report,) = payload["reports"]
    actions, by_ratio = report["actions"]
    assert actions["score"] == "simhash_distance" and actions["rule"] == settings.GROUP_RULE
    # The token-set ratio regroups the same pairs by its own score (higher is closer).
    assert by_ratio["score"] == "token_set_ratio" and by_ratio["closer"] == "higher"
    assert by_ratio["rows"][0]["wrong_groups"] == 1  # everything joins at ratio ≥ 0
    rows = {r["threshold"]: r for r in actions["rows"]}
    # At 2 bits every pair within the threshold is fine for the pair metric …
    assert rows[2.0]["pair_false_merges"] == 0 and rows[2.0]["cost_pairs"] == 0
    # … but the rule chains a–b–c into one group: one wrong merge action.
    assert rows[2.0]["wrong_groups"] == 1 and rows[2.0]["largest_wrong_group"] == 3
    assert rows[2.0]["cost_actions"] == settings.CALIBRATION_COST_FALSE_MERGE
    assert rows[2.0]["hidden_wrongly"] == 1
    assert rows[2.0]["hidden_by"] == [{"doc_type": "article", "site_priority": 0, "documents": 1}]
    (worst,) = rows[2.0]["worst"]
    assert worst["representative"]["id"] == a.pk
    assert [m["id"] for m in worst["hidden_wrongly"]] == [c.pk]
    assert worst["hidden_wrongly"][0]["url"] == c.url
    assert rows[1.0]["wrong_groups"] == 0 and rows[1.0]["missed_pairs"] == 1
    assert rows[4.0]["pair_false_merges"] == 1  # the pair metric catches it only at 4


def test_the_page_lists_the_worst_groups_with_links(client, chained, editor) -> None:
    a, b, c = chained
    ac = pair_of(a, c)
    label(ac, editor, "distinct")
    client.force_login(editor)
    html = client.get(
        reverse("reviews:calibration"), {"at": "2", "sections": "all"}
    ).content.decode()
    assert "Errors per action" in html and "Worst groups at threshold 2" in html
    assert reverse("reviews:pair-detail", args=[ac.id]) in html
    assert reverse("ingest:document-detail", args=[c.pk]) in html
    assert "(hidden wrongly)" in html and "(representative)" in html
    # At 1 bit nothing is wrong.
    html = client.get(
        reverse("reviews:calibration"), {"at": "1", "sections": "all"}
    ).content.decode()
    assert "no group at this threshold joins a pair labelled distinct" in html
    assert "style=" not in html and "<script>" not in html


@override_settings(PRELABEL_MIN_DOCUMENTS=2)
def test_the_prelabel_suggestion_is_on_the_page_and_in_json_marked_unlabelled(
    client, pairs, editor
) -> None:
    payload = calibration_json()
    entry = next(
        p
        for p in payload["prelabel"]
        if p["doc_type"] == "article" and p["score"] == "simhash_distance"
    )
    assert entry["documents"] == 6 and entry["sites"] == 1 and entry["candidate_pairs"] == 3
    assert entry["sample_pairs"] == settings.PRELABEL_SAMPLE_PAIRS
    assert sum(entry["candidate_counts"]) == 3 and entry["candidate_counts"][0] == 1
    assert entry["suggestion"]["threshold"] is not None, (
        entry["suggestion"],
        entry["sample_counts"],
    )
    assert entry["suggestion"]["label"] == "unlabelled"
    assert entry["starting"]["source"] == "unlabelled"
    assert 3 < entry["starting"]["threshold"] < 30
    assert "smoothed histogram" in entry["suggestion"]["method"]
    assert any(p["score"] == "token_set_ratio" for p in payload["prelabel"])
    client.force_login(editor)
    html = client.get(reverse("reviews:calibration"), {"sections": "all"}).content.decode()
    assert "Before labels" in html and "minimum of the smoothed histogram" in html
    assert 'class="badge-unlabelled"' in html and 'class="chart-guide"' in html
    assert 'class="bar series-candidates"' in html and 'class="bar series-random"' in html


@override_settings(PRELABEL_MIN_DOCUMENTS=2, CALIBRATION_MIN_PER_CLASS=1, LABEL_HOLDOUT_SHARE=0.0)
def test_enough_labels_replace_the_unlabelled_suggestion(pairs, editor) -> None:
    label(pairs[2], editor, "duplicate")  # 0 bits
    label(pairs[0], editor, "distinct")  # 3 bits
    entry = next(
        p
        for p in calibration_json()["prelabel"]
        if p["doc_type"] == "article" and p["score"] == "simhash_distance"
    )
    assert entry["starting"]["source"] == "labels"
    assert entry["starting"]["threshold"] == 0
    assert entry["suggestion"]["threshold"] is not None  # still shown beside it


@override_settings(PRELABEL_MIN_DOCUMENTS=2)
def test_the_beat_task_stores_the_distributions_and_a_rerun_replaces_them(pairs) -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["prelabel-distributions"]
    assert entry["task"] == "reviews.tasks.prelabel_compute"
    assert entry["schedule"] == settings.PRELABEL_EVERY_SECONDS
    PrelabelDistribution.objects.create(
        method_key="gone",
        doc_type="article",
        score="simhash_distance",
        documents=0,
        sites=0,
        sample_pairs=0,
        candidate_pairs=0,
        suggestion_method="x",
        seed=1,
        computed_at="2026-01-01T00:00:00Z",
    )
    written = tasks.prelabel_compute.delay().get()
    rows = list(PrelabelDistribution.objects.values())
    assert written == len(rows) >= 2 and not any(r["method_key"] == "gone" for r in rows)
    tasks.prelabel_compute.delay().get()
    again = list(PrelabelDistribution.objects.values())
    strip = lambda rs: [{k: v for k, v in r.items() if k not in {"computed_at"}} for r in rs]  # noqa: E731
    assert strip(again) == strip(rows)
    stored = prelabel.distributions(doc_type="article")
    assert stored and all(d.computed_at is not None for d in stored)
    assert {d.score.name for d in stored} == {"simhash_distance", "token_set_ratio"}


def test_calibrate_prints_json_and_text(pairs, editor) -> None:
    label(pairs[0], editor, "duplicate")
    out = io.StringIO()
    call_command("calibrate", "--format", "json", stdout=out)
    payload = json.loads(out.getvalue())
    assert set(payload) == {"settings", "reports", "prelabel", "containment", "cosine"}
    assert payload["reports"][0]["actions"][0]["rows"][0]["threshold"] == 0
    out = io.StringIO()
    call_command("calibrate", stdout=out)
    text = out.getvalue()
    assert "errors per action" in text and "before labels" in text


def test_the_demo_crawl_gets_a_suggestion_for_its_articles(db, committed) -> None:
    # Its other doc types hold fewer than PRELABEL_MIN_DOCUMENTS indexable pages since
    # login walls stay out of the index (blocked): only the articles get a valley.
    call_command("demo_setup", stdout=io.StringIO())
    with committed():
        factories.gold_crawl_ingest()
    out = io.StringIO()
    call_command("calibrate", "--recompute", "--format", "json", stdout=out)
    suggested = {
        p["doc_type"]
        for p in json.loads(out.getvalue())["prelabel"]
        if p["score"] == "simhash_distance" and p["starting"]["threshold"] is not None
    }
    assert "article" in suggested, [
        (p["doc_type"], p["score"], p["documents"], p["candidate_pairs"], p["starting"])
        for p in json.loads(out.getvalue())["prelabel"]
    ]
    assert PrelabelDistribution.objects.filter(threshold__isnull=False, doc_type="article").exists()
