"""Sentences for people that the pure core builds.

The core imports no Django, so it cannot translate; it says things in English (a `Said`
is a `str`, exactly the English sentence) and keeps the sentence's template and values,
so the desk shows it in the reader's language (the `desk_words` template filter,
reviews/templatetags/desk_words.py). `gettext_noop` marks a template for the catalogues:
`manage.py makemessages` finds it by name.
"""

from typing import Any


def gettext_noop(message: str) -> str:
    """Mark a message for translation, unchanged (Django's has the same name)."""
    return message


class Said(str):
    """An English sentence (the str) with its template and values kept for translation."""

    template: str
    params: dict[str, Any]

    def __new__(cls, template: str, **params: Any) -> "Said":
        said = super().__new__(cls, template % params if params else template)
        said.template = template
        said.params = params
        return said
