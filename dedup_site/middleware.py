"""Request guards shared by every view."""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

from dedup_site.transactions import BUSY_TEXT, DatabaseBusy, is_conflict


def reject_nul_in_query(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """A NUL character in a query parameter is a 400.

    No legitimate link carries one, and PostgreSQL refuses NUL in text, so a filter or
    search that passed it to a query would fail with a 500 instead.
    """

    def middleware(request: HttpRequest) -> HttpResponse:
        for key, values in request.GET.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                return HttpResponseBadRequest(
                    "NUL character in the query string\n", content_type="text/plain"
                )
        return get_response(request)

    return middleware


def limit_request_body(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """A request body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413 naming the limit, before
    a byte of it is read (Django alone would read it, then answer 400)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = request.META.get("CONTENT_LENGTH") or "0"
        size = int(raw) if raw.isascii() and raw.isdigit() else 0
        if limit is not None and size > limit:
            return HttpResponse(
                f"request body of {size} bytes; the limit is {limit} bytes\n",
                status=413,
                content_type="text/plain",
            )
        return get_response(request)

    return middleware


class DatabaseBusyMiddleware:
    """A request whose transaction lost a race more times than it is retried
    (dedup_site.transactions) answers 503 "try again" with Retry-After, not a 500:
    nothing of it was applied. Views that can say more (the desk's label and Next)
    answer it themselves."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not (isinstance(exception, DatabaseBusy) or is_conflict(exception)):
            return None
        response = HttpResponse(BUSY_TEXT + "\n", status=503, content_type="text/plain")
        response["Retry-After"] = "1"
        return response
