import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.docker_compose
def test_the_compose_file_validates() -> None:
    result = subprocess.run(
        ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.docker_compose
def test_the_stack_has_every_service_with_a_health_check() -> None:
    result = subprocess.run(
        ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    config = result.stdout
    for service in ("postgres:", "redis:", "web:", "worker:", "beat:"):
        assert f"  {service}" in config
    assert config.count("healthcheck:") >= 5
