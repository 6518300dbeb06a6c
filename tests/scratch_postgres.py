"""Tests that run a script or `manage.py` against a scratch PostgreSQL database of their
own (the scale bench, a migration on loaded rows)."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def scratch_postgres() -> tuple[str, dict[str, str], str]:
    """(DATABASE_URL, a subprocess's environment, the admin database's URL); the test is
    skipped without PostgreSQL."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        pytest.skip("needs PostgreSQL (DATABASE_URL)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DEBUG": "1"}
    env.pop("CELERY_BROKER_URL", None)
    return url, env, url.rsplit("/", 1)[0] + "/postgres"
