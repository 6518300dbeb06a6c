"""MinHash signatures of a text's token shingles and their LSH bands (pure: no Django).

The tokens are the default fingerprint method's (``simhash64-mixedscript-sha256-v1``:
Han, kana and hangul runs as characters and character bigrams, every other script as the
reference's casefolded words, after that method's normalization), so the channel reads
Chinese as that method does. A text's features are its distinct runs of ``SHINGLE``
consecutive tokens; the Jaccard similarity of two texts is that of their shingle sets.
A signature is ``PERMUTATIONS`` minimum hash values (datasketch's MinHash: 32-bit SHA-1
of each shingle, then the seeded universal hashes); the share of positions two
signatures agree on estimates the Jaccard similarity (its standard error is
sqrt(J(1 - J) / PERMUTATIONS), 0.04 at J = 0.7).

LSH: the signature is cut into ``BANDS`` bands of ``ROWS`` values; each band becomes one
64-bit key (BLAKE2b of the band's number and values). Two texts share a key with
probability 1 - (1 - J^ROWS)^BANDS: 0.9998 at J = 0.7, 0.87 at J = 0.5, 0.05 at
J = 0.2 (32 bands of 4 rows). The keys are what the index stores and probes.
"""

import hashlib
import struct
from dataclasses import dataclass

import numpy as np
from datasketch import MinHash

from ingest.core.methods import MIXED_KEY, normalize_for, tokens_for

# The channel's method: shingles, hash, permutations, bands. A change is a new key (the
# stored signatures and bands of one key are never compared with another's).
METHOD = "minhash-mixedscript-shingle5-p128-b32r4-v1"
SHINGLE = 5
PERMUTATIONS = 128
SEED = 1
BANDS = 32
ROWS = 4
assert BANDS * ROWS == PERMUTATIONS

_SIGNED = struct.Struct(">q")


def tokens(text: str) -> list[str]:
    """The default fingerprint method's tokens of a text (its normalization first)."""
    return tokens_for(MIXED_KEY, normalize_for(MIXED_KEY, text))


def shingles(text: str) -> set[str]:
    """The distinct runs of SHINGLE tokens (a text of fewer tokens has none)."""
    toks = tokens(text)
    return {" ".join(toks[i : i + SHINGLE]) for i in range(len(toks) - SHINGLE + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    """The exact Jaccard similarity of two shingle sets (0 when both are empty)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


@dataclass(frozen=True)
class Signature:
    values: np.ndarray  # PERMUTATIONS uint32 values

    def to_bytes(self) -> bytes:
        return self.values.astype("<u4").tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Signature":
        return cls(np.frombuffer(data, dtype="<u4"))

    def bands(self) -> list[int]:
        """The LSH keys, one per band, as signed 64-bit integers (bigint storage)."""
        out = []
        for band in range(BANDS):
            chunk = self.values[band * ROWS : (band + 1) * ROWS].astype("<u4").tobytes()
            digest = hashlib.blake2b(bytes([band]) + chunk, digest_size=8).digest()
            out.append(_SIGNED.unpack(digest)[0])
        return out


def signature(features: set[str]) -> Signature | None:
    """The MinHash signature of a shingle set (None for an empty set: no evidence)."""
    if not features:
        return None
    m = MinHash(num_perm=PERMUTATIONS, seed=SEED)
    m.update_batch([f.encode("utf-8") for f in sorted(features)])
    return Signature(np.asarray(m.hashvalues, dtype=np.uint32))


def estimate(a: Signature, b: Signature) -> float:
    """The estimated Jaccard similarity: the share of positions the signatures agree on."""
    if len(a.values) != len(b.values):
        return 0.0
    return round(float(np.mean(a.values == b.values)), 4)


def collide_probability(j: float) -> float:
    """Probability that two texts of Jaccard similarity j share at least one band."""
    return 1.0 - (1.0 - j**ROWS) ** BANDS


@dataclass(frozen=True)
class Recall:
    pairs: int  # pairs at or above the threshold by brute-force Jaccard
    found_by_bands: int  # of them, sharing a band
    found: int  # of them, returned by a lookup (a band shared, the estimate near enough)
    candidates: int  # pairs a lookup returns in all (the verifications it costs)

    @property
    def band_recall(self) -> float:
        return self.found_by_bands / self.pairs if self.pairs else 1.0

    @property
    def recall(self) -> float:
        """A returned pair is nominated when its exact Jaccard similarity reaches the
        threshold, which these pairs' does: the channel's recall."""
        return self.found / self.pairs if self.pairs else 1.0


def recall(features: dict[int, set[str]], threshold: float, margin: float) -> Recall:
    """LSH against brute force over these shingle sets: the pairs at or above the
    threshold by exact Jaccard, those sharing a band, and those a lookup returns (a band
    shared and the estimate at least threshold - margin)."""
    sigs = {d: s for d, f in features.items() if (s := signature(f)) is not None}
    ids = sorted(sigs)
    by_band: dict[int, list[int]] = {}
    for d in ids:
        for key in sigs[d].bands():
            by_band.setdefault(key, []).append(d)
    colliding = {
        (a, b)
        for members in by_band.values()
        for i, a in enumerate(members)
        for b in members[i + 1 :]
    }
    returned = {p for p in colliding if estimate(sigs[p[0]], sigs[p[1]]) >= threshold - margin}
    truth = {
        (a, b)
        for i, a in enumerate(ids)
        for b in ids[i + 1 :]
        if jaccard(features[a], features[b]) >= threshold
    }
    return Recall(len(truth), len(truth & colliding), len(truth & returned), len(returned))
