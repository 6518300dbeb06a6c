"""An existing database moves to the mixed-script method by the recorded switch: until
then it keeps its method (and its passage sets); the switch's candidates run indexes
every document under the new method and its passages, and finds the Chinese repost the
reference method could not see."""

import io

import pytest
from django.core.management import call_command

from ingest import candidates, passages, services
from ingest.core.methods import CURRENT_REFERENCE_KEY, DEFAULT_KEY
from ingest.core.readers import read_warc
from ingest.models import CandidatePair, Document, FingerprintMethod, MethodSwitch, PassageSet
from reviews.operations import method_upgrades
from tests import factories
from tests.ingest.test_chinese_repost import MENU, ORIGINAL, ORIGINAL_URL, REPOST_URL, WHEN
from tests.ingest.test_chinese_repost import _html as html
from tests.ingest.test_chinese_repost import _repost as repost

pytestmark = pytest.mark.django_db


def _pair(method: str) -> CandidatePair | None:
    a, b = sorted(Document.objects.filter(url__in=[ORIGINAL_URL, REPOST_URL]).values_list("pk"))
    return CandidatePair.objects.filter(method__key=method, a_id=a[0], b_id=b[0]).first()


def test_a_reference_database_moves_to_the_mixed_method_by_a_recorded_switch(
    committed, settings
) -> None:
    # A database made before the mixed-script default: the reference method is active.
    settings.ACTIVE_METHOD = CURRENT_REFERENCE_KEY
    settings.CANDIDATE_METHODS = [CURRENT_REFERENCE_KEY]
    title, body = repost("traditional")
    data = factories.warc_bytes(
        [(ORIGINAL_URL, ORIGINAL), (REPOST_URL, html(title, body, MENU))], date=WHEN
    )
    with committed():
        services.batch_ingest(source="zh", fmt="warc", items=read_warc(io.BytesIO(data)))
    assert _pair(CURRENT_REFERENCE_KEY) is None  # one "word" per clause: nothing shared
    assert set(PassageSet.objects.values_list("method", flat=True)) == {passages.METHOD_ID}

    # The new code's default does not move it: only a recorded switch does.
    settings.ACTIVE_METHOD = DEFAULT_KEY
    settings.CANDIDATE_METHODS = [DEFAULT_KEY]
    assert candidates.active_method_key() == CURRENT_REFERENCE_KEY

    call_command("refingerprint", "--method", DEFAULT_KEY, "--no-progress")
    with committed():  # the switch's candidates run is enqueued on commit
        record = method_upgrades.method_switch(key=DEFAULT_KEY, actor="person:admin", reason="zh")
    new = FingerprintMethod.objects.get(key=DEFAULT_KEY)
    assert record.from_method is not None
    assert (record.from_method.key, record.to_method, record.action) == (
        CURRENT_REFERENCE_KEY,
        new,
        MethodSwitch.Action.SWITCH,
    )
    assert candidates.active_method_key() == DEFAULT_KEY
    # Every document's passages are indexed under the mixed passage method, beside the old.
    assert PassageSet.objects.filter(method=passages.MIXED_METHOD_ID).count() == 2
    assert PassageSet.objects.filter(method=passages.METHOD_ID).count() == 2
    assert _pair(DEFAULT_KEY) is not None
