"""With DEBUG off the settings refuse to load without SECRET_KEY."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"


def _base() -> dict[str, str]:
    # outside a test run, with none of the caller's settings
    return {
        k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "PYTEST_VERSION"}
    }


def _run(**env: str) -> subprocess.CompletedProcess:
    base = _base()
    return subprocess.run(
        [sys.executable, "-c", SNIPPET],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, "DJANGO_SETTINGS_MODULE": "dedup_site.settings", **env},
    )


def test_a_deployment_with_debug_off_and_no_secret_key_is_refused() -> None:
    result = _run(DEBUG="0", DATABASE_URL="postgres://app@127.0.0.1:5432/dedup")
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set and DEBUG is off" in result.stderr


def test_the_embedded_default_makes_its_own_key_once_and_keeps_it(tmp_path: Path) -> None:
    key = SNIPPET.replace("settings.DEBUG", "settings.SECRET_KEY")
    env = {"DEBUG": "0", "DATABASE_URL": "", "DATA_DIR": str(tmp_path)}
    first = subprocess.run(
        [sys.executable, "-c", key],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**_base(), "DJANGO_SETTINGS_MODULE": "dedup_site.settings", **env},
    )
    second = subprocess.run(
        [sys.executable, "-c", key],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**_base(), "DJANGO_SETTINGS_MODULE": "dedup_site.settings", **env},
    )
    assert first.returncode == 0, first.stderr
    made = (tmp_path / "secret_key").read_text().strip()
    assert first.stdout.strip() == second.stdout.strip() == made
    assert len(made) >= 50 and made != "dev-only-not-secret-change-me"
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


def test_debug_off_with_a_secret_key_starts() -> None:
    result = _run(DEBUG="0", SECRET_KEY="k" * 60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_debug_on_may_use_the_development_key() -> None:
    result = _run(DEBUG="1")
    assert result.returncode == 0, result.stderr
