"""Request guards shared by every view."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest


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
