"""Method upgrade on a populated database: register, refingerprint (resumable), compare,
switch, retire — without ever mixing the distances of two methods."""

import io
from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from ingest import candidates, services
from ingest.core.extract import EXTRACTOR_VERSION
from ingest.core.methods import (
    CURRENT_REFERENCE_KEY,
    DEFAULT_KEY,
    EXTRACTOR,
    EXTRACTOR_V1,
    REFERENCE_KEY,
    fingerprint_texts,
    method_key,
)
from ingest.core.readers import read_warc
from ingest.core.simhash import hamming, to_signed64, to_unsigned64
from ingest.models import (
    CandidatePair,
    Document,
    Extraction,
    Fingerprint,
    FingerprintMethod,
    GroupMember,
    IndexEntry,
    MethodSwitch,
    RefingerprintRun,
)
from reviews.models import Label
from reviews.operations import method_upgrades
from reviews.queue import pair_queue
from reviews.queue.queue_filters import QueueFilters
from tests import factories

ACTIVE = DEFAULT_KEY
NEW = method_key("simhash64-words-nfkc-sha256-v1")
WHEN = datetime(2026, 5, 1, 12, tzinfo=UTC)


def variant(text: str, n: int) -> str:
    words = text.split()
    for i in range(n):
        words[7 * i + 3] = "zephyr"
    return " ".join(words)


def ingest(committed, pages: list[tuple[str, str]], when: datetime = WHEN) -> None:
    data = factories.warc_bytes(
        [(url, factories.article_html("T", body).encode()) for url, body in pages], date=when
    )
    with committed():
        services.batch_ingest(source="t", fmt="warc", items=read_warc(io.BytesIO(data)))


@pytest.fixture
def corpus(db, committed):
    """Twelve families: an original, a light edit and a full-width/ligature copy (NFKC
    folds it back, NFC does not), plus unrelated pages."""
    pages = []
    for i in range(12):
        text = factories.article_text(500 + i, words=160)
        fancy = text.replace("fjord", "ﬁord").replace("1", "１")
        pages += [
            (f"https://a.example/{i}", text),
            (f"https://b.example/{i}", variant(text, 1)),
            (f"https://c.example/{i}", fancy + " Ｎｏｗ ｉｎ ｆｕｌｌ ｗｉｄｔｈ ２０２６"),
        ]
    ingest(committed, pages)
    return pages


def pair_rows() -> set[tuple]:
    return set(
        CandidatePair.objects.values_list("id", "method_id", "a_id", "b_id", "distance", "band")
    )


def assert_distances_are_own_methods() -> None:
    prints = {
        (d, m): to_unsigned64(v)
        for d, m, v in Fingerprint.objects.filter(simhash__isnull=False).values_list(
            "document_id", "method_id", "simhash"
        )
        if v is not None
    }
    for pk, method_id, a, b, distance, _band in pair_rows():
        va, vb = prints[(a, method_id)], prints[(b, method_id)]
        assert distance == hamming(va, vb), pk
    for member_method, group_method in GroupMember.objects.values_list(
        "method_id", "group__method_id"
    ):
        assert member_method == group_method


def expected_prints(method: FingerprintMethod) -> set[tuple]:
    """What an uninterrupted computation gives, from the core directly."""
    out = set()
    for e in Extraction.objects.filter(extractor_version=EXTRACTOR_VERSION):
        for branch, text in (("main", e.main_text), ("full", e.full_text)):
            r = fingerprint_texts([method.key], text, min_tokens=3)[method.key]
            ok = r.status == "ok" and (branch == "full" or e.status == "ok")
            value = to_signed64(r.simhash) if ok and r.simhash is not None else None
            # The full page's digest is not stored (ingest 0035).
            out.add((e.document_id, branch, value, r.text_sha256 if branch == "main" else None))
    return out


def stored_prints(method: FingerprintMethod) -> set[tuple]:
    return {
        (f.document_id, b.branch, b.simhash, b.text_sha256)
        for f in Fingerprint.objects.filter(method=method)
        for b in f.branches()
    }


def label(pair: CandidatePair, editor, verdict: str) -> Label:
    return Label.objects.create(
        pair=pair,
        editor=editor,
        verdict=verdict,
        reason_code="same_text",
        reason="r",
        region="body",
        method_key=pair.method.key,
        extractor_version=EXTRACTOR_VERSION,
    )


@pytest.mark.django_db
def test_upgrade_without_mixing_distances(corpus, editor, committed) -> None:
    old = FingerprintMethod.objects.get(key=ACTIVE)
    assert old.is_active
    new = method_upgrades.method_register(key=NEW)
    assert not Fingerprint.objects.filter(method=new).exists()
    old_pairs = pair_rows()
    assert old_pairs and {m for _, m, *_ in old_pairs} == {old.pk}
    for p in CandidatePair.objects.all()[:6]:
        label(p, editor, "duplicate")

    # A switch before the method is computed is refused.
    with pytest.raises(method_upgrades.UpgradeError, match="compute the method first"):
        method_upgrades.method_switch(key=NEW, actor="person:admin", reason="nfkc")

    # Interrupted after one chunk, then resumed: same result as uninterrupted.
    run = method_upgrades.run_start(key=NEW, enqueue=False)
    run = method_upgrades.run_step(run_id=run.pk, chunk=5)
    assert (run.done, run.status) == (5, "running")
    assert Fingerprint.objects.filter(method=new).values("document_id").distinct().count() == 5
    resumed = method_upgrades.run_start(key=NEW, enqueue=False)
    assert resumed.pk == run.pk and resumed.last_document_id == run.last_document_id
    while resumed.status == "running":
        resumed = method_upgrades.run_step(run_id=run.pk, chunk=7)
    assert resumed.done == resumed.total == Document.objects.count()
    assert stored_prints(new) == expected_prints(new)
    # Computing a method makes no pair: candidates still come from the active one.
    assert pair_rows() == old_pairs

    comparison = {c.key: c for c in method_upgrades.methods_compare(keys=[ACTIVE, NEW])}
    assert comparison[ACTIVE].pairs == comparison[NEW].pairs == 6
    assert comparison[NEW].reports and comparison[NEW].reports[0].method == NEW  # type: ignore[attr-defined]

    with committed():  # the candidates run is enqueued on commit
        record = method_upgrades.method_switch(
            key=NEW, actor="person:admin", reason="full-width copies"
        )
    assert (record.from_method, record.to_method, record.action) == (old, new, "switch")
    assert list(FingerprintMethod.objects.filter(is_active=True)) == [new]
    assert candidates.active_method_key() == NEW
    # The candidates run (eager here) searched every document under the new method.
    run = RefingerprintRun.objects.get(method=new, kind="candidates")
    assert run.status == "done" and run.done == Document.objects.count()
    assert (
        IndexEntry.objects.filter(method=new.pk).count()
        == Fingerprint.objects.filter(method=new, simhash__isnull=False).count()
    )
    new_pairs = pair_rows() - old_pairs
    assert new_pairs and {m for _, m, *_ in new_pairs} == {new.pk}
    assert {r for r in pair_rows() if r[1] == old.pk} == old_pairs  # untouched
    assert_distances_are_own_methods()


@pytest.mark.django_db
def test_new_documents_after_a_switch_use_the_new_method(corpus, committed) -> None:
    call_command("refingerprint", "--method", NEW, "--no-progress")
    with committed():
        method_upgrades.method_switch(key=NEW, actor="person:admin", reason="nfkc")
    new = FingerprintMethod.objects.get(key=NEW)
    text = factories.article_text(500, words=160)
    ingest(committed, [("https://d.example/late", text)])
    late = Document.objects.get(url="https://d.example/late")
    assert Fingerprint.objects.filter(document=late, method=new).count() == 1
    assert CandidatePair.objects.filter(method=new).filter(b=late).exists()
    assert not CandidatePair.objects.exclude(method=new).filter(b=late).exists()
    assert_distances_are_own_methods()


@pytest.mark.django_db
def test_ingest_computes_the_searched_methods_and_those_being_compared(
    corpus, committed, settings
) -> None:
    # By default a new document gets the active method only: every other one costs CPU.
    assert set(Fingerprint.objects.values_list("method__key", flat=True)) == {ACTIVE}
    shingle = method_key("simhash64-shingle3-sha256-v1")
    settings.CANDIDATE_METHODS = [ACTIVE, shingle]
    assert services.fingerprint_method_keys() == [ACTIVE, shingle]
    settings.CANDIDATE_METHODS = [ACTIVE]
    # Comparing a method starts its run: from then on new documents get it too.
    call_command("refingerprint", "--method", NEW, "--no-progress")
    assert services.fingerprint_method_keys() == [ACTIVE, NEW]
    ingest(committed, [("https://d.example/new", factories.article_text(900, words=160))])
    late = Document.objects.get(url="https://d.example/new")
    prints = late.fingerprints.select_related("method")
    assert {(f.method.key, f.status, f.full_status) for f in prints} == {
        (key, "ok", "ok") for key in (ACTIVE, NEW)
    }


@pytest.mark.django_db
def test_retire_keeps_every_row_and_leaves_the_queue(corpus, editor) -> None:
    call_command("refingerprint", "--method", NEW, "--no-progress")
    method_upgrades.method_switch(key=NEW, actor="person:admin", reason="nfkc")
    old = FingerprintMethod.objects.get(key=ACTIVE)
    with pytest.raises(method_upgrades.UpgradeError, match="active"):
        method_upgrades.method_retire(key=NEW, actor="person:admin", reason="x")
    before = (
        Fingerprint.objects.filter(method=old).count(),
        CandidatePair.objects.filter(method=old).count(),
    )
    record = method_upgrades.method_retire(key=ACTIVE, actor="person:admin", reason="replaced")
    assert record.action == MethodSwitch.Action.RETIRE
    old.refresh_from_db()
    assert old.retired_at is not None
    assert before == (
        Fingerprint.objects.filter(method=old).count(),
        CandidatePair.objects.filter(method=old).count(),
    )
    queued = pair_queue.queue_pairs(filters=QueueFilters(status="all"))
    assert not queued.filter(method=old).exists()
    assert ACTIVE not in services.fingerprint_method_keys()


@pytest.mark.django_db
def test_refingerprint_command_resumes_a_run(corpus, capsys) -> None:
    new = method_upgrades.method_register(key=NEW)
    run = method_upgrades.run_start(key=NEW, enqueue=False)
    method_upgrades.run_step(run_id=run.pk, chunk=4)
    call_command("refingerprint", "--method", NEW, "--no-progress", "--chunk", "10")
    out = capsys.readouterr().out
    assert "resuming run" in out and "0 of 36 documents lack" in out
    assert RefingerprintRun.objects.get(pk=run.pk).status == "done"
    assert stored_prints(new) == expected_prints(new)


@pytest.mark.django_db
def test_a_method_needing_an_unknown_extractor_is_refused(monkeypatch) -> None:
    from dataclasses import replace

    from ingest.core import methods

    spec = replace(methods.METHODS[NEW], key="x-other-extractor", extractor_version="other-v9")
    monkeypatch.setitem(methods.METHODS, spec.key, spec)
    with pytest.raises(method_upgrades.UpgradeError, match="does not have"):
        method_upgrades.method_register(key=spec.key)
    with pytest.raises(method_upgrades.UpgradeError, match="unknown"):
        method_upgrades.method_register(key="no-such-method")


# --- stale labels after a re-crawl -------------------------------------------------------


@pytest.mark.django_db
def test_a_label_goes_stale_when_a_recrawl_changes_a_side(corpus, editor, committed) -> None:
    pair = CandidatePair.objects.select_related("a", "b").order_by("id").first()
    assert pair is not None
    label(pair, editor, "duplicate")

    def status() -> bool:
        return pair_queue.queue_pairs(filters=QueueFilters(status="all")).get(id=pair.id).is_stale  # type: ignore[attr-defined]

    assert not status()
    bodies = dict(corpus)
    # Re-crawl of a's URL, same text: still current.
    later = datetime(2026, 5, 8, 12, tzinfo=UTC)
    ingest(committed, [(pair.a.url, bodies[pair.a.url])], when=later)
    assert Document.objects.filter(url=pair.a.url).count() == 2
    assert not status()
    # Re-crawl of b's URL with other text: stale, back in the default queue.
    ingest(committed, [(pair.b.url, factories.article_text(9999, words=160))], when=later)
    assert status()
    default = pair_queue.queue_pairs(filters=QueueFilters())
    assert default.filter(id=pair.id).exists()
    stale = pair_queue.queue_pairs(filters=QueueFilters(status="stale"))
    assert list(stale.values_list("id", flat=True)) == [pair.id]


# --- pages --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_methods_page_compute_and_switch(client, corpus, committed) -> None:
    admin = factories.user_create(username="boss", role="admin")
    auditor = factories.user_create(username="aud", role="auditor")
    client.force_login(auditor)
    r = client.get("/review/methods/")
    assert r.status_code == 200 and NEW.encode() in r.content
    assert b"Switch to it" not in r.content
    assert client.post("/review/methods/compute", {"method": NEW}).status_code == 403
    client.force_login(admin)
    r = client.post("/review/methods/switch", {"method": NEW, "reason": "nfkc"}, follow=True)
    assert b"compute the method first" in r.content
    with committed():  # the run is enqueued on commit (and runs eagerly here)
        r = client.post("/review/methods/compute", {"method": NEW}, follow=True)
    assert r.status_code == 200
    assert RefingerprintRun.objects.get(method__key=NEW).status == "done"  # eager
    with committed():
        r = client.post("/review/methods/switch", {"method": NEW, "reason": "nfkc"}, follow=True)
    assert FingerprintMethod.objects.get(key=NEW).is_active
    assert b"person:boss" in r.content
    part = client.get("/review/methods/?part=method-runs", headers={"HX-Request": "true"})
    assert b"<html" not in part.content and b'id="method-runs"' in part.content
    assert b"<progress" in part.content


@pytest.mark.django_db
def test_running_runs_are_polled(client, corpus) -> None:
    method_upgrades.run_start(key=NEW, enqueue=False)
    client.force_login(factories.user_create(username="boss", role="admin"))
    r = client.get("/review/methods/")
    assert b'hx-trigger="every 2s"' in r.content


@pytest.mark.django_db
def test_a_new_extractor_moves_a_database_over_and_the_old_prints_stay(
    db, committed, settings
) -> None:
    # A database made before the current extractor: the first one's reference method.
    settings.ACTIVE_METHOD = REFERENCE_KEY
    settings.CANDIDATE_METHODS = [REFERENCE_KEY]
    settings.FINGERPRINT_METHODS = [REFERENCE_KEY]
    pages = [
        (f"https://e.example/{i}", factories.article_text(700 + i, words=160)) for i in range(4)
    ]
    pages.append(("https://f.example/0", variant(pages[0][1], 1)))
    ingest(committed, pages)
    old = FingerprintMethod.objects.get(key=REFERENCE_KEY)
    assert old.is_active
    assert set(Extraction.objects.values_list("extractor_version", flat=True)) == {EXTRACTOR_V1}
    old_prints = stored_prints(old)
    old_pairs = pair_rows()
    assert old_pairs

    # The new code's defaults: the current extractor's methods, computed beside the old.
    settings.ACTIVE_METHOD = CURRENT_REFERENCE_KEY
    settings.CANDIDATE_METHODS = [CURRENT_REFERENCE_KEY]
    settings.FINGERPRINT_METHODS = [CURRENT_REFERENCE_KEY]
    assert candidates.active_method_key() == REFERENCE_KEY  # no switch without a record
    ingest(committed, [("https://g.example/late", factories.article_text(800, words=160))])
    late = Document.objects.get(url="https://g.example/late")
    assert set(late.extractions.values_list("extractor_version", flat=True)) == {
        EXTRACTOR_V1,
        EXTRACTOR,
    }

    call_command("refingerprint", "--method", CURRENT_REFERENCE_KEY, "--no-progress")
    new = FingerprintMethod.objects.get(key=CURRENT_REFERENCE_KEY)
    assert (
        Extraction.objects.filter(extractor_version=EXTRACTOR).count() == Document.objects.count()
    )
    assert method_upgrades.coverage(method=new)["missing"] == 0
    assert stored_prints(new) == expected_prints(new)
    with committed():
        method_upgrades.method_switch(key=CURRENT_REFERENCE_KEY, actor="person:admin", reason="v2")
    method_upgrades.method_retire(key=REFERENCE_KEY, actor="person:admin", reason="v2 extractor")

    # The old extractor's rows all stay; new documents get only the current extractor.
    assert old_prints <= stored_prints(old)
    assert {r for r in pair_rows() if r[1] == old.pk} == old_pairs
    assert Extraction.objects.filter(extractor_version=EXTRACTOR_V1).count() == 6
    ingest(committed, [("https://h.example/new", factories.article_text(900, words=160))])
    newest = Document.objects.get(url="https://h.example/new")
    assert list(newest.extractions.values_list("extractor_version", flat=True)) == [EXTRACTOR]
    assert Fingerprint.objects.filter(document=newest, method=new).count() == 1
    assert not Fingerprint.objects.filter(document=newest, method=old).exists()
    assert_distances_are_own_methods()
