"""Merge and restore are decisions on the record and delete nothing; workers honour
them; automatic merging is off by default and never touches what a person refused."""

import io

import psycopg
import pytest
from django.db import OperationalError, connection

from ingest import candidates
from ingest import services as ingest_services
from ingest.core.channels import SEMANTIC
from ingest.core.readers import read_warc
from ingest.models import (
    GROUPING_LOCK,
    CandidateGroup,
    CandidatePair,
    Document,
    DoNotMatch,
    Extraction,
    GroupMember,
)
from reviews import rules
from reviews.decisions import automerge, decision_records, group_merges, group_splits
from reviews.labels import labelling
from reviews.models import AppendOnlyError, Decision, Label, MergeProposal
from tests import factories
from tests.factories import TEXT, find, group_of, group_or_none, pair_of, reviewed_document

pytestmark = pytest.mark.django_db


def _members(group: CandidateGroup) -> list[int]:
    return sorted(GroupMember.objects.filter(group=group).values_list("document_id", flat=True))


def test_merge_moves_the_other_group_in_and_is_on_the_record(two_groups, editor) -> None:
    a1, a2, b1, b2 = two_groups
    ga, gb = group_of(a1), group_of(b1)
    d = group_merges.group_merge(
        group=ga, other_group=gb, editor=editor, reason_code="same_item", reason="same story"
    )
    ga.refresh_from_db()
    gb.refresh_from_db()
    assert _members(ga) == sorted([a1.pk, a2.pk, b1.pk, b2.pk]) and ga.size == 4
    assert gb.dissolved and gb.size == 0
    assert d.action == "merge" and d.actor == "person:editor" and d.new_group == gb
    assert d.document_ids == sorted([b1.pk, b2.pk])
    assert d.membership_before["members"] == sorted([a1.pk, a2.pk])
    assert d.membership_before["origin"] == {str(b1.pk): gb.pk, str(b2.pk): gb.pk}
    assert d.group_version == ga.version
    assert decision_records.is_accepted(ga)


def test_the_workers_keep_a_persons_merge(two_groups, editor) -> None:
    a1, a2, b1, b2 = two_groups
    ga = group_of(a1)
    group_merges.group_merge(
        group=ga, other_group=group_of(b1), editor=editor, reason_code="other", reason="x"
    )
    candidates.groups_update(method=ga.method, document_ids=[a1.pk, b1.pk])
    assert group_of(a1) == group_of(b1) == group_of(b2) == group_of(a2)


def test_restore_of_a_merge_puts_both_groups_back(two_groups, editor) -> None:
    a1, a2, b1, b2 = two_groups
    ga, gb = group_of(a1), group_of(b1)
    rep_b = gb.representative_id
    merge = group_merges.group_merge(
        group=ga, other_group=gb, editor=editor, reason_code="other", reason="oops"
    )
    restore = group_merges.decision_restore(decision=merge, editor=editor, reason="false merge")
    ga.refresh_from_db()
    gb.refresh_from_db()
    assert _members(ga) == sorted([a1.pk, a2.pk]) and ga.size == 2
    assert _members(gb) == sorted([b1.pk, b2.pk]) and not gb.dissolved
    assert gb.representative_id == rep_b
    assert restore.action == "restore" and restore.reverts == merge
    assert restore.reason == "false merge" and restore.group_version == ga.version
    # Workers do not undo the restore either.
    candidates.groups_update(method=ga.method, document_ids=[a1.pk, b1.pk])
    assert group_of(a1) != group_of(b1)
    with pytest.raises(rules.ReviewError):
        group_merges.decision_restore(decision=merge, editor=editor, reason="again")
    with pytest.raises(rules.ReviewError):
        group_merges.decision_restore(decision=restore, editor=editor, reason="undo the undo")


def test_merge_of_a_single_document_and_restore(two_groups, editor) -> None:
    a1, a2, _, _ = two_groups
    loner = reviewed_document(url="https://c.example.com/", text="other words", base=0)
    ga = group_of(a1)
    merge = group_merges.group_merge(
        group=ga, document_ids=[loner.pk], editor=editor, reason_code="other", reason="same"
    )
    assert group_of(loner) == ga
    group_merges.decision_restore(decision=merge, editor=editor, reason="not the same")
    assert group_or_none(loner) is None and _members(group_of(a1)) == sorted([a1.pk, a2.pk])


def test_restore_of_a_split_revokes_its_do_not_match(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    split = group_splits.group_split(
        group=group, document_ids=[b.pk, c.pk], editor=editor, reason_code="other", reason="x"
    )
    assert DoNotMatch.objects.filter(revoked_at__isnull=True).count() == 2
    restore = group_merges.decision_restore(decision=split, editor=editor, reason="same story")
    group.refresh_from_db()
    assert _members(group) == [a.pk, b.pk, c.pk] and not group.dissolved and group.size == 3
    assert split.new_group is not None
    split.new_group.refresh_from_db()
    assert split.new_group.dissolved
    assert DoNotMatch.objects.filter(revoked_at__isnull=True).count() == 0
    assert DoNotMatch.objects.count() == 2  # revoked, kept on file
    assert restore.reverts == split
    candidates.groups_update(method=group.method, document_ids=[a.pk, b.pk, c.pk])
    assert group_of(a) == group_of(b) == group_of(c)


def test_restore_of_a_representative_choice(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    old = group.representative_id
    chosen = c.pk if old != c.pk else b.pk
    d = group_splits.group_representative_set(
        group=group, document_id=chosen, editor=editor, reason_code="editorial", reason="x"
    )
    group_merges.decision_restore(decision=d, editor=editor, reason="the old one was right")
    group.refresh_from_db()
    assert group.representative_id == old and not group.representative_locked


def test_decisions_stay_append_only_in_the_model_layer(two_groups, editor) -> None:
    a1, _, b1, _ = two_groups
    d = group_merges.group_merge(
        group=group_of(a1), other_group=group_of(b1), editor=editor, reason_code="o", reason="r"
    )
    with pytest.raises(AppendOnlyError):
        Decision.objects.filter(pk=d.pk).update(reason="changed")
    with pytest.raises(AppendOnlyError):
        d.delete()


@pytest.mark.postgres
def test_the_database_refuses_update_and_delete_of_decisions(two_groups, editor) -> None:
    from django.db import DatabaseError, transaction

    a1, _, b1, _ = two_groups
    d = group_merges.group_merge(
        group=group_of(a1), other_group=group_of(b1), editor=editor, reason_code="o", reason="r"
    )
    for sql in (
        "UPDATE reviews_decision SET reason = 'forged' WHERE id = %s",
        "DELETE FROM reviews_decision WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [d.pk])
    assert Decision.objects.get(pk=d.pk).reason == "r"


def test_a_stale_version_is_a_conflict_and_nothing_changes(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    with pytest.raises(decision_records.GroupConflict):
        group_splits.group_split(
            group=group,
            document_ids=[c.pk],
            editor=editor,
            reason_code="other",
            reason="x",
            expected_version=group.version - 1,
        )
    assert _members(group_of(a)) == [a.pk, b.pk, c.pk]


# --- do-not-match honoured forever ------------------------------------------------------


def _crawl() -> bytes:
    text = factories.article_text(4242, words=220)
    pages = [
        (f"https://news{i}.example.com/story", factories.article_html("Story", text + tail))
        for i, tail in enumerate(("", " Updated.", " Share this."))
    ]
    return factories.warc_bytes([(u, h.encode()) for u, h in pages])


def _ingest(data: bytes, committed) -> list[int]:
    with committed():
        ingest_services.batch_ingest(source="crawl", fmt="warc", items=read_warc(io.BytesIO(data)))
    return list(Document.objects.order_by("pk").values_list("pk", flat=True))


def test_reingesting_the_crawl_does_not_regroup_a_split(editor, committed) -> None:
    data = _crawl()
    ids = _ingest(data, committed)
    docs = list(Document.objects.order_by("pk"))
    group = group_of(docs[0])
    assert group is not None and _members(group) == ids
    group_splits.group_split(
        group=group, document_ids=[ids[2]], editor=editor, reason_code="other", reason="apart"
    )
    assert _ingest(data, committed) == ids  # already stored: nothing new
    candidates.candidates_find(document_ids=ids)
    assert group_or_none(docs[2]) is None or group_or_none(docs[2]) != group_or_none(docs[0])
    assert group_of(docs[0]) == group_of(docs[1])


def test_a_distinct_label_keeps_pages_apart_after_reingest(editor, committed) -> None:
    data = _crawl()
    ids = _ingest(data, committed)
    docs = list(Document.objects.order_by("pk"))
    for other in docs[:2]:
        labelling.label_record(
            pair=pair_of(other, docs[2]),
            editor=editor,
            verdict=Label.Verdict.DISTINCT,
            reason_code="different_item",
            reason="another story",
            region="body",
        )
    _ingest(data, committed)
    candidates.candidates_find(document_ids=ids)
    assert group_or_none(docs[2]) is None or group_or_none(docs[2]) != group_or_none(docs[0])


# --- automatic merging -----------------------------------------------------------------


@pytest.fixture
def exact_pair(db):
    a = reviewed_document(url="https://e.example.com/1", text=TEXT)
    b = reviewed_document(url="https://e.example.com/2", text=TEXT)
    find(a, b)
    group = group_of(a)
    assert group is not None and group.kind == "exact"
    return a, b, group


def test_automerge_is_off_by_default(exact_pair) -> None:
    assert automerge.automerge_run() == {"auto_merged": 0, "proposed": 0, "skipped": 0}
    assert not Decision.objects.exists()


def test_auto_mode_accepts_exact_groups_as_a_rule(exact_pair, settings) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    _, _, group = exact_pair
    assert automerge.automerge_run()["auto_merged"] == 1
    d = Decision.objects.get()
    assert d.action == "auto_merge" and d.actor == "rule:automerge-v1" and d.reason_code == "exact"
    assert decision_records.is_accepted(group)
    assert automerge.automerge_run()["auto_merged"] == 0  # idempotent


def test_never_for_short_texts_or_bad_extractions(exact_pair, settings) -> None:
    settings.AUTO_MERGE = {t: "auto" for t in settings.DOC_TYPES}
    a, _, group = exact_pair
    Extraction.objects.filter(document=a).update(status="blocked")
    assert automerge.automerge_run()["auto_merged"] == 0
    Extraction.objects.filter(document=a).update(status="ok")
    Document.objects.filter(pk__in=_members(group)).update(doc_type="short")
    assert automerge.automerge_run()["auto_merged"] == 0


def test_never_against_a_human_decision(exact_pair, settings, editor) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    a, b, group = exact_pair
    DoNotMatch.objects.create(a_id=a.pk, b_id=b.pk, source="label", actor="person:editor")
    assert automerge.automerge_run()["auto_merged"] == 0


def test_near_groups_need_the_auto_threshold_and_no_guard(two_groups, settings) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    settings.AUTO_MERGE_THRESHOLDS = {**settings.AUTO_MERGE_THRESHOLDS, "article": 0}
    assert automerge.automerge_run()["auto_merged"] == 0  # diameter 1 > 0
    settings.AUTO_MERGE_THRESHOLDS = {**settings.AUTO_MERGE_THRESHOLDS, "article": 1}
    assert automerge.automerge_run()["auto_merged"] == 2


def test_semi_mode_waits_for_an_editor(exact_pair, settings, editor) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "semi"}
    _, _, group = exact_pair
    assert automerge.automerge_run()["proposed"] == 1
    assert automerge.automerge_run()["proposed"] == 0  # one proposal per version
    assert not Decision.objects.exists()
    p = MergeProposal.objects.get()
    counts = automerge.proposals_decide(
        proposal_ids=[p.pk], editor=editor, approve=True, reason="checked"
    )
    assert counts["approved"] == 1
    d = Decision.objects.get()
    assert d.action == "auto_merge" and d.actor == "person:editor"
    assert decision_records.is_accepted(group)


def test_a_rejected_proposal_is_not_proposed_again(exact_pair, settings, editor) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "semi"}
    automerge.automerge_run()
    p = MergeProposal.objects.get()
    automerge.proposals_decide(proposal_ids=[p.pk], editor=editor, approve=False, reason="no")
    assert MergeProposal.objects.get().status == "rejected"
    assert automerge.automerge_run()["proposed"] == 0


def test_restoring_an_auto_merge_withdraws_it_for_good(exact_pair, settings, editor) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    _, _, group = exact_pair
    automerge.automerge_run()
    auto = Decision.objects.get()
    group_merges.decision_restore(decision=auto, editor=editor, reason="boilerplate page")
    group.refresh_from_db()
    assert not decision_records.is_accepted(group)
    assert automerge.automerge_run()["auto_merged"] == 0


def _semantic_only(a, b, cosine: float | None) -> None:
    """The pair as if the semantic channel alone had nominated it."""
    x, y = sorted((a.pk, b.pk))
    CandidatePair.objects.filter(a_id=x, b_id=y).update(channels=SEMANTIC, cosine=cosine)


def test_a_group_linked_only_by_the_semantic_channel_is_never_merged_by_the_rule(
    two_groups, settings
) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    settings.AUTO_MERGE_THRESHOLDS = {**settings.AUTO_MERGE_THRESHOLDS, "article": 1}
    a1, a2, b1, _ = two_groups
    _semantic_only(a1, a2, 0.97)
    why, why_not = automerge.auto_eligibility_explained(group_of(a1))
    assert why is None and "only by the semantic channel" in why_not
    assert automerge.automerge_run()["auto_merged"] == 1  # group B only
    assert Decision.objects.get().group == group_of(b1)
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "semi"}
    assert automerge.automerge_run()["proposed"] == 0  # not proposed either


def test_a_doc_type_whose_policy_names_the_semantic_channel_merges_on_the_cosine(
    two_groups, settings
) -> None:
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    settings.AUTO_MERGE_THRESHOLDS = {**settings.AUTO_MERGE_THRESHOLDS, "article": 1}
    settings.SEMANTIC_AUTO_MERGE = ["article"]
    settings.SEMANTIC_THRESHOLDS = {**settings.SEMANTIC_THRESHOLDS, "article": 0.9}
    a1, a2, _, _ = two_groups
    _semantic_only(a1, a2, 0.85)
    why, why_not = automerge.auto_eligibility_explained(group_of(a1))
    assert why is None and "cosine is under 0.9" in why_not
    _semantic_only(a1, a2, 0.93)
    assert automerge.automerge_run()["auto_merged"] == 2
    d = Decision.objects.get(group=group_of(a1))
    assert d.reason_code == "semantic" and "lowest semantic cosine 0.93" in d.reason


def test_members_a_person_put_together_are_not_held_to_the_semantic_rule(
    two_groups, settings, editor
) -> None:
    """A merge by a person joins documents without a pair between them: no semantic-only
    link is involved, so the semantic rule does not refuse the group."""
    settings.AUTO_MERGE = {**settings.AUTO_MERGE, "article": "auto"}
    a1, a2, b1, b2 = two_groups
    group_merges.group_merge(
        group=group_of(a1),
        other_group=group_of(b1),
        editor=editor,
        reason_code="same_item",
        reason="same story",
    )
    group = group_of(a1)
    assert group == group_of(b2)
    _, why_not = automerge.auto_eligibility_explained(group)
    assert why_not and "semantic" not in why_not


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks: PostgreSQL")
@pytest.mark.django_db(transaction=True)  # the fixture's grouping commits: its lock is free
@pytest.mark.parametrize("action", ["merge", "split"])
def test_a_persons_merge_or_split_waits_for_the_grouping_of_its_method(
    two_groups, editor, action: str
) -> None:
    """One group per method and document has no unique index (ingest 0030): a person's
    change of memberships holds the method's grouping lock, as the grouping does, so it
    waits while a grouping update of the same method runs."""
    a1, _a2, b1, _b2 = two_groups
    ga, gb = group_of(a1), group_of(b1)
    settings = connection.settings_dict
    other = psycopg.connect(
        dbname=settings["NAME"],
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        user=settings["USER"],
        autocommit=True,
    )
    try:
        (held,) = other.execute(
            "SELECT pg_try_advisory_lock(%s, %s)", [GROUPING_LOCK, ga.method_id]
        ).fetchone() or (False,)
        assert held, "the grouping lock is taken by another session"
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '300ms'")
        with pytest.raises(OperationalError, match="lock timeout"):
            if action == "merge":
                group_merges.group_merge(
                    group=ga, other_group=gb, editor=editor, reason_code="other", reason="x"
                )
            else:
                group_splits.group_split(
                    group=ga, document_ids=[a1.pk], editor=editor, reason_code="other", reason="x"
                )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
        other.close()
    assert group_of(a1) == ga and group_of(b1) == gb
