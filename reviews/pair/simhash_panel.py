"""The pair page's SimHash panel: the two fingerprints' distance against the threshold,
bit by bit, with the bands of the candidate index."""

from __future__ import annotations

from dataclasses import dataclass

from ingest import index
from ingest.channels.thresholds import query_k, threshold_for
from ingest.core.simhash import to_unsigned64
from ingest.models import CandidatePair, Fingerprint


@dataclass(frozen=True)
class SimhashCell:
    bit: int
    differs: bool
    band: int  # the index band the bit belongs to


@dataclass(frozen=True)
class SimhashView:
    """The pair's two SimHashes explained: distance against the threshold, a strip of
    the 64 bits (most significant first) marking the differing ones and the bands of
    the candidate index, and which band nominated the pair."""

    distance: int
    threshold: int
    cells: list[SimhashCell]
    bands: int
    band: int | None
    band_differs: int | None
    radius: int | None
    differing_bits: list[int]  # least significant first


def pair_xor(pair: CandidatePair) -> int:
    """The bits in which the pair's two main-text SimHashes differ (unsigned), read from
    the two fingerprints the pair was built from (its method, main branch: written
    once, never deleted; the pair does not repeat them). 0 while one is missing (no
    stored pair lacks them)."""
    values = dict(
        Fingerprint.objects.filter(
            method_id=pair.method_id,
            document_id__in=[pair.a_id, pair.b_id],
        ).values_list("document_id", "simhash")
    )
    a, b = values.get(pair.a_id), values.get(pair.b_id)
    if a is None or b is None:
        return 0
    return to_unsigned64(a) ^ to_unsigned64(b)


def simhash_view(*, pair: CandidatePair) -> SimhashView:
    xor = pair_xor(pair)
    scheme = index.SCHEME
    band_of: dict[int, int] = {}
    for i, combo in enumerate(scheme.combos):
        for block in combo:
            shift, width = scheme.blocks[block]
            for bit in range(shift, shift + width):
                band_of.setdefault(bit, i)
    cells = [
        SimhashCell(bit=b, differs=bool((xor >> b) & 1), band=band_of.get(b, -1))
        for b in range(63, -1, -1)
    ]
    band = pair.band
    band_differs = radius = None
    if band is not None and 0 <= band < len(scheme.combos):
        band_differs = scheme.combo_value(xor, band).bit_count()
        radius = scheme.radii(query_k())[band]
    return SimhashView(
        distance=pair.distance,
        threshold=threshold_for(pair.doc_type),
        cells=cells,
        bands=len(scheme.combos),
        band=band,
        band_differs=band_differs,
        radius=radius,
        differing_bits=[bit for bit in range(64) if (xor >> bit) & 1],
    )
