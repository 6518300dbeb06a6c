"""`{{ value|desk_words }}`: a sentence the pure core built (reviews.core.words.Said, or a
plain message it marked), shown in the reader's language; its values translated too."""

from typing import Any

from django import template
from django.utils.translation import gettext

from reviews.core.words import Said

register = template.Library()


@register.filter
def desk_words(value: Any) -> Any:
    if isinstance(value, Said):
        params = {k: desk_words(v) for k, v in value.params.items()}
        return gettext(value.template) % params if params else gettext(value.template)
    if isinstance(value, str) and value:
        return gettext(value)
    return value
