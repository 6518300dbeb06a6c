"""The desk in other languages, in a real browser: a pseudo-locale shows every desk word
the catalogues do not cover, and an editor works a pair and a group in Vietnamese,
Simplified and Traditional Chinese without meeting an English desk string."""

import re

import pytest

from ingest.models import CandidateGroup, CandidatePair
from reviews.labels import labelling
from reviews.models import Label, ReviewerPreference
from tests import factories
from tests.factories import find, group_of, reviewed_document
from tests.i18n import catalogues as i18n

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOWN_NODES_JS = i18n.SHOWN_TEXT_JS.replace(
    "parts.push(' \\\\u2063 '); continue;", "continue;"
).replace("parts.push(n.nodeValue);", "parts.push(n.nodeValue.trim());")


@pytest.fixture
def desk_data():
    """Two pairs, a group of three with a decision, a label: every desk page has rows."""
    text = factories.article_text(31, words=140)
    a = reviewed_document(url="https://news.example.com/a", text=text + " one")
    b = reviewed_document(url="https://news.example.com/b", text=text + " two", flips=2)
    c = reviewed_document(url="https://news.example.com/c", text=text + " three", flips=3)
    find(a, b, c)
    other = factories.article_text(32, words=120)
    d = reviewed_document(
        url="https://shop.example.com/d", text=other, base=factories.BASE ^ (0xFFFF << 30)
    )
    e = reviewed_document(
        url="https://shop.example.com/e",
        text=other + " more",
        flips=1,
        base=factories.BASE ^ (0xFFFF << 30),
    )
    find(d, e)
    return {"group": group_of(a), "docs": (a, b, c, d, e)}


def _switch(page, language: str, time_zone: str = "") -> None:
    """Pick a language (and a time zone) in the header's switcher, as an editor does."""
    page.select_option("select[name=language]", language)
    if time_zone:
        page.select_option("select[name=time_zone]", time_zone)
    page.click("button[data-locale-apply]")
    page.wait_for_load_state()
    assert page.locator("html").get_attribute("lang") == language


def _desk_pages(data) -> list[str]:
    pair = CandidatePair.objects.order_by("id").first()
    assert pair is not None
    doc = data["docs"][0]
    return [
        "/review/",
        f"/review/pairs/{pair.id}/",
        f"/review/pairs/{pair.id}/?view=aligned",
        f"/review/pairs/{pair.id}/?view=html",
        f"/review/pairs/{pair.id}/?view=full",
        f"/review/groups/{data['group'].pk}/",
        "/",
        f"/documents/{doc.pk}/",
        "/batches/",
        "/review/calibration/",
        "/review/metrics/",
        "/review/search?q=news",
        "/review/approvals/",
        "/review/audit/",
        "/review/methods/",
        "/review/agreement/",
        "/review/labels/import",
    ]


@pytest.fixture
def pseudo_locale(tmp_path, settings):
    i18n.pseudo_catalogue(tmp_path)
    settings.LANGUAGES = [*settings.LANGUAGES, (i18n.PSEUDO, "Pseudo")]
    settings.LOCALE_PATHS = [tmp_path, *settings.LOCALE_PATHS]
    return i18n.PSEUDO


def test_under_the_pseudo_locale_every_desk_word_is_a_translated_string(
    logged_in, desk_data, pseudo_locale
) -> None:
    page = logged_in
    pair = CandidatePair.objects.order_by("id").first()
    assert pair is not None
    factories.user_create(username="ann", role="editor")
    # A label on the pair, so the history and the label panel have rows.
    from django.contrib.auth.models import Group, User

    labelling.label_record(
        pair=pair,
        editor=User.objects.get(username="ann"),
        verdict="near_duplicate",
        reason_code="cosmetic",
        reason="cosmetic change only (markup, whitespace, timestamp)",
        region="body",
        purpose="review",
    )
    # The agreement and label-import pages are the admin's: eve is one too here.
    Group.objects.get_or_create(name="admin")[0].user_set.add(User.objects.get(username="eve"))
    page.goto("/")  # rendered again: the header now offers the pseudo-locale
    _switch(page, pseudo_locale)
    leaks = {}
    for url in _desk_pages(desk_data):
        response = page.goto(url)
        assert response is not None and response.status == 200, url
        words = i18n.unmarked_words(page.evaluate(i18n.SHOWN_TEXT_JS))
        if words:
            leaks[url] = words
    page.context.clear_cookies(name="sessionid")  # signed out, the language cookie kept
    page.goto("/accounts/login/")
    words = i18n.unmarked_words(page.evaluate(i18n.SHOWN_TEXT_JS))
    if words:
        leaks["/accounts/login/"] = words
    assert leaks == {}, f"desk text outside the translated strings: {leaks}"


def _untranslated(page, english: set[str]) -> list[str]:
    nodes = page.evaluate(SHOWN_NODES_JS)
    joined = " ".join(nodes)
    found = {t for t in nodes if t in english}
    found |= {e for e in english if len(e) >= 24 and e in joined}
    return sorted(found)


@pytest.mark.parametrize(
    ("language", "saved", "representative_set", "time_zone"),
    [
        ("vi", "Đã lưu", "Đã đặt bản đại diện", "Asia/Ho_Chi_Minh"),
        ("zh-hans", "已为文档对", "代表文档已设为", "Asia/Shanghai"),
        ("zh-hant", "已為文件對", "代表文件已設為", "Asia/Taipei"),
    ],
)
def test_an_editor_works_a_pair_and_a_group_in_their_language(  # noqa: PLR0913
    logged_in, desk_data, language, saved, representative_set, time_zone
) -> None:
    page = logged_in
    english = i18n.english_sentences()
    page.goto("/review/")
    _switch(page, language, time_zone)
    pref = ReviewerPreference.objects.get(user__username="eve")
    assert (pref.language, pref.time_zone) == (language, time_zone)
    assert _untranslated(page, english) == []

    # The queue's Next, a verdict from the keyboard, the verdict's preset, Enter.
    page.click("form.next-form button")
    page.wait_for_url(re.compile(r"/review/pairs/\d+/$"))
    assert _untranslated(page, english) == []
    first = int(page.url.rstrip("/").rsplit("/", 1)[1])
    page.keyboard.press("1")
    page.keyboard.press("Escape")
    page.keyboard.press("Enter")
    page.wait_for_selector(f".notice:has-text('{saved}')")
    label = Label.objects.get(pair_id=first)
    # Stored as codes and the preset's source text, whatever the desk's language.
    assert (label.verdict, label.reason_code, label.reason) == (
        "duplicate",
        "same_text",
        "same text",
    )
    assert _untranslated(page, english) == []

    # The group: a representative chosen with a policy and a reason.
    group = desk_data["group"]
    page.goto(f"/review/groups/{group.pk}/")
    assert _untranslated(page, english) == []
    b = desk_data["docs"][1]
    page.select_option("#representative-form select[name=document_id]", str(b.pk))
    page.select_option("#representative-form select[name=reason_code]", "editorial")
    page.fill("#representative-form input[name=reason]", "bản đầy đủ hơn / 更完整")
    page.click("#representative-form button")
    page.wait_for_selector(f".notice:has-text('{representative_set}')")
    group = CandidateGroup.objects.get(pk=group.pk)
    assert group.representative_id == b.pk
    assert _untranslated(page, english) == []
