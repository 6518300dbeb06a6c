"""The desk's language and time zone: Accept-Language by default, LANGUAGE_CODE as the
fallback, an editor's stored choice above both; and what stays language-neutral (stored
reason codes, exports)."""

import json
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from ingest.models import Document
from reviews.labels import labelling
from reviews.models import Label, ReviewerPreference
from tests import factories
from tests.factories import find, pair_of, reviewed_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair():
    text = factories.article_text(41, words=120)
    a = reviewed_document(url="https://a.example.com/x", text=text)
    b = reviewed_document(url="https://b.example.com/x", text=text + " more", flips=1)
    find(a, b)
    Document.objects.filter(pk__in=[a.pk, b.pk]).update(
        fetched_at=datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    )
    return pair_of(a, b)


def test_the_browser_language_is_the_default_and_language_code_the_fallback(client) -> None:
    assert "Log in" in client.get("/accounts/login/").content.decode()
    page = client.get("/accounts/login/", headers={"accept-language": "vi,en;q=0.5"})
    assert 'lang="vi"' in page.content.decode() and "Đăng nhập" in page.content.decode()
    page = client.get("/accounts/login/", headers={"accept-language": "zh-TW"})
    assert "登入" in page.content.decode()
    page = client.get("/accounts/login/", headers={"accept-language": "zh-CN"})
    assert "登录" in page.content.decode()
    # A language the desk does not speak: LANGUAGE_CODE.
    page = client.get("/accounts/login/", headers={"accept-language": "fr"})
    assert 'lang="en"' in page.content.decode() and "Log in" in page.content.decode()


def test_the_switcher_sets_the_language_without_an_account(client) -> None:
    r = client.post(
        reverse("reviews:preference-locale"), {"language": "zh-hant", "next": "/accounts/login/"}
    )
    assert r.status_code == 302 and r["Location"] == "/accounts/login/"
    assert "登入" in client.get("/accounts/login/").content.decode()


def test_an_editors_stored_language_and_time_zone_win_in_every_session(client, pair) -> None:
    editor = factories.user_create(username="lan", role="editor")
    client.force_login(editor)
    r = client.post(
        reverse("reviews:preference-locale"),
        {"language": "vi", "time_zone": "Asia/Ho_Chi_Minh", "next": "/review/"},
    )
    assert r.status_code == 302
    pref = ReviewerPreference.objects.get(user=editor)
    assert (pref.language, pref.time_zone) == ("vi", "Asia/Ho_Chi_Minh")

    # Another browser: no language cookie, an English Accept-Language; the stored choice wins.
    from django.test import Client

    other = Client()
    other.force_login(editor)
    page = other.get(
        reverse("reviews:pair-detail", args=[pair.id]), headers={"accept-language": "en"}
    ).content.decode()
    assert 'lang="vi"' in page and "Lịch sử nhãn" in page
    # 23:30 UTC is 06:30 the next day in Ho Chi Minh City (UTC+7).
    assert "2026-03-02 06:30" in page and "2026-03-01 23:30" not in page


def test_refused_values_are_not_stored(client) -> None:
    editor = factories.user_create(username="bad", role="editor")
    client.force_login(editor)
    client.post(
        reverse("reviews:preference-locale"),
        {"language": "xx-evil", "time_zone": "Mars/Olympus", "next": "https://evil.example/"},
    )
    pref = ReviewerPreference.objects.get(user=editor)
    assert (pref.language, pref.time_zone) == ("", "")


def test_a_reason_is_stored_as_its_code_and_shown_translated(client, pair) -> None:
    editor = factories.user_create(username="vy", role="editor")
    client.force_login(editor)
    client.post(reverse("reviews:preference-locale"), {"language": "vi", "next": "/"})
    r = client.post(
        reverse("reviews:pair-label", args=[pair.id]),
        {"verdict": "duplicate", "region": "body", "purpose": "review"},
    )
    assert r.status_code in (200, 302)
    label = Label.objects.get(pair=pair)
    # The stored values do not depend on the desk's language.
    assert (label.verdict, label.reason_code, label.reason, label.region) == (
        "duplicate",
        "same_text",
        "same text",
        "body",
    )
    page = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert "cùng nội dung" in page  # the reason's label, in Vietnamese
    client.post(reverse("reviews:preference-locale"), {"language": "zh-hans", "next": "/"})
    page = client.get(reverse("reviews:pair-detail", args=[pair.id])).content.decode()
    assert "文本相同" in page and "cùng nội dung" not in page


def test_the_label_export_is_the_same_in_every_language(client, pair) -> None:
    from django.contrib.auth.models import User

    labelling.label_record(
        pair=pair,
        editor=factories.user_create(username="ed", role="editor"),
        verdict="distinct",
        reason_code="numbers_differ",
        reason="prices, numbers or ids differ",
        region="numbers",
        purpose="review",
    )
    admin = User.objects.create_superuser("root", password="pw")
    client.force_login(admin)
    exports = {}
    for language in ("en", "vi", "zh-hant"):
        client.post(reverse("reviews:preference-locale"), {"language": language, "next": "/"})
        r = client.get(reverse("reviews:labels-export") + "?format=csv")
        body = b"".join(r.streaming_content) if r.streaming else r.content
        exports[language] = body
    assert exports["en"] == exports["vi"] == exports["zh-hant"]
    assert b"numbers_differ" in exports["en"] and b"distinct" in exports["en"]


def test_the_demo_prints_how_to_switch_language() -> None:
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("demo_setup", "--url", "http://127.0.0.1:8123/", stdout=out)
    said = out.getvalue()
    assert "Tiếng Việt (vi)" in said and "简体中文 (zh-hans)" in said and "繁體中文" in said
    assert "header" in said


def test_a_services_refusal_is_shown_in_the_readers_language_and_stays_english_elsewhere() -> None:
    """A service raises its refusal as the core's kind of sentence: the desk shows it
    translated (reviews.http.error_text), the API and the commands its English str."""
    from django.utils import translation

    from reviews.core.words import Said, gettext_noop
    from reviews.http import error_text
    from reviews.rules import ReviewError

    error = ReviewError(
        Said(gettext_noop("decision %(decision)s is already restored"), decision=12)
    )
    assert str(error) == "decision 12 is already restored"
    with translation.override("vi"):
        assert error_text(error) == "quyết định 12 đã được khôi phục"
    with translation.override("zh-hans"):
        assert error_text(error) == "决定 12 已经恢复"
    assert error_text(ValueError("plain")) == "plain"


def test_counted_notices_use_the_catalogues_plural_entries() -> None:
    from django.utils import translation
    from django.utils.translation import ngettext

    with translation.override("zh-hant"):
        assert ngettext("%(n)s rejected", "%(n)s rejected", 2) % {"n": 2} == "已拒絕 2 項"


def test_a_rejected_label_files_rows_are_told_in_the_readers_language(client, pair) -> None:
    """The import page lists every bad row in the desk's language; the column names, the
    values and the command's English stay as they are."""
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import SimpleUploadedFile

    admin = User.objects.create_superuser("root", password="pw")
    client.force_login(admin)
    rows = [
        '{"pair_id": 999999, "verdict": "duplicate", "annotator": "x", "reason": "r",'
        ' "labeled_at": "yesterday"}',
        json.dumps(
            {
                "pair_id": pair.id,
                "verdict": "maybe",
                "annotator": "",
                "reason": "r",
                "labeled_at": "2026-01-02T03:04:05",
            }
        ),
        "[1, 2]",
    ]
    body = ("\n".join(rows) + "\n").encode()
    pages = {}
    for language in ("en", "vi", "zh-hans"):
        client.post(reverse("reviews:preference-locale"), {"language": language, "next": "/"})
        upload = SimpleUploadedFile("labels.jsonl", body, content_type="application/x-ndjson")
        r = client.post(reverse("reviews:labels-import"), {"file": upload, "format": ""})
        assert r.status_code == 200
        pages[language] = r.content.decode()
    assert "line 1: no pair 999999" in pages["en"]
    assert "line 2: verdict &#x27;maybe&#x27; is not one of" in pages["en"]
    assert "line 3: not a JSON object" in pages["en"]
    assert "3 rows are bad:" in pages["en"] and "3 dòng bị lỗi:" in pages["vi"]
    vi, zh = pages["vi"], pages["zh-hans"]
    assert "dòng 1: không có cặp 999999" in vi and "line 1:" not in vi
    assert "dòng 2: cần có người gắn nhãn (annotator)" in vi
    assert "dòng 3: không phải một đối tượng JSON" in vi
    assert "第 1 行：没有文档对 999999" in zh and "line 1:" not in zh
    assert "第 2 行：labeled_at 需要时区（UTC 用 Z）" in zh
    assert "verdict &#x27;maybe&#x27; 不在" in zh  # the column and the value stay as written
    assert Label.objects.count() == 0
