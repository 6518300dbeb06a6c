"""The MinHash channel's pure part: the default method's tokens shingled, signatures,
their Jaccard estimate and the LSH band keys."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.core import minhash

WORDS = [f"w{i}" for i in range(400)]


def test_the_method_is_locked() -> None:
    """A signature is stored: the same text gives the same values in every process and
    version (datasketch pinned; seed, permutations and shingles named in the key)."""
    sig = minhash.signature(minhash.shingles("alpha beta gamma delta epsilon zeta eta"))
    assert sig is not None
    assert len(sig.values) == minhash.PERMUTATIONS
    again = minhash.signature(minhash.shingles("alpha beta gamma delta epsilon zeta eta"))
    assert again is not None and again.to_bytes() == sig.to_bytes()
    assert minhash.Signature.from_bytes(sig.to_bytes()).bands() == sig.bands()
    assert len(set(sig.bands())) == minhash.BANDS


def test_shingles_read_the_default_methods_tokens_chinese_as_characters() -> None:
    # Han runs: characters then character bigrams, as simhash64-mixedscript-sha256-v1.
    chinese = minhash.shingles("北京时间今天上午国家统计局发布数据")
    assert chinese and all(" " in s for s in chinese)
    assert minhash.tokens("北京时间")[:4] == ["北", "京", "时", "间"]
    # Words casefolded as the reference's, fewer than five tokens: no shingle, no signature.
    assert minhash.shingles("One two three four") == set()
    assert minhash.signature(set()) is None
    assert minhash.shingles("A b c d e") == minhash.shingles("a B C D E")


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=20, max_value=200),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_the_estimate_is_near_the_jaccard_similarity(size: int, share: float, seed: int) -> None:
    rng = random.Random(seed)
    common = {f"s{i}" for i in range(size)}
    a = common | {f"a{i}" for i in range(rng.randint(0, round(size * (1 - share)) + 1))}
    b = common | {f"b{i}" for i in range(rng.randint(0, round(size * (1 - share)) + 1))}
    sa, sb = minhash.signature(a), minhash.signature(b)
    assert sa is not None and sb is not None
    # Standard error sqrt(J(1-J)/128) <= 0.045: 0.25 is over five of them.
    assert abs(minhash.estimate(sa, sb) - minhash.jaccard(a, b)) <= 0.25


@settings(max_examples=40, deadline=None)
@given(st.sets(st.sampled_from(WORDS), min_size=1, max_size=80))
def test_identical_sets_agree_everywhere_and_share_every_band(features: set[str]) -> None:
    sa, sb = minhash.signature(features), minhash.signature(set(features))
    assert sa is not None and sb is not None
    assert minhash.estimate(sa, sb) == 1.0 and sa.bands() == sb.bands()


def test_the_band_curve() -> None:
    assert minhash.collide_probability(0.7) > 0.999
    assert minhash.collide_probability(0.2) < 0.06
