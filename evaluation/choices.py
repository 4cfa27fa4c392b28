"""The detector's design choices side by side on the development sets: the search radius, the
similarity a duplicate must reach, the sketch's shape, how a unit's count weighs, the
shortest text fingerprinted, whether near-duplicates are indexed, and candidates from bands
over the sketch instead of the radius (evaluation/bands.py). Run
`python -m evaluation.choices` (minutes); docs/quality.md shows its table.

Each variant decides every set in stream order with the index's own rule
(worker.index.base.match) over every earlier article, as an exact table layout finds them:
the comparison is of the fingerprints and the verdict, not of the tables.

The defaults were chosen on the sets of the first pool (news, mail, newsletters, HTML, legal,
short texts); the second (manuals and reference texts in ten languages) was looked at only
to check them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from evaluation.bands import LineIndex, decide_by_bands
from evaluation.damping import DampedFingerprinter
from evaluation.datasets import EvalSet
from evaluation.devsets import every_set
from evaluation.metrics import Score, score
from evaluation.truth import DIFFERENT, DUPLICATE, jaccard_matrix, shingle_set
from worker import defaults
from worker.index.base import Entry, Rule, match
from worker.layout.tables import pigeonhole
from worker.model import Fingerprint
from worker.text.fingerprint import Fingerprinter
from worker.text.idf import IdfTable, default_table
from worker.text.sketch import SketchShape

TUNING_KINDS = ("news", "mail", "html", "legal", "short")
CHECK_KINDS = ("manuals",)  # the manuals and the reference texts
# The re-scraped pages and the short lines are in neither pool: the kinds the detector is
# weakest on, shown beside the pools (their truth is their own: evaluation/rescraped.py,
# evaluation/short_lines.py).


@dataclass(frozen=True)
class Variant:
    name: str
    fingerprinter: dict[str, Any] = field(default_factory=dict)  # Fingerprinter options
    threshold: int = defaults.THRESHOLD
    similarity: float = defaults.SIMILARITY
    index_duplicates: bool = True  # near-duplicates are candidates for later articles
    bands: tuple[int, int] | None = None  # candidates from (bands, rows) over the sketch
    lines: bool = True  # short lines judged by their words (worker.text.lines)

    @property
    def shape(self) -> SketchShape:
        shape = self.fingerprinter.get("sketch_shape")
        return shape if shape else SketchShape(defaults.SKETCH_BINS, defaults.SKETCH_BITS)


DEFAULTS = Variant("the defaults")
VARIANTS = (
    DEFAULTS,
    replace(DEFAULTS, name="radius k=8", threshold=8),
    replace(DEFAULTS, name="radius k=10", threshold=10),
    replace(DEFAULTS, name="radius k=13", threshold=13),
    replace(DEFAULTS, name="similarity 0.5", similarity=0.5),
    replace(DEFAULTS, name="similarity 0.7", similarity=0.7),
    replace(DEFAULTS, name="sketch 32 x 8 bits", fingerprinter={"sketch_shape": SketchShape(32)}),
    replace(DEFAULTS, name="sketch 128 x 8 bits", fingerprinter={"sketch_shape": SketchShape(128)}),
    replace(DEFAULTS, name="shingles of 2 units", fingerprinter={"shingle_size": 2}),
    replace(DEFAULTS, name="shingles of 4 units", fingerprinter={"shingle_size": 4}),
    replace(DEFAULTS, name="count weighs linearly", fingerprinter={"tf": "linear"}),
    replace(DEFAULTS, name="count weighs 1 + ln", fingerprinter={"tf": "log"}),
    replace(DEFAULTS, name="no IDF: every unit weighs 1", fingerprinter={"idf": "none"}),
    replace(DEFAULTS, name="IDF capped at 3 (unknown units: 3)", fingerprinter={"idf": "cap3"}),
    replace(DEFAULTS, name="HTML: all visible text", fingerprinter={"main_content": False}),
    replace(DEFAULTS, name="min words 5", fingerprinter={"min_words": 5}),
    replace(DEFAULTS, name="min words 20", fingerprinter={"min_words": 20}),
    replace(DEFAULTS, name="originals only indexed", index_duplicates=False),
    replace(DEFAULTS, name="short lines by their sketch", lines=False),
    replace(DEFAULTS, name="candidates from 16 bands of 4 bins (`bands:16x4`)", bands=(16, 4)),
    replace(DEFAULTS, name="candidates from 21 bands of 3 bins", bands=(21, 3)),
)


@dataclass
class Decisions:
    predicted: list[str | None]  # what each item is a duplicate of
    comparisons: int  # candidates within the radius, over all items
    pairs: int  # pairs of an item and an earlier one


def decide(variant: Variant, fingerprints: Sequence[Fingerprint], ids: Sequence[str]) -> Decisions:
    """What each item is a duplicate of, in stream order, under `variant`."""
    n = len(fingerprints)
    if variant.bands is not None:
        by_bands = decide_by_bands(
            fingerprints, ids, variant.bands, variant.similarity, variant.shape, variant.lines
        )
        return Decisions(by_bands.predicted, by_bands.compared, n * (n - 1) // 2)
    rule = Rule.of(
        pigeonhole(variant.threshold), variant.threshold, variant.similarity, shape=variant.shape
    )
    search = np.array([f.search or 0 for f in fingerprints], dtype=np.uint64)
    candidate = np.zeros(len(fingerprints), dtype=bool)
    exact: dict[bytes, int] = {}
    out: list[str | None] = []
    comparisons = 0
    lines = LineIndex() if variant.lines else None
    for i, fp in enumerate(fingerprints):
        if fp.content_hash in exact:
            out.append(ids[exact[fp.content_hash]])
            continue
        found = None
        if lines is not None and fp.line:
            line_match, read = lines.decide(ids[i], fp.line)
            comparisons += len(read.candidates)
            out.append(line_match)
            exact[fp.content_hash] = i
            continue
        if fp.search is not None and fp.sketch is not None:
            earlier = np.flatnonzero(candidate[:i])
            close = earlier[np.bitwise_count(search[earlier] ^ search[i]) <= rule.search_radius]
            comparisons += len(close)
            entries = [
                Entry(
                    ids[j],
                    fingerprints[j].search or 0,
                    int(j) + 1,
                    sketch=fingerprints[j].sketch or b"",
                )
                for j in close
            ]
            m = match(rule, fp.search, fp.sketch, entries, ids[i])
            found = m.entry.id if m is not None and m.near else None
        out.append(found)
        exact[fp.content_hash] = i
        candidate[i] = fp.search is not None and (found is None or variant.index_duplicates)
    return Decisions(out, comparisons, n * (n - 1) // 2)


@dataclass
class Row:
    variant: Variant
    by_kind: dict[str, Score]
    comparisons: int = 0
    pairs: int = 0
    between: int = 0  # items whose closest earlier one shares DIFFERENT..DUPLICATE
    between_flagged: int = 0  # ... called duplicates

    def pooled(self, kinds: Sequence[str]) -> Score:
        total = Score()
        for kind, s in self.by_kind.items():
            if kind in kinds:
                total.merge(s)
        return total


def _idf(name: str) -> IdfTable:
    if name == "none":
        return IdfTable({}, docs=1, cap=1.0)
    table = default_table()
    return IdfTable({u: w for u, w in table.weights.items() if w < 3.0}, table.docs, 3.0)


def fingerprinter_of(variant: Variant) -> Fingerprinter:
    options = dict(variant.fingerprinter)
    if "idf" in options:
        options["idf"] = _idf(options["idf"])
    return DampedFingerprinter(**options) if "tf" in options else Fingerprinter(**options)


def compare(sets: Sequence[EvalSet], variants: Sequence[Variant] = VARIANTS) -> Iterator[Row]:
    pooled = (*TUNING_KINDS, *CHECK_KINDS)
    closest = [_closest_earlier(s) if s.kind in pooled else None for s in sets]
    for variant in variants:
        fingerprinter = fingerprinter_of(variant)
        row = Row(variant, {})
        for s, best in zip(sets, closest, strict=True):
            fps = fingerprinter.many([item.text for item in s.items])
            decided = decide(variant, fps, [item.id for item in s.items])
            scores = score(s.items, decided.predicted).overall
            row.by_kind.setdefault(s.kind, Score()).merge(scores)
            if best is None:
                continue  # (in neither pool: their truth is not the Jaccard of their texts)
            row.comparisons += decided.comparisons
            row.pairs += decided.pairs
            between = (best >= DIFFERENT) & (best < DUPLICATE)
            row.between += int(between.sum())
            row.between_flagged += sum(
                1 for b, p in zip(between, decided.predicted, strict=True) if b and p is not None
            )
        yield row


def _closest_earlier(s: EvalSet) -> np.ndarray:
    """Each item's largest Jaccard similarity with an earlier item."""
    sim = jaccard_matrix([shingle_set(item.text) for item in s.items])
    best = np.tril(sim, k=-1).max(axis=1, initial=0.0)
    result: np.ndarray = best
    return result


def table(rows: Sequence[Row]) -> str:
    kinds = list(rows[0].by_kind)
    head = [
        "variant",
        *kinds,
        "tuning pool: P / R",
        "check pool: P / R",
        f"{DIFFERENT}-{DUPLICATE} called duplicates",
        "candidates per 1,000 pairs",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        tuned, checked = row.pooled(TUNING_KINDS), row.pooled(CHECK_KINDS)
        cells = [f"{row.by_kind[k].f1:.3f}" for k in kinds]
        cells += [
            f"{tuned.precision:.3f} / {tuned.recall:.3f}",
            f"{checked.precision:.3f} / {checked.recall:.3f}",
            f"{row.between_flagged / max(1, row.between):.0%} of {row.between}",
            f"{row.comparisons / max(1, row.pairs) * 1000:.2f}",
        ]
        lines.append("| " + " | ".join([row.variant.name, *cells]) + " |")
    return "\n".join(lines)


def main() -> None:
    started = time.monotonic()
    sets = every_set()
    rows = []
    for row in compare(sets):
        rows.append(row)
        print(f"{row.variant.name}: {time.monotonic() - started:.0f} s", flush=True)
    print(
        "\nF1 by kind (the sets of a kind pooled); each pool's precision and recall; the items "
        "whose closest earlier one\nshares 0.3-0.8 of its shingles (not scored) called "
        "duplicates; candidates within the radius per 1,000 pairs:\n"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
