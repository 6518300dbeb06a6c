"""The pair view's channel panels: one per channel that has one (ingest.channels.registry,
in its order), each a template that reads only the context built here.

A channel's panel context is what its channel module builds (``panel_context``: by
default the pair's evidence entry), or, for the channels whose panel the desk computes
from the texts, the desk's builder below. The context is built when the template first
reads it, so a partial render that leaves the panels out costs nothing.

A deferred panel is not built with the page: the page holds a placeholder that fetches it
(``reviews:pair-panel``) when it scrolls into view, or a link to it without JavaScript.
The passage panel is: it winnows both whole main texts, most of a long pair's first view.
"""

from collections.abc import Callable
from functools import cached_property

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from ingest.channels import registry
from ingest.channels.base import Channel
from reviews.pair.pair_reads import PairView
from reviews.pair.passage_panel import pair_passages
from reviews.pair.semantic_panel import pair_semantic

Builder = Callable[[PairView], object]

# The desk's builders, by channel name.
BUILDERS: dict[str, Builder] = {
    "passages": lambda view: pair_passages(pair=view.pair),
    "semantic": lambda view: pair_semantic(
        pair=view.pair, text_a=view.a.main_text, text_b=view.b.main_text
    ),
}

# The panels fetched after the page, with the title their placeholder shows.
DEFERRED: dict[str, Promise] = {"passages": _("Shared passages")}


class Panel:
    """One channel's panel: its template, and the context it reads (built on first read)."""

    def __init__(self, channel: Channel, view: PairView) -> None:
        self.channel = channel
        self.name = channel.name
        self.template = channel.panel_template
        self.title = DEFERRED.get(self.name)
        self.deferred = self.title is not None
        self._view = view

    @cached_property
    def context(self) -> object:
        build = BUILDERS.get(self.name)
        if build is not None:
            return build(self._view)
        return self.channel.panel_context(self._view.pair)


def panels(view: PairView) -> list[Panel]:
    """The panels of the pair view, in the registry's order: a channel that is off shows
    its panel only when it says so (``panel_when_off``) or the pair has its evidence."""
    evidence = view.pair.evidence or {}
    return [
        Panel(c, view)
        for c in registry.channels()
        if c.panel_template and (c.on() or c.panel_when_off or c.name in evidence)
    ]


def panel(view: PairView, name: str) -> Panel | None:
    """The pair view's panel of that channel, or None where the page shows none."""
    return next((p for p in panels(view) if p.name == name), None)
