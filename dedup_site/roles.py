"""Roles are Django groups: editor (label, split, choose representative), auditor (read
everything, audit log, exports), adjudicator (reads, and gives a disputed pair its
final label), admin (everything), crawler (send pages through the
API and ask whether a page is a duplicate; reads nothing else). Permissions given to the
groups by `demo_setup` count as well, so a site may also grant them one by one.

A user with no role reads nothing: documents, batches and the desk need one. Every check
is made on each request against the user's current state, so a deactivated user (and
every API token of theirs) is refused at once. Both apps use these checks; they depend on
nothing but django.contrib.auth."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, PermissionsMixin

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


def _member(user: User) -> PermissionsMixin | None:
    """The user when signed in and active (a user with groups and permissions), else None."""
    if user.is_authenticated and user.is_active and isinstance(user, PermissionsMixin):
        return user
    return None


def _active(user: User) -> bool:
    return _member(user) is not None


def _groups(member: PermissionsMixin) -> set[str]:
    cached: set[str] | None = getattr(member, "_review_roles", None)
    if cached is None:
        cached = set(member.groups.values_list("name", flat=True))
        setattr(member, "_review_roles", cached)  # noqa: B010  (a per-request cache)
    return cached


def can_edit(user: User) -> bool:
    """May label, split and choose representatives."""
    member = _member(user)
    if member is None:
        return False
    if member.is_superuser or _groups(member) & {EDITOR, ADMIN}:
        return True
    return all(member.has_perm(p) for p in ("reviews.add_label", "reviews.add_decision"))


def can_view(user: User) -> bool:
    """May read the desk and the crawl: queue, pairs, groups, history, documents, batches,
    the canonical output."""
    member = _member(user)
    if member is None:
        return False
    if can_edit(user):
        return True
    return bool(_groups(member) & {AUDITOR, ADJUDICATOR}) or member.has_perm("reviews.view_label")


def can_admin(user: User) -> bool:
    """May run operations: compute, switch and retire fingerprint methods."""
    member = _member(user)
    if member is None:
        return False
    return bool(member.is_superuser or _groups(member) & {ADMIN})


def can_ingest(user: User) -> bool:
    """May store crawled pages (POST /api/v1/documents)."""
    member = _member(user)
    if member is None:
        return False
    if member.is_superuser or _groups(member) & {CRAWLER, ADMIN}:
        return True
    return member.has_perm("ingest.add_document")


def can_check(user: User) -> bool:
    """May ask whether a page duplicates a stored one (POST /api/v1/check): the answer
    names stored documents, so it needs the crawler role or read access."""
    return can_ingest(user) or can_view(user)


def can_adjudicate(user: User) -> bool:
    """May give a disputed pair its final label."""
    member = _member(user)
    if member is None:
        return False
    return bool(member.is_superuser or _groups(member) & {ADJUDICATOR, ADMIN})


def can_export_labels(user: User) -> bool:
    """May download every label with its scores (the calibration roles: auditor, admin).
    Editors may not: blind mode hides scores from them on the desk, and the export
    would show every one."""
    member = _member(user)
    if member is None:
        return False
    return bool(member.is_superuser or _groups(member) & {AUDITOR, ADMIN})
