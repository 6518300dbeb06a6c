"""The queue page's table rows: `{% queue_pair_rows pairs blind %}` and
`{% queue_group_rows groups %}`.

Seventy-five rows of a dozen cells each cost the template engine most of the page's
Python time (a variable node, a filter or an `{% url %}` per cell); the same rows built
here cost a tenth of it. Every value from the database goes through format_html, which
escapes it: the URLs and notes come from crawls and editors (hostile), nothing is marked
safe by hand: the rows are joined by format_html_join.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext, pgettext

register = template.Library()

# A placeholder id, replaced by each row's own: one reverse() for the whole table.
_ID = 987654321
_PAIR_ROW = (
    '<tr data-pair="{pk}">'
    '<td><a href="{url}">{name}</a></td>'
    "<td data-value>{doc_type}</td>"
    '<td class="url" data-crawl><span class="clip" title="{a_url}">{a_url}</span></td>'
    '<td class="url" data-crawl><span class="clip" title="{b_url}">{b_url}</span></td>'
    "{scores}"
    "<td data-value>{guards}</td>"
    '<td class="channels" data-value>{channels}</td>'
    "<td>{status}</td>"
    "<td data-value>{claim}</td>"
    "</tr>\n"
)
_SCORES = '<td>{} <small class="dim">/ {}</small></td><td>{}</td><td>{}</td>'
_GROUP_ROW = (
    "<tr>"
    '<td><a href="{url}">{name}</a></td>'
    "<td>{size}</td>"
    "<td>{diameter}</td>"
    "<td>{flags}</td>"
    "<td data-value>{rule}</td>"
    '<td class="url" data-crawl><span class="clip" title="{rep_title}">{rep}</span></td>'
    '<td data-value><span class="clip" title="{note}">{note}</span></td>'
    "<td data-value>{claim}</td>"
    "</tr>\n"
)
_FLAG = '<span class="flag">{}</span>'


def _ranked_last() -> tuple[str, str]:
    return (
        gettext("nominated by the semantic channel alone: ranked below every other pair"),
        gettext("(ranked last)"),
    )


def _disputed() -> SafeString:
    return format_html('<span class="flag {}">{}</span>', "disputed", gettext("disputed"))


def _id_url(name: str) -> tuple[str, str]:
    return reverse(name, args=[_ID]), str(_ID)


def _whole(value: float | None) -> str:
    """`|floatformat:0`: rounded half up, no decimals ("" for no value)."""
    if value is None:
        return ""
    try:
        rounded = Decimal(repr(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    except InvalidOperation:
        return str(value)
    return str(rounded + 0)  # + 0: "-0" is "0"


def _claim(row: Any) -> str:
    claim = getattr(row, "claim", None)
    return claim.editor.username if claim else ""


@register.simple_tag
def queue_pair_rows(pairs: Iterable[Any], blind: bool) -> SafeString:
    """The pair rows (reviews.queue.pair_queue.QueueRow, each with its `claim`); without
    the distance, full distance and similarity cells in blind mode."""
    base, placeholder = _id_url("reviews:pair-detail")
    name, stale = gettext("pair %(pk)s"), gettext("stale")
    labeled, unlabeled = gettext("labeled"), gettext("unlabeled")
    ranked_last = _ranked_last()
    out = []
    for p in pairs:
        status: str
        if p.is_disputed:
            status = _disputed()
        elif p.is_stale:
            status = format_html(_FLAG, stale)
        else:
            status = labeled if p.is_labeled else unlabeled
        scores = (
            ""
            if blind
            else format_html(
                _SCORES,
                p.distance,
                p.threshold,
                "—" if p.full_distance is None else p.full_distance,
                _whole(p.token_set_ratio),
            )
        )
        out.append(
            format_html(
                _PAIR_ROW,
                pk=p.id,
                name=name % {"pk": p.id},
                url=base.replace(placeholder, str(p.id)),
                doc_type=p.doc_type,
                a_url=p.a_url,
                b_url=p.b_url,
                scores=scores,
                guards=format_html_join("", _FLAG, ((g,) for g in p.guard_flags)),
                channels=format_html(
                    "{}{}",
                    " · ".join(p.channel_names),
                    format_html(' <small class="dim" title="{}">{}</small>', *ranked_last)
                    if p.semantic_only
                    else "",
                ),
                status=status,
                claim=_claim(p),
            )
        )
    return format_html_join("", "{}", ((row,) for row in out))


@register.simple_tag
def queue_group_rows(groups: Iterable[Any]) -> SafeString:
    """The group rows (reviews.queue.group_queue.queue_groups with_urls, each with its `claim`)."""
    base, placeholder = _id_url("reviews:group-detail")
    name = gettext("group %(pk)s")
    chained = pgettext("group flag", "chained")
    oversized = pgettext("group flag", "oversized")
    needs_review = pgettext("group flag", "needs review")
    stale = gettext("stale")
    out = []
    for g in groups:
        flags = [
            name
            for name, held in (
                (chained, g.chained),
                (oversized, g.oversized),
                (needs_review, g.needs_review),
            )
            if held
        ]
        markup: list[SafeString] = [format_html(_FLAG, name) for name in flags]
        if g.is_disputed:
            markup.append(_disputed())
        if g.ever_decided and not g.is_decided:
            markup.append(format_html(_FLAG, stale))
        rep = g.representative_url
        out.append(
            format_html(
                _GROUP_ROW,
                name=name % {"pk": g.pk},
                url=base.replace(placeholder, str(g.pk)),
                size=g.size,
                diameter="—" if g.diameter is None else g.diameter,
                flags=format_html_join("", "{}", ((m,) for m in markup)),
                rule=g.rule,
                rep_title=rep or "",
                rep=rep or "—",
                note=g.review_note,
                claim=_claim(g),
            )
        )
    return format_html_join("", "{}", ((row,) for row in out))
