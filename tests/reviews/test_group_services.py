"""Splits and representatives are decisions on the record; workers
honour them."""

import pytest

from ingest import candidates
from ingest.models import DoNotMatch, GroupMember
from reviews import rules
from reviews.decisions import group_reads, group_splits
from reviews.labels import labelling
from reviews.models import AppendOnlyError, Decision
from reviews.queue import group_queue
from reviews.queue.queue_filters import QueueFilters
from tests.factories import group_of, reviewed_document

pytestmark = pytest.mark.django_db


def _group_id(doc) -> int | None:
    """The document's candidate group (None: in no group)."""
    return GroupMember.objects.filter(document=doc).values_list("group_id", flat=True).first()


def test_the_chain_fixture_is_one_chained_group(chain) -> None:
    a, b, c = chain
    group = group_of(a)
    assert group and group == group_of(b) == group_of(c)
    assert group.chained and group.diameter == 4


def test_split_moves_members_and_writes_decision_and_do_not_match(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    version = group.version
    decision = group_splits.group_split(
        group=group,
        document_ids=[b.pk, c.pk],
        editor=editor,
        reason_code="different_item",
        reason="b and c are another story",
    )
    group.refresh_from_db()
    new = decision.new_group
    assert new is not None and group_of(b) == group_of(c) == new
    assert group.dissolved  # a is alone: no group of one
    assert GroupMember.objects.filter(document=a).count() == 0
    assert decision.action == "split" and decision.actor == "person:editor"
    assert decision.document_ids == [b.pk, c.pk]
    assert decision.membership_before["members"] == [a.pk, b.pk, c.pk]
    assert decision.membership_after["new_group"]["members"] == [b.pk, c.pk]
    assert decision.method_key == group.method.key
    assert decision.distance == 2  # the a–b link it cut (a–c were never paired)
    assert decision.group_version == group.version == version + 1
    pairs = set(DoNotMatch.objects.values_list("a_id", "b_id", "source"))
    assert pairs == {(a.pk, b.pk, "split"), (a.pk, c.pk, "split")}


def test_workers_never_regroup_what_a_split_separated(chain, editor) -> None:
    a, b, c = chain
    group_splits.group_split(
        group=group_of(a),
        document_ids=[a.pk],
        editor=editor,
        reason_code="different_item",
        reason="a is another story",
    )
    candidates.groups_update(method=group_of(b).method, document_ids=[a.pk, b.pk, c.pk])
    assert _group_id(a) is None or _group_id(a) != _group_id(b)
    assert group_of(b) == group_of(c)


def test_detach_makes_singletons_kept_apart_from_each_other(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    decision = group_splits.group_split(
        group=group,
        document_ids=[b.pk, c.pk],
        editor=editor,
        detach=True,
        reason_code="other",
        reason="none of these belong together",
    )
    assert decision.action == "detach" and decision.new_group is None
    assert _group_id(b) is None and _group_id(c) is None
    assert DoNotMatch.objects.filter(a=b, b=c).exists()


def test_a_split_must_leave_someone_behind(chain, editor) -> None:
    a, b, c = chain
    with pytest.raises(rules.ReviewError):
        group_splits.group_split(
            group=group_of(a),
            document_ids=[a.pk, b.pk, c.pk],
            editor=editor,
            reason_code="other",
            reason="all",
        )


def test_a_chosen_representative_is_locked_and_recorded(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    decision = group_splits.group_representative_set(
        group=group,
        document_id=c.pk,
        editor=editor,
        reason_code="editorial",
        reason="the complete version",
    )
    group.refresh_from_db()
    assert group.representative_id == c.pk and group.representative_locked
    assert group.representative_by == "person:editor"
    assert decision.action == "set_representative" and decision.document_ids == [c.pk]
    assert decision.group_version == group.version
    # The workers keep it.
    candidates.groups_update(method=group.method, document_ids=[a.pk])
    group.refresh_from_db()
    assert group.representative_id == c.pk and group.representative_locked


def test_the_representative_must_be_a_member(chain, editor) -> None:
    a, _, _ = chain
    outsider = reviewed_document(url="https://x.example.com/", text="other", base=0)
    with pytest.raises(rules.ReviewError):
        group_splits.group_representative_set(
            group=group_of(a),
            document_id=outsider.pk,
            editor=editor,
            reason_code="editorial",
            reason="x",
        )


def test_decisions_are_append_only(chain, editor) -> None:
    a, _, c = chain
    decision = group_splits.group_representative_set(
        group=group_of(a), document_id=c.pk, editor=editor, reason_code="newest", reason="x"
    )
    with pytest.raises(AppendOnlyError):
        decision.save()
    with pytest.raises(AppendOnlyError):
        decision.delete()
    with pytest.raises(AppendOnlyError):
        Decision.objects.all().delete()


def test_a_distinct_label_suggests_the_minimum_cut(chain, editor) -> None:
    a, b, c = chain
    group = group_of(a)
    pair = group.method.candidatepair_set.get(a_id=a.pk, b_id=b.pk)
    labelling.label_record(
        pair=pair,
        editor=editor,
        verdict="distinct",
        reason_code="different_item",
        reason="different stories",
        region="body",
    )
    view = group_reads.group_view(group=group)
    assert len(view.conflicts) == 1
    conflict = view.conflicts[0]
    assert (conflict.a, conflict.b) == (a.pk, b.pk)
    # a–b and b–c are paired (a–c are 4 bits apart): cutting a–b alone separates them.
    assert conflict.cut == [(a.pk, b.pk)]
    assert a.pk not in conflict.move and b.pk in conflict.move
    # Applying it separates them.
    group_splits.group_split(
        group=group,
        document_ids=conflict.move,
        editor=editor,
        reason_code="distinct_label",
        reason="apply the cut",
    )
    assert _group_id(a) != _group_id(b)
    assert not any(
        c.a == a.pk and c.b == b.pk
        for g in {group_of(x) for x in (a, b) if _group_id(x) is not None}
        for c in group_reads.group_view(group=g).conflicts
    )


def test_a_group_needing_review_leaves_the_queue_after_a_decision(chain, editor) -> None:
    a, _, c = chain
    group = group_of(a)
    assert list(group_queue.queue_groups(filters=QueueFilters())) == [group]
    group_splits.group_representative_set(
        group=group, document_id=c.pk, editor=editor, reason_code="newest", reason="x"
    )
    assert not group_queue.queue_groups(filters=QueueFilters()).exists()
    assert list(group_queue.queue_groups(filters=QueueFilters(status="labeled"))) == [group]
