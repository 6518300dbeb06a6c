"""Site services. A site's priority decides suggested representatives, so changing it
is a decision on the record: who, from what, to what, why (SitePriorityChange)."""

from django.db import transaction

from ingest.models import Site, SitePriorityChange


class SitePriorityError(ValueError):
    """A priority change that cannot be recorded (no reason given)."""


@transaction.atomic
def site_priority_set(*, site: Site, priority: int, actor: str, reason: str) -> SitePriorityChange:
    """Set the site's priority and append the record of it (the row is locked, so two
    concurrent changes are recorded in the order they applied)."""
    if not reason.strip():
        raise SitePriorityError("a reason is required")
    if not actor:
        raise SitePriorityError("an actor is required")
    locked = Site.objects.select_for_update().get(pk=site.pk)
    change = SitePriorityChange.objects.create(
        site=locked,
        priority_before=locked.priority,
        priority_after=priority,
        actor=actor,
        reason=reason.strip(),
    )
    Site.objects.filter(pk=locked.pk).update(priority=priority)
    site.priority = priority
    return change
