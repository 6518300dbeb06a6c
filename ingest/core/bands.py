"""Candidate index maths: the index only nominates.

Given the stored 64-bit SimHash values of one method (distances only within a method), find
every value within Hamming distance k of a query, recall 1.000, without scanning them all. A
band index does it with exact-match lookups followed by the exact Hamming filter.

The pigeonhole, with probes
---------------------------
Split the 64 bits into disjoint blocks. A *combo* is a tuple of blocks; its value (the
blocks' bits concatenated) is one stored *key* of each fingerprint, and each combo has
its own index. If a and b differ in d bits, combo c differs in D_c of them. A query for
a probes, for each combo c, every value within r_c bits of a's value (r_c = -1: the
combo is not probed at all), so it finds b whenever some combo has D_c <= r_c.

- Disjoint combos: any spread of d <= k bits leaves some D_c <= r_c exactly when
  sum(r_c + 1) >= k + 1 (otherwise put r_c + 1 bits in every combo). `radii(k)` picks
  the radii meeting that with the fewest probes; they need not be equal (k = 6 over two
  32-bit halves: radii (2, 3), 529 + 5,489 probes, against 2 x 5,489 for (3, 3)).
- Overlapping combos (every pair of 8 blocks, Manku et al.): `radii(k)` uses one radius
  for all, the smallest that survives every spread of k bits (enumerated).

Cost: a probe is one btree descent (~1 us); a w-bit key's bucket holds about N / 2^w
values when bits are uniform, and every value a probe nominates is a heap visit (~1.5
us per page). Real SimHash bits are not uniform: on real-looking text
(bench/corpus.py) single bits run from 3% to 93% ones, a 16-bit block carries only 10
to 12 bits of information, and a query's neighbourhood is crowded, so narrow keys
nominate tens of thousands of candidates.

The chosen scheme
-----------------
`scheme_for(k)` returns `B32X2` for every k <= 7: the two 32-bit halves, one btree
index each on (method, half). The stored keys do not depend on k, so one pair of
indexes serves every threshold in settings. k <= 3 probes radii (1, 1), 66 keys; k = 6
probes radii (2, 3), 6,018 keys; k = 7 (the most it accepts) radii (3, 3), 10,978.
Since ingest 0029 each btree also carries (INCLUDE) the SimHash, the document id and
the fetch time, and the lookup runs one branch per half (ingest/index.py): an
index-only scan, so the rows a lookup nominates are read from the index, not the table.

Measured by bench/experiments/index_experiment.py (1,000,000 fingerprints of the default
corpus, 500 queries, 2 cores, PostgreSQL 15 with default settings, generic plans; recall 1.000
everywhere; bytes per fingerprint are table + all indexes, with the primary key
(method, document_id) and without it):

    scheme, index             B/fp       k=3 p95   k=6 p95   candidates p95 (k=3 / 6)
    b32x2, 2 btrees           134 (102)   0.6 ms   16.7 ms      104 /  2,691
    b16x4, 4 btrees           123 (92)    6.3 ms   16.4 ms    8,404 / 44,490
    b16x4, 1 GIN              122 (90)    8.9 ms   35.0 ms    8,404 / 44,490
    b8x8-pairs, 1 GIN (28)    300 (268)  42.4 ms   30.4 ms   40,310 / 40,310

(Latencies are noisy on a shared 2-core machine: an earlier, quieter run gave b32x2
0.4 ms and 12.8 ms, b16x4 with btrees 7.2 ms and 18.5 ms.)

A GIN `&&` also pays, per posting-list item, for every key of its array, and a pending
list (fastupdate on) doubles its p95; the 28 pair keys of `B8X8_PAIRS` (Manku's radius
0 for k = 6) cost 210 bytes of index per fingerprint and still nominate 40,000 rows.

Toward 10M (bench/experiments/band10m_experiment.py, bench/results/
2026-12-03-band-index-10m.md; 3M fingerprints on the product's partitioned table shape,
300 queries, load average ~2.5; bytes = heap + primary key + band btrees):

    layout                  B/doc   k=3 p50/p95    k=6 p50/p95    k=6 entries read p95
    b32x2, plain btrees      141    1.01 / 2.6 ms  13.2 / 35.4 ms       6,429
    b32x2, covering          182    1.01 / 1.7 ms  11.7 / 16.8 ms       6,429
    b24-20-20, covering      222    0.94 / 1.9 ms   2.9 /  9.0 ms      35,800
    b21x3w, covering         222    1.03 / 2.6 ms   3.5 / 10.9 ms      48,861

A plain btree sends every nominated row to the table (a bitmap heap scan). Covering,
the halves cost their 6,018 probes (constant in N, 10-20 ms of server time depending on
the machine's load) plus ~0.4 us an index entry read: at 5M, k=6 9.8 / 15.0 ms p50 /
p95 (the thirds 3.4 / 12.3); projected to 10M, k=6 20-23 ms p95 of server time in
quiet runs (19-38 ms in busier ones), k=3 about 1 ms. Thirds
(`B24_20_20`: 24, 20 and 20 bits, the largest radius on the widest third,
`fixed_radii`) probe only 343 keys but read 5 times the entries, which grow with N:
projected 21-22 ms at k=6 (29-37 busier; p50 4.5-8 ms against 11-19 for the halves) and
2.9-7.5 ms at k=3, growing past 10M where the halves stay flat, and a third btree costs
40 B a document. Hence the halves, covering; the thirds are the layout to measure again
at 10M itself.

Query cost grows as N x probes / 2^(information in 32 bits). On the `dense` stress
corpus (47% of unrelated documents with a neighbour within 3 bits, three times the
real 1M-document crawl) B32X2 gives 5.6 ms and 36.7 ms at p95, with 3,300 true matches
within 6 bits at p95: there the answer itself is large. Keep the searched set small as
the corpus grows (method in the index, lookback window, doc-type partitions) rather
than adding probes.

Keys in the database
--------------------
A key is a signed int4 (a 32-bit combo value is stored as its two's complement, the
way the signed bigint stores the 64 bits). `sql_key_functions` emits one
IMMUTABLE SQL function per combo (inlined by the planner), `sql_indexes` one btree
per combo on (method, key) (with `include`, covering), and `sql_probe_condition` the
matching WHERE clause (`sql_key_condition` one combo's, for one branch per combo),
whose parameters are `probes(value, k)`; the exact filter is
`bit_count((simhash # q)::bit(64)) <= k`. Run it with
`SET LOCAL plan_cache_mode = force_generic_plan`: re-planning thousands of array
constants on every call costs ~4 ms. Send the probe keys sorted: the btree sorts a
search array first and only checks a sorted one (~10% of a k = 6 lookup).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import combinations
from math import comb

import numpy as np

MASK64 = (1 << 64) - 1
MAX_K = 16  # radii() enumerates spreads of k bits for overlapping combos


@dataclass(frozen=True)
class BandScheme:
    """Blocks over the 64 bits and the combos of blocks that make the stored keys.

    `k_max` is the largest distance the scheme answers: probes grow fast with k, and
    `probes` refuses more.
    """

    k_max: int
    blocks: tuple[tuple[int, int], ...]  # (shift, width); bit 0 = least significant
    combos: tuple[tuple[int, ...], ...]  # indexes into blocks; key bits in this order
    name: str = ""
    # Radii chosen by hand, one tuple per k = 0..k_max (empty: `radii` computes them).
    fixed_radii: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        used = 0
        for shift, width in self.blocks:
            if width < 1 or shift < 0 or shift + width > 64:
                raise ValueError(f"block ({shift}, {width}) is not inside 64 bits")
            bits = ((1 << width) - 1) << shift
            if used & bits:
                raise ValueError("blocks overlap")
            used |= bits
        if not self.combos:
            raise ValueError("a scheme needs at least one combo")
        for combo in self.combos:
            if not combo or len(set(combo)) != len(combo):
                raise ValueError(f"combo {combo} is empty or repeats a block")
            if any(not 0 <= b < len(self.blocks) for b in combo):
                raise ValueError(f"combo {combo} names a block that does not exist")
            if sum(self.blocks[b][1] for b in combo) > 32:
                raise ValueError(f"combo {combo} is wider than an int4 key")
        if not 0 <= self.k_max <= MAX_K:
            raise ValueError(f"k_max must be within 0..{MAX_K}")
        if self.fixed_radii:
            if len(self.fixed_radii) != self.k_max + 1:
                raise ValueError("fixed_radii needs one tuple per k = 0..k_max")
            for k, radii in enumerate(self.fixed_radii):
                if len(radii) != len(self.combos) or not self._covers(k, radii):
                    raise ValueError(f"fixed radii {radii} miss some pair at k = {k}")

    def _covers(self, k: int, radii: tuple[int, ...]) -> bool:
        """Whether every spread of k differing bits leaves some combo within its radius."""
        caps = (*(w for _, w in self.blocks), 64 - sum(w for _, w in self.blocks))
        return all(
            any(
                sum(spread[b] for b in combo) <= r
                for combo, r in zip(self.combos, radii, strict=True)
            )
            for spread in spreads(k, caps)
        )

    @cached_property
    def widths(self) -> tuple[int, ...]:
        """Bits per combo (per key)."""
        return tuple(sum(self.blocks[b][1] for b in combo) for combo in self.combos)

    @cached_property
    def disjoint(self) -> bool:
        blocks = [b for combo in self.combos for b in combo]
        return len(blocks) == len(set(blocks))

    def combo_value(self, value: int, index: int) -> int:
        """The bits of combo `index` (its blocks concatenated, first block highest),
        as an unsigned integer."""
        value &= MASK64
        out = 0
        for b in self.combos[index]:
            shift, width = self.blocks[b]
            out = (out << width) | ((value >> shift) & ((1 << width) - 1))
        return out

    def _as_key(self, index: int, unsigned: int) -> int:
        if self.widths[index] == 32 and unsigned >= 1 << 31:
            return unsigned - (1 << 32)
        return unsigned

    def keys(self, value: int) -> list[int]:
        """One int4 key per combo, in combo order: what the index stores for `value`
        (a signed bigint from the database gives the same keys as its unsigned value)."""
        return [self._as_key(i, self.combo_value(value, i)) for i in range(len(self.combos))]

    def radii(self, k: int) -> tuple[int, ...]:
        """Probe radius per combo for distance k (-1: that combo is not probed)."""
        if not 0 <= k <= MAX_K:
            raise ValueError(f"k must be within 0..{MAX_K}")
        if self.fixed_radii and k <= self.k_max:
            return self.fixed_radii[k]
        return _radii(self.widths, self.combos, tuple(w for _, w in self.blocks), k)

    def probes(self, value: int, k: int) -> list[list[int]]:
        """Per combo, the sorted keys a query for distance <= k looks up."""
        return [np.sort(keys).tolist() for keys in self.probe_arrays(value, k)]

    def probe_arrays(self, value: int, k: int) -> list[np.ndarray]:
        """`probes` as int32 arrays, in no particular order (what a statement sends)."""
        if not 0 <= k <= self.k_max:
            raise ValueError(f"scheme {self.name or self} answers k <= {self.k_max}, not {k}")
        out = []
        for i, r in enumerate(self.radii(k)):
            keys = np.uint64(self.combo_value(value, i)) ^ _mask_array(self.widths[i], r)
            # Every key fits in 32 bits; 32-bit ones are two's complement, as _as_key.
            out.append(keys.astype(np.uint32).view(np.int32))
        return out

    def probe_count(self, k: int) -> int:
        return sum(
            sum(comb(w, j) for j in range(r + 1))
            for w, r in zip(self.widths, self.radii(k), strict=True)
        )

    # SQL: every statement below computes exactly what keys() computes.

    def key_expression(self, index: int, simhash: str = "simhash") -> str:
        """SQL expression of keys()[index] over a signed bigint column."""
        parts = ""
        for b in self.combos[index]:
            shift, width = self.blocks[b]
            block = f"(({simhash} >> {shift}) & {(1 << width) - 1})"
            parts = block if not parts else f"(({parts} << {width}) | {block})"
        if self.widths[index] == 32:  # unsigned 32 bits -> two's complement int4
            parts = f"(({parts} # 2147483648) - 2147483648)"
        return f"{parts}::int4"

    def sql_function(self, name: str) -> str:
        """`CREATE OR REPLACE FUNCTION name(simhash bigint) RETURNS int4[]` = keys().

        A plain SQL body, IMMUTABLE and not STRICT, so the planner inlines it (a strict
        function around ARRAY[] is not inlined); usable in an expression index.
        """
        body = ", ".join(self.key_expression(i) for i in range(len(self.combos)))
        return (
            f"CREATE OR REPLACE FUNCTION {name}(simhash bigint) RETURNS int4[]\n"
            "LANGUAGE sql IMMUTABLE PARALLEL SAFE\n"
            f"AS $$SELECT ARRAY[{body}]$$;"
        )

    def sql_key_functions(self, name: str) -> str:
        """One function per combo, `name_<i>(simhash bigint) RETURNS int4` = keys()[i]."""
        return "\n".join(
            f"CREATE OR REPLACE FUNCTION {name}_{i}(simhash bigint) RETURNS int4\n"
            "LANGUAGE sql IMMUTABLE PARALLEL SAFE\n"
            f"AS $$SELECT {self.key_expression(i)}$$;"
            for i in range(len(self.combos))
        )

    def sql_indexes(
        self, table: str, name: str, method: str = "method", include: Sequence[str] = ()
    ) -> list[str]:
        """One btree per combo on (method, key): methods never share a lookup. With
        `include`, each btree also carries those columns (a covering index: a lookup
        that reads only them is an index-only scan and never visits the table)."""
        base = name.rsplit(".", 1)[-1]  # a schema-qualified function name
        extra = f" INCLUDE ({', '.join(include)})" if include else ""
        return [
            f"CREATE INDEX IF NOT EXISTS {table}_{base}_{i} ON {table} "
            f"({method}, {name}_{i}(simhash)){extra}"
            for i in range(len(self.combos))
        ]

    def sql_key_condition(self, name: str, index: int, placeholder: str = "%s") -> str:
        """`name_<index>(simhash) = ANY(<probes[index]>)`: the lookup of one combo, for a
        statement with one branch per combo (see `sql_probe_condition` for all in one)."""
        return f"{name}_{index}(simhash) = ANY({placeholder}::int4[])"

    def sql_probe_condition(self, name: str, placeholder: str = "%s") -> str:
        """`(name_0(simhash) = ANY(<probes[0]>) OR …)`: one placeholder per combo, in
        order, each bound to probes(value, k)[i] (an empty list for radius -1)."""
        terms = [self.sql_key_condition(name, i, placeholder) for i in range(len(self.combos))]
        return "(" + " OR ".join(terms) + ")"


@cache
def _masks(width: int, r: int) -> tuple[int, ...]:
    """All XOR masks of at most r set bits over `width` bits, the zero mask first
    (none at all for r = -1)."""
    out = []
    for j in range(0, min(r, width) + 1):
        for bits in combinations(range(width), j):
            out.append(sum(1 << b for b in bits))
    return tuple(out)


@cache
def _mask_array(width: int, r: int) -> np.ndarray:
    return np.array(_masks(width, r), dtype=np.uint64)


def _probes(width: int, r: int) -> int:
    return sum(comb(width, j) for j in range(min(r, width) + 1))


def spreads(k: int, caps: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Every way to put exactly k differing bits into parts of the given capacities."""
    if not caps:
        if k == 0:
            yield ()
        return
    room = sum(caps[1:])
    for here in range(max(0, k - room), min(k, caps[0]) + 1):
        for rest in spreads(k - here, caps[1:]):
            yield (here, *rest)


@cache
def _radii(
    widths: tuple[int, ...],
    combos: tuple[tuple[int, ...], ...],
    block_widths: tuple[int, ...],
    k: int,
) -> tuple[int, ...]:
    blocks = [b for combo in combos for b in combo]
    if len(blocks) == len(set(blocks)):
        # Disjoint: need sum(r + 1) >= k + 1; spend the k + 1 units where probes are
        # cheapest (dynamic programming over the combos; ties keep earlier choices).
        best: dict[int, tuple[int, tuple[int, ...]]] = {0: (0, ())}
        for w in widths:
            nxt: dict[int, tuple[int, tuple[int, ...]]] = {}
            for units, (cost, rs) in best.items():
                for r in range(-1, min(k, w) + 1):
                    u = min(k + 1, units + r + 1)
                    c = cost + _probes(w, r)
                    if u not in nxt or c < nxt[u][0]:
                        nxt[u] = (c, (*rs, r))
            best = nxt
        return best[k + 1][1]
    # Overlapping combos: one radius, the smallest that survives every spread (bits
    # outside every block take differences for free: one more part).
    caps = (*block_widths, 64 - sum(block_widths))
    worst = 0
    for spread in spreads(k, caps):
        worst = max(worst, min(sum(spread[b] for b in combo) for combo in combos))
    return (worst,) * len(combos)


def _even_blocks(count: int) -> tuple[tuple[int, int], ...]:
    """`count` contiguous blocks covering the 64 bits, the first one highest."""
    widths = [64 // count + (1 if i < 64 % count else 0) for i in range(count)]
    out, top = [], 64
    for w in widths:
        top -= w
        out.append((top, w))
    return tuple(out)


def _singles(count: int) -> tuple[tuple[int, ...], ...]:
    return tuple((i,) for i in range(count))


# The chosen scheme: two 32-bit halves, one (covering) btree each.
B32X2 = BandScheme(k_max=7, blocks=_even_blocks(2), combos=_singles(2), name="b32x2")
# Measured and rejected (see the module docstring); the thirds with the largest radius
# on the widest third (fewer entries read than the fewest-probes radii of B21X3).
B16X4 = BandScheme(k_max=7, blocks=_even_blocks(4), combos=_singles(4), name="b16x4")
B21X3 = BandScheme(k_max=7, blocks=_even_blocks(3), combos=_singles(3), name="b21x3")
B24_20_20 = BandScheme(
    k_max=7,
    blocks=((40, 24), (20, 20), (0, 20)),
    combos=_singles(3),
    name="b24-20-20",
    fixed_radii=(
        (0, -1, -1),
        (0, 0, -1),
        (0, 0, 0),
        (1, 0, 0),
        (1, 1, 0),
        (1, 1, 1),
        (2, 1, 1),
        (2, 2, 1),
    ),
)
B22_21_21W = BandScheme(
    k_max=7,
    blocks=_even_blocks(3),
    combos=_singles(3),
    name="b21x3w",
    fixed_radii=B24_20_20.fixed_radii,
)
B8X8_PAIRS = BandScheme(
    k_max=6,
    blocks=_even_blocks(8),
    combos=tuple(combinations(range(8), 2)),
    name="b8x8-pairs",
)

SCHEMES: dict[str, BandScheme] = {
    s.name: s for s in (B32X2, B21X3, B22_21_21W, B24_20_20, B16X4, B8X8_PAIRS)
}


def scheme_for(k_max: int) -> BandScheme:
    """The band scheme for thresholds up to `k_max` (see the module docstring)."""
    if not 0 <= k_max <= B32X2.k_max:
        raise ValueError(f"no band scheme for k_max={k_max}; supported: 0..{B32X2.k_max}")
    return B32X2


def brute_force_pairs(values: Sequence[int] | np.ndarray, k: int) -> set[tuple[int, int]]:
    """Every index pair i < j with hamming(values[i], values[j]) <= k, by numpy."""
    arr = np.asarray([int(v) & MASK64 for v in values], dtype=np.uint64)
    n = len(arr)
    out: set[tuple[int, int]] = set()
    step = max(1, 2_000_000 // max(n, 1))
    for start in range(0, n, step):
        rows = arr[start : start + step]
        dist = np.bitwise_count(rows[:, None] ^ arr[None, :])
        i, j = np.nonzero(dist <= k)
        i += start
        keep = i < j
        out.update(zip(i[keep].tolist(), j[keep].tolist(), strict=True))
    return out


def differing_bits(a: int, b: int) -> list[int]:
    """Bit positions 0..63 (0 = least significant) where a and b differ."""
    x = (a ^ b) & MASK64
    return [i for i in range(64) if (x >> i) & 1]


def nominating_band(scheme: BandScheme, a: int, b: int, k: int | None = None) -> int | None:
    """First combo whose key is equal for a and b (or, given k, within that combo's
    probe radius for k): the band that nominated the pair, shown to editors."""
    radii = (0,) * len(scheme.combos) if k is None else scheme.radii(k)
    for i, r in enumerate(radii):
        if (scheme.combo_value(a, i) ^ scheme.combo_value(b, i)).bit_count() <= r:
            return i
    return None


# PostgreSQL's int4 type (pg_type.oid 23, fixed in the catalogue).
INT4_OID = 23


def int4_array_binary(values: np.ndarray) -> bytes:
    """Probe keys as PostgreSQL's binary int4[]: dimensions, flags (no NULLs), element
    type, then each dimension's length and lower bound, then (length, value) per element.
    Sent as a binary parameter, a k = 6 query's 6,018 keys cost a fraction of their text
    literal (ingest/index.py)."""
    n = len(values)
    if n == 0:
        return struct.pack(">iiI", 0, 0, INT4_OID)
    items = np.empty((n, 2), dtype=">i4")
    items[:, 0] = 4
    items[:, 1] = values
    return struct.pack(">iiIii", 1, 0, INT4_OID, n, 1) + items.tobytes()
