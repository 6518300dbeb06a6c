"""The guard terms the pair view emphasises: a multiplied number's digits are a term too,
since the diff splits "1.2万" into the digits and the character."""

from ingest.models import CandidatePair
from reviews.core.diff import word_diff
from reviews.pair.pair_reads import guard_terms


def test_a_multiplied_number_emphasises_its_digits() -> None:
    pair = CandidatePair(
        guard_details={"numbers_a": ["1.2万"], "numbers_b": ["1.3万"], "ids_a": [], "ids_b": []}
    )
    terms = guard_terms(pair)
    assert terms == ["1.2", "1.2万", "1.3", "1.3万"]
    d = word_diff("售价1.2万元。", "售价1.3万元。", emphasise=terms)
    assert [s.text for s in d.left + d.right if s.emphasis] == ["1.2", "1.3"]


def test_plain_numbers_and_ids_are_their_own_terms() -> None:
    pair = CandidatePair(
        guard_details={"numbers_a": ["1.250.000"], "numbers_b": [], "ids_a": ["SKU-1"], "ids_b": []}
    )
    assert guard_terms(pair) == ["1.250.000", "SKU-1"]
