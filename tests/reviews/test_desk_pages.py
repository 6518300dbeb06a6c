"""What the desk pages say: restores keep who chose a representative, dissolved groups
say where their members went, blind mode hides scores and other verdicts, tabs are
links, the API docs load from static files, and the small things an editor meets."""

import pytest
from django.urls import reverse

from reviews.decisions import automerge, group_merges, group_splits
from reviews.labels import labelling, preferences
from reviews.models import MergeProposal
from tests import factories
from tests.factories import TEXT, find, group_of, reviewed_document

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


def _label(pair, editor, verdict="duplicate", reason="seen"):
    return labelling.label_record(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code="same_text",
        reason=reason,
        region="body",
    )


def test_a_restore_gives_the_representative_back_to_the_rule(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    rule_by, rule_reason, old = (
        group.representative_by,
        group.representative_reason,
        group.representative_id,
    )
    assert rule_by.startswith("rule:")
    chosen = c.pk if old != c.pk else b.pk
    d = group_splits.group_representative_set(
        group=group, document_id=chosen, editor=editor, reason_code="editorial", reason="x"
    )
    group_merges.decision_restore(decision=d, editor=editor, reason="the old one was right")
    group.refresh_from_db()
    assert group.representative_id == old
    assert group.representative_by == rule_by
    assert group.representative_reason == rule_reason


def test_a_dissolved_group_says_where_its_members_went(client, chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    group_splits.group_split(
        group=group, document_ids=[b.pk, c.pk], editor=editor, reason_code="other", reason="x"
    )
    group.refresh_from_db()
    assert group.dissolved
    new = group_of(b)
    client.force_login(editor)
    body = client.get(reverse("reviews:group-detail", args=[group.pk])).content.decode()
    assert "none: the group is dissolved" in body
    assert 'id="split-form"' not in body and 'id="representative-form"' not in body
    assert f"group {new.pk}</a>" in body
    assert f'document <a href="/documents/{a.pk}/">{a.pk}</a> → in no group' in body


def test_an_approval_after_the_mode_changed_is_applied(settings, editor) -> None:
    a = reviewed_document(url="https://e.example.com/1", text=TEXT)
    b = reviewed_document(url="https://e.example.com/2", text=TEXT)
    find(a, b)
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "semi"}
    automerge.automerge_run()
    p = MergeProposal.objects.get()
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "off"}
    counts = automerge.proposals_decide(
        proposal_ids=[p.pk], editor=editor, approve=True, reason="checked"
    )
    assert counts["approved"] == 1 and counts["stale"] == 0


def test_a_stale_proposal_says_why(settings, editor, client) -> None:
    a = reviewed_document(url="https://e.example.com/1", text=TEXT)
    b = reviewed_document(url="https://e.example.com/2", text=TEXT)
    find(a, b)
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "semi"}
    automerge.automerge_run()
    p = MergeProposal.objects.get()
    group = group_of(a)
    group.version += 1
    group.save()
    automerge.proposals_decide(proposal_ids=[p.pk], editor=editor, approve=True, reason="ok")
    p.refresh_from_db()
    assert p.status == "stale" and "the group changed since the proposal" in p.decision_reason
    client.force_login(editor)
    assert (
        "the group changed since the proposal"
        in client.get(reverse("reviews:approvals")).content.decode()
    )


def test_pair_tabs_are_links_that_push_the_url(client, editor, pair) -> None:
    client.force_login(editor)
    url = reverse("reviews:pair-detail", args=[pair.id])
    r = client.get(url, {"view": "full"}, headers={**HX, "HX-Target": "diff-panel"})
    body = r.content.decode()
    assert b"<html" not in r.content
    assert f'href="{url}?view=full"' in body and 'hx-push-url="true"' in body
    current = body.split('aria-current="page"')[0].rsplit("<a ", 1)[1]
    assert "view=full" in current


def test_k_goes_to_the_previously_labelled_pair_and_n_is_next(client, editor, pairs) -> None:
    _label(pairs[0], editor)
    client.force_login(editor)
    body = client.get(reverse("reviews:pair-detail", args=[pairs[1].id])).content.decode()
    prev = reverse("reviews:pair-detail", args=[pairs[0].id])
    assert f'href="{prev}" data-key="k"' in body
    assert "data-history-back" not in body
    assert 'data-key="j n"' in body


def test_blind_mode_hides_group_distances(client, chain, editor) -> None:
    a, _, _ = chain
    preferences.preference_set(user=editor, blind_mode=True)
    client.force_login(editor)
    body = client.get(reverse("reviews:group-detail", args=[group_of(a).pk])).content.decode()
    assert 'class="heatmap"' not in body and "bits <small" not in body


def test_blind_mode_hides_other_verdicts_on_a_disputed_pair(
    client, pair, editor, other_editor
) -> None:
    _label(pair, other_editor, "distinct", reason="secret reason of oscar")
    _label(pair, editor, "duplicate")
    preferences.preference_set(user=editor, blind_mode=True)
    client.force_login(editor)
    body = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert "Disputed" in body
    assert "secret reason of oscar" not in body and "oscar: distinct" not in body


def test_the_api_docs_load_swagger_from_static_files(client, editor) -> None:
    client.force_login(editor)  # the docs are for logged-in users and token holders
    r = client.get("/api/v1/docs")
    body = r.content.decode()
    assert r.status_code == 200
    assert "/static/ninja/swagger-ui-bundle.js" in body and "cdn" not in body
    assert "Content-Security-Policy" in r.headers


def test_pages_name_a_favicon(client, editor) -> None:
    client.force_login(editor)
    assert 'rel="icon"' in client.get(reverse("reviews:queue")).content.decode()


def test_the_queue_results_carry_the_filters_with_their_values(client, editor, pairs) -> None:
    client.force_login(editor)
    r = client.get(reverse("reviews:queue"), {"status": "disputed"}, headers=HX)
    body = r.content.decode()
    assert 'class="queue-filters"' in body
    assert '<option value="disputed" selected>' in body


def test_an_auditor_is_offered_no_undo(client, auditor) -> None:
    client.force_login(auditor)
    body = client.get(reverse("reviews:queue-done")).content.decode()
    assert "Undo my last label" not in body


def test_the_403_page_names_the_role(client, pair) -> None:
    client.force_login(factories.user_create(username="nobody"))
    r = client.get(reverse("reviews:queue"))
    assert r.status_code == 403
    assert "editor, auditor or admin role" in r.content.decode()


def test_the_documents_list_searches_q(client, editor) -> None:
    reviewed_document(url="https://a.example.com/lamp", text=TEXT)
    reviewed_document(url="https://a.example.com/chair", text=TEXT + " x", flips=9)
    client.force_login(editor)
    body = client.get(reverse("ingest:document-list"), {"q": "chair"}).content.decode()
    assert "/chair" in body and "/lamp" not in body


def test_demo_setup_prints_the_address_it_is_given() -> None:
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("demo_setup", "--url", "http://127.0.0.1:8123/", stdout=out)
    assert "http://127.0.0.1:8123/" in out.getvalue() and ":8000" not in out.getvalue()


def test_demo_setup_prints_how_to_read_the_metrics(client, settings) -> None:
    import io

    from django.core.management import call_command

    settings.METRICS_TOKEN = "demo-metrics-s3cret"
    out = io.StringIO()
    call_command("demo_setup", "--url", "http://127.0.0.1:8123/", stdout=out)
    printed = out.getvalue()
    assert "Bearer demo-metrics-s3cret' http://127.0.0.1:8123/metrics" in printed
    # The printed command works: the token opens /metrics.
    r = client.get("/metrics", headers={"Authorization": "Bearer demo-metrics-s3cret"})
    assert r.status_code == 200 and b"dedup" in r.content
    settings.METRICS_TOKEN = ""
    out = io.StringIO()
    call_command("demo_setup", stdout=out)
    assert "METRICS_TOKEN is not set: " in out.getvalue()


def test_the_metrics_page_shows_a_past_crawl(client, editor) -> None:
    from django.core.management import call_command

    reviewed_document(url="https://a.example.com/old", text=TEXT)  # fetched 2026-05-01
    call_command("rollup_metrics", "--crawled", stdout=__import__("io").StringIO())
    client.force_login(editor)
    r = client.get(reverse("reviews:metrics"))
    assert r.status_code == 200 and r.context["rows"]


def test_the_pair_page_explains_the_simhash(client, editor, pair) -> None:
    client.force_login(editor)
    body = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert f"{pair.distance} of 3 bits" in body
    assert body.count('class="bit ') == 64
    assert body.count(" differs") >= pair.distance
    assert "nominating" in body and "probe radius" in body


def test_the_aligned_tab_shows_a_reordered_text_as_moved(client, editor) -> None:
    para = [f"Sentence {i} tells part {i} of the story." for i in range(12)]
    a = reviewed_document(url="https://m.example.com/a", text=" ".join(para))
    b = reviewed_document(
        url="https://m.example.com/b", text=" ".join(para[6:] + para[:6]), flips=1
    )
    find(a, b)
    from tests.factories import pair_of

    pair = pair_of(a, b)
    client.force_login(editor)
    r = client.get(
        reverse("reviews:pair-detail", args=[pair.id]),
        {"view": "aligned"},
        headers={**HX, "HX-Target": "diff-panel"},
    )
    body = r.content.decode()
    assert "0 changed blocks, 1 moved block" in body
    assert 'class="aligned"' in body and "op-moved" in body


def test_the_full_page_diff_marks_boilerplate(client, editor, pair) -> None:
    from ingest.models import Extraction

    Extraction.objects.filter(document_id__in=[pair.a_id, pair.b_id]).update(
        full_text="Home News Sport " + TEXT + " Contact us"
    )
    client.force_login(editor)
    r = client.get(
        reverse("reviews:pair-detail", args=[pair.id]),
        {"view": "full"},
        headers={**HX, "HX-Target": "diff-panel"},
    )
    assert 'boilerplate">Home News Sport' in r.content.decode()
