"""The pair page's SimHash strip: `{% simhash_bits simhash %}`, its 64 cells.

Sixty-four cells, each with two conditions and a translated title, cost the template
engine about a third of the pair page's rendering; the same cells built here cost a
fraction of a millisecond. The values are the view's own integers and booleans and the
translated titles, all escaped by format_html_join.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from reviews.pair.simhash_panel import SimhashView

register = template.Library()


@register.simple_tag
def simhash_bits(simhash: SimhashView) -> SafeString:
    differs, same = gettext("bit %(bit)s: differs"), gettext("bit %(bit)s")
    return format_html_join(
        "",
        '<span class="bit band-{}{}{}" title="{}"></span>',
        (
            (
                c.band,
                " differs" if c.differs else "",
                " nominating" if c.band == simhash.band else "",
                (differs if c.differs else same) % {"bit": c.bit},
            )
            for c in simhash.cells
        ),
    )
