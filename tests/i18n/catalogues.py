"""What the translation tests share: the source catalogue's msgids, a pseudo-locale built
from them, and the text a desk page shows outside crawl data and stored values."""

import re
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo

from dedup_site import catalogues

SOURCE = catalogues.LOCALE_DIR / "vi" / "LC_MESSAGES" / "django.po"
PSEUDO = "xx"
OPEN, CLOSE = "⟦", "⟧"
# Django's own words the desk shows (the login form's labels): the pseudo-locale marks them
# too, as Django's catalogues translate them in the real languages.
DJANGO_WORDS = ("username", "Password")

# The desk's text outside crawl data and stored values, in document order: what a reader
# sees in the page's own words. A `data-desk` element inside a skipped region is desk text
# again (an "(empty)" inside a crawled side).
SHOWN_TEXT_JS = """() => {
  const SKIP = 'script,style,noscript,template,iframe,svg,kbd,code,[data-crawl],[data-value]';
  const parts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walker.nextNode())) {
    const el = n.parentElement;
    const skip = el.closest(SKIP);
    const desk = el.closest('[data-desk]');
    if (skip && !(desk && skip.contains(desk))) { parts.push(' \\u2063 '); continue; }
    parts.push(n.nodeValue);
  }
  return parts.join(' ');
}"""

# Letters that may stand outside a translated string: the sides of a pair, the
# confusion-matrix columns, and the keys (one lowercase letter: the reason keys before each
# preset), the same in every language.
NEUTRAL_WORDS = {"A", "B", "TP", "FP", "FN", "TN", "F", *"abcdefghijklmnopqrstuvwxyz"}
_MARKED = re.compile(f"{OPEN}[^{OPEN}{CLOSE}]*{CLOSE}")
_WORD = re.compile(r"[^\W\d_]+")


def msgids() -> list[tuple[str | None, str | tuple[str, ...]]]:
    """(context, msgid) of every message of the source catalogue (a plural's singular and
    plural as a tuple)."""
    return [
        (m.context, tuple(m.id) if isinstance(m.id, tuple | list) else m.id)
        for m in catalogues.read(SOURCE)
        if m.id
    ]


def pseudo_catalogue(directory: Path) -> Path:
    """A test-only language whose every translation is its msgid between ⟦ and ⟧."""
    cat = Catalog(locale=None, charset="utf-8")
    for context, msgid in msgids():
        if isinstance(msgid, tuple):
            cat.add(msgid, tuple(f"{OPEN}{x}{CLOSE}" for x in msgid), context=context)
        else:
            cat.add(msgid, f"{OPEN}{msgid}{CLOSE}", context=context)
    for word in DJANGO_WORDS:
        cat.add(word, f"{OPEN}{word}{CLOSE}")
    mo = directory / PSEUDO / "LC_MESSAGES" / "django.mo"
    mo.parent.mkdir(parents=True)
    with mo.open("wb") as f:
        write_mo(f, cat)
    return mo


def unmarked_words(shown: str) -> list[str]:
    """Words of the shown text outside every ⟦…⟧ (nested markers removed inside out)."""
    while True:
        stripped = _MARKED.sub(" ", shown)
        if stripped == shown:
            break
        shown = stripped
    return [w for w in _WORD.findall(shown) if w not in NEUTRAL_WORDS]


def english_sentences() -> set[str]:
    """The source's msgids that a translation must replace (those the catalogues render
    differently): shown as they are, they are untranslated desk text."""
    out = set()
    for m in catalogues.read(SOURCE):
        if not m.id:
            continue
        ids = tuple(m.id) if isinstance(m.id, tuple | list) else (m.id,)
        strs = tuple(m.string) if isinstance(m.string, tuple | list) else (m.string,)
        for i, s in zip(ids, strs, strict=False):
            if "%(" in i or "<" in i:
                continue  # a sentence with values or markup is not shown verbatim
            if s and s != i and len(i) >= 3:
                out.add(i)
    return out
