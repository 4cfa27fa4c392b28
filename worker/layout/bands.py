"""Band layouts: candidates from bands over the set sketch (MinHash LSH). Pure: no Redis.

The sketch's first `bands * rows` bins are cut into `bands` bands of `rows` bins each; two
articles that agree on every bin of some band are candidates. A pair sharing a share J of
its shingles meets with probability 1 - (1 - J^rows)^bands, whatever the index holds: unlike
the SimHash tables, unrelated texts of one template seldom meet, so the work per decision
does not grow with the index.

The work is bounded by construction:
- a bucket is read newest first, `newest` entries at most;
- at most `compared` candidates are compared by their sketches, those sharing the most
  bands first (between equals, the newest);
- a near-duplicate is posted only under the bands it does not share with its match
  (novelty), so that a cluster of copies does not fill its buckets.

A band's key is its bins as stored (8 bits each): with 4 rows, 32 bits, so that unrelated
articles meet by chance about once per 10^9 pairs per band.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain

from worker import defaults
from worker.text.sketch import SketchShape

NEWEST = 32  # a bucket's entries read, newest first
COMPARED = 16  # candidates compared, those sharing the most bands first
_NUMBER_BITS = 64  # (ranked: numbers under 2^64)
_NUMBER_MASK = (1 << _NUMBER_BITS) - 1
MIN_KEY_BITS = 24  # narrower band keys make chance meetings common at a million articles
# Redis bytes per article (benchmarks/redis_bytes.py, news documents at the expected size):
# the record, its id by number and its exact text; and per posting, with its group's share of
# keys and the room APPEND leaves.
ARTICLE_BYTES = 222.0
POSTING_BYTES = 15.0


@dataclass(frozen=True)
class Bands:
    bands: int = 16
    rows: int = 4
    newest: int = NEWEST
    compared: int = COMPARED

    def __post_init__(self) -> None:
        if not 1 <= self.bands <= 255:
            raise ValueError(f"bands must be 1..255, got {self.bands}")
        if self.rows * defaults.SKETCH_BITS < MIN_KEY_BITS:
            raise ValueError(
                f"rows must be >= {MIN_KEY_BITS // defaults.SKETCH_BITS}, got {self.rows}: "
                "narrower bands meet by chance too often"
            )
        if self.newest < 1 or self.compared < 1:
            raise ValueError("newest and compared must be >= 1")

    def check(self, shape: SketchShape) -> None:
        if self.bands * self.rows > shape.bins:
            raise ValueError(
                f"{self.bands} bands of {self.rows} bins need {self.bands * self.rows} bins; "
                f"the sketch has {shape.bins}"
            )

    def keys(self, sketch: bytes) -> list[int]:
        """The sketch's band keys: the band's number, then its bins (big-endian)."""
        r = self.rows
        if r == 4:  # (the default: one call for every band)
            values = struct.unpack_from(f">{self.bands}I", sketch)
            return [(b << 32) | v for b, v in enumerate(values)]
        return [
            (b << 8 * r) | int.from_bytes(sketch[b * r : (b + 1) * r], "big")
            for b in range(self.bands)
        ]

    def ranked(self, buckets: Iterable[Sequence[int]], lowest: int = 0) -> list[int]:
        """The candidates to compare, from the buckets of an article's bands (each the
        numbers of the articles posted there, in the order posted): the `newest` of each,
        those sharing the most bands first (between equals, the newest: the largest number),
        `compared` at most; numbers below `lowest` passed over (no one's: postings the
        expiry sweep left)."""
        shared = Counter(chain.from_iterable(bucket[-self.newest :] for bucket in buckets))
        # (one integer per number, its count above it: sorted in C)
        best = sorted(
            [count << _NUMBER_BITS | seq for seq, count in shared.items() if seq >= lowest],
            reverse=True,
        )
        return [key & _NUMBER_MASK for key in best[: self.compared]]

    def read_of(self, buckets: Sequence[Sequence[int]]) -> tuple[int, int]:
        """What ranking `buckets` reads: the postings, and the buckets read only in part."""
        return (
            sum(min(len(bucket), self.newest) for bucket in buckets),
            sum(len(bucket) > self.newest for bucket in buckets),
        )

    def recall(self, jaccard: float) -> float:
        """Probability that a pair sharing `jaccard` of its shingles shares a band."""
        return float(1 - (1 - jaccard**self.rows) ** self.bands)

    def chance_candidates(self, docs: int) -> float:
        """Unrelated articles that share a band with an article by chance, among `docs`
        (each band's key is `rows` bins of SKETCH_BITS; texts that really share shingles
        meet more often: bench_bands measures that)."""
        return float(self.bands * docs * 2.0 ** -(self.rows * defaults.SKETCH_BITS))

    @property
    def bytes_per_article(self) -> float:
        return ARTICLE_BYTES + self.bands * POSTING_BYTES

    def name(self) -> str:
        return f"bands, {self.bands} of {self.rows} bins"

    def spec(self) -> str:
        return f"bands:{self.bands}x{self.rows}"


CHOICES = (Bands(21, 3), Bands(16, 4), Bands(12, 5), Bands(10, 6))  # what `plan` compares
JACCARDS = (0.5, 0.6, 0.7, 0.8, 0.9)  # where `plan` shows a band layout's recall


def plan_table(docs: int, chosen: str = "") -> list[str]:
    """The band layouts as a text table, at `docs` articles; the one whose spec is `chosen`
    marked with '*'."""
    lines = [
        f"{'':2}{'layout':<44}{'postings':>9}{'read <=':>8}{'compared <=':>12}"
        f"{'chance cand/art':>16}{'B/article':>10}  recall at Jaccard "
        + " ".join(map(str, JACCARDS))
    ]
    for b in CHOICES:
        recall = " ".join(f"{b.recall(j):.3f}" for j in JACCARDS)
        mark = "*" if b.spec() == chosen else ""
        lines.append(
            f"{mark:2}{b.name():<44}{b.bands:>9}{b.bands * b.newest:>8}{b.compared:>12}"
            f"{b.chance_candidates(docs):>16.3g}{b.bytes_per_article:>10,.0f}  {recall}"
        )
    return lines


def plan_records(docs: int) -> list[dict[str, object]]:
    """The band layouts as plain data (`dedup-worker plan --json`)."""
    return [
        {
            "layout": b.spec(),
            "postings_per_article": b.bands,
            "entries_read_at_most": b.bands * b.newest,
            "compared_at_most": b.compared,
            "chance_candidates_per_article": b.chance_candidates(docs),
            "bytes_per_article": b.bytes_per_article,
            "recall": {str(j): b.recall(j) for j in JACCARDS},
        }
        for b in CHOICES
    ]


def parse_bands(arg: str) -> Bands:
    """ "16x4": 16 bands of 4 bins."""
    bands, sep, rows = arg.partition("x")
    if not sep:
        raise ValueError(f"bands:{arg}: write bands:BxR, e.g. bands:16x4")
    return Bands(int(bands), int(rows))
