"""HTTP conventions both apps' views share: the htmx-aware request type, the role
check decorator (login first, then the role, on every request), the rule a view picks
the fragment an htmx request swaps in by (`fragment`, `template_for`)."""

from collections.abc import Callable
from functools import wraps
from typing import Any, overload

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


# A bigint's bounds: an id or a count beyond them can name no row.
BIGINT_MAX = 2**63 - 1


@overload
def bounded_int(raw: object, *, lo: int = 0, hi: int = BIGINT_MAX, default: int) -> int: ...
@overload
def bounded_int(
    raw: object, *, lo: int = 0, hi: int = BIGINT_MAX, default: None = None
) -> int | None: ...
def bounded_int(
    raw: object, *, lo: int = 0, hi: int = BIGINT_MAX, default: int | None = None
) -> int | None:
    """`raw` (a query or form value) as an int in [lo, hi], or `default` when it is no
    such number. Only ASCII digits count (``"²".isdigit()`` is true and ``int("²")``
    fails), and the digits are counted before ``int()`` reads them, so a number of a
    thousand digits is refused without converting it."""
    if not isinstance(raw, str) or not raw.isascii() or not raw.isdigit():
        return default
    if len(raw.lstrip("0")) > len(str(hi)):
        return default
    value = int(raw)
    return value if lo <= value <= hi else default


def fragment(
    request: HtmxHttpRequest, name: str, *, target: str | None = None, boosted: bool = True
) -> str | None:
    """The fragment `name` when this is an htmx request (aimed at `target` when one is
    given; a boosted navigation counts only when `boosted`), else None (a whole page)."""
    htmx = request.htmx
    if not htmx or (htmx.boosted and not boosted):
        return None
    if target is not None and htmx.target != target:
        return None
    return name


def template_for(template: str, part: str | None) -> str:
    """`template#part` (a fragment of the template, Django's `{% partialdef %}`), or the whole
    template."""
    return f"{template}#{part}" if part else template
