"""The editor's language and time zone: activated for each request (the middleware),
offered by the header's switcher (the context processor).

Django's LocaleMiddleware has already chosen a language from the language cookie, the
browser's Accept-Language or LANGUAGE_CODE; an editor's stored choice (ReviewerPreference)
wins over those. The choice is read once per session and kept in it, so a desk page costs
no extra query; the switcher (reviews.views.preference_locale) updates both.
"""

import zoneinfo
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone, translation

from reviews.http import LOCALE_SESSION_KEY, remember_locale
from reviews.labels import preferences


class DeskLocaleMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language, time_zone = "", ""
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            stored = request.session.get(LOCALE_SESSION_KEY)
            if not isinstance(stored, list) or len(stored) != 2:
                stored = list(preferences.locale_for(user=user))
                remember_locale(request, *stored)
            language, time_zone = str(stored[0]), str(stored[1])
        if language and language in {code for code, _ in settings.LANGUAGES}:
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        if time_zone in settings.DESK_TIME_ZONES and time_zone:
            timezone.activate(zoneinfo.ZoneInfo(time_zone))
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()


def desk_locale(request: HttpRequest) -> dict[str, object]:
    """Template context: the time zones the header's switcher offers."""
    return {"desk_time_zones": settings.DESK_TIME_ZONES}
