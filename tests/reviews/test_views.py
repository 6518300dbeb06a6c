"""Review desk views: log-in and roles, htmx partials, plain-form fallbacks, CSP."""

import pytest
from django.urls import reverse

from ingest.core.bands import differing_bits as core_differing_bits
from ingest.models import CandidatePair, Fingerprint
from reviews.models import Decision, Label
from reviews.pair import simhash_panel
from tests import factories
from tests.factories import group_of

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}
LABEL = {
    "verdict": "duplicate",
    "reason_code": "same_text",
    "reason": "same body",
    "region": "body",
    "purpose": "review",
}


def test_login_is_required_everywhere(client, pair) -> None:
    for url in (
        reverse("reviews:queue"),
        reverse("reviews:pair-detail", args=[pair.id]),
        reverse("reviews:document-source", args=[pair.a_id]),
    ):
        r = client.get(url)
        assert r.status_code == 302 and "/accounts/login/" in r["Location"]


def test_a_user_without_a_role_is_refused(client, pair) -> None:
    client.force_login(factories.user_create(username="nobody"))
    assert client.get(reverse("reviews:queue")).status_code == 403
    assert client.get(reverse("reviews:document-source", args=[pair.a_id])).status_code == 403


def test_an_auditor_reads_but_cannot_label(client, pair, auditor) -> None:
    client.force_login(auditor)
    r = client.get(reverse("reviews:pair-detail", args=[pair.id]))
    assert r.status_code == 200 and b"Read only" in r.content
    r = client.post(reverse("reviews:pair-label", args=[pair.id]), LABEL)
    assert r.status_code == 403
    assert not Label.objects.exists()


def test_csrf_is_enforced_on_label_posts(pair, editor) -> None:
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    r = client.post(reverse("reviews:pair-label", args=[pair.id]), LABEL, headers=HX)
    assert r.status_code == 403
    assert not Label.objects.exists()


def test_the_queue_lists_pairs_with_counts(client, editor, pairs) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:queue"))
    assert r.status_code == 200
    body = r.content.decode()
    for p in pairs:
        assert f"pair {p.id}</a>" in body
    # Uncertain first: distance 3 (threshold 3) before 2 before 0.
    order = [body.index(f"pair {p.id}</a>") for p in pairs]
    assert order == sorted(order)
    assert r.context["counts"]["status"]["unlabeled"] == 3


def test_the_queue_filter_returns_only_the_results_partial(client, editor, pairs) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:queue"), {"distance_max": 1}, headers=HX)
    assert r.status_code == 200
    assert b"<html" not in r.content and b'id="queue-results"' in r.content
    assert r.content.count(b"pair ") >= 1 and f"pair {pairs[2].id}<".encode() in r.content
    assert f"pair {pairs[0].id}<".encode() not in r.content


def test_the_pair_view_shows_diff_facts_and_guards(client, editor, pair) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:pair-detail", args=[pair.id]))
    body = r.content.decode()
    assert r.status_code == 200
    assert 'class="op-delete guard">12.99' in body and 'class="op-insert guard">14.99' in body
    assert pair.method.key in body and pair.a.raw_sha256 in body
    assert "differing bits" in body and "numbers_differ" in body


def test_blind_mode_hides_distances_and_scores(client, editor, pair) -> None:
    client.force_login(editor)
    client.post(reverse("reviews:preference-blind"), {"blind_mode": "on", "next": "/review/"})
    body = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert "hidden (blind mode)" in body and "differing bits" not in body
    assert "containment" not in body


def test_the_diff_toggle_returns_only_the_diff_panel(client, editor, pair) -> None:
    client.force_login(editor)
    url = reverse("reviews:pair-detail", args=[pair.id])
    r = client.get(url, {"view": "html"}, headers={**HX, "HX-Target": "diff-panel"})
    assert r.status_code == 200 and b"<html" not in r.content
    assert r.content.lstrip().startswith(b'<section id="diff-panel"')
    assert b"line-diff" in r.content and b"&lt;article&gt;" in r.content
    r = client.get(url, {"view": "source"}, headers={**HX, "HX-Target": "diff-panel"})
    assert b"<iframe sandbox" in r.content


def test_htmx_label_saves_and_swaps_in_the_next_pair(client, editor, pairs) -> None:
    client.force_login(editor)
    first, second = pairs[0], pairs[1]
    r = client.post(reverse("reviews:pair-label", args=[first.id]), LABEL, headers=HX)
    assert r.status_code == 200
    assert b"<html" not in r.content and b'id="pair-review"' in r.content
    assert r["HX-Push-Url"] == reverse("reviews:pair-detail", args=[second.id])
    assert f"Pair {second.id}".encode() in r.content and b"Saved" in r.content
    assert Label.objects.get().pair == first


def test_a_plain_form_label_redirects_to_the_next_pair(client, editor, pairs) -> None:
    client.force_login(editor)
    r = client.post(reverse("reviews:pair-label", args=[pairs[0].id]), LABEL)
    assert r.status_code == 302
    assert r["Location"] == reverse("reviews:pair-detail", args=[pairs[1].id])


def test_a_label_with_preset_other_and_no_note_is_shown_again_with_errors(
    client, editor, pair
) -> None:
    # A preset is a reason; only "other" says nothing by itself and needs a note.
    client.force_login(editor)
    data = {**LABEL, "reason_code": "other", "reason": " "}
    r = client.post(reverse("reviews:pair-label", args=[pair.id]), data, headers=HX)
    assert r.status_code == 200 and "needs a note" in r.content.decode()
    assert not Label.objects.exists()


def test_undo_withdraws_my_last_label_and_shows_its_pair(client, editor, pairs) -> None:
    client.force_login(editor)
    client.post(reverse("reviews:pair-label", args=[pairs[0].id]), LABEL, headers=HX)
    r = client.post(reverse("reviews:label-undo"), headers=HX)
    assert r.status_code == 200
    assert r["HX-Push-Url"] == reverse("reviews:pair-detail", args=[pairs[0].id])
    assert b"Withdrew" in r.content
    assert Label.objects.filter(retraction=True).count() == 1


def test_next_claims_and_redirects(client, editor, pairs) -> None:
    client.force_login(editor)
    r = client.post(reverse("reviews:queue-next"))
    assert r.status_code == 302
    assert r["Location"] == reverse("reviews:pair-detail", args=[pairs[0].id])


def test_the_source_view_has_exactly_the_sandbox_policy(client, editor, pair) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:document-source", args=[pair.a_id]))
    assert r.status_code == 200
    assert r["Content-Security-Policy"] == (
        "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    )
    assert "Content-Security-Policy-Report-Only" not in r
    assert r["X-Frame-Options"] == "SAMEORIGIN"
    assert r["Content-Type"] == "text/html; charset=utf-8"


def test_desk_pages_keep_the_site_policy(client, editor, pair) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:pair-detail", args=[pair.id]))
    policy = r["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in policy and "sandbox" not in policy


def test_crawled_text_is_escaped(client, editor) -> None:
    from tests.factories import find, pair_of, reviewed_document

    evil = "Lamp <script>window.x=1</script> <img src=x onerror=alert(1)> " * 20
    a = reviewed_document(url="https://e.example.com/1", text=evil)
    b = reviewed_document(url="https://e.example.com/2", text=evil + " more", flips=1)
    find(a, b)
    client.force_login(editor)
    body = client.get(reverse("reviews:pair-detail", args=[pair_of(a, b).id])).content
    assert b"<script>window.x" not in body and b"&lt;script&gt;window.x" in body
    assert b"<img src=x" not in body


def test_group_view_shows_members_matrix_and_history(client, editor, chain) -> None:
    a, b, c = chain
    group = group_of(a)
    client.force_login(editor)
    r = client.get(reverse("reviews:group-detail", args=[group.pk]))
    body = r.content.decode()
    assert r.status_code == 200
    assert "heatmap" in body and 'class="heat heat-4 over"' in body
    assert "chained" in body and a.url in body and "No decisions yet" in body


def test_htmx_split_returns_the_group_partial_with_the_decision(client, editor, chain) -> None:
    a, b, c = chain
    group = group_of(a)
    client.force_login(editor)
    r = client.post(
        reverse("reviews:group-split", args=[group.pk]),
        {
            "document_ids": [c.pk],
            "reason_code": "chain",
            "reason": "c is too far",
            "version": group.version,
        },
        headers=HX,
    )
    assert r.status_code == 200 and b"<html" not in r.content
    assert b'id="group-review"' in r.content and b"person:editor" in r.content
    assert Decision.objects.get().action == "detach"


def test_a_split_without_reason_is_refused_with_the_form(client, editor, chain) -> None:
    a, b, c = chain
    client.force_login(editor)
    r = client.post(
        reverse("reviews:group-split", args=[group_of(a).pk]),
        {"document_ids": [c.pk], "reason_code": "chain", "reason": ""},
        headers=HX,
    )
    assert r.status_code == 200 and b"required" in r.content
    assert not Decision.objects.exists()


def test_choose_representative_plain_form(client, editor, chain) -> None:
    a, b, c = chain
    group = group_of(a)
    client.force_login(editor)
    r = client.post(
        reverse("reviews:group-representative", args=[group.pk]),
        {
            "document_id": b.pk,
            "reason_code": "editorial",
            "reason": "middle version",
            "version": group.version,
        },
    )
    assert r.status_code == 302
    group.refresh_from_db()
    assert group.representative_id == b.pk and group.representative_locked


def test_a_pair_below_the_floor_is_not_queued(client, editor, pair) -> None:
    CandidatePair.objects.filter(id=pair.id).update(below_floor=True)
    client.force_login(editor)
    assert client.get(reverse("reviews:queue")).context["pairs"].paginator.count == 0


def test_a_conflicting_distinct_label_offers_the_minimum_cut(client, editor, chain) -> None:
    a, b, c = chain
    group = group_of(a)
    pair = CandidatePair.objects.get(a=a, b=b)
    client.force_login(editor)
    client.post(
        reverse("reviews:pair-label", args=[pair.id]),
        {**LABEL, "verdict": "distinct", "reason_code": "different_item", "reason": "no"},
    )
    body = client.get(reverse("reviews:group-detail", args=[group.pk])).content.decode()
    assert "Smallest cut: remove 1 link" in body and f"{a.pk}–{b.pk}" in body
    assert "Apply cut as split" in body


def test_next_hands_out_a_chained_group_before_pairs(client, editor, chain) -> None:
    client.force_login(editor)
    r = client.post(reverse("reviews:queue-next"), headers=HX)
    assert r["HX-Redirect"] == reverse("reviews:group-detail", args=[group_of(chain[0]).pk])


@pytest.mark.parametrize(
    ("asked", "landed"),
    [
        ("/review/groups/", "/review/groups/"),
        ("http://testserver/review/groups/", "http://testserver/review/groups/"),
        ("//evil.example/review/", "/review/"),
        ("https://evil.example/", "/review/"),
        ("javascript:alert(1)", "/review/"),
        ("", "/review/"),
    ],
)
def test_the_blind_mode_switch_returns_only_to_this_site(client, editor, asked, landed) -> None:
    client.force_login(editor)
    r = client.post(reverse("reviews:preference-blind"), {"blind_mode": "on", "next": asked})
    assert r.status_code == 302 and r["Location"] == landed


def test_the_pair_views_differing_bits_come_from_its_two_fingerprints(client, editor, pair) -> None:
    """A pair does not store its XOR (ingest 0030): the SimHash panel reads the two
    main-text fingerprints of the pair's method, and shows what the stored XOR did."""
    prints = dict(
        Fingerprint.objects.filter(
            method_id=pair.method_id, document_id__in=[pair.a_id, pair.b_id]
        ).values_list("document_id", "simhash")
    )
    a, b = prints[pair.a_id], prints[pair.b_id]
    assert a is not None and b is not None
    bits = core_differing_bits(a, b)
    assert len(bits) == pair.distance == 2
    view = simhash_panel.simhash_view(pair=pair)
    assert view.differing_bits == bits
    assert [c.bit for c in view.cells if c.differs] == sorted(bits, reverse=True)
    client.force_login(editor)
    body = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert f'<dd class="hex small">{" ".join(map(str, bits))}</dd>' in body
