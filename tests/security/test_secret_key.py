"""With DEBUG off the settings refuse to load without SECRET_KEY."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"


def _run(**env: str) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        # outside a test run, with none of the caller's settings
        if k not in {"SECRET_KEY", "DEBUG", "PYTEST_VERSION"}
    }
    return subprocess.run(
        [sys.executable, "-c", SNIPPET],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, "DJANGO_SETTINGS_MODULE": "dedup_site.settings", **env},
    )


def test_debug_off_without_a_secret_key_is_refused() -> None:
    result = _run(DEBUG="0")
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set and DEBUG is off" in result.stderr


def test_debug_off_with_a_secret_key_starts() -> None:
    result = _run(DEBUG="0", SECRET_KEY="k" * 60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_debug_on_may_use_the_development_key() -> None:
    result = _run(DEBUG="1")
    assert result.returncode == 0, result.stderr
