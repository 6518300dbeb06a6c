"""Roles are Django groups: editor (label, split, choose representative), auditor (read
everything, audit log, exports), adjudicator (final label of a disputed pair), admin
(everything). Permissions given to the groups by
`demo_setup` count as well, so a site may also grant them one by one."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

EDITOR = "editor"
AUDITOR = "auditor"
ADMIN = "admin"
# Resolves disputed pairs with a final label (admins may as well).
ADJUDICATOR = "adjudicator"
ROLES = (EDITOR, AUDITOR, ADMIN, ADJUDICATOR)

EDITOR_PERMISSIONS = (
    "reviews.add_label",
    "reviews.view_label",
    "reviews.add_decision",
    "reviews.view_decision",
    "reviews.add_claim",
)
AUDITOR_PERMISSIONS = ("reviews.view_label", "reviews.view_decision")

User = AbstractBaseUser | AnonymousUser


def _groups(user: User) -> set[str]:
    if not user.is_authenticated:
        return set()
    cached = getattr(user, "_review_roles", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))  # type: ignore[union-attr]
        user._review_roles = cached  # type: ignore[union-attr]
    return cached


def can_edit(user: User) -> bool:
    """May label, split and choose representatives."""
    if not user.is_authenticated:
        return False
    if user.is_superuser or _groups(user) & {EDITOR, ADMIN}:  # type: ignore[union-attr]
        return True
    return all(user.has_perm(p) for p in ("reviews.add_label", "reviews.add_decision"))


def can_view(user: User) -> bool:
    """May read the desk: queue, pairs, groups, history."""
    if can_edit(user):
        return True
    return bool(_groups(user) & {AUDITOR, ADJUDICATOR}) or user.has_perm("reviews.view_label")


def can_admin(user: User) -> bool:
    """May run operations: compute, switch and retire fingerprint methods."""
    if not user.is_authenticated:
        return False
    return bool(user.is_superuser or _groups(user) & {ADMIN})  # type: ignore[union-attr]


def can_adjudicate(user: User) -> bool:
    """May give a disputed pair its final label."""
    if not user.is_authenticated:
        return False
    return bool(user.is_superuser or _groups(user) & {ADJUDICATOR, ADMIN})  # type: ignore[union-attr]
