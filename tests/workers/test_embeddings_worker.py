"""Real workers: the embeddings go through their own queue (settings.EMBEDDING_QUEUE),
and a worker consuming it embeds ingested pages and nominates a rewritten copy."""

import io

import pytest

from ingest import services
from ingest.core import channels
from ingest.core.readers import read_warc
from ingest.models import CandidatePair, Document, Embedding
from tests import factories
from tests.conftest import SEMANTIC_MODEL
from tests.factories import wait_until
from tests.ingest.test_semantic import OTHER_STORY, REWRITTEN, STORY

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.semantic]

WORKER_ENV = {"EMBEDDING_MODEL": SEMANTIC_MODEL, "HF_HUB_OFFLINE": "1"}


def _ingest() -> dict[str, int]:
    pages = [
        (f"https://{host}.example.com/council", factories.article_html(title, text).encode())
        for host, title, text in [
            ("first", "New bridge", STORY),
            ("second", "Bridge approved", REWRITTEN),
            ("third", "Parking fees", OTHER_STORY),
        ]
    ]
    items = read_warc(io.BytesIO(factories.warc_bytes(pages)))
    services.batch_ingest(source="semantic", fmt="warc", items=items)
    return {d.url.split("//")[1].split(".")[0]: d.pk for d in Document.objects.all()}


def test_an_embedding_worker_nominates_the_rewritten_copy(worker_factory, settings) -> None:
    settings.EMBEDDING_MODEL = SEMANTIC_MODEL  # the ingesting process hands on the work
    pipeline = worker_factory(extra_args=["-Q", "dedup"], env=WORKER_ENV)
    embedder = worker_factory(extra_args=["-Q", settings.EMBEDDING_QUEUE], env=WORKER_ENV)
    pipeline.start()
    embedder.start()
    ids = _ingest()
    wait_until(
        lambda: Embedding.objects.filter(status="covered").count() == 3,
        180,
        "three embeddings from the embedding worker",
    )
    lo, hi = sorted((ids["first"], ids["second"]))
    wait_until(
        lambda: CandidatePair.objects.filter(a_id=lo, b_id=hi, channels__gte=8).exists(),
        60,
        "the rewritten copy nominated by the semantic channel",
    )
    pair = CandidatePair.objects.get(a_id=lo, b_id=hi)
    assert pair.channels & channels.SEMANTIC and pair.cosine is not None
    assert pair.cosine >= settings.SEMANTIC_THRESHOLDS["article"]
    third = ids["third"]
    semantic_pairs = CandidatePair.objects.filter(channels__gte=channels.SEMANTIC)
    assert not semantic_pairs.filter(a_id=third).exists()
    assert not semantic_pairs.filter(b_id=third).exists()
    ran = "Task ingest.tasks.embeddings_compute["
    assert ran in embedder.log.read_text(errors="replace")
    assert ran not in pipeline.log.read_text(errors="replace")
