"""Site boilerplate lines (ingest/core/boilerplate.py) and registrable domains
(ingest/core/domains.py): no database."""

from hypothesis import given
from hypothesis import strategies as st

from ingest.core import boilerplate
from ingest.core.domains import registrable_domain

FOOTER = "Browse | Feedback | About us … (c) 2008 Earthtimes.org"
lines = st.lists(st.text(alphabet="ab cdé中文\t", min_size=0, max_size=30), max_size=12)


def test_hosts_of_one_publisher_have_one_registrable_domain() -> None:
    assert registrable_domain("entertainment.timesonline.co.uk") == "timesonline.co.uk"
    assert registrable_domain("WWW.timesonline.co.uk.") == "timesonline.co.uk"
    assert registrable_domain("news.sina.com.cn") == "sina.com.cn"
    # Private suffixes count: two blogs on one host service are two sites.
    assert registrable_domain("alice.github.io") != registrable_domain("bob.github.io")


def test_addresses_and_bare_names_are_their_own_domain() -> None:
    assert registrable_domain("127.0.0.1") == "127.0.0.1"
    assert registrable_domain("localhost") == "localhost"
    assert registrable_domain("unknown") == "unknown"


def test_a_line_needs_some_words_to_have_a_key() -> None:
    assert boilerplate.line_key("| 1 |") is None
    assert boilerplate.line_key("首页") is not None
    assert boilerplate.line_key(FOOTER) is not None
    # Spacing, case and compatibility forms do not make another line.
    assert boilerplate.line_key("  browse |  FEEDBACK | About us … (c) 2008 Earthtimes.org ") == (
        boilerplate.line_key(FOOTER)
    )


def _key(line: str) -> int:
    key = boilerplate.line_key(line)
    assert key is not None
    return key


def test_nothing_is_learned_until_the_site_has_a_few_other_pages() -> None:
    page = {_key(FOOTER)}
    assert boilerplate.learn([page] * (boilerplate.MIN_PAGES - 1)) == set()
    assert boilerplate.learn([page] * boilerplate.MIN_PAGES) == page


def test_a_line_on_a_few_pages_of_a_large_site_is_not_its_boilerplate() -> None:
    """An article republished at three URLs of an aggregator is not its template."""
    story = {_key("A story told three times on one large site")}
    others = [story] * 3 + [set()] * 20
    assert boilerplate.learn(others) == set()
    assert boilerplate.pages_needed(23) == 7


def test_strip_drops_whole_lines_only_and_says_which() -> None:
    text = f"First paragraph of the story, long enough.\n{FOOTER}\nLast words of the story here."
    out = boilerplate.strip(text, {boilerplate.line_key(FOOTER)})  # type: ignore[arg-type]
    assert out.dropped == [FOOTER]
    assert out.text == "First paragraph of the story, long enough.\nLast words of the story here."


@given(lines, lines)
def test_a_recorded_drop_applied_again_gives_the_same_text(
    body: list[str], extra: list[str]
) -> None:
    text = "\n".join(body + extra)
    keys = {k for k in map(boilerplate.line_key, extra) if k is not None}
    out = boilerplate.strip(text, keys)
    assert boilerplate.strip_lines(text, out.dropped) == out.text
    assert boilerplate.strip_lines(out.text, out.dropped) == out.text
    # Every line kept or dropped, none changed.
    every = text.split("\n")
    kept = out.text.split("\n") if len(out.dropped) < len(every) else []
    assert sorted(kept + out.dropped) == sorted(every)
