"""A real `ingest` process killed with SIGKILL: its batch must not stay `running`."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection

from ingest import services
from ingest.models import CrawlBatch, Document
from tests import broken_archives

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_sigkilled_ingest_is_marked_failed_by_the_next_one(tmp_path: Path, settings) -> None:
    path = tmp_path / "big.warc.gz"
    path.write_bytes(
        b"".join(
            broken_archives.warc_record(f"https://kill.example.com/{i}", broken_archives.page(i))
            for i in range(2000)
        )
    )
    db_url = urlsplit(settings.DATABASE_URL)
    env = {
        **os.environ,
        "DATABASE_URL": urlunsplit(db_url._replace(path="/" + connection.settings_dict["NAME"])),
        "INGEST_CHUNK_SIZE": "10",
    }
    env.pop("CELERY_BROKER_URL", None)  # tasks run inline: slow enough to be caught
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "ingest", str(path), "--no-progress"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not CrawlBatch.objects.filter(source=str(path), stored__gt=0).exists():
            assert proc.poll() is None, "the ingest ended before it could be killed"
            assert time.monotonic() < deadline, "the ingest stored nothing in 120 s"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    batch = CrawlBatch.objects.get(source=str(path))
    assert batch.status == CrawlBatch.Status.RUNNING  # nobody could say otherwise
    kept = Document.objects.filter(batch=batch).count()
    assert 0 < kept < 2000

    settings.INGEST_STALE_MINUTES = 0
    services.batch_ingest(source="next", fmt="warc", items=iter(()))

    batch.refresh_from_db()
    assert batch.status == CrawlBatch.Status.FAILED
    assert batch.error_count >= 1
    assert batch.errors.filter(kind="interrupted").exists()
    assert Document.objects.filter(batch=batch).count() == kept
