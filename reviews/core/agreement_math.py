"""Agreement between editors over nominal verdicts: Cohen's kappa for two editors on
the pairs both labelled, Krippendorff's alpha (nominal, the `krippendorff` package) over
every editor at once, and the plain share of agreement with a reference label (the
adjudicated one). Pure: verdict strings in, numbers out; None where a figure is not
defined (no overlap, or a single category leaves nothing to agree by chance)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence

import krippendorff
import numpy as np


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Kappa of two raters on the same units (a[i] and b[i] rate unit i)."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same units")
    n = len(a)
    if n == 0:
        return None
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[c] * cb[c] for c in ca.keys() | cb.keys()) / (n * n)
    if expected >= 1.0:
        return None  # both raters used one and the same category throughout
    return (observed - expected) / (1.0 - expected)


def krippendorff_alpha(units: Mapping[Hashable, Mapping[Hashable, str]]) -> float | None:
    """Alpha (nominal) of every rater over every unit: units[unit][rater] = category.
    Units rated once carry no information and are left out."""
    paired = {u: r for u, r in units.items() if len(r) >= 2}
    if not paired:
        return None
    raters = sorted({r for ratings in paired.values() for r in ratings}, key=str)
    categories = sorted({c for ratings in paired.values() for c in ratings.values()})
    if len(categories) < 2:
        return None
    code = {c: i for i, c in enumerate(categories)}
    row = {r: i for i, r in enumerate(raters)}
    data = np.full((len(raters), len(paired)), np.nan)
    for j, ratings in enumerate(paired.values()):
        for rater, category in ratings.items():
            data[row[rater], j] = code[category]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def agreement_share(given: Sequence[str], reference: Sequence[str]) -> float | None:
    """The share of labels equal to the reference label of their unit."""
    if len(given) != len(reference):
        raise ValueError("one reference per label")
    if not given:
        return None
    return sum(1 for x, y in zip(given, reference, strict=True) if x == y) / len(given)
