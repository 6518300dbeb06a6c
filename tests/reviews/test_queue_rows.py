"""The queue page's table rows (reviews/templatetags/queue_tags.py) show what the
template showed: the same cells, hostile text escaped, scores hidden in blind mode."""

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.template import Context, Template
from django.template.defaultfilters import floatformat
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from reviews.queue.pair_queue import QueueRow
from reviews.templatetags.queue_tags import _whole, queue_group_rows, queue_pair_rows

HOSTILE = 'https://evil.example.com/"><script>alert(1)</script>'


def _row(**kw: object) -> QueueRow:
    values: dict[str, object] = {
        "id": 7,
        "doc_type": "article",
        "distance": 2,
        "full_distance": None,
        "token_set_ratio": 90.5,
        "channels": 2 | 4,
        "numbers_differ": True,
        "ids_differ": False,
        "title_differs": True,
        "a_url": HOSTILE,
        "b_url": "https://b.example.com/x?a=1&b=2",
        "is_labeled": False,
        "is_disputed": False,
        "is_stale": False,
        "threshold": 3,
    }
    values.update(kw)
    return QueueRow(**values)  # type: ignore[arg-type]


def test_a_pair_row_escapes_urls_and_shows_every_cell() -> None:
    html = str(queue_pair_rows([_row()], blind=False))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&quot;&gt;" in html  # the quote cannot close the title attribute
    assert "a=1&amp;b=2" in html
    assert f'<a href="{reverse("reviews:pair-detail", args=[7])}">pair 7</a>' in html
    assert '<td>2 <small class="dim">/ 3</small></td><td>—</td><td>91</td>' in html
    assert '<span class="flag">numbers_differ</span><span class="flag">title_differs</span>' in html
    assert '<td class="channels" data-value>simhash · passages</td>' in html
    assert "<td>unlabeled</td>" in html


def test_blind_mode_leaves_out_distances_and_scores() -> None:
    html = str(queue_pair_rows([_row(full_distance=4)], blind=True))
    assert "/ 3" not in html and "<td>4</td>" not in html and "91" not in html
    assert html.count("<td") == 8  # the eleven columns less distance, full and similarity


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        ({"is_labeled": True, "is_disputed": True, "is_stale": True}, "flag disputed"),
        ({"is_labeled": True, "is_stale": True}, '<span class="flag">stale</span>'),
        ({"is_labeled": True}, "<td>labeled</td>"),
    ],
)
def test_a_pair_row_shows_its_status(flags: dict[str, bool], shown: str) -> None:
    assert shown in str(queue_pair_rows([_row(**flags)], blind=False))


def test_rows_show_the_claiming_editor_escaped() -> None:
    claim = SimpleNamespace(editor=SimpleNamespace(username="<b>ed</b>"))
    row = _row()
    row.claim = claim  # type: ignore[assignment]
    assert "<td data-value>&lt;b&gt;ed&lt;/b&gt;</td></tr>" in str(
        queue_pair_rows([row], blind=False)
    )


def _group(**kw: object) -> SimpleNamespace:
    values: dict[str, object] = {
        "pk": 5,
        "size": 4,
        "diameter": None,
        "chained": True,
        "oversized": False,
        "needs_review": True,
        "is_disputed": True,
        "ever_decided": True,
        "is_decided": False,
        "rule": "connected-components-v1",
        "representative_url": HOSTILE,
        "review_note": "<i>note</i>",
        "claim": None,
    }
    values.update(kw)
    return SimpleNamespace(**values)


def test_a_group_row_escapes_and_shows_its_flags() -> None:
    html = str(queue_group_rows([_group()]))
    assert "<script>" not in html and "<i>" not in html
    assert f'<a href="{reverse("reviews:group-detail", args=[5])}">group 5</a>' in html
    assert "<td>4</td><td>—</td>" in html
    assert (
        '<span class="flag">chained</span><span class="flag">needs review</span>'
        '<span class="flag disputed">disputed</span><span class="flag">stale</span>'
    ) in html
    html = str(queue_group_rows([_group(representative_url=None, ever_decided=False)]))
    assert '<span class="clip" title="">—</span>' in html
    assert "stale" not in html


def test_no_rows_no_markup() -> None:
    assert str(queue_pair_rows([], blind=False)) == ""
    assert str(queue_group_rows([])) == ""


def test_the_tags_render_from_a_template() -> None:
    t = Template("{% load queue_tags %}{% queue_pair_rows pairs blind %}")
    assert "pair 7" in t.render(Context({"pairs": [_row()], "blind": False}))


@given(
    st.one_of(
        # Similarities are percentages (floatformat gives up on values like 1e-283).
        st.floats(min_value=0, max_value=100).filter(lambda v: v == 0 or v > 1e-9),
        st.decimals(min_value=0, max_value=100, places=3).map(float),
        st.integers(0, 99).map(lambda n: n + 0.5),
    )
)
def test_similarity_is_rounded_as_floatformat_rounds(value: float) -> None:
    assert _whole(value) == floatformat(value, 0)


def test_similarity_rounds_half_up() -> None:
    assert [_whole(v) for v in (0.5, 1.5, 2.5, 99.49, -0.4)] == ["1", "2", "3", "99", "0"]
    assert _whole(None) == ""
    assert Decimal(_whole(100.0)) == 100
