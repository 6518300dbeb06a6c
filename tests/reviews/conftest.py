"""Pairs and groups with set distances, raw HTML bodies included (for the source views)."""

from collections.abc import Iterator

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from ingest.models import CandidatePair
from tests import factories
from tests.factories import BASE, TEXT, find, group_of, pair_of, reviewed_document


@pytest.fixture(autouse=True)
def _simhash_channel_only(settings) -> None:
    """The pairs and groups here get their SimHash distances by hand on texts that are
    nearly one text: the passage channel reads the texts and would pair them all.
    Desk tests of passage pairs turn it back on."""
    settings.PASSAGE_CHANNEL = False


@pytest.fixture
def pair(db) -> CandidatePair:
    a = reviewed_document(url="https://shop.example.com/lamp", text=TEXT + " Price 12.99 EUR")
    b = reviewed_document(
        url="https://shop.example.com/lamp?ref=2", text=TEXT + " Price 14.99 EUR", flips=2
    )
    find(a, b)
    return pair_of(a, b)


@pytest.fixture
def pairs(db) -> list[CandidatePair]:
    """Three separate pairs (different texts), uncertain first: distances 3, 2, 0."""
    out = []
    for i, flips in enumerate((3, 2, 0)):
        text = factories.article_text(100 + i, words=120)
        base = BASE ^ (0xFFFF << (16 * i + 8))  # 16 bits apart from the other pairs
        a = reviewed_document(url=f"https://a.example.com/{i}", text=text, base=base)
        b = reviewed_document(
            url=f"https://b.example.com/{i}", text=text + " more", flips=flips, base=base
        )
        out.append((a, b))
    for a, b in out:
        find(a, b)
    return list(CandidatePair.objects.order_by("id"))


@pytest.fixture
def chain(db):
    """Three documents in one chained group: a–b 2 bits, b–c 2 bits, a–c 4 bits."""
    a = reviewed_document(url="https://news.example.com/a", text=TEXT + " one")
    b = reviewed_document(url="https://news.example.com/b", text=TEXT + " two", flips=2)
    c = reviewed_document(url="https://news.example.com/c", text=TEXT + " three", flips=4)
    find(a, b, c)
    return a, b, c


@pytest.fixture
def auditor(db):
    return factories.user_create(username="audrey", role="auditor")


@pytest.fixture
def other_editor(db):
    return factories.user_create(username="oscar", role="editor")


@pytest.fixture
def two_groups(db):
    """Group A: a1–a2 (1 bit); group B: b1–b2 (1 bit); A and B 20+ bits apart."""
    a1 = reviewed_document(url="https://a.example.com/1", text=TEXT + " a")
    a2 = reviewed_document(url="https://a.example.com/2", text=TEXT + " also", flips=1)
    other = factories.article_text(99, words=150)
    base_b = BASE ^ (0xFFFFF << 30)
    b1 = reviewed_document(url="https://b.example.com/1", text=other, base=base_b)
    b2 = reviewed_document(url="https://b.example.com/2", text=other + " b", flips=1, base=base_b)
    find(a1, a2, b1, b2)
    assert group_of(a1) == group_of(a2) != group_of(b1) == group_of(b2)
    return a1, a2, b1, b2


@pytest.fixture
def app_role_conn(transactional_db) -> Iterator[psycopg.Connection]:
    """A connection to the test database as the application's role, with the grants
    `manage.py db_app_role` gives it (the role is created when absent)."""
    call_command("db_app_role", "--create", "--role", settings.DATABASE_APP_ROLE)
    params = connection.get_connection_params()
    conn = psycopg.connect(
        host=params.get("host") or None,
        port=params.get("port") or None,
        dbname=params["dbname"],
        user=settings.DATABASE_APP_ROLE,
        password=settings.DATABASE_APP_PASSWORD or None,
        autocommit=True,
    )
    yield conn
    conn.close()
