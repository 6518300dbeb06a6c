"""Agreement figures: known values and the rules that hold for every input."""

import math
from collections.abc import Hashable

from hypothesis import given, settings
from hypothesis import strategies as st

from reviews.core.agreement_math import agreement_share, cohen_kappa, krippendorff_alpha

VERDICTS = st.sampled_from(["duplicate", "near_duplicate", "revision", "distinct", "unsure"])


def test_kappa_of_a_known_table() -> None:
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: po 0.7, pe 0.5 → kappa 0.4.
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert math.isclose(cohen_kappa(a, b), 0.4)  # type: ignore[arg-type]


def test_kappa_is_undefined_without_overlap_or_with_one_category() -> None:
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None


@settings(deadline=None)
@given(st.lists(st.tuples(VERDICTS, VERDICTS), min_size=1, max_size=40))
def test_kappa_is_symmetric_and_at_most_one(rows: list[tuple[str, str]]) -> None:
    a, b = [x for x, _ in rows], [y for _, y in rows]
    k = cohen_kappa(a, b)
    assert k == cohen_kappa(b, a)
    assert k is None or k <= 1.0 + 1e-12


@settings(deadline=None)
@given(st.lists(VERDICTS, min_size=2, max_size=40).filter(lambda v: len(set(v)) > 1))
def test_identical_raters_have_kappa_and_alpha_one(values: list[str]) -> None:
    assert math.isclose(cohen_kappa(values, values), 1.0)  # type: ignore[arg-type]
    units = {i: {"ann": v, "bob": v} for i, v in enumerate(values)}
    assert math.isclose(krippendorff_alpha(units), 1.0)  # type: ignore[arg-type]


def test_alpha_of_a_known_reliability_table() -> None:
    # By hand from the coincidence matrix: 20 values, 4 off the diagonal (Do = 0.2),
    # marginals a 3, b 6, c 6, d 3, e 2 (De = (400 - 94) / 380): alpha = 1 - Do / De.
    a = ["a", "a", "b", "b", "d", "c", "c", "c", "e", "d"]
    b = ["b", "a", "b", "b", "b", "c", "c", "c", "e", "d"]
    units: dict[Hashable, dict[Hashable, str]] = {
        i: {"1": x, "2": y} for i, (x, y) in enumerate(zip(a, b, strict=True))
    }
    alpha = krippendorff_alpha(units)
    assert alpha is not None and math.isclose(alpha, 1 - 0.2 / (306 / 380))


@settings(deadline=None)
@given(st.dictionaries(st.integers(0, 30), st.dictionaries(st.sampled_from("abc"), VERDICTS)))
def test_alpha_is_at_most_one_or_undefined(units: dict[Hashable, dict[Hashable, str]]) -> None:
    alpha = krippendorff_alpha(units)
    assert alpha is None or alpha <= 1.0 + 1e-9


def test_agreement_share() -> None:
    assert agreement_share(["a", "b", "a"], ["a", "a", "a"]) == 2 / 3
    assert agreement_share([], []) is None
