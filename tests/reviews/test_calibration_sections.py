"""The calibration page shows each report's recommendation at once; the sweep, charts,
errors per action, cosine sweeps and pre-label distributions are sections fetched when
an auditor opens them, rendered once per recompute."""

import html as html_lib
import re

import pytest
from django.urls import reverse

from reviews.calibration import stored_figures
from reviews.labels import labelling

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


def _label(pair, editor, verdict: str):
    return labelling.label_record(
        pair=pair, editor=editor, verdict=verdict, reason_code="other", reason="r", region="body"
    )


def _section_urls(page: str) -> list[str]:
    return [
        html_lib.unescape(u) for u in re.findall(r'hx-get="([^"]*/calibration/section[^"]*)"', page)
    ]


@pytest.fixture
def labelled(client, pairs, editor):
    _label(pairs[0], editor, "duplicate")
    _label(pairs[1], editor, "distinct")
    _label(pairs[2], editor, "near_duplicate")
    client.force_login(editor)
    return pairs


def test_the_page_shows_the_recommendation_and_leaves_the_rest_to_sections(
    client, labelled
) -> None:
    stored_figures.figures_recompute()
    page = client.get(reverse("reviews:calibration")).content.decode()
    report = page.split('id="report-1"')[1]
    assert "send to review" in report and "merge automatically" in report
    # Nothing heavy is rendered with the page: no sweep table, chart or action table.
    assert 'class="sweep"' not in page and "<svg" not in page
    assert 'class="actions"' not in page and 'class="prelabel-channel"' not in page
    parts = {re.search(r"part=(\w+)", u).group(1) for u in _section_urls(page)}  # type: ignore[union-attr]
    assert parts == {"sweep", "actions", "cosine", "prelabel"}
    assert 'hx-trigger="toggle once"' in page
    assert "style=" not in page and "<script>" not in page


def test_each_section_is_a_fragment_with_its_figures(client, labelled) -> None:
    stored_figures.figures_recompute()
    page = client.get(reverse("reviews:calibration")).content.decode()
    urls = {re.search(r"part=(\w+)", u).group(1): u for u in _section_urls(page)}  # type: ignore[union-attr]
    expect = {
        "sweep": ["<svg", 'class="sweep"'],
        "actions": ['class="actions"', "Worst groups at threshold"],
        "cosine": ["Semantic channel: thresholds over the cosine"],
        "prelabel": ["Before labels"],
    }
    for part, needles in expect.items():
        r = client.get(urls[part], headers=HX)
        assert r.status_code == 200, part
        body = r.content.decode()
        assert "<html" not in body, part
        for needle in needles:
            assert needle in body, (part, needle)
        assert "style=" not in body and "<script>" not in body
        # Without JavaScript the section's link gives a page of its own.
        whole = client.get(urls[part]).content.decode()
        assert "<html" in whole and needles[0] in whole, part


def test_a_section_is_rendered_once_per_recompute(client, labelled, pairs, editor) -> None:
    stored_figures.figures_recompute()
    page = client.get(reverse("reviews:calibration")).content.decode()
    url = next(u for u in _section_urls(page) if "part=sweep" in u)
    first = client.get(url, headers=HX).content
    assert client.get(url, headers=HX).content == first
    # A recompute (here with one more label) shows the new figures.
    _label(pairs[0], editor, "distinct")
    stored_figures.figures_recompute()
    assert client.get(url, headers=HX).content != first


def test_a_chosen_threshold_opens_the_errors_per_action(client, labelled) -> None:
    stored_figures.figures_recompute()
    page = client.get(reverse("reviews:calibration"), {"at": "2"}).content.decode()
    actions = page.split('id="actions-1-more"')[1].split("</details>")[0]
    assert actions.startswith(" open") and 'hx-trigger="load"' in actions
    assert "at=2" in actions
    sweep = page.split('id="sweep-1-more"')[1].split("</details>")[0]
    assert not sweep.startswith(" open")


def test_a_section_of_nothing_is_refused(client, labelled) -> None:
    url = reverse("reviews:calibration-section")
    assert client.get(url, {"part": "nope"}, headers=HX).status_code == 400
    r = client.get(url, {"part": "sweep", "doc_type": "product"}, headers=HX)
    assert r.status_code == 404
