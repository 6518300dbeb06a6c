"""The catalogues: every msgid translated in each language, the same placeholders and
markup in source and translation, and the committed .mo files compiled from their .po."""

import gettext
import re
from pathlib import Path

import pytest

from dedup_site import catalogues

LANGUAGES = ("vi", "zh_Hans", "zh_Hant")
_PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|\{(\w+)\}")
_TAG = re.compile(r"</?([a-z]+)[^>]*>")


def _po(language: str) -> Path:
    return catalogues.LOCALE_DIR / language / "LC_MESSAGES" / "django.po"


def _messages(language: str):
    return [m for m in catalogues.read(_po(language)) if m.id]


def _placeholders(text: str) -> set[str]:
    return {a or b for a, b in _PLACEHOLDER.findall(text)}


def _tags(text: str) -> list[str]:
    return sorted(_TAG.findall(text))


def test_every_language_of_the_desk_has_a_catalogue() -> None:
    assert sorted(p.parent.parent.name for p in catalogues.po_files()) == sorted(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_msgid_is_translated(language: str) -> None:
    untranslated = [
        m.id
        for m in _messages(language)
        if m.fuzzy or not (all(m.string) if isinstance(m.string, tuple) else m.string)
    ]
    assert untranslated == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_catalogues_hold_the_same_msgids(language: str) -> None:
    assert {(m.context, m.id) for m in _messages(language)} == {
        (m.context, m.id) for m in _messages("vi")
    }


@pytest.mark.parametrize("language", LANGUAGES)
def test_placeholders_and_markup_are_the_same_in_source_and_translation(language: str) -> None:
    wrong = []
    for m in _messages(language):
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        # A plural translation says the plural form's placeholders (the singular may
        # leave the count out); one form in languages without plurals.
        source = ids[-1]
        for s in strings:
            if _placeholders(s) != _placeholders(source) or _tags(s) != _tags(source):
                wrong.append((source, s))
    assert wrong == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_committed_mo_file_is_compiled_from_its_po(language: str) -> None:
    po = _po(language)
    mo = po.with_suffix(".mo")
    assert mo.exists(), f"{mo} is missing: run manage.py compile_catalogues"
    with mo.open("rb") as f:
        committed = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
    from io import BytesIO

    expected = gettext.GNUTranslations(BytesIO(catalogues.compiled(po)))._catalog  # type: ignore[attr-defined]
    assert committed == expected, f"{mo} is stale: run manage.py compile_catalogues"


def test_crawled_text_and_codes_are_not_msgids() -> None:
    """Reason codes and the like are stored and exported as they are: their labels are
    translated, never the codes themselves."""
    ids = {m.id for m in _messages("vi") if isinstance(m.id, str)}
    for code in ("same_text", "near_duplicate", "set_representative", "numbers_differ"):
        assert code not in ids
