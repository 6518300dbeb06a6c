"""The pair view's text diffs alone, on a ~300 KB English pair and a long Chinese pair.

    .venv/bin/python bench/diff_bench.py [--runs 15] [--before OTHER_CHECKOUT]

No database: builds the English pair the pair view bench builds (bench/pair_view_bench.py,
a few edits spread through it) and a Chinese pair of the same shape (a character changed
in every eighth paragraph and a price changed), then times the word diff (the main-text
tab, capped at REVIEW_DIFF_MAX_WORDS tokens as the view caps it) and the sentence
alignment (the aligned tab). Prints min, median and p95 in milliseconds with the machine
noted (on a shared machine the minimum is the steadiest figure). A script, not a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _english(target_chars: int) -> tuple[str, str]:
    import random

    from tests.factories import WORDS

    rng = random.Random(31)
    paragraphs = []
    total = 0
    while total < target_chars:
        n = rng.randint(35, 60)
        paragraphs.append(" ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + ".")
        total += len(paragraphs[-1]) + 2
    text = "\n\n".join(paragraphs)
    parts = text.split("\n\n")
    for i in range(0, len(parts), max(len(parts) // 8, 1)):
        parts[i] = parts[i].replace("river", "stream", 1) + " Now 14.99 EUR."
    return text, "\n\n".join(parts)


def _chinese(target_chars: int) -> tuple[str, str]:
    from tests.zh_text import chinese_article_text

    text = chinese_article_text(31, chars=target_chars)
    parts = text.split("\n\n")
    for i in range(0, len(parts), max(len(parts) // 8, 1)):
        p = parts[i]
        k = len(p) // 2
        parts[i] = p[:k] + ("乙" if p[k] != "乙" else "甲") + p[k + 1 :] + "现价14.99元。"
    return text, "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--max-words", type=int, default=4000)
    parser.add_argument("--max-sentences", type=int, default=3000)
    parser.add_argument(
        "--before",
        type=Path,
        help="another checkout of the project: its diff and alignment are timed too, "
        "interleaved with these runs (a fair before/after on a loaded machine)",
    )
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedup_site.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret")
    import django

    django.setup()  # tests.factories imports models
    from reviews.core import align, diff

    versions = {"": (diff, align)}
    if args.before:
        versions[" (before)"] = _load_before(args.before)

    print(
        f"diff bench · {platform.python_implementation()} {platform.python_version()} · "
        f"{platform.machine()} · {os.cpu_count()} CPUs · {platform.node()}"
    )
    pairs = (("English", _english(250_000)), ("Chinese", _chinese(100_000)))
    for name, (a, b) in pairs:
        for suffix, (d_mod, _) in versions.items():
            d = d_mod.word_diff(a, b, max_words=args.max_words)
            print(
                f"{name}{suffix}: {len(a.encode()) / 1000:.0f} KB / {len(a)} characters; "
                f"{d.words_a} tokens, {d.changes} changes, truncated {d.truncated}"
            )
        runs: list[tuple[str, Callable[[], object]]] = []
        for suffix, (d_mod, a_mod) in versions.items():
            runs.append(
                (f"word diff{suffix}", partial(d_mod.word_diff, a, b, max_words=args.max_words))
            )
            runs.append(
                (
                    f"sentence alignment{suffix}",
                    partial(a_mod.sentence_align, a, b, max_sentences=args.max_sentences),
                )
            )
        timings = _time_interleaved(runs, args.runs)
        for label, (low, median, p95) in timings.items():
            print(f"  {label:<29} min {low:7.1f} ms   median {median:7.1f} ms   p95 {p95:7.1f} ms")


def _load_before(tree: Path) -> tuple[Any, Any]:
    """The diff and align modules of another checkout, loaded under other names."""
    import importlib.util

    def load(name: str, source: str) -> Any:
        spec = importlib.util.spec_from_loader(name, loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        exec(compile(source, f"{tree}/{name}", "exec"), module.__dict__)  # noqa: S102
        return module

    diff = load("before_diff", (tree / "reviews/core/diff.py").read_text())
    source = (tree / "reviews/core/align.py").read_text()
    align = load("before_align", source.replace("from reviews.core.diff", "from before_diff"))
    return diff, align


def _time_interleaved(
    runs: list[tuple[str, Callable[[], object]]], count: int
) -> dict[str, tuple[float, float, float]]:
    times: dict[str, list[float]] = {label: [] for label, _ in runs}
    for i in range(count + 2):
        for label, fn in runs:
            t0 = time.perf_counter()
            fn()
            if i >= 2:  # warm-up
                times[label].append((time.perf_counter() - t0) * 1000)
    out = {}
    for label, values in times.items():
        values.sort()
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        out[label] = (values[0], statistics.median(values), p95)
    return out


if __name__ == "__main__":
    main()
