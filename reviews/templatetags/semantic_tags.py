"""`{% pair_semantic_view view as sv %}`: the semantic panel's data, so the panel is one
include in the pair view."""

from django import template

from reviews.selectors import PairView
from reviews.semantic import SemanticView, pair_semantic

register = template.Library()


@register.simple_tag
def pair_semantic_view(view: PairView) -> SemanticView:
    return pair_semantic(pair=view.pair, text_a=view.a.main_text, text_b=view.b.main_text)
