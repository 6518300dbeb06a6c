"""The candidate channels, in display order, and the one rule that turns a pair's scores
into the channels that nominate it and the evidence it records (pair building and the
check API alike)."""

from ingest.channels import exact, minhash, passages, semantic, simhash
from ingest.channels.base import Channel, PairScores

CHANNELS: tuple[Channel, ...] = (
    exact.CHANNEL,
    simhash.CHANNEL,
    passages.CHANNEL,
    semantic.CHANNEL,
    minhash.CHANNEL,
)
BY_NAME: dict[str, Channel] = {c.name: c for c in CHANNELS}


def channels() -> tuple[Channel, ...]:
    return CHANNELS


def get(name: str) -> Channel:
    return BY_NAME[name]


def running() -> list[Channel]:
    """The channels whose setting turns them on."""
    return [c for c in CHANNELS if c.on()]


def evidence(s: PairScores) -> tuple[int, dict[str, object]]:
    """The channels that nominate a pair with these scores (a mask of their bits), and
    its evidence: one entry per channel that has something to record, whether or not it
    nominated the pair (every channel's score is kept for every pair)."""
    mask = 0
    out: dict[str, object] = {}
    for channel in CHANNELS:
        if channel.on() and channel.nominates(s):
            mask |= channel.bit
        entry = channel.evidence(s)
        if entry is not None:
            out[channel.name] = entry
    return mask, out
