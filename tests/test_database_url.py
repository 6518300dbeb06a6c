"""DATABASE_URL: PostgreSQL for the real stack, or a SQLite file as users expect."""

import pytest

from dedup_site.settings import SQLITE_OPTIONS, database_from_url


def test_a_postgres_url_gives_the_stack_settings() -> None:
    config = database_from_url("postgres://app:s%40cret@db.example:6543/desk")
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["USER"], config["PASSWORD"]) == ("desk", "app", "s@cret")
    assert (config["HOST"], config["PORT"]) == ("db.example", "6543")
    assert config["CONN_HEALTH_CHECKS"] is True
    assert "plan_cache_mode=force_generic_plan" in config["OPTIONS"]["options"]


def test_a_postgres_url_without_a_name_uses_the_postgres_database() -> None:
    assert database_from_url("postgresql://app@127.0.0.1")["NAME"] == "postgres"


def test_a_sqlite_url_is_a_file_with_the_embedded_defaults_options(tmp_path) -> None:
    path = tmp_path / "desk.sqlite3"
    config = database_from_url(f"sqlite:///{path}")
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == str(path)
    assert config["OPTIONS"] == SQLITE_OPTIONS


def test_other_databases_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported scheme 'mysql'"):
        database_from_url("mysql://app@db/desk")
