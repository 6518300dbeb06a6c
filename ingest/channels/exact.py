"""The exact channel: the same normalized main text (its SHA-256). It needs no probe of
its own: exact copies share their SimHash, so the SimHash index finds them at distance 0
(and the check API looks the text's SHA-256 up)."""

from ingest.channels.base import Channel, PairScores
from ingest.core import channels as bits


class Exact(Channel):
    name = "exact"
    bit = bits.EXACT

    def nominates(self, s: PairScores) -> bool:
        return s.exact

    def evidence(self, s: PairScores) -> dict[str, object]:
        return {"same_text": s.exact}


CHANNEL = Exact()
