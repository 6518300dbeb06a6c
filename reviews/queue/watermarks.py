"""The watermarks of the queue's incremental jobs (reviews.models.Watermark) and the one
order in which any transaction locks them.

Every writer of the review states, the label tally and the queue tally serializes on
watermark rows. Two transactions that lock the same rows in different orders can
deadlock, so no code locks a watermark row directly: `watermarks_lock` takes the rows
asked for together with every row before them in LOCK_ORDER, in that order, and
`watermark_put` locks before it writes. The rows a transaction holds are then always a
prefix of LOCK_ORDER, taken front to back, and two transactions can never each wait for
a row the other holds.

The wall watermark comes first: every writer takes it (a label refreshes its pair's
state under it), so a label locks one row; the queue's sync takes the rest behind it.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Case, IntegerField, When
from django.db.models import Value as V

from reviews.models import Watermark

TALLY_WALLS = "queue_tally.wall"  # the queue tally's last extraction (walls) counted
LABELS = "pair_states.label"  # the last label the review states were brought up to
FINGERPRINTS = "pair_states.fingerprint"  # the last fingerprint they were checked against
ORDER = "queue_tally.thresholds"  # the thresholds the stored queue order was made with
VERSION = "queue_tally.extractor"  # the extractor version the tally was counted for
PAIRS = "queue_tally.pair"  # the last pair the queue tally counted
SUBJECTS = "pair_states.pair"  # the last pair checked for an already labelled subject

LOCK_ORDER: tuple[str, ...] = (
    TALLY_WALLS,
    LABELS,
    FINGERPRINTS,
    SUBJECTS,
    ORDER,
    VERSION,
    PAIRS,
)
# A row that does not exist yet is made with this value ("not built").
UNSET = -1


def _rank(name: str) -> int:
    try:
        return LOCK_ORDER.index(name)
    except ValueError:
        raise ValueError(f"watermark {name!r} has no place in LOCK_ORDER") from None


def watermarks_lock(*names: str) -> dict[str, int]:
    """Lock these watermarks until the transaction ends, with every watermark before
    them in LOCK_ORDER, in that order (missing rows are made first, as UNSET). Returns
    the values of the rows locked. Call inside a transaction."""
    upto = max(_rank(n) for n in names)
    prefix = LOCK_ORDER[: upto + 1]
    Watermark.objects.bulk_create(
        [Watermark(name=n, value=UNSET) for n in prefix], ignore_conflicts=True
    )
    rank = Case(
        *[When(name=n, then=V(i)) for i, n in enumerate(prefix)], output_field=IntegerField()
    )
    # FOR UPDATE locks the rows as the sorted plan returns them: in LOCK_ORDER.
    return dict(
        Watermark.objects.select_for_update()
        .filter(name__in=prefix)
        .order_by(rank)
        .values_list("name", "value")
    )


def watermark_put(name: str, value: int) -> None:
    """Set a watermark, under the lock order (inside the caller's transaction, or one
    of its own)."""
    with transaction.atomic():
        watermarks_lock(name)
        Watermark.objects.filter(name=name).update(value=value)
