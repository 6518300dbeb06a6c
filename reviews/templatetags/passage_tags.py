"""`{% pair_passages pair as pv %}`: the passage panel's data, so the panel is one
include in the pair view."""

from django import template

from ingest.models import CandidatePair
from reviews.passage_view import PassageView, pair_passages

register = template.Library()


@register.simple_tag
def pair_passages_view(pair: CandidatePair) -> PassageView:
    return pair_passages(pair=pair)
