"""What every service of the desk shares: the refusal a rule raises (ReviewError, shown to
the editor as a form error) and how a person is named on the record."""

from __future__ import annotations

from django.contrib.auth.models import User


class ReviewError(ValueError):
    """A request the rules refuse (shown to the editor as a form error)."""


def actor_for(user: User) -> str:
    return f"person:{user.get_username()}"
