"""Real pages of the development data, with what each page is (for the page-kind benches).

Yields ``LabelledPage`` from ``../shared/data``: extraction-dev (articles), wcxb-dev
(``page_type``: forum, listing, collection, product, documentation, service) and zh-vi-dev
(``page_kind``, or the transformation of a derived page: an article text in a real
template). ``expected`` maps each label to a doc type; ``None`` where the page is not a
content page (zh-vi-dev's JavaScript shells) or the label names no doc type.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROJECT = Path(os.environ.get("BENCH_PROJECT_ROOT") or ROOT).resolve()
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

from ingest.core.encoding import decode_html  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
if not DATA.exists():
    DATA = Path("/work/shared/data")

# Dataset labels → the product's doc types.
EXPECTED = {
    "article": "article",
    "forum": "forum",
    "listing": "listing",
    "collection": "listing",
    "list": "listing",
    "home": "listing",
    "product": "product",
    "documentation": "other",
    "service": "other",
}
# zh-vi-dev pages that are not content: client-rendered shells fetched without their script.
SHELL_TRANSFORMATIONS = frozenset({"vi_empty_extraction"})


@dataclass(frozen=True)
class LabelledPage:
    dataset: str
    id: str
    url: str
    html: str
    label: str  # the dataset's own word for the page
    lang: str = ""

    @property
    def expected(self) -> str | None:
        return EXPECTED.get(self.label)

    @property
    def is_content(self) -> bool:
        return self.label != "shell"


def pages(data: Path = DATA) -> Iterator[LabelledPage]:
    with open(data / "extraction-dev" / "manifest.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            raw = gzip.decompress((data / "extraction-dev" / d["file"]).read_bytes())
            html = decode_html(raw, content_type=None).text
            yield LabelledPage("extraction-dev", d["id"], d.get("url") or "", html, "article")
    with open(data / "wcxb-dev" / "manifest.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            raw = gzip.decompress((data / "wcxb-dev" / d["file"]).read_bytes())
            html = decode_html(raw, content_type=None).text
            yield LabelledPage("wcxb-dev", d["id"], d.get("url") or "", html, d["page_type"])
    with gzip.open(data / "zh-vi-dev" / "pages.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            transformation = d.get("transformation")
            if d.get("page_kind"):
                label = d["page_kind"]
            elif transformation in SHELL_TRANSFORMATIONS:
                label = "shell"
            else:  # a real article's text placed into a real article template
                label = "article"
            yield LabelledPage(
                "zh-vi-dev", d["id"], d.get("url") or "", d["html"], label, d.get("lang", "")
            )
