"""A pair's evidence stored once: the JSON keeps only what the pair's columns cannot
give, and a reader gets the same evidence from a pair stored either way
(docs/scaling.md, "The dedup state per document")."""

from typing import Any

from ingest import candidates
from ingest.core.guards import guards_check
from ingest.models import CandidatePair


def _pair(**columns: Any) -> CandidatePair:
    base: dict[str, Any] = {
        "exact": False,
        "distance": 5,
        "band": 2,
        "shared_passages": 30,
        "a_in_b": 30 / 38,
        "b_in_a": 30 / 41,
        "cosine": None,
    }
    return CandidatePair(**{**base, **columns})


def _full(**extra: Any) -> dict[str, Any]:
    """Evidence as ingest.channels.registry.evidence builds it for _pair()'s scores."""
    out: dict[str, Any] = {
        "exact": {"same_text": False},
        "simhash": {"distance": 5, "band": 2},
        "passages": {
            "shared": 30,
            "passages_a": 38,
            "passages_b": 41,
            "a_in_b": round(30 / 38, 4),
            "b_in_a": round(30 / 41, 4),
            "template_a": 0,
            "template_b": 0,
            "runs": [[0, 40, 3, 43]],
        },
    }
    for name, entry in extra.items():
        out[name] = {**out.get(name, {}), **entry}
    return out


def _without_runs(evidence: dict[str, Any]) -> dict[str, Any]:
    return {**evidence, "passages": {k: v for k, v in evidence["passages"].items() if k != "runs"}}


def test_what_the_columns_give_is_not_kept() -> None:
    pair = _pair()
    assert pair.evidence_to_keep(_full()) is None
    pair.evidence_kept = None
    assert pair.evidence == _without_runs(_full())


def test_what_only_pair_building_knew_is_kept_and_read_back() -> None:
    full = _full(
        simhash={"without_boilerplate": 2},
        passages={"template_a": 4, "short_copy": {"shingles": 0.91}},
        minhash={"jaccard": 0.82},
        semantic={"cosine": 0.93},
    )
    pair = _pair(cosine=0.93)
    kept = pair.evidence_to_keep(full)
    assert kept == {
        "simhash": {"without_boilerplate": 2},
        "passages": {"template_a": 4, "short_copy": {"shingles": 0.91}},
        "minhash": {"jaccard": 0.82},
    }
    pair.evidence_kept = kept
    assert pair.evidence == _without_runs(full)


def test_sizes_are_kept_when_no_passage_is_shared() -> None:
    full = _full(passages={"shared": 0, "a_in_b": 0.0, "b_in_a": 0.0, "runs": []})
    pair = _pair(shared_passages=0, a_in_b=0.0, b_in_a=0.0)
    pair.evidence_kept = pair.evidence_to_keep(full)
    assert pair.evidence_kept == {"passages": {"passages_a": 38, "passages_b": 41}}
    assert pair.evidence == _without_runs(full)


def test_a_pair_stored_with_its_whole_evidence_reads_the_same() -> None:
    full = _full(simhash={"without_boilerplate": 2}, semantic={"cosine": 0.93})
    pair = _pair(cosine=0.93, evidence_kept=full)
    assert pair.evidence == full


def test_guard_details_are_stored_only_when_a_side_has_a_number_or_an_id() -> None:
    assert candidates._guard_details(guards_check("the same words", "the same words")) is None
    details = candidates._guard_details(guards_check("costs 14.99 now", "costs 15.99 now"))
    assert details is not None
    assert set(details) == {"numbers_a", "numbers_b", "ids_a", "ids_b"}
    assert details["numbers_a"] != details["numbers_b"]
