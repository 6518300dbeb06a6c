"""Who a failed login is counted against (django-axes).

- The client's address: REMOTE_ADDR, or behind LOGIN_PROXY_COUNT proxies that each
  append the address they were reached from to X-Forwarded-For, the entry that many
  places from the right (the one the outermost trusted proxy wrote: entries further
  left were sent by the client and prove nothing). Without it every client behind the
  proxy shares the proxy's address.
- A lockout counts the pair (username, address) up to LOGIN_FAILURE_LIMIT (axes), and
  an address alone up to the higher LOGIN_ADDRESS_FAILURE_LIMIT (this handler): one
  person's typos lock only themselves at their address, a guesser trying many names
  from one address is stopped, and nobody's bad passwords lock another person out.
"""

from datetime import timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest
from django.utils import timezone


def client_ip(request: HttpRequest) -> str | None:
    """The client's address as the configured proxies report it (AXES_CLIENT_IP_CALLABLE)."""
    remote = request.META.get("REMOTE_ADDR")
    count = settings.LOGIN_PROXY_COUNT
    if count <= 0:
        return remote
    hops = [h.strip() for h in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [h for h in hops if h]
    if len(hops) < count:
        return remote  # not through the proxies (a health check, a local call)
    return hops[-count]


class LoginLockoutHandler(AxesDatabaseHandler):
    """axes' database handler, plus the per-address limit."""

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        failures: int = super().get_failures(request, credentials)
        limit = settings.LOGIN_ADDRESS_FAILURE_LIMIT
        address = getattr(request, "axes_ip_address", None)
        if limit <= 0 or not address or failures >= settings.AXES_FAILURE_LIMIT:
            return failures
        cool_off: timedelta = settings.AXES_COOLOFF_TIME
        by_address = (
            AccessAttempt.objects.filter(
                ip_address=address, attempt_time__gte=timezone.now() - cool_off
            ).aggregate(n=Sum("failures_since_start"))["n"]
            or 0
        )
        # Locked as axes locks: a count at its limit.
        return settings.AXES_FAILURE_LIMIT if by_address >= limit else failures
