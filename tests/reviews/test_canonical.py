"""The deduplicated output is a view: one record per group and per singleton, with
provenance and the decision that made it; streamed by a command and by the API."""

import csv
import io
import json
from typing import Any

import pytest
from django.core.management import call_command

from ingest.models import Document
from reviews.decisions import canonical, group_merges
from tests import factories
from tests.factories import group_of, reviewed_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(two_groups, editor):
    a1, a2, b1, b2 = two_groups
    loner = reviewed_document(url="https://c.example.com/alone", text="alone", base=0)
    merge = group_merges.group_merge(
        group=group_of(a1), document_ids=[loner.pk], editor=editor, reason_code="other", reason="x"
    )
    return a1, a2, b1, b2, loner, merge


def test_one_record_per_group_and_singleton_with_provenance(corpus) -> None:
    a1, a2, b1, b2, loner, merge = corpus
    extra = reviewed_document(url="https://d.example.com/", text="single", base=0xF0F0)
    records: dict[object, Any] = {r["id"]: r for r in canonical.canonical_records()}
    ga, gb = group_of(a1), group_of(b1)
    assert set(records) == {f"group:{ga.pk}", f"group:{gb.pk}", f"document:{extra.pk}"}
    rec = records[f"group:{ga.pk}"]
    assert [m["document_id"] for m in rec["members"]] == sorted([a1.pk, a2.pk, loner.pk])
    assert "https://c.example.com/alone" in [m["url"] for m in rec["members"]]
    assert rec["made_by"] == {"decision_id": merge.pk, "action": "merge", "actor": "person:editor"}
    assert rec["accepted"] is True
    assert records[f"group:{gb.pk}"]["made_by"]["rule"].startswith("rule:")
    assert records[f"group:{gb.pk}"]["accepted"] is False
    assert Document.objects.count() == 6  # a view: nothing deleted


def test_accepted_only_leaves_undecided_groups_as_singletons(corpus) -> None:
    _, _, b1, b2, _, _ = corpus
    ids = {r["id"] for r in canonical.canonical_records(accepted_only=True)}
    assert {f"document:{b1.pk}", f"document:{b2.pk}"} <= ids


def test_export_canonical_command_jsonl_and_csv(corpus) -> None:
    out = io.StringIO()
    call_command("export_canonical", stdout=out)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert len(lines) == 2 and all("members" in r for r in lines)
    out = io.StringIO()
    call_command("export_canonical", "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 2 and rows[0]["member_ids"]


def test_the_api_streams_and_pages_with_a_token(client, corpus) -> None:
    assert client.get("/api/v1/canonical").status_code == 401
    token = factories.api_token_create(user=factories.user_create(username="a", role="auditor"))
    auth = {"Authorization": f"Bearer {token}"}
    r = client.get("/api/v1/canonical", headers=auth)
    assert r.status_code == 200 and r.streaming
    records = [json.loads(x) for x in b"".join(r.streaming_content).splitlines()]
    assert len(records) == 2
    r = client.get("/api/v1/canonical", {"limit": 1}, headers=auth)
    first = [json.loads(x) for x in b"".join(r.streaming_content).splitlines()]
    r = client.get("/api/v1/canonical", {"after": first[-1]["id"]}, headers=auth)
    rest = [json.loads(x) for x in b"".join(r.streaming_content).splitlines()]
    assert [x["id"] for x in first + rest] == [x["id"] for x in records]
