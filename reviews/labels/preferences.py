"""An editor's preferences: blind mode (other editors' labels hidden), and the language
and time zone of the desk."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User

from reviews.models import ReviewerPreference


def blind_mode_for(*, user: User) -> bool:
    pref = ReviewerPreference.objects.filter(user=user).first()
    return bool(pref and pref.blind_mode)


def locale_for(*, user: User) -> tuple[str, str]:
    """The editor's stored (language, time zone); blank where none is chosen."""
    row = ReviewerPreference.objects.filter(user=user).values_list("language", "time_zone").first()
    return (row[0], row[1]) if row else ("", "")


def preference_set(*, user: User, blind_mode: bool) -> ReviewerPreference:
    pref, _ = ReviewerPreference.objects.update_or_create(
        user=user, defaults={"blind_mode": blind_mode}
    )
    return pref


def preference_locale_set(*, user: User, language: str, time_zone: str) -> ReviewerPreference:
    """The editor's language and time zone for the desk; blank keeps the default (the
    browser's language, UTC). Values outside LANGUAGES / DESK_TIME_ZONES are refused."""
    if language and language not in {code for code, _ in settings.LANGUAGES}:
        raise ValueError(f"unknown language {language!r}")
    if time_zone and time_zone not in settings.DESK_TIME_ZONES:
        raise ValueError(f"unknown time zone {time_zone!r}")
    pref, _ = ReviewerPreference.objects.update_or_create(
        user=user, defaults={"language": language, "time_zone": time_zone}
    )
    return pref
