"""The desk's translation catalogues (locale/<language>/LC_MESSAGES/*.po), compiled with
Babel, in pure Python: no GNU gettext needed.

The compiled .mo files are committed, so a fresh machine serves the translated desk
without compiling anything; `manage.py compile_catalogues` rewrites them after a .po
changes, and a test fails when a committed .mo differs from its .po
(docs/translating.md).
"""

from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"


def po_files(locale_dir: Path = LOCALE_DIR) -> Iterator[Path]:
    """Every catalogue source, language by language."""
    yield from sorted(locale_dir.glob("*/LC_MESSAGES/*.po"))


def read(po: Path) -> Catalog:
    with po.open("rb") as f:
        return read_po(f, locale=po.parent.parent.name)


def compiled(po: Path) -> bytes:
    """The .mo bytes of a catalogue source (fuzzy entries left out, as msgfmt does)."""
    out = BytesIO()
    write_mo(out, read(po), use_fuzzy=False)
    return out.getvalue()


def compile_all(locale_dir: Path = LOCALE_DIR) -> list[Path]:
    """Write each .po's .mo beside it; the .mo files written."""
    written = []
    for po in po_files(locale_dir):
        mo = po.with_suffix(".mo")
        mo.write_bytes(compiled(po))
        written.append(mo)
    return written
