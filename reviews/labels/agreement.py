"""Agreement of the editors, per editor and per doc type: Cohen's kappa for each two
editors who labelled the same pairs, Krippendorff's alpha over everyone, and each
editor's agreement with the adjudicated label. Reads current labels (a relabel counts
once, a withdrawn label not at all); the formulas are in reviews.core.agreement_math."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import cast

from reviews.core.agreement_math import agreement_share, cohen_kappa, krippendorff_alpha
from reviews.models import Adjudication, Label


@dataclass(frozen=True)
class EditorRow:
    editor: str
    labels: int
    shared: int  # labels on pairs another editor labelled too
    with_others: float | None  # share of those equal to another editor's verdict
    adjudicated: int  # labels on adjudicated pairs
    with_adjudication: float | None


@dataclass(frozen=True)
class KappaRow:
    a: str
    b: str
    pairs: int
    kappa: float | None
    raw: float | None


@dataclass
class AgreementReport:
    doc_type: str  # "" = every doc type
    pairs: int
    labels: int
    alpha: float | None
    editors: list[EditorRow] = field(default_factory=list)
    kappas: list[KappaRow] = field(default_factory=list)


# A unit of agreement is a label's subject, the two documents (low, high): labels given
# on two methods' pairs of the same documents are judgments of one unit.
Subject = tuple[int, int]


def _final_verdicts() -> dict[Subject, str]:
    final: dict[Subject, str] = {}
    for a, b, verdict in Adjudication.objects.order_by("created_at", "id").values_list(
        "pair__a_id", "pair__b_id", "verdict"
    ):
        final[(a, b)] = verdict
    return final


def _report(
    doc_type: str, units: dict[Subject, dict[str, str]], final: dict[Subject, str]
) -> AgreementReport:
    by_editor: dict[str, dict[Subject, str]] = defaultdict(dict)
    for pair_id, ratings in units.items():
        for editor, verdict in ratings.items():
            by_editor[editor][pair_id] = verdict
    editors = []
    for editor in sorted(by_editor):
        mine = by_editor[editor]
        shared = [
            (v, other) for p, v in mine.items() for e, other in units[p].items() if e != editor
        ]
        judged = [(v, final[p]) for p, v in mine.items() if p in final]
        editors.append(
            EditorRow(
                editor=editor,
                labels=len(mine),
                shared=len({p for p in mine if len(units[p]) > 1}),
                with_others=agreement_share([x for x, _ in shared], [y for _, y in shared]),
                adjudicated=len(judged),
                with_adjudication=agreement_share([x for x, _ in judged], [y for _, y in judged]),
            )
        )
    kappas = []
    for a, b in combinations(sorted(by_editor), 2):
        both = sorted(by_editor[a].keys() & by_editor[b].keys())
        if not both:
            continue
        va = [by_editor[a][p] for p in both]
        vb = [by_editor[b][p] for p in both]
        kappas.append(
            KappaRow(
                a=a, b=b, pairs=len(both), kappa=cohen_kappa(va, vb), raw=agreement_share(va, vb)
            )
        )
    return AgreementReport(
        doc_type=doc_type,
        pairs=len(units),
        labels=sum(len(r) for r in units.values()),
        alpha=krippendorff_alpha(cast(Mapping[Hashable, Mapping[Hashable, str]], units)),
        editors=editors,
        kappas=kappas,
    )


def agreement_reports(*, doc_types: list[str]) -> list[AgreementReport]:
    """One report over every doc type, then one per doc type that has labels."""
    rows = Label.objects.filter(superseded_by__isnull=True, retraction=False).values_list(
        "doc_low", "doc_high", "pair__doc_type", "editor__username", "verdict"
    )
    units: dict[Subject, dict[str, str]] = defaultdict(dict)
    types: dict[Subject, str] = {}
    for low, high, doc_type, editor, verdict in rows.iterator(chunk_size=5000):
        units[(low, high)][editor] = verdict
        types[(low, high)] = doc_type
    final = _final_verdicts()
    out = [_report("", units, final)]
    for t in doc_types:
        subset = {p: r for p, r in units.items() if types[p] == t}
        if subset:
            out.append(_report(t, subset, final))
    return out
