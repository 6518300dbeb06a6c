"""The pair view's channel panels: one per channel that has one (ingest.channels.registry,
in its order), each a template that reads only the context built here.

A channel's panel context is what its channel module builds (``panel_context``: by
default the pair's evidence entry), or, for the channels whose panel the desk computes
from the texts, the desk's builder below. The context is built when the template first
reads it, so a partial render that leaves the panels out costs nothing.
"""

from collections.abc import Callable
from functools import cached_property

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


class Panel:
    """One channel's panel: its template, and the context it reads (built on first read)."""

    def __init__(self, channel: Channel, view: PairView) -> None:
        self.channel = channel
        self.name = channel.name
        self.template = channel.panel_template
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
