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


def _service_blocks(config: str) -> dict[str, str]:
    """The text of each service in `docker-compose config` output."""
    blocks: dict[str, str] = {}
    name, in_services = None, False
    for line in config.splitlines():
        if not line.startswith(" "):
            in_services, name = line.startswith("services:"), None
        elif in_services and not line.startswith("   "):
            name = line.strip().rstrip(":")
            blocks[name] = ""
        elif name:
            blocks[name] += line.strip() + "\n"
    return blocks


@pytest.mark.docker_compose
def test_the_app_runs_as_a_role_that_owns_no_table_and_migrations_as_the_owner() -> None:
    result = subprocess.run(
        ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    services = _service_blocks(result.stdout)
    assert "POSTGRES_USER: dedup\n" in services["postgres"]
    for name in ("web", "worker", "beat"):
        assert "DATABASE_URL: postgres://dedup_app:" in services[name], name
        assert "migrate:\ncondition: service_completed_successfully" in services[name], name
    migrate = services["migrate"]
    assert "DATABASE_URL: postgres://dedup:" in migrate
    assert "manage.py db_app_role --create" in migrate
