"""The desk's HTTP conventions, shared by all its views: the request type, the role
checks (on dedup_site.http's decorator) and how a view picks the fragment to render.

- `DeskRequest`: a request that went through a role check, so its user is signed in
  (`request.user` is a `User`), and that carries django-htmx's `request.htmx`.
- `require_viewer` / `require_editor` / `require_admin`: login, then the role, on every
  request (a deactivated user is refused at once).
- `bounded_int(raw, lo=, hi=)`: a number read from the address or a form, within
  bounds, or None (every view parses numbers with it: no 500 on a huge one).
- `fragment(request, name)` / `template_for(template, part)`: the fragment an htmx
  request swaps in (the rule lives in dedup_site.http, shared with ingest's views).
"""

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from dedup_site.http import (
    BIGINT_MAX,
    HtmxHttpRequest,
    bounded_int,
    fragment,
    role_required,
    template_for,
)
from reviews import roles
from reviews.core.words import Said

__all__ = [
    "BIGINT_MAX",
    "DeskRequest",
    "bounded_int",
    "error_text",
    "fragment",
    "require_admin",
    "require_editor",
    "require_label_export",
    "require_viewer",
    "said_text",
    "template_for",
]


class DeskRequest(HtmxHttpRequest):
    """A request the role decorators let through: the user is signed in."""

    user: User


require_viewer = role_required(
    roles.can_view, _("the review desk needs the editor, auditor or admin role")
)
require_editor = role_required(roles.can_edit, _("this needs the editor role"))
require_admin = role_required(roles.can_admin, _("this page needs the admin role"))
require_label_export = role_required(
    roles.can_export_labels, _("the label export needs the auditor or admin role")
)


LOCALE_SESSION_KEY = "desk_locale"


def remember_locale(request: HttpRequest, language: str, time_zone: str) -> None:
    """Keep the editor's language and time zone in the session: DeskLocaleMiddleware
    reads them from there, so a page costs no query for them."""
    request.session[LOCALE_SESSION_KEY] = [language, time_zone]


def error_text(error: Exception) -> str:
    """A service's refusal in the reader's language: the sentence it was raised with when
    that is a `Said` (its English `str` is what the API and the commands show), else the
    error as it is."""
    said = error.args[0] if error.args else None
    return said_text(said) if isinstance(said, Said) else str(error)


def said_text(said: Said) -> str:
    """A `Said` in the reader's language; a value that is itself a `Said` is translated too,
    any other value (a column name, a URL, a number) is shown as it is."""
    params = {k: said_text(v) if isinstance(v, Said) else v for k, v in said.params.items()}
    return gettext(said.template) % params if params else gettext(said.template)
