"""HTTP conventions both apps' views share: the htmx-aware request type and the role
check decorator (login first, then the role, on every request)."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils.functional import Promise
from django_htmx.middleware import HtmxDetails

View = Callable[..., HttpResponseBase]


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def role_required(allowed: Callable[..., bool], refusal: str | Promise) -> Callable[[View], View]:
    """Login first, then `allowed(user)` on every request; PermissionDenied otherwise (a
    deactivated user or a withdrawn role is refused at once)."""

    def decorate(view: View) -> View:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if not allowed(request.user):
                raise PermissionDenied(refusal)
            return view(request, *args, **kwargs)

        return wrapped

    return decorate
