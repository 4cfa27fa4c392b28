"""Candidates from bands over the set sketch (MinHash LSH), the way the index is moving to,
measured on the development sets beside the SimHash radius (evaluation/choices.py).

Each sketch is cut into `bands` bands of `rows` bins; two articles that agree on every bin
of a band are candidates, so a pair sharing a share J of its shingles meets with probability
1 - (1 - J^rows)^bands, whatever the index holds. The work is bounded: a bucket is read
newest first, `NEWEST` entries at most; at most `COMPARED` candidates are compared, those
sharing the most bands first; a near-duplicate is posted only under the bands it does not
share with its match, so that a cluster of copies does not fill the buckets. The verdict is
the index's rule (worker.index.base.match) on the sketches alone.

The band keys here are the stored 8-bit bins (with 4 rows, 32 bits: chance meetings are
negligible below ~10^8 articles).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from worker.index.base import Entry, Rule, match
from worker.model import SIMHASH_BITS, Fingerprint, Probe
from worker.text.sketch import SketchShape, bins_needed

NEWEST = 32  # a bucket's entries read, newest first
COMPARED = 16  # candidates compared, those sharing the most bands first


def band_keys(sketch: bytes, bands: int, rows: int) -> list[bytes]:
    return [bytes([b]) + sketch[b * rows : (b + 1) * rows] for b in range(bands)]


@dataclass
class BandDecisions:
    predicted: list[str | None]  # what each item is a duplicate of
    compared: int  # candidates compared, over all items
    largest_bucket: int  # entries in the fullest bucket at the end


class BandIndex:
    """Articles decided one after another against the bands of those before them."""

    def __init__(self, layout: tuple[int, int], similarity: float, shape: SketchShape) -> None:
        self.bands, self.rows = layout
        if self.bands * self.rows > shape.bins:
            raise ValueError(
                f"{self.bands} bands of {self.rows} bins: the sketch has {shape.bins} bins"
            )
        # Every candidate is "within the radius": the sketches alone decide.
        self.rule = Rule(
            SIMHASH_BITS,
            SIMHASH_BITS,
            similarity,
            bins_needed(similarity, shape),
            shape.bins + 1,  # (no related tier: the radius is the threshold)
            COMPARED,
            shape,
        )
        self.buckets: dict[bytes, list[Entry]] = defaultdict(list)
        self.exact: dict[bytes, str] = {}
        self.compared = 0  # candidates compared, so far
        self.read = 0  # bucket entries read, so far
        self._seq = 0

    def decide(self, probe: Probe) -> str | None:
        """What the article is a duplicate of (None: unique), and it is indexed."""
        exact = self.exact.setdefault(probe.content_hash, probe.id)
        if exact != probe.id:
            return exact
        if probe.fingerprint is None or probe.sketch is None:
            return None
        keys = band_keys(probe.sketch, self.bands, self.rows)
        shared: Counter[Entry] = Counter()
        for key in keys:
            newest = self.buckets[key][-NEWEST:]
            self.read += len(newest)
            shared.update(newest)
        chosen = sorted(shared, key=lambda e: (-shared[e], -e.seq))[:COMPARED]
        self.compared += len(chosen)
        found = match(self.rule, probe.fingerprint, probe.sketch, chosen, probe.id)
        near = found.entry if found is not None and found.near else None
        self._seq += 1
        entry = Entry(probe.id, probe.fingerprint, self._seq, sketch=probe.sketch)
        theirs = set(band_keys(near.sketch, self.bands, self.rows)) if near else set()
        for key in keys:
            if key not in theirs:  # (novelty: a copy is posted only under what it adds)
                self.buckets[key].append(entry)
        return near.id if near else None

    @property
    def largest_bucket(self) -> int:
        return max(map(len, self.buckets.values()), default=0)


def decide_by_bands(
    fingerprints: Sequence[Fingerprint],
    ids: Sequence[str],
    layout: tuple[int, int],
    similarity: float,
    shape: SketchShape,
) -> BandDecisions:
    """What each item is a duplicate of, in stream order."""
    index = BandIndex(layout, similarity, shape)
    predicted = [
        index.decide(Probe(i, fp.content_hash, fp.search, fp.sketch))
        for i, fp in zip(ids, fingerprints, strict=True)
    ]
    return BandDecisions(predicted, index.compared, index.largest_bucket)
