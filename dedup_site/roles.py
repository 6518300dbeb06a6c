"""Roles are Django groups: editor (label, split, choose representative), auditor (read
everything, audit log, exports), adjudicator (reads, and gives a disputed pair its
final label), admin (everything), crawler (send pages through the
API and ask whether a page is a duplicate; reads nothing else). Permissions given to the
groups by `demo_setup` count as well, so a site may also grant them one by one.

A user with no role reads nothing: documents, batches and the desk need one. Every check
is made on each request against the user's current state, so a deactivated user (and
every API token of theirs) is refused at once. Both apps use these checks; they depend on
nothing but django.contrib.auth."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

EDITOR = "editor"
AUDITOR = "auditor"
ADMIN = "admin"
CRAWLER = "crawler"
# Resolves disputed pairs with a final label (admins may as well).
ADJUDICATOR = "adjudicator"
ROLES = (EDITOR, AUDITOR, ADMIN, CRAWLER, ADJUDICATOR)

EDITOR_PERMISSIONS = (
    "reviews.add_label",
    "reviews.view_label",
    "reviews.add_decision",
    "reviews.view_decision",
    "reviews.add_claim",
)
AUDITOR_PERMISSIONS = ("reviews.view_label", "reviews.view_decision")
CRAWLER_PERMISSIONS = ("ingest.add_document",)

User = AbstractBaseUser | AnonymousUser


def _active(user: User) -> bool:
    return bool(user.is_authenticated and user.is_active)


def _groups(user: User) -> set[str]:
    if not _active(user):
        return set()
    cached = getattr(user, "_review_roles", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))  # type: ignore[union-attr]
        user._review_roles = cached  # type: ignore[union-attr]
    return cached


def can_edit(user: User) -> bool:
    """May label, split and choose representatives."""
    if not _active(user):
        return False
    if user.is_superuser or _groups(user) & {EDITOR, ADMIN}:  # type: ignore[union-attr]
        return True
    return all(user.has_perm(p) for p in ("reviews.add_label", "reviews.add_decision"))


def can_view(user: User) -> bool:
    """May read the desk and the crawl: queue, pairs, groups, history, documents, batches,
    the canonical output."""
    if not _active(user):
        return False
    if can_edit(user):
        return True
    return bool(_groups(user) & {AUDITOR, ADJUDICATOR}) or user.has_perm("reviews.view_label")


def can_admin(user: User) -> bool:
    """May run operations: compute, switch and retire fingerprint methods."""
    if not _active(user):
        return False
    return bool(user.is_superuser or _groups(user) & {ADMIN})  # type: ignore[union-attr]


def can_ingest(user: User) -> bool:
    """May store crawled pages (POST /api/v1/documents)."""
    if not _active(user):
        return False
    if user.is_superuser or _groups(user) & {CRAWLER, ADMIN}:  # type: ignore[union-attr]
        return True
    return user.has_perm("ingest.add_document")  # type: ignore[union-attr]


def can_check(user: User) -> bool:
    """May ask whether a page duplicates a stored one (POST /api/v1/check): the answer
    names stored documents, so it needs the crawler role or read access."""
    return can_ingest(user) or can_view(user)


def can_adjudicate(user: User) -> bool:
    """May give a disputed pair its final label."""
    if not _active(user):
        return False
    return bool(user.is_superuser or _groups(user) & {ADJUDICATOR, ADMIN})  # type: ignore[union-attr]
